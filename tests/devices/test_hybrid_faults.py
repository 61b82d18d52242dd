"""The drivers' web view faults as `Device` names them (issue 37), on the sim's Hybrid app over HTTP: a proxied
screenshot that hangs is a `DeviceTimeout` within its deadline that says what to set, while the native route
(`appium:nativeWebScreenshot`) is not held by it; a context name the session does not list is
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
