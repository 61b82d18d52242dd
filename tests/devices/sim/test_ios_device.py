"""`Device` on an XCUITest session (the sim's iOS persona): pixels vs points, locators, typing,
back, pull-to-refresh, apps and the WDA error shapes (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from selenium.common.exceptions import UnknownMethodException, WebDriverException

from pytest_guistate.devices.device import CapabilityUnavailable, Device, DeviceError, ElementNotFound
from pytest_guistate.devices.errors import driver_call
from pytest_guistate.devices.sim import SimServer

IOS = {"platformName": "iOS", "appium:automationName": "XCUITest"}


def ios(bundle: str, **caps: Any) -> dict[str, Any]:
    """The capabilities of an XCUITest session on the app `bundle`."""
    return {**IOS, "appium:bundleId": bundle, **caps}


def log(device: Device, action: str) -> list[dict[str, Any]]:
    return [entry for entry in device.action_log() if entry["action"] == action]


def test_screenshot_pixels_and_driver_points(open_device: Any) -> None:
    device = open_device(ios("com.guistate.feed"))
    assert (device.platform, device.scale, device.size) == ("ios", 3.0, (1179, 2556))
    tree = device.ui_tree()
    assert (tree.platform, tree.unit, tree.width, tree.height) == ("ios", "px", 1179, 2556)
    button = device.find(desc="Delete post by Carol")
    box = device.box_of(button)
    node = next(n for n in tree.nodes() if n.label == "Delete post by Carol")
    assert node.bounds is not None and abs(node.bounds.left - box.left) <= 3 and box.right > 393
    device.tap(x=box.center[0], y=box.center[1])  # screenshot pixels in, points to the driver
    assert log(device, "open_dialog")[0]["author"] == "Carol"
    assert device.observe().package == "Feed"


def test_text_desc_and_id_locators(open_device: Any) -> None:
    device = open_device(ios("com.guistate.shopa", **{"guistate:faults": {"search_delay": 0}}))
    device.type("Phone Case\n", id="search")
    assert len(device.driver.find_elements("-ios predicate string", 'value == "Phone Case"')) == 2  # field + row
    assert device.find(text="Phone Case").tag_name == "XCUIElementTypeTextField"  # text= is label or value
    device.tap(xpath="//XCUIElementTypeStaticText[@label='Phone Case']")
    assert device.find(id="product_price").text.startswith("$")
    assert device.exists(desc="Cart, 0 items")
    with pytest.raises(ElementNotFound, match="Android resource id"):
        device.find(id="com.guistate.shopa:id/add_to_cart", timeout=0)  # a miss: no default wait
    device.tap(id="add_to_cart")
    assert log(device, "add_to_cart")[0]["product"] == "Phone Case"


def test_password_fields_are_found_by_their_type(open_device: Any) -> None:
    device = open_device(ios("com.guistate.settings"))
    secrets: list[str] = []
    device.on_secret = secrets.append
    device.type("qa@example.com", id="username")
    device.type("correct-horse", id="password")
    assert secrets == ["correct-horse"], "only the SecureTextField's text is a secret"


def test_back_is_the_navigation_bar_button_else_a_clear_error(open_device: Any) -> None:
    device = open_device(ios("com.guistate.gallery"))
    with pytest.raises(DeviceError, match="root of its navigation stack"):
        device.back()
    device.tap(id="albums")
    assert device.exists(text="Albums")
    device.back()
    assert device.exists(text="All photos") and not device.exists(id="album_name")
    device.tap(desc="Beach")
    device.tap(id="move")
    with pytest.raises(DeviceError, match=r"an alert is open \(Move to album\).*'Cancel'"):
        device.back()


def test_pull_to_refresh_drags_the_first_table(open_device: Any) -> None:
    device = open_device(ios("com.guistate.feed", **{"guistate:faults": {"refresh_delay": 30}}))
    device.tap(desc="Delete post by Bob")
    device.tap(id="Delete")
    assert device.exists(text="Bob"), "the list redraws late"
    assert device.pull_to_refresh() is True
    assert log(device, "refresh")
    device.activate_app("com.guistate.settings")
    assert device.pull_to_refresh() is False, "the login form has no list"


def test_apps_by_bundle_id_and_missing_commands(open_device: Any) -> None:
    device = open_device(ios("com.guistate.feed"))
    device.activate_app("com.guistate.shopb")
    assert device.observe().package == "ShopB"
    assert device.mobile("queryAppState", {"bundleId": "com.guistate.shopb"}) == 4
    assert device.terminate_app("com.guistate.shopb") is True
    with pytest.raises(CapabilityUnavailable, match="Unsupported execute method 'mobile: shell'"):
        device.mobile("shell", {"command": "ls"})


@pytest.mark.parametrize("message", [
    "Unsupported execute method 'mobile: photoPicker'. Available methods are: mobile: tap",
    "Method has not yet been implemented",
    "Method is not implemented",
])
def test_wda_refusals_are_capability_limits(message: str) -> None:
    def refuse() -> None:
        raise WebDriverException(message)

    with pytest.raises(CapabilityUnavailable, match="not supported by the driver"):
        driver_call("mobile: photoPicker", "http://wda", refuse)

    def unknown_method() -> None:
        raise UnknownMethodException(message)

    with pytest.raises(CapabilityUnavailable):
        driver_call("back", "http://wda", unknown_method)


def test_a_wda_failure_keeps_its_message(open_device: Any) -> None:
    def crash() -> None:
        raise WebDriverException("Could not proxy command to the remote server. Original error: socket hang up")

    with pytest.raises(DeviceError, match="page source failed on http://wda: Could not proxy") as caught:
        driver_call("page source", "http://wda", crash)
    assert not isinstance(caught.value, CapabilityUnavailable)


@pytest.mark.parametrize(("preset", "platform"), [("xcuitest", "ios"), ("uiautomator2", "android")])
def test_the_capability_presets_open_the_matching_persona(server: SimServer, preset: str, platform: str) -> None:
    from pytest_guistate.devices import capabilities

    caps = (capabilities.xcuitest(bundle_id="com.guistate.feed", udid="00008110-000000000000001E")
            if preset == "xcuitest" else capabilities.uiautomator2(app_package="com.guistate.feed"))
    device = Device(webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps)),
                    url=server.url, is_sim=True)
    try:
        assert device.platform == platform
        assert device.scale == (3.0 if platform == "ios" else 1.0)
        assert device.exists(desc="Delete post by Carol"), "the preset's app is the one in front"
    finally:
        device.close()


@pytest.mark.parametrize(("preset", "scale", "asks_rect"), [("xcuitest", 3.0, True), ("uiautomator2", 1.0, False)])
def test_a_real_drivers_scale_is_measured_on_ios_only(server: SimServer, preset: str, scale: float,
                                                      asks_rect: bool) -> None:
    """As a real server's session (is_sim=False): XCUITest points are measured against the window
    rect; UiAutomator2 bounds are screenshot pixels already, and its window rect, which leaves out
    a side navigation bar in landscape, is never asked."""
    from pytest_guistate.devices import capabilities

    caps = (capabilities.xcuitest(bundle_id="com.guistate.feed", udid="00008110-000000000000001E")
            if preset == "xcuitest" else capabilities.uiautomator2(app_package="com.guistate.feed"))
    device = Device(webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps)), url=server.url)
    try:
        assert device.scale == scale
        sid = device.driver.session_id
        rects = [r for r in server.request_log() if r.path == f"/session/{sid}/window/rect"]
        assert bool(rects) is asks_rect
    finally:
        device.close()
