"""The server in front of the real simulated `Phone`, through the stock Appium client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import InvalidSelectorException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput

from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.model import AppState
from pytest_guistate.devices.sim.phone import ManualClock, Phone

FEED = "com.guistate.feed"
REFRESH_DELAY_S = 0.4


def feed(server: SimServer, **faults: float) -> webdriver.Remote:
    options = UiAutomator2Options()
    options.set_capability("appium:appPackage", FEED)
    options.set_capability("guistate:faults", faults)
    return webdriver.Remote(server.url, options=options)


@pytest.fixture
def driver(server: SimServer) -> Iterator[webdriver.Remote]:
    drv = feed(server)
    yield drv
    drv.quit()


def deletes(drv: webdriver.Remote) -> list[str]:
    return [
        entry["post_id"]
        for entry in drv.execute_script("mobile: guistateActionLog")
        if entry.get("action") == "delete_post"
    ]


def test_screen_source_and_locators(driver: webdriver.Remote) -> None:
    image = cv2.imdecode(np.frombuffer(driver.get_screenshot_as_png(), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == (2400, 1080, 3)
    tree = parse_page_source(driver.page_source)
    delete_buttons = [n for n in tree.nodes() if n.resource_id == f"{FEED}:id/delete"]
    assert delete_buttons
    found = driver.find_elements(AppiumBy.ID, "delete")
    assert [el.rect["y"] for el in found] == [b.bounds.top for b in delete_buttons if b.bounds]
    by_xpath = driver.find_elements(AppiumBy.XPATH, f"//*[@resource-id='{FEED}:id/delete']")
    assert [el.id for el in by_xpath] == [el.id for el in found]
    assert driver.current_package == FEED
    assert driver.query_app_state(FEED) == AppState.RUNNING_IN_FOREGROUND
    with pytest.raises(InvalidSelectorException, match='Cannot evaluate results for XPath expression "count'):
        driver.find_element(AppiumBy.XPATH, "count(//*)")


def test_stale_screen_double_delete_is_visible_in_the_action_log() -> None:
    """TSR figure 2: the list has not redrawn, a blind second delete removes the *next* post.

    The phone runs on a manual clock: the list stays stale for every request until the test moves
    time on, however slowly a busy machine serves them.
    """
    clock = ManualClock()

    def phone_factory(caps: dict[str, Any]) -> Phone:
        return Phone.from_capabilities(caps, clock=clock)

    with SimServer(phone_factory=phone_factory) as server:
        _double_delete(feed(server, refresh_delay=REFRESH_DELAY_S), clock)


def _double_delete(drv: webdriver.Remote, clock: ManualClock) -> None:
    try:
        first_delete = drv.find_elements(AppiumBy.ID, "delete")[0]
        first_author = drv.find_elements(AppiumBy.ID, "author")[0].text
        first_delete.click()
        drv.find_element(AppiumBy.ID, "android:id/button1").click()  # confirm
        assert drv.find_elements(AppiumBy.ID, "author")[0].text == first_author  # screen still stale
        first_delete.click()  # the harmful retry: the element is still "valid"
        drv.find_element(AppiumBy.ID, "android:id/button1").click()
        removed = deletes(drv)
        assert len(removed) == 2 and removed[0] != removed[1], removed
        clock.advance(REFRESH_DELAY_S + 0.2)  # the list redraws: the old row leaves the tree
        with pytest.raises(StaleElementReferenceException):
            first_delete.click()
        assert deletes(drv) == removed
    finally:
        drv.quit()


def test_long_press_opens_the_dialog_and_back_dismisses_it(driver: webdriver.Remote) -> None:
    row = driver.find_elements(AppiumBy.ID, "post_row")[0]
    chain = ActionChains(driver)
    chain.w3c_actions = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
    chain.w3c_actions.pointer_action.move_to(row, -300, 0).pointer_down().pause(0.7).release()
    chain.perform()
    assert driver.find_element(AppiumBy.ID, "android:id/button1").text == "Delete"
    driver.back()
    assert driver.find_elements(AppiumBy.ID, "android:id/button1") == []
    actions = [entry["action"] for entry in driver.execute_script("mobile: guistateActionLog")]
    assert actions.index("open_dialog") < actions.index("dismiss_dialog"), actions
    assert deletes(driver) == []


def test_faults_at_run_time_and_ground_truth(driver: webdriver.Remote) -> None:
    driver.execute_script("mobile: guistateFaults", {"faults": {"refresh_delay": 5.0}})
    driver.find_elements(AppiumBy.ID, "delete")[0].click()
    truth = driver.execute_script("mobile: guistateGroundTruth")
    assert isinstance(truth, dict) and truth
    with pytest.raises(Exception, match="unknown fault"):
        driver.execute_script("mobile: guistateFaults", {"faults": {"no_such_fault": 1}})
