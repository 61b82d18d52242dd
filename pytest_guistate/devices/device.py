"""`Device`: a small typed API over one Appium session, the same for the sim and a real server.

Tests mostly say *what* to touch (a text, a description, a resource id); the device turns that
into Appium calls. `.driver` is the raw Appium client for everything else. `Device` also
implements the core's `Screen` protocol (`observe`, `pull_to_refresh`), which is all the step
loop needs.

Every coordinate `Device` takes or returns is in *screenshot pixels*, whatever the driver's own
unit (issue 6): UiAutomator2 and the sim use pixels, XCUITest uses points (screenshots are 2-3x),
and a web context (the chromium driver) uses CSS pixels (screenshots are x devicePixelRatio).
`scale` converts; web contexts get their tree and locators from `devices/web.py`. A native app's web
view context (issue 37) keeps the phone's pixels: its tree is the native tree with the page's DOM
mapped in, DOM boxes go through `devices/hybrid.py`, and taps by point are sent from NATIVE_APP; the
device follows the current context through every switch its driver sends (`context`, `switch_context`).

The class reads top to bottom as one session: what kind of screen it drives (its scale and size),
the calls, then observing (screenshots, trees, `observe`: a screenshot decoded ahead, and the tree
fetched on demand only while the screen is still current, issue 12), locating (`find`, `exists`,
`box_of`: the platform's strategy from `devices/ios.py` and `devices/web.py`, and on a miss what
is on screen instead), inputs (taps, gestures, typing, back, pull-to-refresh: each counted before
it is sent, so a tree read afterwards cannot pass for the earlier frame's; with cross-run memory
on, `tap` tells it what it found and asks it to heal a locator that found nothing) and apps (app
lifecycle, `mobile:`, home, the sim's faults and logs; a browser session has no apps).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, cast

from appium.webdriver.common.appiumby import AppiumBy
from appium.webdriver.mobilecommand import MobileCommand
from appium.webdriver.webdriver import WebDriver
from appium.webdriver.webelement import WebElement
from selenium.common.exceptions import (
    InvalidSelectorException,
    NoSuchElementException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput

from pytest_guistate.core.detect import refreshable_list
from pytest_guistate.core.finding import Finder
from pytest_guistate.core.frame import Frame, FrameError, check_png
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, TreeExpired
from pytest_guistate.core.uitree import UITree, UITreeError, parse_page_source
from pytest_guistate.devices import android, check_finding, hybrid, ios, web
from pytest_guistate.devices.check_finding import java_literal
from pytest_guistate.devices.devtools_capture import DevtoolsScreenshots, wants_devtools
from pytest_guistate.devices.errors import (
    CapabilityUnavailable,
    ContextUnavailable,
    DeviceError,
    ElementAmbiguous,
    ElementNotFound,
    ElementNotReady,
    WebViewGone,
    driver_call,
    screenshot_payload_text,
)
from pytest_guistate.devices.timeouts import LOCATOR_POLL_S, LOCATOR_TIMEOUT_S, DeviceGone, DeviceTimeout

__all__ = [
    "KNOWN_SCREENS",
    "CapabilityUnavailable",
    "ContextUnavailable",
    "Device",
    "DeviceError",
    "ElementFacts",
    "ElementNotFound",
    "ElementNotReady",
    "WebViewGone",
]

KNOWN_SCREENS = 8  # trees of the last screens read, kept by their screenshot's bytes (a few MB at most)


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
    else None; `box` and `facts` ask the element itself (a request each, no page source): the
    memory calls them only for a look it must learn."""

    def found(self, kind: str, value: str, box: Box | Callable[[], Box], function: str | None, *,
              screen: Observation | None = None, facts: Callable[[], ElementFacts] | None = None) -> None: ...

    def heal(self, kind: str, value: str, function: str | None) -> tuple[tuple[int, int] | None, str]: ...


# what each locator kind matched exactly, per platform (`Device._locator`, `ios_locator`): the
# UINode field on Android, the raw source attributes on iOS
_ANDROID_LOCATOR_FIELDS = {"desc": ("content_desc",), "id": ("resource_id",), "text": ("text",)}
_IOS_LOCATOR_ATTRIBUTES = {"id": ("name",), "desc": ("label", "name"), "text": ("label", "value")}


def one_locator(**locators: str | None) -> tuple[str, str]:
    """The one (kind, value) given among text=, desc=, id=, xpath=; anything else is a usage error."""
    given = [(kind, value) for kind, value in locators.items() if value is not None]
    if len(given) != 1:
        raise TypeError(f"give exactly one locator (text=, desc=, id= or xpath=), got {given or 'none'}")
    return given[0]


class Device:
    """One phone behind one Appium session."""

    def __init__(self, driver: WebDriver, *, url: str, is_sim: bool = False, tap_ms: int = 50) -> None:
        self.driver = driver
        self.url = url
        self.is_sim = is_sim
        self._tap_ms = tap_ms
        self._size: tuple[int, int] | None = None
        self._first_frame_size: tuple[int, int] | None = None  # the frame-size limit's basis (core/frame.py)
        # the last screenshot as the driver sent it, the size limit it was checked against, its Frame
        self._last_shot: tuple[str | bytes, tuple[int, int] | None, Frame] | None = None
        self._scale: float | None = None
        # a browser page's zoom (`web.PageZoom`) and the input count it was measured at: every script that
        # measures boxes brings it, so a tap by point uses the factor of the boxes it aims at, and
        # after an input (which may have opened another page) it is measured afresh
        self._zoom: tuple[web.PageZoom, int] | None = None
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
        # Locators wait up to this many seconds for their element to be ready (the plugin sets it from
        # --guistate-locator-timeout); a call's timeout= overrides it.
        self.locator_timeout = LOCATOR_TIMEOUT_S
        # Phones: a found element must also be enabled, asked in the find itself (UiAutomator2 and the
        # sim find only displayed elements; no tree tells motion). False: found is ready.
        self.check_enabled = True
        # Called when a locator waited for its element, right before the input is sent: the plugin's
        # session takes the step's before-screen again (the screen the action really meets).
        self.on_waited: Callable[[], None] | None = None
        self.find_checks = True  # locator checks by a find, not a page source (devices/check_finding.py)
        # Screens this session read, by the bytes of their screenshot (issue 24): a screenshot byte for
        # byte like one of the last `known_screens` takes that screen's tree without a page source
        # (back on a list after closing a dialog, a worker session's launch screen after its reset).
        # 0 reads every new screenshot's tree.
        self.known_screens = KNOWN_SCREENS
        self._known_screens: OrderedDict[str, UITree] = OrderedDict()
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
        self._found_box: Box | None = None  # the last web find's box in the screenshot when found
        # the last web find's element and the point (CSS px) a click must go to instead of an element click:
        # the document's hit test there reports its shadow host (issue 44)
        self._found_point: tuple[WebElement, tuple[float, float]] | None = None
        self._typed_secret = False  # a password was typed in this session: any screen may show it
        self._newest: tuple[Observation, int, int] | None = None  # with the shot and input counts it was taken at
        # (shots, inputs, answer, when) a script last said of the page's motion (web: `web.motion_answer`)
        self._motion: tuple[int, int, bool | float, float] | None = None
        # (shots, inputs, ms, when) a script last said the page had been quiet (web: `web.quiet_answer`)
        self._quiet: tuple[int, int, float, float] | None = None
        self._shot_at: float | None = None  # when the newest observation's screenshot was asked for
        # The current context (issue 37): None until the session is known to have several (a switch was
        # seen, or `appium:autoWebview` started it in a web view); followed through every switch this
        # driver sends (`_follow_switches`), so knowing it costs no request.
        self._context: str | None = None
        self._inner_switch = False  # the device's own round trip to NATIVE_APP (not the test's switch)
        self._how = "driver"  # who is switching: "switch_context" while that method runs
        # Called after the context changed: (before, after, how: "switch_context" | "driver", the contexts
        # listed when switch_context asked, else []); the plugin's session records it as a step
        self.on_context: Callable[[str, str, str, list[str]], None] | None = None
        self._listed: list[str] = []
        self.context_reads = 0  # GET /context requests: only where a switch may have gone unseen
        # Behind a Selenium Grid hub (set by the plugin): given a failed call's error, the named death of the
        # node that ran this session (`hub.named_death`), or None; every call path asks it (issue 44)
        self.named_death: Callable[[str], str | None] | None = None
        # A web view context that went away while the device was in it (issue 44): the device keeps naming it
        # until the test switches, and every call there raises `WebViewGone`, while the plugin reads the
        # screen (a step's after-screen) from NATIVE_APP, where the driver is
        self._gone: str | None = None
        self._reading_native = False  # the plugin is reading the screen of a gone web view from NATIVE_APP
        # a hybrid session in NATIVE_APP: the web view context the native screen last showed (its page is
        # mapped into the screen's tree, as in the web view context), "" when none was shown
        self._shown_webview = ""
        self._follow_switches()

    @property
    def browser(self) -> bool:
        """A browser session (`browserName`): the whole session is one page, the screenshot its viewport."""
        if self._web is None:
            caps = getattr(self.driver, "capabilities", None) or {}
            self._web = not self.is_sim and bool(caps.get("browserName"))
        return self._web

    @property
    def system_bars(self) -> bool:
        """Whether the screenshot shows the system's bars (a phone's status and navigation bars), which
        the oracle sets aside. A desktop browser's screenshot is its page's viewport alone: a band at
        its top is the page's own header, and a change there is the page's (a phone's browser, a
        native app's web view and the sim show the whole screen, bars included)."""
        if not self.browser:
            return True
        caps = getattr(self.driver, "capabilities", None) or {}
        return str(caps.get("platformName") or "").lower() in ("android", "ios")

    @property
    def is_web(self) -> bool:
        """The current context is a web one (a browser session, or a native app's web view): HTML page
        source, DOM locators and checks."""
        return self.browser or self.in_webview

    @property
    def in_webview(self) -> bool:
        """A native session whose current context is a web view (issue 37): the tree is the native one
        with the page mapped in, coordinates stay the phone's (`devices/hybrid.py`)."""
        return not self.browser and not self._reading_native and hybrid.is_web_context(self.context)

    @property
    def webview_gone(self) -> str:
        """The web view context the device is still in although it went away (the action closed it or
        left for a native screen), "" when none: every call there raises `WebViewGone` until the test
        switches (`switch_context`); the plugin reads the screen from NATIVE_APP meanwhile."""
        return self._gone if self._gone is not None and self._gone == self._context else ""

    @property
    def hybrid_native(self) -> bool:
        """A hybrid session (one seen in a web view context) in NATIVE_APP: its screen's tree has the page
        of a web view on screen mapped in, so a native find that misses leaves the check to the tree."""
        return not self.browser and not self._reading_native and self._context == hybrid.NATIVE_CONTEXT

    @property
    def context(self) -> str:
        """The current context's name ("" for a session never seen in more than one). Costs no request:
        the device follows every switch its driver sends; a session started with `appium:autoWebview`
        is asked once."""
        if self._context is None:
            self._context = ""  # set first: a failed read must not ask again from inside its own error
            caps = getattr(self.driver, "capabilities", None) or {}
            if not self.browser and (caps.get("appium:autoWebview") or caps.get("autoWebview")):
                self._context = self._read_context()
        return self._context or ""

    @property
    def contexts(self) -> list[str]:
        """The contexts the session lists now (`NATIVE_APP`, `WEBVIEW_<package>`, ...): one request."""
        listed = driver_call("contexts", self.url, lambda: self.driver.contexts)  # allowed in a gone web view too
        return [str(name) for name in listed or ()]

    def switch_context(self, name: str) -> None:
        """Switch to a listed context (`ContextUnavailable` naming those listed otherwise); the plugin
        records it as a step. In a web view context the tree, locators and checks are the page's, the
        screenshot and every box stay the phone's."""
        listed = self.contexts
        if name not in listed:
            raise ContextUnavailable(f"switch_context({name!r}) on {self.url}: no such context; the session "
                                     f"lists {listed} (a web view context appears once its page is debuggable "
                                     "and shown: wait for it, or check the app enables WebView debugging)")
        self._how, self._listed = "switch_context", listed
        try:
            self._call(f"switch to context {name}", lambda: self.driver.switch_to.context(name))
        finally:
            self._how, self._listed = "driver", []

    def _read_context(self) -> str:
        """Ask the driver (where a switch may have gone unseen: another client on this session)."""
        self.context_reads += 1
        return str(self._call("current context", lambda: self.driver.current_context) or "")

    def _follow_switches(self) -> None:
        """Notice every context switch sent through this driver, the test's own
        `driver.switch_to.context(...)` included, by wrapping its `execute` (no request of its own)."""
        execute = getattr(self.driver, "execute", None)
        if execute is None:
            return
        original = getattr(execute, "_guistate_original", execute)
        device = self

        def following(command: Any, params: dict[str, Any] | None = None) -> Any:
            answer = original(command, params)
            if command == MobileCommand.SWITCH_TO_CONTEXT and not device._inner_switch:
                name = (params or {}).get("name")
                device._switched(str(name) if name else hybrid.NATIVE_CONTEXT)
            return answer

        following._guistate_original = original  # type: ignore[attr-defined]  # re-wrapped by a later Device
        self.driver.execute = following  # type: ignore[method-assign,assignment]  # an instance attribute over the method

    def _switched(self, name: str) -> None:
        before = self._context or (hybrid.NATIVE_CONTEXT if not self.browser else "")
        self._context = name
        self._shown_webview = ""
        if hybrid.is_web_context(before) and name == hybrid.NATIVE_CONTEXT and self._gone != before:
            self._shown_webview = before  # its page is still on screen: not a web view that appeared
        self._gone = None  # the test switched: out of a gone web view, wherever it went
        self.action_count += 1  # a tree read after the switch must not pass for an earlier frame's
        if self.on_context is not None:
            self.on_context(before, name, self._how, self._listed)

    def _in_native(self, fn: Callable[[], Any]) -> Any:
        """`fn` run in NATIVE_APP, the web view context restored after: the native half of a hybrid
        screen (its tree, a tap by point) without the test seeing a switch."""
        return self._in_context(hybrid.NATIVE_CONTEXT, fn)

    def _in_context(self, name: str, fn: Callable[[], Any]) -> Any:
        """`fn` run in context `name`, the current one restored after, without the test seeing a switch
        (NATIVE_APP from a web view; a web view's page from NATIVE_APP)."""
        self._refuse_gone(f"switch to context {name}")  # a round trip out of a gone web view cannot come back
        back_to = self.context
        self._inner_switch = True
        try:
            self._call(f"switch to context {name}", lambda: self.driver.switch_to.context(name))
            try:
                return fn()
            finally:
                self._switch_back(back_to)
        finally:
            self._inner_switch = False

    def _switch_back(self, name: str) -> None:
        """The end of a round trip to NATIVE_APP; a web view gone meanwhile is `WebViewGone` (the driver
        stays in NATIVE_APP, the device keeps naming the lost context until the test switches)."""
        try:
            self._call(f"switch back to context {name}", lambda: self.driver.switch_to.context(name))
        except DeviceError as failed:
            self._inner_switch = False
            self._check_webview(f"switch back to context {name}", failed)
            raise

    @property
    def platform(self) -> str:
        """"ios" for an XCUITest session (the sim's iOS persona too), else "android"."""
        if self._ios is None:
            caps = getattr(self.driver, "capabilities", None) or {}
            self._ios = not self.browser and ios.is_ios(caps)
        return "ios" if self._ios else "android"

    @property
    def scale(self) -> float:
        """Screenshot pixels per driver unit (1 for the sim and UiAutomator2, 2-3 for XCUITest
        points, measured once per session; a native app's web view keeps the native scale). A browser
        session's follows the page: devicePixelRatio x its zoom (`page_zoom`)."""
        if self.browser:
            return self.page_zoom().factor
        if self._scale is None:
            # UiAutomator2 bounds are screenshot pixels; its window rect leaves out a side navigation
            # bar in landscape, so a measured ratio would be wrong there
            self._scale = 1.0 if self.platform == "android" and not self.browser else self._measure_scale()
        return self._scale

    def page_zoom(self) -> web.PageZoom:
        """How the browser page maps to the screenshot (`web.PageZoom`): what the last script that
        measured boxes said, when no input was sent since; else asked (one script)."""
        if self._zoom is not None and self._zoom[1] == self.action_count:
            return self._zoom[0]
        answer = self._call("viewport geometry", lambda: self.driver.execute_script(web.GEOMETRY_JS))
        try:
            zoom = web.zoom_from_script(answer)
        except WebDriverException as exc:
            raise DeviceError(f"page geometry on {self.url}: {exc.msg}") from None
        return self.saw_zoom(zoom)

    def saw_zoom(self, zoom: web.PageZoom) -> web.PageZoom:
        """A script on the current page (tree walk, locator, rect) said how it maps: boxes from it and
        taps until the next input use that factor."""
        if self.browser:
            self._zoom = (zoom, self.action_count)
        return zoom

    def _measure_scale(self) -> float:
        shot_width = self.size[0]
        rect = self._native_call("window rect", self.driver.get_window_rect)
        ratio = shot_width / float(rect["width"]) if rect.get("width") else 1.0
        return 1.0 if abs(ratio - 1.0) < 0.02 else round(ratio, 4)

    @property
    def size(self) -> tuple[int, int]:
        """Screen size in the pixels of screenshots (what taps and boxes use).

        Off the sim it is read from a screenshot's PNG header: a browser's window rect is the
        outer window, not the emulated phone, and XCUITest's is in points.
        """
        if self._size is None:
            if self.is_sim and self.platform == "android" and not self.in_webview:
                rect = self._call("window rect", self.driver.get_window_rect)
                self._size = (int(rect["width"]), int(rect["height"]))
            else:
                self._size = self.screenshot(source="size probe").size
        return self._size

    # -- plumbing ------------------------------------------------------------------------------
    def _call(self, what: str, fn: Any) -> Any:
        self._refuse_gone(what)
        try:
            return driver_call(what, self.url, fn)
        except DeviceTimeout as hung:
            if self.in_webview and not self._inner_switch:
                raise DeviceTimeout(self._proxied(hung)) from hung
            raise
        except DeviceError as failed:
            self._raise_if_died(failed)
            self._check_webview(what, failed)
            if self.in_webview and isinstance(failed.__cause__, TimeoutException):
                raise DeviceTimeout(self._proxied(failed)) from failed
            raise

    def _raise_if_died(self, failed: DeviceError) -> None:
        """A call that met a dead node behind a hub ends with its named death (`DeviceGone`), whichever call
        it was; the driver's error stays as the cause."""
        if self.named_death is None or isinstance(failed, DeviceGone):
            return
        why = self.named_death(str(failed))
        if why is not None:
            raise DeviceGone(f"{why} (met by: {failed})") from failed

    def _act(self, what: str, fn: Any) -> Any:
        """An input: counted first, so a tree read afterwards cannot pass for the earlier frame's."""
        self.action_count += 1
        return self._call(what, fn)

    def _proxied(self, error: Exception) -> str:
        return (f"{error} (in web view context {self.context}, whose commands the driver proxies to the page's "
                "browser engine; a screenshot there needs appium:nativeWebScreenshot: true on UiAutomator2)")

    def _native_call(self, what: str, fn: Any) -> Any:
        """A call whose answer is the native screen's (a window rect): from NATIVE_APP in a web view."""
        return self._in_native(lambda: self._call(what, fn)) if self.in_webview else self._call(what, fn)

    def _check_webview(self, what: str, failed: Exception) -> None:
        """After a failed call in a web view context: `WebViewGone` when the context is no longer listed
        (one request, only on failure), so the test reads why instead of a proxy's error."""
        if not self.in_webview or self._inner_switch:
            return
        name = self.context
        try:
            listed = [str(c) for c in self.driver.contexts or ()]
        except WebDriverException:
            return  # the session itself is in trouble: the original error says more
        if name not in listed:
            self._lost(name, listed)
            raise WebViewGone(f"{what} failed on {self.url}: the web view context {name} is gone (the session "
                              f"lists {listed}: the page navigated away or the app closed its web view); "
                              f"switch_context to a listed one. The driver said: {failed}") from failed

    def _lost(self, name: str, listed: list[str]) -> None:
        """The web view context the device is in went away: the driver goes to NATIVE_APP (where the plugin
        reads the screen now), the device keeps naming `name` (the test's next call there is `WebViewGone`)
        and the session journals it."""
        if self._gone == name:
            return
        self._gone, self._shown_webview = name, ""
        self._inner_switch = True
        try:
            self.driver.switch_to.context(hybrid.NATIVE_CONTEXT)
        except WebDriverException:
            pass  # a driver that left the context already: reads from NATIVE_APP work either way
        finally:
            self._inner_switch = False
        if self.on_context is not None:
            self.on_context(name, hybrid.NATIVE_CONTEXT, "gone", listed)

    def _refuse_gone(self, what: str) -> None:
        """A call in a web view context that went away is `WebViewGone` at once (no request), until the test
        switches; the plugin's own reads of the screen go to NATIVE_APP meanwhile."""
        gone = self.webview_gone
        if gone and not self._reading_native and not self._inner_switch and self._how != "switch_context":
            raise WebViewGone(f"{what} on {self.url}: the web view context {gone} went away while the device was in "
                              "it (the page left for a native screen, or the app closed its web view); the device "
                              "stays in it until the test switches: switch_context to a listed one "
                              f"({', '.join(self.contexts)})")

    @contextlib.contextmanager
    def _native_reads(self) -> Iterator[None]:
        """The plugin reads the screen of a gone web view from NATIVE_APP (where the driver went)."""
        was, self._reading_native = self._reading_native, True
        try:
            yield
        finally:
            self._reading_native = was

    def close(self) -> None:
        """End the Appium session; a device that is already gone is not an error here."""
        try:
            self.driver.quit()
        except WebDriverException:
            pass  # quitting a dead session: nothing recorded is lost, the test result stands

    # -- observing -----------------------------------------------------------------------------
    def screenshot(self, *, source: str = "") -> Frame:
        """A screenshot as a `Frame` (PNG bytes, decoded lazily)."""
        try:
            return self._screenshot(source)
        except DeviceError as failed:  # the DevTools route's own calls: a dead node is named there too
            self._raise_if_died(failed)
            raise

    def _screenshot(self, source: str) -> Frame:
        devtools = self._devtools_route()
        if devtools is not None and devtools.state == "on":
            return self._frame(devtools.capture(), source)
        encoded = devtools.take() if devtools is not None else None
        if encoded is None:
            encoded = self._call("screenshot", self.driver.get_screenshot_as_base64)
        return self._frame(encoded, source)

    def _frame(self, encoded: object, source: str) -> Frame:
        screen = self._size or self._first_frame_size
        last = self._last_shot
        if (last is not None and isinstance(encoded, (str, bytes)) and last[1] == screen
                and type(encoded) is type(last[0]) and encoded == last[0]):
            # the very answer of the last screenshot (a screen that did not change): its base64,
            # PNG and size checks passed and its decode is shared, not done again (issue 42)
            return last[2].again(source=source)
        try:
            png = base64.b64decode(encoded, validate=True)  # type: ignore[arg-type]  # checked here
        except (binascii.Error, ValueError, TypeError) as exc:
            raise FrameError(screenshot_payload_text(self.url, encoded, exc)) from None
        # names an HTML page, a truncated PNG, a 1x1, an all-black or an oversized frame (issue 22: from
        # its header, before any decode; the limit is relative to the session's screen once it is known)
        screen = self._size or self._first_frame_size
        check_png(png, self.url, screen)
        frame = Frame(png=png, timestamp=time.time(), source=source)
        if screen is None:
            self._first_frame_size = frame.size
        if isinstance(encoded, (str, bytes)):  # the first frame is within a limit of its own size
            self._last_shot = (encoded, self._size or self._first_frame_size, frame)
        return frame

    @property
    def screenshot_route(self) -> str:
        """How screenshots are taken: "w3c", "devtools", or "devtools (untried)" before the first."""
        devtools = self._devtools_route()
        if devtools is None or devtools.state == "off":
            return "w3c"
        return "devtools" if devtools.state == "on" else "devtools (untried)"

    def _devtools_route(self) -> DevtoolsScreenshots | None:
        wanted = self.devtools_screenshots
        if wanted is None:
            wanted = not self.is_sim and wants_devtools(getattr(self.driver, "capabilities", None) or {})
        if not wanted:
            return None
        if self._devtools is None:
            self._devtools = DevtoolsScreenshots(self.driver, self.url)
        return self._devtools

    def page_source(self) -> str:
        self.page_source_calls += 1
        return str(self._call("page source", lambda: self.driver.page_source))

    def ui_tree(self) -> UITree:
        """The accessibility tree with bounds in screenshot pixels (`UITreeError` on bad XML).

        A web context's page source is HTML without geometry, so there the tree comes from a
        script that walks the rendered DOM (`devices/web.py`); XCUITest points are scaled. In a
        native app's web view context it is the native tree with the page's nodes mapped into the
        web view (`_hybrid_tree`).
        """
        if self.browser:
            return self._web_tree()
        if self.in_webview:
            return self._hybrid_tree()
        source = self.page_source()
        if web.looks_like_html(source):
            # a switch this device did not see (another client on the session): ask where it is now
            self._context = self._read_context()
            if self.in_webview:
                return self._hybrid_tree()
            self._web = True  # HTML from a context not named as a web view: the DOM route for good
            return self._web_tree()
        native = self._native_tree(source)
        if self._context == hybrid.NATIVE_CONTEXT and not self._reading_native:
            return self._native_with_page(native)
        return native

    def _native_with_page(self, native: UITree) -> UITree:
        """A hybrid session's screen in NATIVE_APP (issue 44): the native tree with the page of the web view
        it shows mapped in (read through a round trip to the newest web view context listed), as in the web
        view context, so a check sees the page a native tap opened. A web view that appeared since the last
        tree is journaled."""
        host = hybrid.webview_node(native)
        if host is None or host.bounds is None:
            self._shown_webview = ""
            return native
        listed = self.contexts
        webs = [name for name in listed if hybrid.is_web_context(name)]
        if not webs:
            self._shown_webview = ""
            return native  # a web view that is not debuggable: what the native driver exposes of it
        name, bounds = webs[-1], host.bounds

        def read_page() -> tuple[UITree, web.PageZoom | None, hybrid.WebViewport]:
            page, zoom = self._web_tree_zoom()
            return page, zoom, self._viewport(bounds)

        try:
            page, zoom, viewport = self._in_context(name, read_page)
        except (DeviceGone, DeviceTimeout):
            raise  # the device itself is in trouble
        except (DeviceError, UITreeError):
            return native  # the page cannot be read from here (a driver that cannot switch): the native tree, as before
        self._appeared(name, listed)
        return hybrid.graft(native, page, viewport, host, zoom.factor if zoom else None)

    def _appeared(self, name: str, listed: list[str]) -> None:
        """The native screen shows web view `name`: journaled once, when it was not shown before."""
        if name != self._shown_webview:
            self._shown_webview = name
            if self.on_context is not None:
                self.on_context(name, hybrid.NATIVE_CONTEXT, "appeared", listed)

    def _saw_webview(self, known: UITree) -> None:
        """A known screen's tree (no page source) in NATIVE_APP: a web view on it that was not shown at the
        last read has appeared (one `contexts` request names it)."""
        if hybrid.webview_node(known) is None:
            self._shown_webview = ""
        elif not self._shown_webview:
            listed = self.contexts
            webs = [name for name in listed if hybrid.is_web_context(name)]
            if webs:
                self._appeared(webs[-1], listed)

    def _native_tree(self, source: str) -> UITree:
        scale = self.scale
        return parse_page_source(source, scale=scale if scale != 1.0 else None)

    def _hybrid_tree(self) -> UITree:
        """The phone's screen in a web view context: the native tree (read from NATIVE_APP) with the
        page's DOM walk mapped into the web view's native bounds (`hybrid.graft`). A native screen
        showing no web view is the screen as it is: its native tree."""
        native: UITree = self._in_native(lambda: self._native_tree(self.page_source()))
        host = hybrid.webview_node(native)
        if host is None or host.bounds is None:
            return native
        page, zoom = self._web_tree_zoom()
        return hybrid.graft(native, page, self._viewport(host.bounds), host, zoom.factor if zoom else None)

    def _viewport(self, bounds: Box | None = None) -> hybrid.WebViewport:
        """The web view's geometry now: its native bounds (asked from NATIVE_APP unless given) and the
        page's viewport size, devicePixelRatio and scroll offset."""
        if bounds is None:
            bounds = self._in_native(self._webview_bounds)
        geometry = self._call("viewport geometry", lambda: self.driver.execute_script(hybrid.VIEWPORT_JS))
        try:
            return hybrid.viewport_from_script(bounds, geometry)
        except ValueError as exc:
            raise DeviceError(f"web view geometry on {self.url}: {exc}") from None

    def _webview_bounds(self) -> Box:
        cls = hybrid.WEBVIEW_CLASSES[1 if self.platform == "ios" else 0]
        views = self._call("find the web view", lambda: self.driver.find_elements(AppiumBy.CLASS_NAME, cls))
        boxes = [self._native_box(v) for v in views or ()]
        boxes = [b for b in boxes if not b.is_empty]
        if not boxes:
            raise WebViewGone(f"context {self.context} on {self.url}: no {cls} is on the native screen, so the "
                              "page is not shown; switch_context to NATIVE_APP")
        return max(boxes, key=lambda b: b.area)

    def _web_tree(self) -> UITree:
        return self._web_tree_zoom()[0]

    def _web_tree_zoom(self) -> tuple[UITree, web.PageZoom | None]:
        """The DOM walk's tree and the zoom its bounds were mapped with (kept for taps by point)."""
        self.page_source_calls += 1
        self._refuse_gone("the page's tree")
        try:
            tree, moving, zoom, quiet = web.script_tree(self.driver, self.url)
        except UITreeError as broken:
            if isinstance(broken.__cause__, WebDriverException):  # the walk's script failed: a dead node?
                self._raise_if_died(DeviceError(str(broken)))
            raise
        if moving is not None:
            self.saw_motion(moving)
        self.saw_quiet(quiet)
        if zoom is not None:
            self.saw_zoom(zoom)
        return tree, zoom

    def observe(self) -> Observation:
        """The screen now: a screenshot, and its tree on demand. In a web view that went away (before or
        during this read) the screen is read from NATIVE_APP, where the driver is (issue 44)."""
        if self.webview_gone:
            with self._native_reads():
                return self._observe()
        try:
            return self._observe()
        except WebViewGone:
            if not self.webview_gone:
                raise
            with self._native_reads():
                return self._observe()

    def _observe(self) -> Observation:
        asked_at = time.monotonic()
        frame = self.screenshot()
        key = self._screen_key(frame)  # its digest first: a screen decoded lately is not decoded again
        if self.decode_ahead:
            frame.prefetch()  # overlaps the page-source request (or the caller's next steps)
        self._shots += 1
        self._shot_at = asked_at
        shot, inputs = self._shots, self.action_count

        def current() -> bool:
            return (self._shots, self.action_count) == (shot, inputs)

        known = self._known_screens.get(key) if self.known_screens > 0 else None
        if known is not None:  # this session read this very screen before: its tree, no page source
            self._known_screens.move_to_end(key)
            if self.hybrid_native:
                self._saw_webview(known)
            observation = Observation(frame=frame, tree=known, package=_package_of(known), known_screen=True,
                                      tree_current=current, finder=self._check_finder())
        elif self.tree_on_demand:
            made: list[Observation] = []
            observation = Observation(frame=frame, fetch_tree=self._tree_while_current(frame, made),
                                      package_of=_package_of, tree_current=current, finder=self._check_finder())
            made.append(observation)
        else:
            tree = self._remember_screen(frame, self._screen_tree())
            observation = Observation(frame=frame, tree=tree, package=_package_of(tree))
        observation.context = self._screen_context()
        self._newest = (observation, self._shots, self.action_count)
        return observation

    def _screen_key(self, frame: Frame) -> str:
        """A known screen is its screenshot's bytes in one context: in a web view context the same
        pixels read a different tree (the page mapped in) than in NATIVE_APP."""
        context = self._screen_context()
        return f"{context}|{frame.digest}" if context else frame.digest

    def _screen_context(self) -> str:
        """The context the screen is read in: NATIVE_APP while the web view the device names is gone."""
        return hybrid.NATIVE_CONTEXT if self._reading_native else self.context

    def _screen_tree(self) -> UITree:
        """The tree of the screen for an observation: `ui_tree`, from NATIVE_APP when the web view the
        device is in went away (before or during this read)."""
        if self._reading_native:
            return self.ui_tree()
        try:
            return self.ui_tree()
        except WebViewGone:
            if not self.webview_gone:
                raise
            with self._native_reads():
                return self.ui_tree()

    def in_motion(self) -> bool | None:
        """Whether the screen is animating now (web: a finite animation or transition runs), None
        where the platform cannot tell (the phones' trees carry no motion). The step loop asks it
        once a step's expectation held, to keep the after-frame from the middle of a fade; the check's
        find or the tree walk on this screen has usually said it already (`saw_motion`): no request."""
        if not self.is_web or self.webview_gone:
            return None
        if self._motion is not None and self._motion[:2] == (self._shots, self.action_count):
            # the check's find or the tree walk on this screen said it: no request
            return self._moved_since_shot(self._motion[2], self._motion[3])
        try:
            said = self.driver.execute_script(web.MOTION_JS)
        except WebDriverException:
            return None  # a context that runs no script cannot tell
        if isinstance(said, dict):
            self.saw_quiet(web.quiet_answer(said.get("quiet")))
            said = said.get("moving")
        return self._moved_since_shot(web.motion_answer(said), time.monotonic())

    def _moved_since_shot(self, answer: bool | float | None, answered_at: float) -> bool:
        """An animation runs, or the last one ended after the newest screenshot was asked for: that
        frame may show it half drawn (a fade of 150 ms ends within one screenshot through a Grid hub).
        The script ran before `answered_at`, so its end is placed no earlier than it was: a frame is
        judged in motion rather than kept half drawn."""
        if answer is True:
            return True
        if answer is None or answer is False or self._shot_at is None:
            return False
        return answered_at - answer / 1000.0 > self._shot_at

    def saw_motion(self, moving: bool | float) -> None:
        """A script on the current screen (the web tree walk, a check's find) also said whether the
        page was animating (`web.motion_answer`): `in_motion` answers from it until the next
        screenshot or input."""
        self._motion = (self._shots, self.action_count, moving, time.monotonic())

    def saw_quiet(self, quiet_ms: float | None) -> None:
        """A script on the current screen said how long the page had gone without a change a
        screenshot could miss (`web.quiet_answer`; None: it cannot tell): `drawn_when_shot` answers
        from it until the next screenshot or input."""
        self._quiet = None if quiet_ms is None else (self._shots, self.action_count, quiet_ms, time.monotonic())

    def drawn_when_shot(self, observation: Observation) -> bool:
        """`observation` is the newest and its screenshot shows the page as it still is (issue 42): a
        browser page whose scripts watched it (`web.MOVING_JS` `pageQuiet`) made no change since that
        screenshot was asked for - no DOM mutation in a watched root, scroll, focus move, load or resize,
        and nothing that draws unwatched (a canvas, a video, a frame, a closed shadow root, an image or a
        font loading). The step loop then keeps a dialog's first frame instead of looking again. False
        whenever that is not known: a native screen or a web view (whose screenshot the phone takes, a
        frame or more behind the page), no answer since the screenshot, a change after it. The page's
        answer was measured before `answered_at`, so the change is placed no earlier than it was."""
        if not self.browser or self._quiet is None or self._shot_at is None or self._newest is None:
            return False
        newest, shot, inputs = self._newest
        said_shot, said_inputs, quiet_ms, answered_at = self._quiet
        if newest is not observation or (shot, inputs) != (self._shots, self.action_count):
            return False
        if (said_shot, said_inputs) != (self._shots, self.action_count):
            return False
        return answered_at - quiet_ms / 1000.0 <= self._shot_at

    def _remember_screen(self, frame: Frame, tree: UITree) -> UITree:
        """Keep the tree read for a screenshot, keyed by its bytes: a later screenshot with the very
        same bytes is the same screen (what the oracle holds for a step whose frames did not change)."""
        if self.known_screens > 0:
            key = self._screen_key(frame)
            self._known_screens[key] = tree
            self._known_screens.move_to_end(key)
            while len(self._known_screens) > self.known_screens:
                self._known_screens.popitem(last=False)
        return tree

    def _check_finder(self) -> Finder | None:
        """Locator checks answered by a find (issue 24) unless `find_checks` is off."""
        if not self.find_checks:
            return None
        return lambda query: check_finding.answer(self, query)

    def _tree_while_current(self, frame: Frame, made: list[Observation]) -> Callable[[], UITree]:
        """The fetch of one observation's tree: allowed only while it is the newest observation
        and no input was sent since, so the tree is the one of the screen in its frame. A web view
        that went away (at this read or before) is read from NATIVE_APP, and the observation says so."""
        shot, inputs = self._shots, self.action_count
        native = self._reading_native

        def fetch() -> UITree:
            if self._shots != shot or self.action_count != inputs:
                why = "an input was sent" if self.action_count != inputs else "a newer screenshot was taken"
                raise TreeExpired(
                    f"the UI tree of an observation on {self.url} was first read after {why}: it can no longer "
                    "be fetched for that frame. Read observation.tree before acting, or call device.ui_tree() "
                    "for the current screen"
                )
            if native:
                with self._native_reads():
                    return self._remember_screen(frame, self.ui_tree())
            tree = self._screen_tree()
            if not self.webview_gone:
                return self._remember_screen(frame, tree)
            if made:
                made[0].context = hybrid.NATIVE_CONTEXT  # read from NATIVE_APP: the web view went away
            with self._native_reads():
                return self._remember_screen(frame, tree)

        return fetch

    def _current_tree(self) -> UITree:
        """On demand: the newest observation's tree when already fetched and still current (no
        input, no newer screenshot since), else a fresh page source (always, when eager)."""
        if self._newest is not None and self.tree_on_demand:
            observation, shot, inputs = self._newest
            if observation.tree_fetched and (shot, inputs) == (self._shots, self.action_count) and observation.tree is not None:
                return observation.tree
        return self.ui_tree()

    # -- locating ------------------------------------------------------------------------------
    def find(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,
        xpath: str | None = None,
        timeout: float | None = None,
        unique: bool = False,
    ) -> WebElement:
        """Find one element by exactly one locator, waiting until it is ready to act on.

        Ready: attached and, on the web, visible, enabled, not moving (no running animation on it or
        its ancestors) and what a tap at its centre hits; on the phones, found and enabled. The wait
        lasts up to `timeout` seconds (None: `locator_timeout`, the plugin's
        `--guistate-locator-timeout`); an element that is ready at once costs one find, no more.
        `ElementNotFound` lists what is on screen; `ElementNotReady` says what the element still was.
        `unique`: the locator must name one element of the screen's tree (`UITree.by_locator`, the rule an
        exported test's locator was chosen by), else `ElementAmbiguous` and nothing is acted on (one tree
        read; an XPath is the user's own expression and is not counted).
        """
        kind, value = one_locator(text=text, desc=desc, id=id, xpath=xpath)
        self._refuse_gone(f"find {kind}={value!r}")
        by, query = self._locator(text=text, desc=desc, id=id, xpath=xpath)
        wait = self.locator_timeout if timeout is None else timeout
        if wait < 0:
            raise ValueError(f"timeout must be >= 0 seconds, got {wait}")
        deadline = time.monotonic() + wait
        self._waited = False
        self._found_box = None
        self._found_point = None
        unready = ""
        named = f"{kind}={value!r}" if self.is_web else f"{by}={query!r}"  # as the user wrote it / as sent
        while True:
            try:
                element, unready = self._find_once(by, query, kind, value)
                if element is not None and not unready:
                    if unique:
                        self._refuse_twins(kind, value)
                    return element
            except NoSuchElementException:
                unready = ""
            except InvalidSelectorException as exc:
                raise DeviceError(f"locator {named} is not valid on {self.url}: {exc.msg}") from exc
            except WebDriverException as exc:
                failed = DeviceError(f"find {named} failed on {self.url}: {exc.msg}")
                failed.__cause__ = exc
                self._raise_if_died(failed)
                self._check_webview(f"find {named}", failed)
                raise failed from exc
            if time.monotonic() >= deadline:
                break
            self._waited = True
            time.sleep(LOCATOR_POLL_S)
        waited = f" after waiting {wait:g} s" if wait > 0 else ""
        if unready:
            raise ElementNotReady(
                f"{named} found{waited} but not ready to act on: {unready} (waited for it to be "
                f"attached, visible, not moving and enabled); on screen: {self._visible_labels()}"
            )
        hint = ""
        if self.platform == "ios" and id is not None and ":id/" in id:
            hint = " (an Android resource id: on iOS, id= is the accessibility identifier, the element's name)"
        if self.is_web:
            hint += self._web_miss_hint(kind)
        raise ElementNotFound(f"no element with {named}{waited}{hint}; on screen: {self._visible_labels()}")

    def _refuse_twins(self, kind: str, value: str) -> None:
        """`ElementAmbiguous` when the locator names more than one element of the screen's tree."""
        if kind == "xpath":
            return
        count = len(self.ui_tree().by_locator(kind, value))
        if count > 1:
            raise ElementAmbiguous(f"{kind}={value!r} names {count} elements on this screen, and unique=True asked for one: "
                                   "acting on the first could be the wrong one, so nothing was done; on screen: "
                                   f"{self._visible_labels()}")

    def _find_once(self, by: str, query: str, kind: str, value: str) -> tuple[WebElement | None, str]:
        """One look: the element (or None) and why it is not ready yet ("" when it is)."""
        if self.is_web:
            located = web.locate(self.driver, kind, value)
            if located is not None and located.zoom is not None:
                self.saw_zoom(located.zoom)
            self._found_box = None if located is None else located.box
            if located is not None and located.point is not None:
                self._found_point = (located.element, located.point)
            return (None, "") if located is None else (located.element, located.why)
        if not self.check_enabled:
            return self.driver.find_element(by, query), ""
        enabled = self.driver.find_elements(*self._enabled_query(kind, value, by, query))
        if enabled:
            return enabled[0], ""
        return self.driver.find_element(by, query), "disabled"  # raises NoSuchElementException when absent

    def _enabled_query(self, kind: str, value: str, by: str, query: str) -> tuple[str, str]:
        """The phone locator narrowed to enabled elements, so a ready element costs the one find it
        always cost (an `is_enabled` request would add 40-60 ms a tap under the latency profiles).
        An XPath is the user's own expression, narrowed by XPath itself: its matches in order, those
        not marked `enabled="false"` (a node with no such attribute is not called disabled)."""
        if kind == "xpath":
            return AppiumBy.XPATH, f"({query})[not(@enabled='false')]"
        if self.platform == "ios":
            found = f"name == {ios.predicate_literal(value)}" if by == AppiumBy.ACCESSIBILITY_ID else query
            return AppiumBy.IOS_PREDICATE, f"({found}) AND enabled == 1"
        if kind == "text":
            return AppiumBy.ANDROID_UIAUTOMATOR, query + ".enabled(true)"
        if kind == "desc":
            return AppiumBy.ANDROID_UIAUTOMATOR, f"new UiSelector().description({java_literal(value)}).enabled(true)"
        if ":id/" in value:
            return AppiumBy.ANDROID_UIAUTOMATOR, f"new UiSelector().resourceId({java_literal(value)}).enabled(true)"
        pattern = "(.*/)?" + re.escape(value)  # the short form: any app's, as the tree's by_id matches it
        return AppiumBy.ANDROID_UIAUTOMATOR, f"new UiSelector().resourceIdMatches({java_literal(pattern)}).enabled(true)"

    def _web_miss_hint(self, kind: str) -> str:
        """Why a web locator may see nothing: XPath stays out of shadow roots, and closed ones hide all."""
        hint = ""
        if kind == "xpath":
            hint = " (XPath does not enter shadow roots: text=, desc= and id= do)"
        closed = web.closed_components(self.driver)
        if closed:
            hint += (f" (rendered components with no open shadow root: {', '.join(closed)}; a closed shadow root "
                     "is invisible to page scripts, so no locator or tree sees inside it)")
        return hint

    def exists(self, text: str | None = None, **locator: str) -> bool:
        """Whether the locator matches a rendered element now (one look, no wait)."""
        kind, value = one_locator(text=text, **locator)
        self._refuse_gone(f"find {kind}={value!r}")
        by, query = self._locator(text=text, **locator)
        try:
            if self.is_web:
                located = web.locate(self.driver, kind, value)
                return located is not None and located.rank > 0
            return bool(self.driver.find_elements(by, query))
        except WebDriverException as exc:
            named = f"{kind}={value!r}" if self.is_web else f"{by}={query!r}"
            failed = DeviceError(f"find {named} failed on {self.url}: {exc.msg}")
            failed.__cause__ = exc
            self._raise_if_died(failed)
            raise failed from exc

    def _locator(
        self, *, text: str | None = None, desc: str | None = None, id: str | None = None, xpath: str | None = None
    ) -> tuple[str, str]:
        kind, value = one_locator(text=text, desc=desc, id=id, xpath=xpath)
        if self.is_web:
            return f"web {kind}", value  # answered by web.LOCATE_JS, through open shadow roots
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
        """An element's rectangle in screenshot pixels (in a web view: mapped through its native bounds)."""
        if self.in_webview:
            rect = self._call("rect", lambda: element.rect)  # CSS px relative to the document (W3C)
            left, top = float(rect["x"]), float(rect["y"])
            return hybrid.to_screen(self._viewport(), left, top, left + float(rect["width"]),
                                    top + float(rect["height"]), document=True)
        if self.browser:  # the W3C rect is relative to the document: on a scrolled page not where the screenshot shows it
            rect, zoom = self._call("rect", lambda: web.viewport_rect(self.driver, element))
            return self.saw_zoom(zoom).box(rect)
        return self._native_box(element)

    def _box_when_found(self, element: WebElement) -> Box:
        """The box of the element the last `find` returned: on a browser page from the find's own
        answer (its place when found, no request; issue 38), else asked of the element."""
        box = self._found_box if self.browser else None
        return box if box is not None else self.box_of(element)

    def _native_box(self, element: WebElement) -> Box:
        rect = self._call("rect", lambda: element.rect)
        return self._scaled(tuple(float(rect[k]) for k in ("x", "y", "width", "height")))

    def _scaled(self, rect: tuple[float, ...]) -> Box:
        """(left, top, width, height) in driver units as a box in screenshot pixels."""
        x, y, w, h = (v * self.scale for v in rect)  # XCUITest points may be fractional (a browser maps by PageZoom)
        return Box(round(x), round(y), round(x + w), round(y + h))

    # -- inputs --------------------------------------------------------------------------------
    def tap(
        self,
        text: str | None = None,
        *,
        desc: str | None = None,
        id: str | None = None,
        xpath: str | None = None,
        x: int | None = None,
        y: int | None = None,
        timeout: float | None = None,
        function: str | None = None,
        unique: bool = False,
    ) -> None:
        """Tap an element (by text, desc, id or xpath) or a point (x, y in screenshot pixels).

        `function` names what the element does ("search", "add to cart"): with cross-run memory
        on, a locator that finds nothing after an app update is healed by that function's
        remembered looks in the current frame, and accepted only if the step's expectation holds.
        `unique`: the locator must name one element (`find`), else `ElementAmbiguous` and no tap.
        """
        if x is not None or y is not None:
            if x is None or y is None:
                raise TypeError("tap at a point needs both x and y")
            self._pointer([(x, y)], hold_ms=self._tap_ms)
            return
        element = self._locate(text, desc, id, xpath, timeout, unique, function)
        if isinstance(element, tuple):  # healed by the memory: its point
            self._pointer([element], hold_ms=self._tap_ms)
            return
        self._met_after_wait()
        self._click(element)

    def _locate(self, text: str | None, desc: str | None, id: str | None, xpath: str | None, timeout: float | None,
                unique: bool, function: str | None) -> WebElement | tuple[int, int]:
        """The element a tap or typing acts on (`find`; the memory is told what was found, to learn its look),
        or, when the locator finds nothing, the point where the memory healed it (`ElementNotFound` naming
        why not). An element that is there but not ready, or named twice, is never healed elsewhere."""
        try:
            element = self.find(text, desc=desc, id=id, xpath=xpath, timeout=timeout, unique=unique)
        except (ElementNotReady, ElementAmbiguous):
            raise  # the element is there (or two are): acting anywhere else would be the wrong action
        except ElementNotFound as missing:
            if self.memory is None:
                raise
            point, reason = self.memory.heal(*one_locator(text=text, desc=desc, id=id, xpath=xpath), function)
            if point is None:
                raise ElementNotFound(f"{missing}; memory: {reason}") from None
            return point
        if self.memory is not None:
            kind, value = one_locator(text=text, desc=desc, id=id, xpath=xpath)
            screen = self._still_shown()
            box = self._box_in_tree(screen, kind, value)
            self.memory.found(kind, value, box or (lambda: self._box_when_found(element)), function, screen=screen,
                              facts=lambda: self._element_facts(element))  # asked only when a look is learnt
        return element

    def _click(self, element: WebElement) -> None:
        """Click an element the way a finger reaches it. A web element inside a shadow root whose host the
        document's hit test reports at its point (a label in `<ion-toggle>`'s shadow root) is tapped at
        that point, where the composed tree's hit test found it (the driver's element click would refuse it
        as intercepted by its own host); anything else by the driver's element click."""
        found = self._found_point
        if found is None or found[0] is not element or not self.is_web:
            self._act("click", element.click)
            return
        x, y = found[1]
        if self.in_webview:
            viewport = self._viewport()
            origin = viewport.bounds
            point = (round(origin.left + x * viewport.ratio), round(origin.top + y * viewport.ratio))
        else:
            factor = self.page_zoom().factor  # the zoom the find measured with, while no input was sent
            point = (round(x * factor), round(y * factor))
        self._pointer([point], hold_ms=self._tap_ms)

    def _met_after_wait(self) -> None:
        """The step's before-screen must be the one the action meets: after a wait, look again."""
        if self._waited and self.on_waited is not None:
            self.on_waited()

    def _still_shown(self) -> Observation | None:
        """The newest observation while it still shows the screen the last find() searched: no
        input and no newer screenshot since, and the element was there at once (not waited for)."""
        if self._newest is None or self._waited:
            return None
        observation, shot, inputs = self._newest
        return observation if (shot, inputs) == (self._shots, self.action_count) else None

    def _box_in_tree(self, screen: Observation | None, kind: str, value: str) -> Box | None:
        """The located element's box from the tree its screen already read (issue 38: no `rect`
        request), when exactly one node carries the value the locator matched exactly: on Android
        `desc` = content-desc, `id` = full resource id, `text` = text; on iOS the attributes its
        predicates compare (`ios_locator`: `id` = name, `desc` = label or name, `text` = label or
        value). Else None (ask the element): a web context, an XPath, two nodes alike."""
        if screen is None or not screen.tree_fetched or self.is_web:
            return None
        attributes = (_IOS_LOCATOR_ATTRIBUTES if self.platform == "ios" else _ANDROID_LOCATOR_FIELDS).get(kind)
        tree = screen.tree
        if attributes is None or tree is None:
            return None
        if self.platform == "ios":
            nodes = [n for n in tree.nodes() if n.bounds is not None and any(n.attrs.get(a) == value for a in attributes)]
        else:
            nodes = [n for n in tree.nodes() if n.bounds is not None and getattr(n, attributes[0]) == value]
        return nodes[0].bounds if len(nodes) == 1 else None

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
             xpath: str | None = None, timeout: float | None = None, unique: bool = False,
             function: str | None = None) -> None:
        """Type into a field found by its text (`into`), id, desc or xpath, else the focused one; clears nothing.
        `unique`: the locator must name one element (`find`), else `ElementAmbiguous` and nothing is typed.
        `function` and the cross-run memory as for `tap`: a field's locator that finds nothing after an app
        update is healed by its remembered look (or as the screen's only text field), the healed field is
        tapped to focus it and typed into, and the heal stands only if the step's expectation holds.

        On the web a component is typed into through its editable element (the one input inside its
        shadow root or subtree); one with none or several fails naming that, unless tapping it gives an
        editable element focus."""
        located = into or id or desc or xpath
        element = self._locate(into, desc, id, xpath, timeout, unique, function) if located else self._focused()
        if isinstance(element, tuple):  # healed by the memory: the field is tapped to take focus
            self._pointer([element], hold_ms=self._tap_ms)
            element = self._focused()
        if self.is_web:
            element = self._editable(element, into=into, id=id, desc=desc, xpath=xpath)
        if (self.on_secret is not None or self.memory is not None) and self._is_password(element):
            self._typed_secret = True
            if self.on_secret is not None:
                self.on_secret(text)  # registered before it is typed, so no frame or record can carry it
        self._met_after_wait()
        self._act("send keys", lambda: element.send_keys(text))

    def _editable(self, element: WebElement, **locator: str | None) -> WebElement:
        """The element keys go to: itself, the one editable inside it, or what takes focus when tapped."""
        inner, count = self._call("editable element", lambda: web.editable_inside(self.driver, element))
        if inner is not None:
            return cast(WebElement, inner)
        kind, value = one_locator(**locator)
        self._click(element)
        focused = self._call("active element", lambda: self.driver.switch_to.active_element)
        inner, _ = self._call("editable element", lambda: web.editable_inside(self.driver, focused))
        if inner is not None:
            return cast(WebElement, inner)
        holds = "no editable element" if count == 0 else f"{count} editable elements"
        raise DeviceError(f"type into {kind}={value!r} on {self.url}: the element holds {holds} (input, "
                          "textarea or contenteditable, open shadow roots included) and tapping it focused none; "
                          "name the field itself")

    def _is_password(self, element: WebElement) -> bool:
        """Android marks secure fields `password="true"`, iOS by their type
        (`XCUIElementTypeSecureTextField`); a web page uses `type="password"` (an iOS web view too)."""
        if self.platform == "ios" and not self.is_web:
            value = self._call("element type", lambda: element.get_attribute("type"))
            return str(value) == ios.SECURE_FIELD
        attribute = "type" if self.is_web else "password"
        value = self._call("password attribute", lambda: element.get_attribute(attribute))
        return str(value).lower() == ("password" if self.is_web else "true")

    def clear(self, *, into: str | None = None, id: str | None = None, desc: str | None = None) -> None:
        element = self.find(into, id=id, desc=desc)
        if self.is_web:
            element = self._editable(element, into=into, id=id, desc=desc)
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
            failed = DeviceError(f"no focused field to type into on {self.url}: {exc.msg}")
            failed.__cause__ = exc
            self._raise_if_died(failed)
            raise failed from exc

    def _pointer(self, points: list[tuple[int, int]], *, hold_ms: int, move_ms: int = 0) -> None:
        """Touch at screenshot pixels. In a web view context the driver would take the points as the
        page's CSS pixels, so they are sent from NATIVE_APP: one coordinate system, the phone's."""
        if self.in_webview:
            self._in_native(lambda: self._touch(points, hold_ms=hold_ms, move_ms=move_ms))
            return
        self._touch(points, hold_ms=hold_ms, move_ms=move_ms)

    def _touch(self, points: list[tuple[int, int]], *, hold_ms: int, move_ms: int = 0) -> None:
        if self.browser:  # the page's client CSS px, by the zoom its boxes were mapped with
            zoom = self.page_zoom()
            points = [zoom.to_page(px, py) for px, py in points]
        else:
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

    # -- apps ----------------------------------------------------------------------------------
    def open_url(self, url: str) -> None:
        """Load a page in a web session (a browser has no apps to activate)."""
        if not self.browser:
            raise CapabilityUnavailable(f"open_url() needs a browser session; {self.url} runs a native app")
        self._act(f"open {url}", lambda: self.driver.get(url))

    def page_url(self) -> str:
        """The URL of the page a browser session shows now (one request): where an LLM run started and ended,
        kept in its action cache so a scripted export opens the same page."""
        if not self.browser:
            raise CapabilityUnavailable(f"page_url() needs a browser session; {self.url} runs a native app")
        return str(self._call("current url", lambda: self.driver.current_url))

    def activate_app(self, package: str) -> None:
        """Bring an app to the front; in a browser session an http(s) URL is opened instead."""
        if self.browser:
            if package.startswith(("http://", "https://")):
                self.open_url(package)
                return
            raise CapabilityUnavailable(
                f"activate_app({package!r}): {self.url} is a browser session with no apps; pass a page URL"
            )
        self._act(f"activate {package}", lambda: self.driver.activate_app(package))

    def terminate_app(self, package: str) -> bool:
        if self.browser:
            raise CapabilityUnavailable(f"terminate_app({package!r}): {self.url} is a browser session with no apps")
        return bool(self._act(f"terminate {package}", lambda: self.driver.terminate_app(package)))

    def mobile(self, command: str, params: dict[str, Any] | None = None) -> Any:
        """Run `mobile: <command>`; `CapabilityUnavailable` when this driver has no such command."""
        if self.browser:
            raise CapabilityUnavailable(
                f"'mobile: {command}' is not available on {self.url}: this is a browser session, whose "
                "driver runs execute_script as page JavaScript"
            )
        return self._act(f"mobile: {command}", lambda: self.driver.execute_script(f"mobile: {command}", params or {}))

    def home(self) -> None:
        """The home screen, where app icons are: the HOME key on Android (`mobile: pressKey` 3), the
        home button on iOS (`mobile: pressButton` home); the app left keeps its screen."""
        if self.browser:
            raise CapabilityUnavailable(f"home() on {self.url}: a browser session has no home screen")
        command, params = ios.HOME if self.platform == "ios" else android.HOME
        self.mobile(command, params)

    # -- sim-only ------------------------------------------------------------------------------
    def set_faults(self, *mapping: Any, **faults: Any) -> None:
        """Change the simulated phone's fault injection: `set_faults(refresh_delay=2.0, ...)`."""
        if mapping:
            raise TypeError("set_faults takes keywords, e.g. device.set_faults(refresh_delay=2.0); "
                            "for a dict, unpack it: device.set_faults(**faults)")
        self._require_sim("set_faults")
        self._act("set faults", lambda: self.driver.execute_script("mobile: guistateFaults", faults))

    def action_log(self) -> list[dict[str, Any]]:
        """What really happened (effective actions only): the sim's log, or a test page's
        `window.__guistateActionLog` (the web Feed keeps one in the same shape)."""
        if self.browser:
            return list(self._page_hook("action_log", "return window.__guistateActionLog"))
        self._require_sim("action_log")
        return list(self._call("action log", lambda: self.driver.execute_script("mobile: guistateActionLog", {})))

    def ground_truth(self) -> dict[str, Any]:
        if self.browser:
            script = "return window.__guistateGroundTruth ? window.__guistateGroundTruth() : null"
            return dict(self._page_hook("ground_truth", script))
        self._require_sim("ground_truth")
        return dict(self._call("ground truth", lambda: self.driver.execute_script("mobile: guistateGroundTruth", {})))

    def _page_hook(self, what: str, script: str) -> Any:
        value = self._call(what, lambda: self.driver.execute_script(script))
        if value is None:
            raise CapabilityUnavailable(
                f"{what}(): the page open on {self.url} exposes no window.__guistate* hook "
                "(only the sim and test pages such as the web Feed do)"
            )
        return value

    def _require_sim(self, what: str) -> None:
        if not self.is_sim:
            raise CapabilityUnavailable(f"{what}() exists only on the simulated phone; this device is {self.url}")


def _package_of(tree: UITree | None) -> str:
    """The foreground app: iOS names it by the application's bundle id; Android by the first
    package in the tree that is not the system UI."""
    if tree is None:
        return ""
    if tree.platform == "ios":
        return ios.ios_package(tree)
    packages = [n.package for n in tree.nodes() if n.package and n.package != "com.android.systemui"]
    return packages[0] if packages else ""
