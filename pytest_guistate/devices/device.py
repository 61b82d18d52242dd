"""`Device`: a small typed API over one Appium session, the same for the sim and a real server.

Tests mostly say *what* to touch (a text, a description, a resource id); the device turns that
into Appium calls. `.driver` is the raw Appium client for everything else. `Device` also
implements the core's `Screen` protocol (`observe`, `pull_to_refresh`), which is all the step
loop needs.
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any

from appium.webdriver.common.appiumby import AppiumBy
from appium.webdriver.webdriver import WebDriver
from appium.webdriver.webelement import WebElement
from selenium.common.exceptions import NoSuchElementException, WebDriverException
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput

from pytest_guistate.core.frame import Frame, FrameError
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UITree, parse_page_source

__all__ = ["Device", "DeviceError", "ElementNotFound"]


class DeviceError(RuntimeError):
    """The device (Appium server or sim) failed or is gone; the message says which call."""


class ElementNotFound(AssertionError):
    """No element matched a locator; the message lists what was on screen instead."""


def _xpath_literal(value: str) -> str:
    """Quote a string for XPath 1.0, which has no escape sequences."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ", \"'\", ".join(f"'{p}'" for p in parts) + ")"


class Device:
    """One phone behind one Appium session."""

    def __init__(self, driver: WebDriver, *, url: str, is_sim: bool = False, tap_ms: int = 50) -> None:
        self.driver = driver
        self.url = url
        self.is_sim = is_sim
        self._tap_ms = tap_ms
        self._size: tuple[int, int] | None = None

    # -- observing -----------------------------------------------------------------------
    def screenshot(self, *, source: str = "") -> Frame:
        """A screenshot as a `Frame` (PNG bytes, decoded lazily)."""
        encoded = self._call("screenshot", self.driver.get_screenshot_as_base64)
        try:
            png = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FrameError(f"screenshot from {self.url} is not valid base64 ({exc})") from exc
        return Frame(png=png, timestamp=time.time(), source=source)

    def page_source(self) -> str:
        return str(self._call("page source", lambda: self.driver.page_source))

    def ui_tree(self) -> UITree:
        """The parsed accessibility tree (raises `UITreeError` on malformed XML)."""
        return parse_page_source(self.page_source())

    def observe(self) -> Observation:
        frame = self.screenshot()
        tree = self.ui_tree()
        packages = [n.package for n in tree.nodes() if n.package and n.package != "com.android.systemui"]
        return Observation(frame=frame, tree=tree, package=packages[0] if packages else "")

    @property
    def size(self) -> tuple[int, int]:
        """Screen size in the pixels of screenshots (what taps and boxes use)."""
        if self._size is None:
            rect = self._call("window rect", self.driver.get_window_rect)
            self._size = (int(rect["width"]), int(rect["height"]))
        return self._size

    # -- finding -------------------------------------------------------------------------
    def find(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,  # noqa: A002 - the Appium name users know
        xpath: str | None = None,
        timeout: float = 0.0,
    ) -> WebElement:
        """Find one element by exactly one locator; `ElementNotFound` lists what is on screen."""
        by, value = self._locator(text=text, desc=desc, id=id, xpath=xpath)
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.driver.find_element(by, value)
            except NoSuchElementException:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
            except WebDriverException as exc:
                raise DeviceError(f"find {by}={value!r} failed on {self.url}: {exc.msg}") from exc
        raise ElementNotFound(f"no element with {by}={value!r}; on screen: {self._visible_labels()}")

    def exists(self, text: str | None = None, **locator: str) -> bool:
        by, value = self._locator(text=text, **locator)
        try:
            return bool(self.driver.find_elements(by, value))
        except WebDriverException as exc:
            raise DeviceError(f"find {by}={value!r} failed on {self.url}: {exc.msg}") from exc

    def _locator(
        self, *, text: str | None = None, desc: str | None = None, id: str | None = None, xpath: str | None = None
    ) -> tuple[str, str]:
        given = [(k, v) for k, v in (("text", text), ("desc", desc), ("id", id), ("xpath", xpath)) if v is not None]
        if len(given) != 1:
            raise TypeError(f"give exactly one locator (text=, desc=, id= or xpath=), got {given or 'none'}")
        kind, value = given[0]
        if kind == "text":
            return AppiumBy.XPATH, f"//*[@text={_xpath_literal(value)}]"
        if kind == "desc":
            return AppiumBy.ACCESSIBILITY_ID, value
        if kind == "id":
            return AppiumBy.ID, value
        return AppiumBy.XPATH, value

    def _visible_labels(self, limit: int = 15) -> str:
        try:
            labels = [n.label for n in self.ui_tree().actionable()]
        except Exception as exc:  # the error we are reporting matters more; say what we lost
            return f"(page source unavailable: {exc})"
        shown = ", ".join(repr(label) for label in labels[:limit])
        return shown + (f" … and {len(labels) - limit} more" if len(labels) > limit else "") or "(nothing actionable)"

    # -- acting --------------------------------------------------------------------------
    def tap(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,  # noqa: A002
        xpath: str | None = None,
        x: int | None = None,
        y: int | None = None,
        timeout: float = 0.0,
    ) -> None:
        """Tap an element (by text, desc, id or xpath) or a point (x, y in screenshot pixels)."""
        if x is not None or y is not None:
            if x is None or y is None:
                raise TypeError("tap at a point needs both x and y")
            self._pointer([(x, y)], hold_ms=self._tap_ms)
            return
        element = self.find(text, desc=desc, id=id, xpath=xpath, timeout=timeout)
        self._call("click", element.click)

    def long_press(self, x: int, y: int, *, duration_ms: int = 800) -> None:
        self._pointer([(x, y)], hold_ms=duration_ms)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, *, duration_ms: int = 300) -> None:
        self._pointer([(x1, y1), (x2, y2)], hold_ms=0, move_ms=duration_ms)

    def type(self, text: str, *, into: str | None = None, id: str | None = None, desc: str | None = None) -> None:  # noqa: A002
        """Type into a field found by its text/hint (`into`), id or desc; clears nothing."""
        element = self.find(into, id=id, desc=desc) if (into or id or desc) else self._focused()
        self._call("send keys", lambda: element.send_keys(text))

    def clear(self, *, into: str | None = None, id: str | None = None, desc: str | None = None) -> None:  # noqa: A002
        element = self.find(into, id=id, desc=desc)
        self._call("clear", element.clear)

    def back(self) -> None:
        self._call("back", self.driver.back)

    def activate_app(self, package: str) -> None:
        self._call(f"activate {package}", lambda: self.driver.activate_app(package))

    def terminate_app(self, package: str) -> bool:
        return bool(self._call(f"terminate {package}", lambda: self.driver.terminate_app(package)))

    def pull_to_refresh(self) -> bool:
        """Drag down from the top of the first scrollable list; False when none is on screen."""
        lists = [n for n in self.ui_tree().nodes() if n.scrollable and n.bounds is not None]
        if not lists:
            return False
        box = lists[0].bounds
        assert box is not None
        x = (box.left + box.right) // 2
        start = box.top + max(10, box.height // 20)
        end = min(box.bottom - 1, start + max(300, box.height // 2))
        self.swipe(x, start, x, end, duration_ms=400)
        return True

    def _focused(self) -> WebElement:
        try:
            return self.driver.switch_to.active_element
        except WebDriverException as exc:
            raise DeviceError(f"no focused field to type into on {self.url}: {exc.msg}") from exc

    def _pointer(self, points: list[tuple[int, int]], *, hold_ms: int, move_ms: int = 0) -> None:
        finger = PointerInput(interaction.POINTER_TOUCH, "finger")
        builder = ActionBuilder(self.driver, mouse=finger, duration=0)
        first = points[0]
        builder.pointer_action.move_to_location(int(first[0]), int(first[1]))
        builder.pointer_action.pointer_down()
        if hold_ms:
            builder.pointer_action.pause(hold_ms / 1000)
        for px, py in points[1:]:
            finger.create_pointer_move(duration=move_ms, x=int(px), y=int(py))
        builder.pointer_action.release()
        self._call("pointer actions", builder.perform)

    # -- sim-only ------------------------------------------------------------------------
    def set_faults(self, **faults: Any) -> None:
        """Change the simulated phone's fault injection (refresh_delay, drop_tap_rate, ...)."""
        self._require_sim("set_faults")
        self._call("set faults", lambda: self.driver.execute_script("mobile: guistateFaults", faults))

    def action_log(self) -> list[dict[str, Any]]:
        """What really happened on the simulated phone (effective actions only)."""
        self._require_sim("action_log")
        return list(self._call("action log", lambda: self.driver.execute_script("mobile: guistateActionLog", {})))

    def ground_truth(self) -> dict[str, Any]:
        self._require_sim("ground_truth")
        return dict(self._call("ground truth", lambda: self.driver.execute_script("mobile: guistateGroundTruth", {})))

    def _require_sim(self, what: str) -> None:
        if not self.is_sim:
            raise DeviceError(f"{what}() exists only on the simulated phone; this device is {self.url}")

    # -- plumbing ------------------------------------------------------------------------
    def _call(self, what: str, fn: Any) -> Any:
        try:
            return fn()
        except WebDriverException as exc:
            raise DeviceError(f"{what} failed on {self.url}: {(exc.msg or str(exc)).strip()}") from exc

    def close(self) -> None:
        """End the Appium session; a device that is already gone is not an error here."""
        try:
            self.driver.quit()
        except WebDriverException:
            pass  # quitting a dead session: nothing recorded is lost, the test result stands

    def box_of(self, element: WebElement) -> Box:
        rect = self._call("rect", lambda: element.rect)
        return Box.from_xywh(rect["x"], rect["y"], rect["width"], rect["height"])
