"""`Device`: a small typed API over one Appium session, the same for the sim and a real server.

Tests mostly say *what* to touch (a text, a description, a resource id); the device turns that
into Appium calls. `.driver` is the raw Appium client for everything else. `Device` also
implements the core's `Screen` protocol (`observe`, `pull_to_refresh`), which is all the step
loop needs.

Every coordinate `Device` takes or returns is in *screenshot pixels*, whatever the driver's own
unit (issue 6): UiAutomator2 and the sim use pixels, XCUITest uses points (screenshots are 2-3x),
and a web context (the chromium driver) uses CSS pixels (screenshots are x devicePixelRatio).
`scale` converts; web contexts get their tree and locators from `devices/web.py`.

The class is assembled from typed mixins, one concern each (their shared needs are the
`Protocol`s of `devices/protocols.py`): `observing.py` (screenshots, trees, `observe`),
`locating.py` (`find`, `exists`, `box_of`), `inputs.py` (taps, gestures, typing, back,
pull-to-refresh) and `apps.py` (apps, `mobile:`, home, the sim's faults and logs). This module
keeps the session itself: what kind of screen it drives, its scale and size, and the calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from appium.webdriver.webdriver import WebDriver
from selenium.common.exceptions import WebDriverException

from pytest_guistate.core.observation import Observation
from pytest_guistate.devices import ios, web
from pytest_guistate.devices.apps import AppsMixin
from pytest_guistate.devices.devtools_capture import DevtoolsScreenshots
from pytest_guistate.devices.errors import (
    CapabilityUnavailable,
    DeviceError,
    ElementNotFound,
    driver_call,
)
from pytest_guistate.devices.inputs import ElementFacts, InputsMixin, LocatorMemory
from pytest_guistate.devices.locating import LocatingMixin
from pytest_guistate.devices.observing import ObservingMixin

__all__ = ["CapabilityUnavailable", "Device", "DeviceError", "ElementFacts", "ElementNotFound"]


class Device(AppsMixin, ObservingMixin, LocatingMixin, InputsMixin):
    """One phone behind one Appium session."""

    def __init__(self, driver: WebDriver, *, url: str, is_sim: bool = False, tap_ms: int = 50) -> None:
        self.driver = driver
        self.url = url
        self.is_sim = is_sim
        self._tap_ms = tap_ms
        self._size: tuple[int, int] | None = None
        self._first_frame_size: tuple[int, int] | None = None  # the frame-size limit's basis (core/frame.py)
        self._scale: float | None = None
        self._web: bool | None = None
        self._ios: bool | None = None
        # Called with text typed into a password field, so reports can scrub it (set by the plugin).
        self.on_secret: Callable[[str], None] | None = None
        # Cross-run memory of UI functions (set by the plugin when --guistate-memory is on).
        self.memory: LocatorMemory | None = None
        # Decode each screenshot in the background while the page source is fetched (the plugin
        # turns it off at tier `off`, where no oracle looks at pixels).
        self.decode_ahead = True
        # Tree on demand (issue 12): observe() takes the screenshot; the page source is fetched
        # when something first reads `observation.tree`, and only while that observation is
        # still the newest and no input was sent since (else `TreeExpired`). False = fetch it
        # right after the screenshot, as before.
        self.tree_on_demand = True
        self.find_checks = True  # locator checks by a find, not a page source (devices/check_finding.py)
        # Screenshots through DevTools on desktop Chromium (`devtools_capture.py`): None = when the
        # capabilities say chromedriver, True = try on any session, False = always the W3C route.
        self.devtools_screenshots: bool | None = None
        self._devtools: DevtoolsScreenshots | None = None
        self.page_source_calls = 0  # every page source (or web DOM walk) this device fetched
        # inputs sent (taps, keys, back, app switches, mobile: commands); the session reads it to
        # tell a still-fresh observation from one an input outside any step has made stale
        self.action_count = 0
        self._shots = 0  # observations taken
        self._waited = False  # the last find() polled: its element appeared after the newest screenshot
        self._typed_secret = False  # a password was typed in this session: any screen may show it
        self._newest: tuple[Observation, int, int] | None = None  # with the shot and input counts it was taken at

    @property
    def is_web(self) -> bool:
        """A browser/webview session: HTML page source, CSS-pixel coordinates, DOM locators."""
        if self._web is None:
            caps = getattr(self.driver, "capabilities", None) or {}
            self._web = not self.is_sim and bool(caps.get("browserName"))
        return self._web

    @property
    def platform(self) -> str:
        """"ios" for an XCUITest session (the sim's iOS persona too), else "android"."""
        if self._ios is None:
            caps = getattr(self.driver, "capabilities", None) or {}
            self._ios = not self.is_web and ios.is_ios(caps)
        return "ios" if self._ios else "android"

    @property
    def scale(self) -> float:
        """Screenshot pixels per driver unit (1 for the sim and UiAutomator2, 2-3 for XCUITest
        points, devicePixelRatio for a web context), measured once per session."""
        if self._scale is None:
            # UiAutomator2 bounds are screenshot pixels; its window rect leaves out a side navigation
            # bar in landscape, so a measured ratio would be wrong there
            self._scale = 1.0 if self.platform == "android" and not self.is_web else self._measure_scale()
        return self._scale

    def _measure_scale(self) -> float:
        if self.is_web:
            _, _, ratio = self._call("viewport geometry", lambda: self.driver.execute_script(web.GEOMETRY_JS))
            return float(ratio)
        rect = self._call("window rect", self.driver.get_window_rect)
        shot_width = self.size[0]
        ratio = shot_width / float(rect["width"]) if rect.get("width") else 1.0
        return 1.0 if abs(ratio - 1.0) < 0.02 else round(ratio, 4)

    @property
    def size(self) -> tuple[int, int]:
        """Screen size in the pixels of screenshots (what taps and boxes use).

        Off the sim it is read from a screenshot's PNG header: a browser's window rect is the
        outer window, not the emulated phone, and XCUITest's is in points.
        """
        if self._size is None:
            if self.is_sim and self.platform == "android":
                rect = self._call("window rect", self.driver.get_window_rect)
                self._size = (int(rect["width"]), int(rect["height"]))
            else:
                self._size = self.screenshot(source="size probe").size
        return self._size

    # -- plumbing ------------------------------------------------------------------------
    def _call(self, what: str, fn: Any) -> Any:
        return driver_call(what, self.url, fn)

    def _act(self, what: str, fn: Any) -> Any:
        """An input: counted first, so a tree read afterwards cannot pass for the earlier frame's."""
        self.action_count += 1
        return driver_call(what, self.url, fn)

    def close(self) -> None:
        """End the Appium session; a device that is already gone is not an error here."""
        try:
            self.driver.quit()
        except WebDriverException:
            pass  # quitting a dead session: nothing recorded is lost, the test result stands
