"""The locating part of `Device`: one element by exactly one locator, and its box.

Tests say what to touch (a text, a description, a resource id, an XPath); this turns it into the
platform's strategy (UiAutomator2, XCUITest predicates in `devices/ios.py`, DOM XPath in
`devices/web.py`) and, when nothing matches, says what is on screen instead.
"""

from __future__ import annotations

import time

from appium.webdriver.common.appiumby import AppiumBy
from appium.webdriver.webelement import WebElement
from selenium.common.exceptions import (
    InvalidSelectorException,
    NoSuchElementException,
    WebDriverException,
)

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices import ios, web
from pytest_guistate.devices.check_finding import java_literal
from pytest_guistate.devices.errors import DeviceError, ElementNotFound
from pytest_guistate.devices.protocols import CanFind, CanObserve

__all__ = ["LocatingMixin", "one_locator"]


def one_locator(**locators: str | None) -> tuple[str, str]:
    """The one (kind, value) given among text=, desc=, id=, xpath=; anything else is a usage error."""
    given = [(kind, value) for kind, value in locators.items() if value is not None]
    if len(given) != 1:
        raise TypeError(f"give exactly one locator (text=, desc=, id= or xpath=), got {given or 'none'}")
    return given[0]


class LocatingMixin(CanFind, CanObserve):
    """`find`, `exists` and `box_of` of one session (the tree names what is on screen on a miss)."""

    _waited: bool  # set by find(): declared where it is assigned (the protocol only says it exists)

    def find(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,
        xpath: str | None = None,
        timeout: float = 0.0,
    ) -> WebElement:
        """Find one element by exactly one locator; `ElementNotFound` lists what is on screen."""
        by, value = self._locator(text=text, desc=desc, id=id, xpath=xpath)
        deadline = time.monotonic() + timeout
        self._waited = False
        while True:
            try:
                if self.is_web:
                    found = self._web_pick(by, value)
                    if found is not None:
                        return found
                else:
                    return self.driver.find_element(by, value)
            except NoSuchElementException:
                pass
            except InvalidSelectorException as exc:
                raise DeviceError(f"locator {by}={value!r} is not valid on {self.url}: {exc.msg}") from exc
            except WebDriverException as exc:
                raise DeviceError(f"find {by}={value!r} failed on {self.url}: {exc.msg}") from exc
            if time.monotonic() >= deadline:
                break
            self._waited = True
            time.sleep(0.1)
        hint = ""
        if self.platform == "ios" and id is not None and ":id/" in id:
            hint = " (an Android resource id: on iOS, id= is the accessibility identifier, the element's name)"
        raise ElementNotFound(f"no element with {by}={value!r}{hint}; on screen: {self._visible_labels()}")

    def exists(self, text: str | None = None, **locator: str) -> bool:
        by, value = self._locator(text=text, **locator)
        try:
            if self.is_web:
                return self._web_pick(by, value) is not None
            return bool(self.driver.find_elements(by, value))
        except WebDriverException as exc:
            raise DeviceError(f"find {by}={value!r} failed on {self.url}: {exc.msg}") from exc

    def _web_pick(self, by: str, value: str) -> WebElement | None:
        return web.pick_reachable(self.driver, value)  # type: ignore[no-any-return]  # web locators are XPath

    def _locator(
        self, *, text: str | None = None, desc: str | None = None, id: str | None = None, xpath: str | None = None
    ) -> tuple[str, str]:
        kind, value = one_locator(text=text, desc=desc, id=id, xpath=xpath)
        if self.is_web:
            return web.web_locator(kind, value)
        if self.platform == "ios":
            return ios.ios_locator(kind, value)
        if kind == "text":  # a UiSelector, not XPath: the driver dumps the window for an XPath (issue 24)
            return AppiumBy.ANDROID_UIAUTOMATOR, f"new UiSelector().text({java_literal(value)})"
        if kind == "desc":
            return AppiumBy.ACCESSIBILITY_ID, value
        if kind == "id":
            return AppiumBy.ID, value
        return AppiumBy.XPATH, value

    def _visible_labels(self, limit: int = 15) -> str:
        try:
            labels = [n.label for n in self.ui_tree().actionable()]
        except Exception as exc:  # noqa: BLE001 - the error we are reporting matters more; say what we lost
            return f"(page source unavailable: {exc})"
        shown = ", ".join(repr(label) for label in labels[:limit])
        return shown + (f" … and {len(labels) - limit} more" if len(labels) > limit else "") or "(nothing actionable)"

    def box_of(self, element: WebElement) -> Box:
        """An element's rectangle in screenshot pixels."""
        rect = self._call("rect", lambda: element.rect)
        x, y, w, h = (float(rect[k]) * self.scale for k in ("x", "y", "width", "height"))  # CSS px may be fractional
        return Box(round(x), round(y), round(x + w), round(y + h))
