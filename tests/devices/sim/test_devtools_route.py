"""The DevTools screenshot route (issue 12) where it does not exist: a session that is not
chromedriver's falls back to the W3C screenshot after one try, says why, and loses nothing.
The route itself is tested on real Chromium in tests/appium/test_device_real.py."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.devtools_capture import wants_devtools
from pytest_guistate.devices.sim import SimServer


@pytest.fixture
def device(open_device: Any) -> Device:
    return open_device({"platformName": "Android", "appium:automationName": "UiAutomator2",
                        "appium:appPackage": "com.guistate.feed"})


@pytest.mark.parametrize(("caps", "wanted"), [
    ({"browserName": "chrome", "platformName": "linux"}, True),
    ({"browserName": "Chromium", "platformName": "Windows"}, True),
    ({"browserName": "chrome"}, True),
    ({"browserName": "Chrome", "platformName": "Android"}, False),  # the whole device screen is wanted
    ({"browserName": "Safari", "platformName": "iOS"}, False),
    ({"browserName": "MicrosoftEdge", "platformName": "linux"}, False),
    ({"platformName": "Android", "appium:automationName": "UiAutomator2"}, False),
])
def test_only_desktop_chromedriver_sessions_take_the_devtools_route(caps: dict[str, str], wanted: bool) -> None:
    assert wants_devtools(caps) is wanted


def test_the_sim_uses_the_w3c_screenshot_by_default(server: SimServer, device: Device) -> None:
    assert device.screenshot_route == "w3c"
    device.screenshot()
    sid = device.driver.session_id
    assert not [r for r in server.request_log() if r.path.startswith(f"/session/{sid}/goog")]


def test_a_driver_without_the_route_falls_back_once_and_says_why(server: SimServer, device: Device) -> None:
    device.devtools_screenshots = True  # as if the capabilities had said chromedriver
    assert device.screenshot_route == "devtools (untried)"
    frames = [device.screenshot() for _ in range(3)]
    assert device.screenshot_route == "w3c"
    assert device._devtools is not None and device._devtools.reason.startswith("no DevTools route (")
    assert all(f.size == frames[0].size for f in frames) and frames[0].bgr.any()
    sid = device.driver.session_id
    paths = [r.path for r in server.request_log() if r.path.startswith(f"/session/{sid}/")]
    assert sum(p.endswith("/goog/cdp/execute") for p in paths) == 1  # one try, then never again
    assert not [p for p in paths if p.endswith("/title")]  # chromedriver's capture checks for a dialog itself
    assert sum(p.endswith("/screenshot") for p in paths) == 3
