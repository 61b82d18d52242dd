"""The input part of `Device`: taps, gestures, typing, back and pull-to-refresh.

Coordinates are screenshot pixels (`_pointer` converts to driver units); every input is counted
(`_act`) before it is sent, so a tree read afterwards cannot pass for the earlier frame's. With
cross-run memory on, `tap` tells it what it found and asks it to heal a locator that found nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

from appium.webdriver.webelement import WebElement
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput

from pytest_guistate.core.detect import refreshable_list
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.devices import ios
from pytest_guistate.devices.errors import DeviceError, ElementNotFound
from pytest_guistate.devices.locating import one_locator
from pytest_guistate.devices.protocols import CanFind, CanObserve

__all__ = ["ElementFacts", "InputsMixin", "LocatorMemory"]


@dataclass(frozen=True)
class ElementFacts:
    """What the memory needs of a tapped element when no tree of its screen is read: its app
    ("" when the driver has no per-element package, e.g. XCUITest, a web context) and whether its
    pixels may show a secret (a password field, or any screen after a password was typed here)."""

    package: str
    private: bool


class LocatorMemory(Protocol):
    """What `tap` needs from the cross-run memory (the plugin's `MemoryBridge`).

    `screen`: the device's newest observation when it still shows the screen the element was
    found on (no input, no newer screenshot, the locator did not wait for the element to appear),
    else None; `facts` asks the element itself (no page source), for a screen whose tree is unread."""

    def found(self, kind: str, value: str, box: Box, function: str | None, *,
              screen: Observation | None = None, facts: Callable[[], ElementFacts] | None = None) -> None: ...

    def heal(self, kind: str, value: str, function: str | None) -> tuple[tuple[int, int] | None, str]: ...


class InputsMixin(CanFind, CanObserve):
    """What a test does to the screen, in screenshot pixels (set up by `Device.__init__`)."""

    on_secret: Callable[[str], None] | None
    memory: LocatorMemory | None
    _tap_ms: int
    _typed_secret: bool

    def tap(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,
        xpath: str | None = None,
        x: int | None = None,
        y: int | None = None,
        timeout: float = 0.0,
        function: str | None = None,
    ) -> None:
        """Tap an element (by text, desc, id or xpath) or a point (x, y in screenshot pixels).

        `function` names what the element does ("search", "add to cart"): with cross-run memory
        on, a locator that finds nothing after an app update is healed by that function's
        remembered looks in the current frame, and accepted only if the step's expectation holds.
        """
        if x is not None or y is not None:
            if x is None or y is None:
                raise TypeError("tap at a point needs both x and y")
            self._pointer([(x, y)], hold_ms=self._tap_ms)
            return
        try:
            element = self.find(text, desc=desc, id=id, xpath=xpath, timeout=timeout)
        except ElementNotFound as missing:
            if self.memory is None:
                raise
            point, reason = self.memory.heal(*one_locator(text=text, desc=desc, id=id, xpath=xpath), function)
            if point is None:
                raise ElementNotFound(f"{missing}; memory: {reason}") from None
            self._pointer([point], hold_ms=self._tap_ms)
            return
        if self.memory is not None:
            kind, value = one_locator(text=text, desc=desc, id=id, xpath=xpath)
            self.memory.found(kind, value, self.box_of(element), function, screen=self._still_shown(),
                              facts=lambda: self._element_facts(element))
        self._act("click", element.click)

    def _still_shown(self) -> Observation | None:
        """The newest observation while it still shows the screen the last find() searched: no
        input and no newer screenshot since, and the element was there at once (not waited for)."""
        if self._newest is None or self._waited:
            return None
        observation, shot, inputs = self._newest
        return observation if (shot, inputs) == (self._shots, self.action_count) else None

    def _element_facts(self, element: WebElement) -> ElementFacts:
        """The element's app and privacy from the element itself: two small requests instead of a
        page source. Only UiAutomator2 (and the sim) name a package per element."""
        if self.is_web or self.platform == "ios":
            return ElementFacts("", self._typed_secret)  # no app to learn under: nothing asked
        package = self._call("package attribute", lambda: element.get_attribute("package"))
        return ElementFacts(str(package or ""), self._typed_secret or self._is_password(element))

    def long_press(self, x: int, y: int, *, duration_ms: int = 800) -> None:
        self._pointer([(x, y)], hold_ms=duration_ms)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, *, duration_ms: int = 300) -> None:
        self._pointer([(x1, y1), (x2, y2)], hold_ms=0, move_ms=duration_ms)

    def type(self, text: str, *, into: str | None = None, id: str | None = None, desc: str | None = None,
             xpath: str | None = None) -> None:
        """Type into a field found by its text (`into`), id, desc or xpath, else the focused one; clears nothing."""
        located = into or id or desc or xpath
        element = self.find(into, id=id, desc=desc, xpath=xpath) if located else self._focused()
        if (self.on_secret is not None or self.memory is not None) and self._is_password(element):
            self._typed_secret = True
            if self.on_secret is not None:
                self.on_secret(text)  # registered before it is typed, so no frame or record can carry it
        self._act("send keys", lambda: element.send_keys(text))

    def _is_password(self, element: WebElement) -> bool:
        """Android marks secure fields `password="true"`, iOS by their type
        (`XCUIElementTypeSecureTextField`); a web page uses `type="password"`."""
        if self.platform == "ios":
            value = self._call("element type", lambda: element.get_attribute("type"))
            return str(value) == ios.SECURE_FIELD
        attribute = "type" if self.is_web else "password"
        value = self._call("password attribute", lambda: element.get_attribute(attribute))
        return str(value).lower() == ("password" if self.is_web else "true")

    def clear(self, *, into: str | None = None, id: str | None = None, desc: str | None = None) -> None:
        element = self.find(into, id=id, desc=desc)
        self._act("clear", element.clear)

    def back(self) -> None:
        """The back key; on iOS the navigation bar's back button, else an edge swipe (`DeviceError`
        naming why when the screen has neither, e.g. an open alert or the root of a stack)."""
        if self.platform != "ios":
            self._act("back", self.driver.back)
            return
        kind, box, why = ios.back_target(self._current_tree())
        if kind == "button" and box is not None:
            self._pointer([box.center], hold_ms=self._tap_ms)
        elif kind == "swipe":
            width, height = self.size
            self.swipe(max(1, round(2 * self.scale)), height // 2, width * 2 // 3, height // 2, duration_ms=300)
        else:
            raise DeviceError(f"back() on {self.url}: {why}")


    def pull_to_refresh(self) -> bool:
        """Drag down from the top of the first scrollable list (iOS: the first table, collection or
        scroll view); False when none is on screen."""
        # the step loop has just read this screen's tree to decide on the refresh: no second fetch
        tree = self._current_tree()
        if self.platform == "ios":
            target = refreshable_list(tree)
            lists = [target] if target is not None and target.bounds is not None else []
        else:
            lists = [n for n in tree.nodes() if n.scrollable and n.bounds is not None]
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
            # the Appium driver builds its own WebElement class; selenium's stub types say otherwise
            return cast(WebElement, self.driver.switch_to.active_element)
        except WebDriverException as exc:
            raise DeviceError(f"no focused field to type into on {self.url}: {exc.msg}") from exc

    def _pointer(self, points: list[tuple[int, int]], *, hold_ms: int, move_ms: int = 0) -> None:
        scale = self.scale
        points = [(round(px / scale), round(py / scale)) for px, py in points]  # screenshot px -> driver units
        finger = PointerInput(interaction.POINTER_TOUCH, "finger")
        # duration=0: the default pointer move takes 250 ms, which a real server honours.
        builder = ActionBuilder(self.driver, mouse=finger, duration=0)
        first = points[0]
        builder.pointer_action.move_to_location(int(first[0]), int(first[1]))
        builder.pointer_action.pointer_down()
        if hold_ms:
            builder.pointer_action.pause(hold_ms / 1000)
        for px, py in points[1:]:
            finger.create_pointer_move(duration=move_ms, x=int(px), y=int(py))
        builder.pointer_action.release()
        self._act("pointer actions", builder.perform)

