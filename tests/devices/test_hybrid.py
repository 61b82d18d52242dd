"""Hybrid apps, device side (issue 37): the DOM-to-phone mapping on numbers, the grafted tree, and how
`Device` follows the current context, over a scripted driver that answers as UiAutomator2 does in a
web view context (page source and scripts from the page, rects in CSS px of the document)."""

from __future__ import annotations

import base64
from typing import Any

import cv2
import numpy as np
import pytest
from appium.webdriver.mobilecommand import MobileCommand
from selenium.common.exceptions import NoSuchWindowException, WebDriverException
from selenium.webdriver.remote.command import Command

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices import hybrid, web
from pytest_guistate.devices.device import ContextUnavailable, Device, WebViewGone
from pytest_guistate.devices.hybrid import WebViewport, to_screen

# -- the mapping, on numbers ------------------------------------------------------------------------


def test_a_viewport_box_maps_through_the_web_views_bounds_and_ratio() -> None:
    # a 1080-px-wide web view under a 200-px toolbar shows a 360-CSS-px viewport: 3 px per CSS px
    view = WebViewport(Box(0, 200, 1080, 2200), css_width=360, css_height=666.67, dpr=3.0)
    assert view.ratio == 3.0
    assert to_screen(view, 10, 20, 110, 60) == Box(30, 260, 330, 380)


def test_a_document_box_has_the_scroll_offset_taken_off_first() -> None:
    view = WebViewport(Box(0, 200, 1080, 2200), 360, 666.67, dpr=3.0, scroll_x=0, scroll_y=500)
    # the W3C element rect is relative to the document: y=540 is 40 CSS px below the viewport's top
    assert to_screen(view, 10, 540, 110, 580, document=True) == Box(30, 320, 330, 440)
    # the same numbers read as viewport-relative land 1500 px lower, clipped to the web view
    assert to_screen(view, 10, 540, 110, 580) == Box(30, 1820, 330, 1940)


def test_a_box_is_clipped_to_the_web_view_and_empty_when_scrolled_out() -> None:
    view = WebViewport(Box(100, 200, 700, 1400), css_width=300, css_height=600, dpr=2.0, scroll_y=1000)
    # half above the viewport's top: only the part the web view draws
    assert to_screen(view, 0, 990, 300, 1020, document=True) == Box(100, 200, 700, 240)
    assert to_screen(view, 0, 0, 300, 40, document=True).is_empty  # far above: not on screen at all


def test_the_ratio_is_measured_from_the_native_width_not_assumed_from_dpr() -> None:
    # a page zoomed out (or a browser sized unlike the phone): 720 px show 480 CSS px at dpr 2
    view = WebViewport(Box(0, 0, 720, 1280), css_width=480, css_height=853, dpr=2.0)
    assert to_screen(view, 100, 100, 200, 200) == Box(150, 150, 300, 300)


@pytest.mark.parametrize("answer", [None, "1,2,3", [360, 640, 3], ["a", 1, 1, 0, 0], [0, 640, 3, 0, 0]])
def test_a_bad_viewport_answer_is_a_clear_error(answer: object) -> None:
    with pytest.raises(ValueError, match="viewport"):
        hybrid.viewport_from_script(Box(0, 0, 100, 100), answer)


def test_context_names() -> None:
    assert hybrid.is_web_context("WEBVIEW_com.example") and hybrid.is_web_context("CHROMIUM")
    assert not hybrid.is_web_context("NATIVE_APP") and not hybrid.is_web_context("") and not hybrid.is_web_context(None)


# -- the scripted hybrid driver -------------------------------------------------------------------

PACKAGE = "com.guistate.hybrid"
WEBVIEW = f"WEBVIEW_{PACKAGE}"
NATIVE = f"""<hierarchy rotation="0" width="1080" height="2400">
<node index="0" class="android.widget.FrameLayout" package="{PACKAGE}" bounds="[0,0][1080,2400]" displayed="true">
 <node index="0" class="android.widget.Button" package="{PACKAGE}" content-desc="Home" clickable="true"
       bounds="[0,0][200,200]" displayed="true"/>
 <node index="1" class="android.webkit.WebView" package="{PACKAGE}" bounds="[0,200][1080,2200]" displayed="true">
  <node index="0" class="android.view.View" package="{PACKAGE}" text="what the native driver exposes"
        bounds="[0,200][1080,400]" displayed="true"/>
 </node>
</node></hierarchy>"""
# what TREE_JS returns: bounds are CSS px x devicePixelRatio (3), relative to the viewport
PAGE = """<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2000">
<node class="android.view.ViewGroup" package="http://app.local" bounds="[0,0][1080,2000]" text="" tag="body">
 <node class="android.widget.EditText" package="http://app.local" resource-id="password" password="true"
       bounds="[30,60][330,180]" text="" tag="input" clickable="true"/>
 <node class="android.widget.Button" package="http://app.local" text="Sign in" bounds="[30,300][330,420]"
       tag="button" clickable="true"/>
</node></hierarchy>"""


def _png(width: int = 1080, height: int = 2400) -> str:
    image = np.full((height // 8, width // 8, 3), 200, np.uint8)
    image[0:4, 0:4] = 30
    ok, encoded = cv2.imencode(".png", cv2.resize(image, (width, height), interpolation=cv2.INTER_NEAREST))
    assert ok
    return base64.b64encode(encoded.tobytes()).decode()


class _Element:
    def __init__(self, rect: dict[str, float], attrs: dict[str, str] | None = None) -> None:
        self.rect = rect
        self._attrs = attrs or {}

    def get_attribute(self, name: str) -> str | None:
        return self._attrs.get(name)

    def send_keys(self, text: str) -> None:
        self.typed = text


class _SwitchTo:
    def __init__(self, driver: HybridDriver) -> None:
        self._driver = driver

    def context(self, name: str | None) -> None:
        self._driver.execute(MobileCommand.SWITCH_TO_CONTEXT, {"name": name})

    @property
    def active_element(self) -> _Element:
        return self._driver.focused


class HybridDriver:
    """Answers each command in its current context, as UiAutomator2 with a chromedriver proxy does."""

    def __init__(self, *, listed: tuple[str, ...] = ("NATIVE_APP", WEBVIEW), scroll_y: float = 0.0,
                 caps: dict[str, Any] | None = None) -> None:
        self.capabilities = caps or {"platformName": "Android", "appium:automationName": "UiAutomator2"}
        self.current = "NATIVE_APP"
        self.listed = list(listed)
        self.sent: list[tuple[str, str]] = []  # (context, command) of every execute
        self.scroll_y = scroll_y
        self.switch_to = _SwitchTo(self)
        self.focused = _Element({}, {"type": "password", "password": "false"})
        self.reads = 0

    def execute(self, command: Any, params: dict[str, Any] | None = None) -> Any:
        self.sent.append((self.current, str(command)))
        if command == MobileCommand.SWITCH_TO_CONTEXT:
            name = (params or {}).get("name") or "NATIVE_APP"
            if name not in self.listed:
                raise WebDriverException(f"No such context found: {name}")
            self.current = name
        return {"value": None}

    @property
    def contexts(self) -> list[str]:
        return list(self.listed)

    @property
    def current_context(self) -> str:
        self.reads += 1
        return self.current

    def _web(self) -> None:
        if self.current not in self.listed:
            raise NoSuchWindowException("no such window: target window already closed")

    @property
    def page_source(self) -> str:
        self.sent.append((self.current, "page source"))
        if self.current == "NATIVE_APP":
            return NATIVE
        self._web()
        return "<html><body><input type=password></body></html>"

    def execute_script(self, script: str, *args: Any) -> Any:
        self.sent.append((self.current, "script"))
        assert self.current != "NATIVE_APP", "a page script sent in NATIVE_APP"
        self._web()
        if script == hybrid.VIEWPORT_JS:
            return [360, 666.67, 3, 0, self.scroll_y]
        if "XMLSerializer" in script:
            return PAGE
        if script == web.EDITABLE_JS:
            return args[0]  # the focused field is itself editable
        raise AssertionError(f"unexpected script {script[:40]!r}")

    def find_elements(self, by: str, value: str) -> list[_Element]:
        assert self.current == "NATIVE_APP" and value == "android.webkit.WebView"
        return [_Element({"x": 0, "y": 200, "width": 1080, "height": 2000})]

    def get_screenshot_as_base64(self) -> str:
        self._web() if self.current != "NATIVE_APP" else None
        return _png()

    def get_window_rect(self) -> dict[str, int]:
        return {"x": 0, "y": 0, "width": 1080, "height": 2400}

    def quit(self) -> None:
        pass


def _device(driver: HybridDriver) -> tuple[Device, list[tuple[str, str, str]]]:
    device = Device(driver, url="http://hybrid.test")  # type: ignore[arg-type]  # scripted, duck-typed
    seen: list[tuple[str, str, str]] = []
    device.on_context = lambda before, after, how, listed: seen.append((before, after, how))
    return device, seen


def test_switch_context_is_followed_and_reported_without_asking_the_driver() -> None:
    driver = HybridDriver()
    device, seen = _device(driver)
    assert device.context == "" and not device.is_web
    device.switch_context(WEBVIEW)
    assert device.context == WEBVIEW and device.in_webview and device.is_web and not device.browser
    assert seen == [("NATIVE_APP", WEBVIEW, "switch_context")]
    driver.switch_to.context("NATIVE_APP")  # the test's raw driver call is noticed too
    assert device.context == "NATIVE_APP" and not device.is_web
    assert seen[-1] == (WEBVIEW, "NATIVE_APP", "driver")
    assert driver.reads == 0 and device.context_reads == 0  # followed, never asked


def test_a_switch_counts_as_an_input_so_an_older_tree_is_not_read_for_the_new_context() -> None:
    device, _ = _device(HybridDriver())
    observation = device.observe()
    device.switch_context(WEBVIEW)
    with pytest.raises(Exception, match="after an input was sent"):
        _ = observation.tree


def test_a_context_not_listed_is_named_with_those_listed() -> None:
    device, seen = _device(HybridDriver())
    with pytest.raises(ContextUnavailable, match=r"WEBVIEW_other.*lists \['NATIVE_APP', 'WEBVIEW_com"):
        device.switch_context("WEBVIEW_other")
    assert device.context == "" and seen == []


def test_the_web_view_tree_is_the_native_one_with_the_page_mapped_in() -> None:
    driver = HybridDriver()
    device, _ = _device(driver)
    device.switch_context(WEBVIEW)
    tree = device.ui_tree()
    assert driver.current == WEBVIEW  # the native half was read from NATIVE_APP and the context restored
    home = tree.find(lambda n: n.content_desc == "Home")
    assert home and home[0].bounds == Box(0, 0, 200, 200)  # the toolbar stays readable
    sign_in = tree.find_text("Sign in")
    # CSS (10,100)-(110,140) -> x3, under the 200-px toolbar
    assert sign_in and sign_in[0].bounds == Box(30, 500, 330, 620)
    assert tree.password_boxes() == [Box(30, 260, 330, 380)]  # redaction lands on the page's field
    assert not tree.find_text("what the native driver exposes")  # replaced by the DOM, not doubled
    paths = [n.index_path for n in tree.nodes()]
    assert len(paths) == len(set(paths))  # the actor names elements by them
    assert tree.by_index_path(sign_in[0].index_path) is sign_in[0]
    assert _package(device) == PACKAGE


def _package(device: Device) -> str:
    observation = device.observe()
    return observation.package


def test_an_observation_names_its_context() -> None:
    device, _ = _device(HybridDriver())
    assert device.observe().context == ""  # a session never seen switching records none
    device.switch_context(WEBVIEW)
    assert device.observe().context == WEBVIEW


def test_a_tap_by_point_in_a_web_view_is_sent_from_native_app() -> None:
    driver = HybridDriver()
    device, seen = _device(driver)
    device.switch_context(WEBVIEW)
    driver.sent.clear()
    device.tap(x=180, y=560)
    actions = [context for context, command in driver.sent if command == Command.W3C_ACTIONS]
    assert actions == ["NATIVE_APP"]  # phone pixels, never the page's CSS pixels
    assert driver.current == WEBVIEW and device.context == WEBVIEW
    assert seen == [("NATIVE_APP", WEBVIEW, "switch_context")]  # the round trip is not the test's switch


def test_an_element_box_in_a_web_view_is_mapped_with_the_scroll_offset() -> None:
    driver = HybridDriver(scroll_y=500)
    device, _ = _device(driver)
    device.switch_context(WEBVIEW)
    element = _Element({"x": 10, "y": 540, "width": 100, "height": 40})
    assert device.box_of(element) == Box(30, 320, 330, 440)


def test_a_password_typed_in_an_ios_web_view_is_registered_as_a_secret() -> None:
    driver = HybridDriver(caps={"platformName": "iOS", "appium:automationName": "XCUITest"})
    device, _ = _device(driver)
    secrets: list[str] = []
    device.on_secret = secrets.append
    device.switch_context(WEBVIEW)
    device.type("hunter2")
    assert secrets == ["hunter2"]


def test_a_web_view_that_disappeared_is_named() -> None:
    driver = HybridDriver()
    device, _ = _device(driver)
    device.switch_context(WEBVIEW)
    driver.listed.remove(WEBVIEW)  # the app closed its web view
    with pytest.raises(WebViewGone, match=rf"{WEBVIEW} is gone.*lists \['NATIVE_APP'\]"):
        device.screenshot()


def test_auto_webview_sessions_are_asked_once() -> None:
    driver = HybridDriver(caps={"platformName": "Android", "appium:autoWebview": True})
    driver.current = WEBVIEW
    device, _ = _device(driver)
    assert device.in_webview and device.in_webview
    assert device.context_reads == 1


def test_a_native_tree_parses_the_web_view_node() -> None:
    tree = parse_page_source(NATIVE)
    node = hybrid.webview_node(tree)
    assert node is not None and node.bounds == Box(0, 200, 1080, 2200)


def test_uiautomator2_sessions_ask_for_native_screenshots_in_web_views() -> None:
    from pytest_guistate.devices.capabilities import uiautomator2, with_native_web_screenshot

    asked = with_native_web_screenshot({"platformName": "Android", "appium:automationName": "UiAutomator2"})
    assert asked["appium:nativeWebScreenshot"] is True
    kept = {"appium:automationName": "UiAutomator2", "appium:nativeWebScreenshot": False}
    assert with_native_web_screenshot(kept) == kept  # the project's own value wins
    for other in ({"appium:automationName": "XCUITest"}, {"browserName": "chrome", "appium:automationName": "Chromium"}):
        assert "appium:nativeWebScreenshot" not in with_native_web_screenshot(other)
    assert uiautomator2(app_package="com.example")["appium:nativeWebScreenshot"] is True


def test_the_reference_grammar_reads_a_tap_on_a_named_control() -> None:
    from pytest_guistate.llm.reference.goals import SignIn, TapItem, parse_goal

    plan = parse_goal("tap on Help in the toolbar, then sign in with qa@example.com and password correct-horse")
    assert plan == [TapItem("Help"), SignIn("qa@example.com", "correct-horse")]
    assert parse_goal("press the Close button") == [TapItem("Close")]
    assert parse_goal("tap Help in Hybrid") == [TapItem("Help", "Hybrid")]


def test_the_allure_step_names_the_context_it_acted_in() -> None:
    from pytest_guistate.core.records import StepRecord
    from pytest_guistate.report.allure_adapter import step_title

    record = StepRecord(4, "sign in", "step", None, True, outcome="ok", context=WEBVIEW)
    assert step_title(record) == f"[guistate 4 @{WEBVIEW}] sign in"
    assert step_title(StepRecord(4, "sign in", "step", None, True, outcome="ok")) == "[guistate 4] sign in"
    switch = StepRecord(5, f"switch context NATIVE_APP -> {WEBVIEW}", "context", None, True, outcome="ok",
                        context="NATIVE_APP")
    assert step_title(switch) == f"[guistate 5] switch context NATIVE_APP -> {WEBVIEW}"
    assert record.to_dict()["context"] == WEBVIEW and "context" not in StepRecord(1, "x", "step", None, True).to_dict()


def test_a_web_view_gone_under_an_observation_is_read_from_native_app_and_the_next_call_is_named() -> None:
    """Issue 44: the step's after-screen is the native screen the action led to; the device still names the
    gone context, and the test's next call there is `WebViewGone` until it switches."""
    driver = HybridDriver()
    device, seen = _device(driver)
    device.switch_context(WEBVIEW)
    driver.listed = ["NATIVE_APP"]  # the page left for a native screen
    observation = device.observe()
    assert observation.tree is not None and observation.context == "NATIVE_APP"
    assert [n.label for n in observation.tree.nodes() if n.label == "Home"] == ["Home"]
    assert (device.context, device.webview_gone) == (WEBVIEW, WEBVIEW)
    assert seen[-1] == (WEBVIEW, "NATIVE_APP", "gone")
    with pytest.raises(WebViewGone, match="went away"):
        device.find(text="Sign in", timeout=0)
    with pytest.raises(WebViewGone, match="went away"):
        device.ui_tree()
    device.switch_context("NATIVE_APP")
    assert device.webview_gone == "" and device.context == "NATIVE_APP"
