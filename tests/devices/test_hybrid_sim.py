"""`Device` on the sim's Hybrid app over HTTP (issue 37): a scrolled page's boxes land where the phone shows them,
whichever way they are asked (the tree's walk or the element's document rect), and the drivers' web view faults
are named: a proxied screenshot that hangs is a `DeviceTimeout` within its deadline that says what to set, while
the native route (`appium:nativeWebScreenshot`) is not held by it; a context name the session does not list is
`ContextUnavailable`. Needs Chromium (fails naming its install command when missing, never skips)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.device import ContextUnavailable, Device
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.timeouts import DeviceTimeout
from tests.helpers.chromium import require_chromium

HYBRID = "com.guistate.hybrid"


@pytest.fixture(scope="module", autouse=True)
def chromium_installed() -> None:
    require_chromium()


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    with SimServer() as srv:
        yield srv


@pytest.fixture
def hybrid(server: SimServer) -> Iterator[Callable[..., Device]]:
    opened: list[Device] = []

    def make(**caps: Any) -> Device:
        base = {"guistate:clock": "frozen", "appium:appPackage": HYBRID, "platformName": "Android",
                "appium:automationName": "UiAutomator2"}
        options = AppiumOptions().load_capabilities({**base, **caps})
        opened.append(Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True))
        return opened[-1]

    yield make
    for device in opened:
        device.close()


def test_a_hanging_proxied_screenshot_is_a_named_timeout(hybrid: Callable[..., Device]) -> None:
    device = hybrid(**{"appium:nativeWebScreenshot": False, "guistate:webviewCommandTimeout": 1})
    device.set_faults(webview_screenshot_hang=30)
    device.switch_context(f"WEBVIEW_{HYBRID}")
    started = time.monotonic()
    with pytest.raises(DeviceTimeout, match=r"in web view context WEBVIEW_com\.guistate\.hybrid.*"
                                            r"appium:nativeWebScreenshot: true"):
        device.screenshot()
    assert time.monotonic() - started < 10  # the deadline, not the 30 s hang


def test_the_native_screenshot_route_is_not_held_by_the_page(hybrid: Callable[..., Device]) -> None:
    device = hybrid(**{"appium:nativeWebScreenshot": True})
    device.set_faults(webview_screenshot_hang=30)
    device.switch_context(f"WEBVIEW_{HYBRID}")
    started = time.monotonic()
    frame = device.screenshot()
    assert frame.size == device.size and time.monotonic() - started < 10  # the whole phone, at once


def test_a_context_not_listed_is_named(hybrid: Callable[..., Device]) -> None:
    device = hybrid()
    with pytest.raises(ContextUnavailable, match=r"WEBVIEW_com\.other.*lists \['NATIVE_APP', 'WEBVIEW_com\.guistate"):
        device.switch_context("WEBVIEW_com.other")


def test_a_scrolled_pages_boxes_land_where_the_phone_shows_them(hybrid: Callable[..., Device]) -> None:
    device = hybrid(**{"appium:nativeWebScreenshot": True})
    device.switch_context(f"WEBVIEW_{HYBRID}")
    device.type("qa@example.com", id="email")
    device.type("correct-horse", id="password")
    device.tap(text="Sign in")
    device.find(desc="Delete Buy milk")
    web_view = next(n.bounds for n in device.ui_tree().nodes() if n.cls == "android.webkit.WebView")
    assert web_view is not None
    x = web_view.center[0]
    device.swipe(x, web_view.bottom - 100, x, web_view.top + 300, duration_ms=400)  # drags the page up
    scrolled = device.driver.execute_script("return window.scrollY")
    assert scrolled > 0
    tree = device.ui_tree()
    deletes = [n for n in tree.nodes() if n.content_desc.startswith("Delete ") and n.bounds is not None]
    assert deletes
    last = deletes[-1]
    element = device.find(desc=last.content_desc)
    box = device.box_of(element)  # W3C rect: CSS px of the document, the scroll taken off
    assert last.bounds is not None and web_view.contains(box)
    assert max(abs(a - b) for a, b in zip(box.as_list(), last.bounds.as_list(), strict=True)) <= 2, (box, last.bounds)
