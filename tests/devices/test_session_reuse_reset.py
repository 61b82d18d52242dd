"""The per-driver resets of `devices/reset.py`, driven over HTTP by the stock Appium client (issue 12).

The sim speaks UiAutomator2, so the UiAutomator2 reset (`clearApp` + `activateApp`, or terminate +
activate under `appium:noReset`) runs against it for real; the choice of reset from capabilities
and the "session gone" detection are checked on their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from selenium.common.exceptions import InvalidSessionIdException, WebDriverException

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.reset import (
    ResetUnavailable,
    driver_kind,
    incompatible_keys,
    reset_app,
    session_gone,
)
from pytest_guistate.devices.sim.server import SimServer

FEED = "com.guistate.feed"
CAPS = {"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": FEED}


@pytest.fixture
def sim_device() -> Iterator[Device]:
    with SimServer() as server:
        driver = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(dict(CAPS)))
        device = Device(driver, url=server.url, is_sim=True)
        yield device
        device.close()


def delete_carol(device: Device) -> None:
    device.tap(desc="Delete post by Carol")
    device.tap(id="android:id/button1")
    assert not device.exists(desc="Delete post by Carol")


def test_uiautomator2_reset_clears_the_app_and_brings_it_to_the_front(sim_device: Device) -> None:
    delete_carol(sim_device)
    sim_device.activate_app("com.guistate.gallery")
    outcome = reset_app(sim_device, "uiautomator2", CAPS)
    assert outcome.describe() == f"uiautomator2: clearApp + activateApp {FEED}"
    assert sim_device.mobile("getCurrentPackage") == FEED
    assert sim_device.exists(desc="Delete post by Carol")


def test_uiautomator2_no_reset_terminates_and_activates(sim_device: Device) -> None:
    sim_device.tap(desc="Delete post by Bob")  # a dialog the relaunch closes
    outcome = reset_app(sim_device, "uiautomator2", {**CAPS, "appium:noReset": True})
    assert "terminateApp + activateApp" in outcome.detail and "data kept" in outcome.detail
    assert not sim_device.exists(id="android:id/button1")
    actions = [entry["action"] for entry in sim_device.action_log()]
    assert "terminate_app" in actions and actions[-1] == "open_app"


def test_sim_reset_builds_a_fresh_phone_from_the_next_tests_capabilities(sim_device: Device) -> None:
    delete_carol(sim_device)
    outcome = reset_app(sim_device, "sim", {**CAPS, "appium:appPackage": "com.guistate.settings"})
    assert outcome.describe() == "sim: mobile: guistateReset (a fresh phone, com.guistate.settings)"
    assert sim_device.exists(id="login")
    assert [entry["action"] for entry in sim_device.action_log()] == ["open_app"]
    with pytest.raises(DeviceError, match="guistate:seed must be an integer"):
        reset_app(sim_device, "sim", {"guistate:seed": "x"})
    assert sim_device.exists(id="login")  # a refused reset keeps the phone it had


def test_what_cannot_be_reset_in_place_asks_for_a_new_session(sim_device: Device) -> None:
    with pytest.raises(ResetUnavailable, match="fullReset"):
        reset_app(sim_device, "uiautomator2", {**CAPS, "appium:fullReset": True})
    with pytest.raises(ResetUnavailable, match="no appium:appPackage"):
        reset_app(sim_device, "uiautomator2", {"platformName": "Android"})
    with pytest.raises(ResetUnavailable, match="no appium:bundleId"):
        reset_app(sim_device, "xcuitest", {"platformName": "iOS"})
    with pytest.raises(ResetUnavailable, match="Espresso"):
        reset_app(sim_device, "", {"appium:automationName": "Espresso"})
    with pytest.raises(DeviceError, match="not installed"):
        sim_device.mobile("clearApp", {"appId": "com.example.none"})


@pytest.mark.parametrize(("caps", "is_sim", "kind"), [
    ({}, True, "sim"),
    ({"appium:automationName": "UiAutomator2"}, False, "uiautomator2"),
    ({"automationName": "XCUITest"}, False, "xcuitest"),
    ({"appium:automationName": "Chromium", "browserName": "chrome"}, False, "chromium"),
    ({"browserName": "Chrome"}, False, "chromium"),
    ({"browserName": "Safari"}, False, ""),
    ({"appium:automationName": "Espresso"}, False, ""),
])
def test_the_reset_is_chosen_from_the_capabilities(caps: dict[str, Any], is_sim: bool, kind: str) -> None:
    assert driver_kind(caps, is_sim=is_sim) == kind


def test_only_what_a_reset_can_apply_may_differ() -> None:
    held = {**CAPS, "appium:udid": "emulator-5554"}
    assert incompatible_keys("uiautomator2", held, {**held, "appium:appPackage": "com.other"}) == []
    assert incompatible_keys("uiautomator2", held, {**held, "appium:udid": "emulator-5556"}) == ["appium:udid"]
    assert incompatible_keys("xcuitest", held, {**held, "appium:appPackage": "x"}) == ["appium:appPackage"]
    assert incompatible_keys("sim", held, {**held, "appium:appPackage": "x", "guistate:faults": {}}) == []
    assert incompatible_keys("sim", held, {**held, "guistate:screen": {"width": 720}}) == ["guistate:screen"]


def test_a_session_the_server_ended_is_recognised_through_the_device_error() -> None:
    try:
        try:
            raise InvalidSessionIdException("invalid session id: no such session")
        except WebDriverException as exc:
            raise DeviceError("screenshot failed") from exc
    except DeviceError as wrapped:
        assert session_gone(wrapped)
    assert session_gone(WebDriverException("A session is either terminated or not started"))
    assert not session_gone(DeviceError("click failed: element not interactable"))
