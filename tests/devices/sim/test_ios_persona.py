"""The sim's iOS persona over HTTP with the stock Appium client: XCUITest/WDA shapes (issue 11)."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from selenium.common.exceptions import (
    InvalidArgumentException,
    InvalidSelectorException,
    NoAlertPresentException,
    NoSuchElementException,
    SessionNotCreatedException,
    WebDriverException,
)

from pytest_guistate.devices.sim import SimServer

IOS = {"platformName": "iOS", "appium:automationName": "XCUITest", "guistate:clock": "frozen"}
FEED, SHOP, SETTINGS = "com.guistate.feed", "com.guistate.shopa", "com.guistate.settings"


def open_ios(server: SimServer, **caps: Any) -> webdriver.Remote:
    return webdriver.Remote(server.url, options=AppiumOptions().load_capabilities({**IOS, **caps}))


@pytest.fixture
def feed(server: SimServer) -> Iterator[webdriver.Remote]:
    driver = open_ios(server, **{"appium:bundleId": FEED})
    yield driver
    driver.quit()


def source_root(driver: webdriver.Remote) -> ET.Element:
    return ET.fromstring(driver.page_source.encode("utf-8"))


def deleted(driver: webdriver.Remote) -> list[str]:
    log = driver.execute_script("mobile: guistateActionLog", {})
    return [entry["author"] for entry in log if entry["action"] == "delete_post"]


def test_the_platform_comes_from_the_capabilities(server: SimServer) -> None:
    for caps in ({"platformName": "iOS"}, {"appium:automationName": "XCUITest"}, {"guistate:platform": "ios"}):
        driver = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps))
        try:
            assert driver.capabilities["platformName"] == "iOS"
            assert driver.capabilities["automationName"] == "XCUITest"
            assert driver.page_source.splitlines()[1] == "<AppiumAUT>"
        finally:
            driver.quit()
    android = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities({"platformName": "Android"}))
    try:
        assert android.capabilities["automationName"] == "UiAutomator2"
        assert "<hierarchy" in android.page_source and "XCUIElementType" not in android.page_source
    finally:
        android.quit()
    with pytest.raises(SessionNotCreatedException, match="UiAutomator2"):
        open_ios(server, **{"appium:automationName": "UiAutomator2"})
    with pytest.raises(SessionNotCreatedException, match="scale must be 1, 2 or 3"):
        open_ios(server, **{"guistate:screen": {"width": 390, "height": 844, "scale": 4}})


def test_page_source_is_shaped_as_webdriveragent_writes_it(feed: webdriver.Remote) -> None:
    root = source_root(feed)
    assert root.tag == "AppiumAUT" and not root.attrib
    app = root[0]
    assert app.tag == "XCUIElementTypeApplication"
    assert (app.get("name"), app.get("label")) == ("Feed", "Feed")
    assert [app.get(k) for k in ("x", "y", "width", "height")] == ["0", "0", "393", "852"]
    assert app[0].tag == "XCUIElementTypeWindow"
    for element in root.iter():
        if element is root:
            continue
        assert element.tag == element.get("type")
        assert not {"clickable", "resource-id", "bounds", "class", "package"} & set(element.attrib)
        wda = ("type", "value", "name", "label", "enabled", "visible", "accessible", "focused",
               "x", "y", "width", "height", "index")
        assert list(element.attrib) == [k for k in wda if k in element.attrib]
    types = {element.tag for element in root.iter()}
    assert {"XCUIElementTypeNavigationBar", "XCUIElementTypeTable", "XCUIElementTypeCell",
            "XCUIElementTypeButton", "XCUIElementTypeStaticText", "XCUIElementTypeImage"} <= types
    button = root.find(".//XCUIElementTypeButton[@label='Delete post by Carol']")
    assert button is not None and button.get("name") == "delete" and button.get("accessible") == "true"
    cell = root.find(".//XCUIElementTypeCell[2]")
    assert cell is not None and cell.get("name") == "post_row" and cell.get("label", "").startswith("Bob, ")
    # the status bar is SpringBoard's, not the app's: it is not in the source (its pixels are on screen)
    assert "12:00:00" not in feed.page_source


def test_points_in_the_tree_pixels_in_the_screenshot(server: SimServer, feed: webdriver.Remote) -> None:
    assert feed.get_window_rect() == {"x": 0, "y": 0, "width": 393, "height": 852}
    png = base64.b64decode(feed.get_screenshot_as_base64())
    assert cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR).shape == (2556, 1179, 3)
    small = open_ios(server, **{"guistate:screen": {"width": 375, "height": 667, "scale": 2}})
    try:
        assert small.get_window_rect()["width"] == 375
        shot = base64.b64decode(small.get_screenshot_as_base64())
        assert cv2.imdecode(np.frombuffer(shot, np.uint8), cv2.IMREAD_COLOR).shape == (1334, 750, 3)
    finally:
        small.quit()
    button = feed.find_element("accessibility id", "delete")
    rect = button.rect
    assert rect["x"] + rect["width"] <= 393 and rect["y"] + rect["height"] <= 852
    # W3C actions are in points too: a tap at the button's centre opens its dialog
    feed.execute_script("mobile: tap", {"x": rect["x"] + rect["width"] / 2, "y": rect["y"] + rect["height"] / 2})
    assert feed.find_element("class name", "XCUIElementTypeAlert").get_attribute("label") == "Delete post?"


def test_locator_strategies(feed: webdriver.Remote) -> None:
    assert feed.find_element("accessibility id", "posts").tag_name == "XCUIElementTypeTable"
    assert len(feed.find_elements("id", "delete")) == len(feed.find_elements("name", "delete")) >= 5
    assert len(feed.find_elements("class name", "XCUIElementTypeCell")) >= 5
    predicate = feed.find_element("-ios predicate string",
                                  "type == 'XCUIElementTypeButton' AND label CONTAINS 'Carol'")
    assert predicate.get_attribute("label") == "Delete post by Carol"
    assert feed.find_element("-ios predicate string", 'label ==[c] "delete post by dave"').text == \
        "Delete post by Dave"
    assert feed.find_element("-ios predicate string", "label BEGINSWITH 'Erin' AND NOT (type == 'XCUIElementTypeCell')"
                             ).tag_name == "XCUIElementTypeStaticText"
    chain = feed.find_element("-ios class chain", '**/XCUIElementTypeCell[`label BEGINSWITH "Carol"`]')
    assert chain.tag_name == "XCUIElementTypeCell"
    inside = chain.find_element("-ios class chain", "**/XCUIElementTypeButton")
    assert inside.get_attribute("label") == "Delete post by Carol"
    assert feed.find_element("-ios class chain", "**/XCUIElementTypeCell[-1]").get_attribute("name") == "post_row"
    assert feed.find_element("xpath", "//XCUIElementTypeCell[3]//XCUIElementTypeButton").text == "Delete post by Carol"
    assert feed.find_element("xpath", "/AppiumAUT/XCUIElementTypeApplication").get_attribute("name") == "Feed"
    assert feed.find_elements("xpath", "/AppiumAUT") == []  # the AUT root is no element a client can act on
    for bad in ("//*[", "count(//*)", "//@label"):  # one wording with the Android persona (WDA's lead)
        with pytest.raises(InvalidSelectorException, match=f'Cannot evaluate results for XPath expression "{re.escape(bad)}"'):
            feed.find_element("xpath", bad)
    assert feed.find_element("accessibility id", "delete").get_attribute("bundleId") is None
    with pytest.raises(InvalidSelectorException, match="unknown attribute 'labl'"):
        feed.find_element("-ios predicate string", 'labl == "x"')
    with pytest.raises(InvalidSelectorException, match="class chain"):
        feed.find_element("-ios class chain", "**/Cell")
    with pytest.raises(InvalidSelectorException, match="not supported"):
        feed.find_element("-android uiautomator", 'new UiSelector().text("Carol")')
    with pytest.raises(NoSuchElementException, match="could not be located"):
        feed.find_element("accessibility id", "no such thing")


def test_secure_text_field_shows_dots_and_never_the_password(server: SimServer) -> None:
    driver = open_ios(server, **{"appium:bundleId": SETTINGS})
    try:
        field = driver.find_element("accessibility id", "password")
        assert field.tag_name == "XCUIElementTypeSecureTextField"
        assert field.get_attribute("value") == "Password"  # an empty field's value is its placeholder
        field.send_keys("correct-horse")
        assert field.get_attribute("value") == "\u2022" * len("correct-horse")
        assert "correct-horse" not in driver.page_source
        user = driver.find_element("accessibility id", "username")
        assert user.tag_name == "XCUIElementTypeTextField"
        user.send_keys("qa@example.com")
        assert user.text == "qa@example.com"
        driver.find_element("accessibility id", "login").click()
        switch = driver.find_element("-ios predicate string", "type == 'XCUIElementTypeSwitch' AND label == 'Dark mode'")
        assert (switch.get_attribute("name"), switch.get_attribute("value")) == ("Dark mode", "0")
        switch.click()
        assert switch.get_attribute("value") == "1"
    finally:
        driver.quit()


def test_alerts_as_xcuitest_serves_them(feed: webdriver.Remote) -> None:
    with pytest.raises(NoAlertPresentException):
        _ = feed.switch_to.alert.text
    feed.find_element("-ios predicate string", 'label == "Delete post by Bob"').click()
    assert feed.execute_script("mobile: alert", {"action": "getButtons"}) == ["Cancel", "Delete"]
    assert feed.switch_to.alert.text == "Delete post?\nDelete post by Bob?"
    feed.execute_script("mobile: alert", {"action": "dismiss"})
    assert deleted(feed) == [] and not feed.find_elements("class name", "XCUIElementTypeAlert")
    feed.find_element("-ios predicate string", 'label == "Delete post by Bob"').click()
    feed.switch_to.alert.accept()
    assert deleted(feed) == ["Bob"]
    feed.find_element("-ios predicate string", 'label == "Delete post by Carol"').click()
    with pytest.raises(InvalidArgumentException, match="no button labelled 'OK'"):
        feed.execute_script("mobile: alert", {"action": "accept", "buttonLabel": "OK"})
    feed.execute_script("mobile: alert", {"action": "accept", "buttonLabel": "Delete"})
    assert deleted(feed) == ["Bob", "Carol"]


def test_app_management_by_bundle_id(feed: webdriver.Remote) -> None:
    assert feed.execute_script("mobile: queryAppState", {"bundleId": FEED}) == 4
    feed.execute_script("mobile: launchApp", {"bundleId": SHOP})
    assert feed.execute_script("mobile: activeAppInfo")["bundleId"] == SHOP
    assert feed.execute_script("mobile: queryAppState", {"bundleId": FEED}) == 3
    feed.activate_app(FEED)  # the client sends mobile: activateApp with bundleId
    assert source_root(feed)[0].get("name") == "Feed"
    assert feed.execute_script("mobile: terminateApp", {"bundleId": SHOP}) is True
    assert feed.execute_script("mobile: queryAppState", {"bundleId": SHOP}) == 1
    assert feed.execute_script("mobile: queryAppState", {"bundleId": "com.example.none"}) == 0
    feed.execute_script("mobile: pressButton", {"name": "home"})
    assert source_root(feed)[0].get("name") == "SpringBoard"
    assert feed.find_element("-ios predicate string", "type == 'XCUIElementTypeIcon' AND label == 'Gallery'")
    with pytest.raises(InvalidArgumentException, match="bundleId"):
        feed.execute_script("mobile: activateApp", {"appId": FEED})
    with pytest.raises(WebDriverException, match="Unsupported execute method 'mobile: shell'"):
        feed.execute_script("mobile: shell", {"command": "ls"})


def test_no_back_key_the_navigation_bar_and_the_edge_swipe(server: SimServer) -> None:
    driver = open_ios(server, **{"appium:bundleId": SHOP, "guistate:faults": {"search_delay": 0}})
    try:
        driver.back()  # the driver's native back at a root: nothing happens (no button to tap)
        assert driver.find_element("class name", "XCUIElementTypeNavigationBar").get_attribute("name") == "ShopA"
        assert not driver.find_elements("-ios class chain", "**/XCUIElementTypeNavigationBar/XCUIElementTypeButton"
                                                            "[`label == 'ShopA'`]")
        driver.find_element("accessibility id", "search").send_keys("Phone Case\n")
        driver.find_element("xpath", "//XCUIElementTypeStaticText[@label='Phone Case']").click()
        back = driver.find_element("-ios class chain", "**/XCUIElementTypeNavigationBar/XCUIElementTypeButton[1]")
        assert back.get_attribute("label") == "ShopA"
        driver.back()  # taps the navigation bar's back button
        assert driver.find_elements("accessibility id", "search")
        driver.find_element("xpath", "//XCUIElementTypeStaticText[@label='Phone Case']").click()
        assert not driver.find_elements("accessibility id", "search")
        driver.execute_script("mobile: dragFromToForDuration",
                              {"fromX": 2, "fromY": 400, "toX": 300, "toY": 400, "duration": 0.5})
        assert driver.find_elements("accessibility id", "search"), "an edge swipe pops the pushed screen"
    finally:
        driver.quit()


def test_same_faults_and_ground_truth_in_pixels(server: SimServer) -> None:
    """The stale Feed of TSR figure 2 on iOS: the row redraws late and a blind re-tap deletes the next post."""
    driver = open_ios(server, **{"appium:bundleId": FEED, "guistate:faults": {"refresh_delay": 30}})
    try:
        delete = '**/XCUIElementTypeCell[`label BEGINSWITH "Carol"`]/XCUIElementTypeButton'
        driver.find_element("-ios class chain", delete).click()
        driver.execute_script("mobile: alert", {"action": "accept"})
        truth = driver.execute_script("mobile: guistateGroundTruth", {})
        assert truth["changed"] and all(right <= 1170 and bottom <= 2532 for _, _, right, bottom in truth["regions"])
        assert max(right for _, _, right, _ in truth["regions"]) > 390, "ground truth is in screenshot pixels"
        driver.find_element("-ios class chain", delete).click()  # the stale row is still on screen
        driver.execute_script("mobile: alert", {"action": "accept"})
        assert deleted(driver) == ["Carol", "Dave"]
    finally:
        driver.quit()
