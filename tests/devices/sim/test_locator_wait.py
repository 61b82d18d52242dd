"""Locators wait for a ready element by default (issue 34), on the simulated phone's both personas."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.devices.device import ElementAmbiguous, ElementNotFound, ElementNotReady
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.timeouts import LOCATOR_TIMEOUT_S

SHOP = "com.guistate.shopa"


def caps(platform: str, **faults: float) -> dict[str, Any]:
    persona = ({"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": SHOP}
               if platform == "ios" else {"platformName": "Android", "appium:appPackage": SHOP})
    return {**persona, "guistate:clock": "realtime", "guistate:faults": faults}


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_tap_waits_for_results_that_show_late(open_device: Any, platform: str) -> None:
    device = open_device(caps(platform, search_delay=2.0))
    assert device.locator_timeout == LOCATOR_TIMEOUT_S
    device.type("Phone Case\n", id="search")
    with pytest.raises(ElementNotFound, match="no element with"):
        device.find(id="result_row", timeout=0)  # one look: the spinner is still up
    device.tap(id="result_row")  # the default wait sees the results arrive
    assert device.find(id="product_price").text.startswith("$")


def test_a_disabled_element_is_never_tapped_and_the_failure_says_why(open_device: Any) -> None:
    device = open_device(caps("android"))
    device.tap(id="cart")
    with pytest.raises(ElementNotReady, match=r"id='checkout' found after waiting 0.3 s but not ready to act on: "
                                              r"disabled .*attached, visible, not moving and enabled"):
        device.tap(id="checkout", timeout=0.3)
    assert [e for e in device.action_log() if e.get("action") == "checkout"] == []


def test_a_missing_element_fails_after_the_wait_naming_it(open_device: Any) -> None:
    device = open_device(caps("android"))
    device.locator_timeout = 0.2
    with pytest.raises(ElementNotFound, match=r"no element with .*Nowhere.* after waiting 0.2 s; on screen: "):
        device.tap("Nowhere")
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        device.find("Nowhere", timeout=-1)


XPATHS = {"android": "//*[@resource-id='com.guistate.shopa:id/{}']", "ios": "//*[@name='{}']"}


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_an_xpath_waits_for_an_enabled_element_and_a_ready_one_costs_one_find(
        open_device: Any, server: SimServer, platform: str) -> None:
    """An `xpath=` locator is narrowed to enabled matches by XPath itself, as `text=`/`desc=`/`id=` are
    by their strategies: a disabled button is never tapped, and a ready one costs the find it always did."""
    device = open_device(caps(platform))
    device.tap(id="cart")
    with pytest.raises(ElementNotReady, match=r"found after waiting 0.3 s but not ready to act on: disabled"):
        device.tap(xpath=XPATHS[platform].format("checkout"), timeout=0.3)
    assert [e for e in device.action_log() if e.get("action") == "checkout"] == []
    sid = device.driver.session_id
    before = len(server.request_log())
    device.find(xpath=XPATHS[platform].format("cart"))
    finds = [r.path for r in server.request_log()[before:] if r.path.startswith(f"/session/{sid}/element")]
    assert finds == [f"/session/{sid}/elements"], finds


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_unique_locator_that_names_two_elements_acts_on_none(open_device: Any, platform: str) -> None:
    """`unique=True` (an exported test's locators): every Feed row's Delete shares the id `delete`, so the id
    names them all and nothing is deleted; the row's own label names one, and that one is deleted."""
    feed = "com.guistate.feed"
    persona = ({"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": feed}
               if platform == "ios" else {"platformName": "Android", "appium:appPackage": feed})
    device = open_device(persona)
    with pytest.raises(ElementAmbiguous, match=r"id='delete' names \d+ elements on this screen.*nothing was done"):
        device.tap(id="delete", unique=True)
    with pytest.raises(ElementAmbiguous):
        device.type("x", id="delete", unique=True)
    assert [e for e in device.action_log() if e.get("action") == "delete_post"] == []
    device.tap(desc="Delete post by Erin", unique=True)
    # the dialog's button (on Android the rows' "Delete" buttons stay in the tree under the dialog)
    device.tap(**({"text": "Delete"} if platform == "ios" else {"id": "button1"}), unique=True)
    assert [e.get("author") for e in device.action_log() if e.get("action") == "delete_post"] == ["Erin"]
