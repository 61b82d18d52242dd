"""Issue 25 through the stock Appium-Python-Client: the soft keyboard (`is_keyboard_shown`,
`hide_keyboard`, the iOS Keyboard element), deep links, app removal, `current_activity`, iOS
`elementType` predicates, and the driver's own argument names (UiAutomator2 `appId`, XCUITest
`bundleId`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import InvalidArgumentException, InvalidSelectorException

from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim import SimServer

ANDROID = {"platformName": "Android", "appium:automationName": "UiAutomator2", "guistate:clock": "frozen"}
IOS = {"platformName": "iOS", "appium:automationName": "XCUITest", "guistate:clock": "frozen"}
SHOP, FEED, SETTINGS = "com.guistate.shopa", "com.guistate.feed", "com.guistate.settings"


@pytest.fixture
def connect(server: SimServer) -> Iterator[Any]:
    opened: list[webdriver.Remote] = []

    def make(caps: dict[str, Any]) -> webdriver.Remote:
        opened.append(webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps)))
        return opened[-1]

    yield make
    for driver in opened:
        driver.quit()


def search_field(driver: webdriver.Remote, ios: bool) -> Any:
    if ios:
        return driver.find_element(AppiumBy.CLASS_NAME, "XCUIElementTypeTextField")
    return driver.find_element(AppiumBy.CLASS_NAME, "android.widget.EditText")


# -- the keyboard ------------------------------------------------------------------------------------

@pytest.mark.parametrize("caps", [ANDROID, IOS], ids=["android", "ios"])
def test_a_tapped_field_brings_the_keyboard_and_hide_keyboard_takes_it_away(connect: Any, caps: dict) -> None:
    ios = caps is IOS
    driver = connect({**caps, "appium:bundleId" if ios else "appium:appPackage": SHOP})
    assert driver.is_keyboard_shown() is False
    field = search_field(driver, ios)
    field.click()
    assert driver.is_keyboard_shown() is True
    field.send_keys("lamp")
    driver.hide_keyboard()
    assert driver.is_keyboard_shown() is False
    assert search_field(driver, ios).text == "lamp"  # the field keeps its text (and its focus)
    driver.hide_keyboard()  # nothing to hide: no error, as on both drivers
    search_field(driver, ios).click()
    assert driver.is_keyboard_shown() is True


def test_ios_lists_the_keyboard_in_xcuitest_shape_and_the_tree_knows_where_it_is(connect: Any) -> None:
    driver = connect({**IOS, "appium:bundleId": SHOP})
    assert driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeKeyboard") == []
    search_field(driver, True).click()
    (keyboard,) = driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeKeyboard")
    assert keyboard.rect == {"x": 0, "y": 516, "width": 393, "height": 336}  # an iPhone 15's portrait keyboard
    keys = keyboard.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeKey")
    assert {"q", "a", "z", "space", "delete", "shift"} <= {k.get_attribute("name") for k in keys}
    assert [b.get_attribute("label") for b in keyboard.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeButton")] \
        == ["done", "Next keyboard"]
    tree = parse_page_source(driver.page_source)
    assert tree.keyboard_box is not None and (tree.keyboard_box.top, tree.keyboard_box.height) == (516, 336)
    controls = tree.controls()
    assert [n.label for n in controls if n.keyboard] == ["done", "Next keyboard"]  # keys are typing, not controls
    assert all(n.keyboard or not tree.keyboard_box.contains(n.bounds) for n in controls)
    # the keys type into the focused field, as a finger on the keyboard would
    for name in ("shift", "l", "a", "m", "p"):
        driver.find_element(AppiumBy.ACCESSIBILITY_ID, name).click()
    assert search_field(driver, True).text == "Lamp"
    # and the keyboard is in the screenshot, not only in the tree (iOS's key-plane grey at its bottom)
    png = driver.get_screenshot_as_png()
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert tuple(int(c) for c in image[2556 - 20, 600][::-1]) == (209, 212, 217)


def test_ios_hide_keyboard_taps_the_named_keys_the_driver_sends(connect: Any) -> None:
    driver = connect({**IOS, "appium:bundleId": SHOP})
    search_field(driver, True).click()
    driver.hide_keyboard(key_name="Go")  # no "Go" key: the "done" the driver adds dismisses it
    assert not driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeKeyboard")
    search_field(driver, True).click()
    driver.execute_script("mobile: hideKeyboard", {"keys": ["x"]})  # WDA taps each named key until it is gone
    assert not driver.is_keyboard_shown() and search_field(driver, True).text == "x"


# -- apps, links and activities ----------------------------------------------------------------------

def test_android_current_activity_deep_link_and_app_removal(connect: Any) -> None:
    driver = connect({**ANDROID, "appium:appPackage": FEED})
    assert driver.current_activity == ".MainActivity"
    driver.execute_script("mobile: deepLink", {"url": "shopa://product/42", "package": SHOP})
    assert driver.current_package == SHOP
    with pytest.raises(InvalidArgumentException, match=r'We wanted \{"required":\["url","package"\]\}'):
        driver.execute_script("mobile: deepLink", {"url": "shopa://product/42"})
    assert driver.execute_script("mobile: removeApp", {"appId": SETTINGS}) is True
    assert driver.is_app_installed(SETTINGS) is False
    assert driver.query_app_state(SETTINGS) == 0
    with pytest.raises(InvalidArgumentException, match="not installed"):
        driver.activate_app(SETTINGS)
    driver.execute_script("mobile: installApp", {"appPath": SETTINGS})
    driver.activate_app(SETTINGS)
    assert driver.current_package == SETTINGS
    driver.press_keycode(3)  # HOME
    assert driver.current_activity == ".Launcher"


def test_android_app_commands_take_app_id_and_refuse_bundle_id_as_the_driver_does(connect: Any) -> None:
    driver = connect({**ANDROID, "appium:appPackage": FEED})
    with pytest.raises(InvalidArgumentException, match=r'We wanted \{"required":\["appId"\]\} and you sent \[\'bundleId\'\]'):
        driver.execute_script("mobile: terminateApp", {"bundleId": FEED})
    assert driver.query_app_state(FEED) == 4  # refused: nothing was terminated
    assert driver.execute_script("mobile: terminateApp", {"appId": FEED}) is True


def test_ios_clear_app_deep_link_remove_app_and_element_type_predicates(connect: Any) -> None:
    driver = connect({**IOS, "appium:bundleId": SHOP})
    search_field(driver, True).send_keys("lamp")
    assert driver.execute_script("mobile: clearApp", {"bundleId": SHOP}) is True
    assert driver.query_app_state(SHOP) == 1  # cleared and stopped, as on a simulator
    driver.activate_app(SHOP)
    assert search_field(driver, True).text != "lamp"
    driver.execute_script("mobile: deepLink", {"url": "feed://post/1"})  # the scheme names the app
    assert driver.execute_script("mobile: activeAppInfo")["bundleId"] == FEED
    driver.execute_script("mobile: deepLink", {"url": "https://example.com/x", "bundleId": SETTINGS})
    assert driver.execute_script("mobile: activeAppInfo")["bundleId"] == SETTINGS
    with pytest.raises(InvalidArgumentException, match="schemes"):
        driver.execute_script("mobile: deepLink", {"url": "nowhere://x"})
    driver.remove_app(SHOP)  # the client sends bundleId and appId; XCUITest reads bundleId
    assert driver.is_app_installed(SHOP) is False and driver.query_app_state(SHOP) == 0
    with pytest.raises(InvalidArgumentException, match=r'We wanted \{"required":\["bundleId"\]\}'):
        driver.execute_script("mobile: removeApp", {"appId": SHOP})
    buttons = driver.find_elements(AppiumBy.IOS_PREDICATE, "elementType == 9")
    assert buttons and all(b.get_attribute("type") == "XCUIElementTypeButton" for b in buttons)
    texts = driver.find_elements(AppiumBy.IOS_PREDICATE, "elementType IN {48, 49} AND visible == 1")
    assert {t.get_attribute("type") for t in texts} <= {"XCUIElementTypeStaticText", "XCUIElementTypeTextField"}
    assert texts


# -- UiScrollable ----------------------------------------------------------------------------------

def test_android_ui_scrollable_scrolls_the_list_until_the_row_shows(connect: Any) -> None:
    driver = connect({**ANDROID, "appium:appPackage": FEED})
    last = parse_page_source(driver.page_source)
    assert not last.find_text("Judy")  # the last post is below the screen
    row = driver.find_element(AppiumBy.ANDROID_UIAUTOMATOR,
                              'new UiScrollable(new UiSelector().scrollable(true).instance(0)).setAsVerticalList()'
                              '.scrollIntoView(new UiSelector().text("Judy"))')
    assert row.text == "Judy" and row.is_displayed()
    assert parse_page_source(driver.page_source).find_text("Judy")  # the list really moved
    by_desc = driver.find_element(AppiumBy.ANDROID_UIAUTOMATOR,
                                  'new UiScrollable(new UiSelector().scrollable(true))'
                                  '.scrollDescriptionIntoView("Delete post by Alice")')
    assert by_desc.get_attribute("content-desc") == "Delete post by Alice"  # back up: found on the way back
    by_text = driver.find_elements(AppiumBy.ANDROID_UIAUTOMATOR,
                                   'new UiScrollable(new UiSelector().scrollable(true)).setMaxSearchSwipes(3)'
                                   '.scrollTextIntoView("No such post")')
    assert by_text == []
    with pytest.raises(InvalidSelectorException, match="getChildByText"):
        driver.find_element(AppiumBy.ANDROID_UIAUTOMATOR,
                            'new UiScrollable(new UiSelector().scrollable(true)).getChildByText('
                            'new UiSelector().className("x"), "y")')


# -- geometry --------------------------------------------------------------------------------------

def test_ios_a_partly_scrolled_row_keeps_its_whole_frame_and_a_tap_lands_on_its_shown_part(connect: Any) -> None:
    driver = connect({**IOS, "appium:bundleId": FEED})
    assert driver.get_window_size() == {"width": 393, "height": 852}  # an iPhone 15
    table = driver.find_element(AppiumBy.CLASS_NAME, "XCUIElementTypeTable")
    full = driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeCell")[1].rect["height"]
    driver.execute_script("mobile: dragFromToForDuration",
                          {"fromX": 200, "fromY": 600, "toX": 200, "toY": 540, "duration": 0.5})
    top = table.rect["y"]
    first = driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeCell")[0]
    rect = first.rect
    assert rect["y"] < top < rect["y"] + rect["height"], "the row reaches above its list, as WDA reports it"
    assert rect["height"] == full  # the whole frame, not the part left inside the list
    first.click()  # lands inside the list, not on the navigation bar above it
    tap = [e for e in driver.execute_script("mobile: guistateActionLog") if e["action"] == "tap"][-1]
    assert top * 3 <= tap["y"] < (rect["y"] + rect["height"]) * 3  # screenshot pixels: scale 3
    android = connect({**ANDROID, "appium:appPackage": FEED})
    android.swipe(500, 1800, 500, 1620, 500)
    rows = android.find_elements(AppiumBy.ID, "post_row")
    rv = android.find_element(AppiumBy.CLASS_NAME, "androidx.recyclerview.widget.RecyclerView").rect
    assert rows[0].rect["y"] >= rv["y"]  # UiAutomator2 clips to the list
