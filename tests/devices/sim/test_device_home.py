"""`Device.home()` on both personas of the sim, through the stock Appium client (issue 11): the HOME
key (`mobile: pressKey` 3) on UiAutomator2, the home button (`mobile: pressButton` home) on
XCUITest; the app left behind keeps its screen."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.devices.device import DeviceError

SHOPB = "com.guistate.shopb"
PERSONAS = {
    "android": ({"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": SHOPB},
                "com.android.launcher3", f"{SHOPB}:id/search"),
    "ios": ({"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": SHOPB},
            "SpringBoard", "search"),
}


@pytest.mark.parametrize("platform", sorted(PERSONAS))
def test_home_shows_the_home_screen_and_the_app_keeps_its_screen(open_device: Any, platform: str) -> None:
    caps, home_package, search = PERSONAS[platform]
    device = open_device(caps)
    assert device.platform == platform
    device.type("Phone", id=search)
    shop_package = device.observe().package
    device.home()
    home = device.observe()
    assert home.package == home_package
    labels = {n.label for n in home.tree.actionable()}
    assert {"ShopA", "ShopB", "Feed"} <= labels  # the icons, in the tree of the next observation
    assert device.exists(desc="ShopB")
    device.tap(desc="ShopB")  # resumed, not restarted: the typed query is still there
    again = device.observe()
    assert again.package == shop_package
    assert any(n.text == "Phone" or n.attrs.get("value") == "Phone" for n in again.tree.nodes())


def test_home_key_and_home_button_are_what_the_drivers_serve(open_device: Any) -> None:
    android = open_device(PERSONAS["android"][0])
    android.driver.press_keycode(3)  # the dedicated endpoint reaches the same key as `mobile: pressKey`
    assert android.observe().package == "com.android.launcher3"
    ios = open_device(PERSONAS["ios"][0])
    with pytest.raises(DeviceError, match="button name 'back' is unknown; use home, volumeUp or volumeDown"):
        ios.mobile("pressButton", {"name": "back"})  # there is no back button to press on an iPhone
    ios.mobile("pressButton", {"name": "home"})
    assert ios.observe().package == "SpringBoard"
