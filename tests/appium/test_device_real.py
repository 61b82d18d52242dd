"""`Device` against a real Appium 3 server: headless Chromium emulating a Pixel 7 (issue 6).

Everything goes through the plugin's `device` fixture (`--guistate-device=URL`). The web Feed
is served on loopback; its `window.__guistateActionLog` is the ground truth of what happened.
"""

from __future__ import annotations

import time
from typing import Any

import cv2
import numpy as np
import pytest

from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.devices.device import (
    CapabilityUnavailable,
    Device,
    DeviceError,
    ElementNotFound,
)
from pytest_guistate.devices.devtools_capture import COMMAND
from pytest_guistate.devices.web_feed import FeedServer

pytestmark = pytest.mark.appium

RED_BGR = (47, 47, 211)  # the Delete button, #d32f2f
BLUE_BGR = (210, 118, 25)  # the app bar, #1976d2


def deletes(device: Device) -> list[str]:
    return [e["post_id"] for e in device.action_log() if e["action"] == "delete_post"]


def authors(tree: UITree) -> list[str]:
    return [n.text for n in tree.nodes() if n.resource_id == "author"]


def share_of(image: np.ndarray, node: UINode, bgr: tuple[int, int, int], tolerance: int = 12) -> float:
    """Fraction of the node's pixels within `tolerance` of `bgr`."""
    assert node.bounds is not None
    b = node.bounds
    crop = image[b.top:b.bottom, b.left:b.right].astype(np.int16)
    close = np.all(np.abs(crop - np.array(bgr, np.int16)) <= tolerance, axis=2)
    return float(close.mean())


def test_screenshot_is_the_emulated_phone_not_the_window(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    frame = device.screenshot()
    assert device.is_web and not device.is_sim
    assert frame.size == device.size == (1082, 2402)  # 412x915 CSS px at 2.625
    assert device.scale == pytest.approx(2.625)
    outer = device.driver.get_window_rect()
    assert (outer["width"], outer["height"]) != device.size  # the trap: the outer window is something else


def test_tree_bounds_are_screenshot_pixels_that_match_the_drawing(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    image = device.screenshot().bgr
    tree = device.ui_tree()
    assert (tree.width, tree.height) == device.size
    buttons = [n for n in tree.nodes() if n.resource_id == "delete"]
    assert len(buttons) >= 8 and all(n.cls == "android.widget.Button" and n.clickable for n in buttons)
    # the rounded corners and the white label are not red; most of the button is
    assert all(share_of(image, n, RED_BGR) > 0.6 for n in buttons)
    toolbar = tree.by_resource_id("toolbar")[0]
    assert share_of(image, toolbar, BLUE_BGR) > 0.8
    below = toolbar.bounds
    assert below is not None
    shifted = UINode(cls="probe", bounds=type(below)(below.left, below.bottom + 4, below.right, below.bottom + 40))
    assert share_of(image, shifted, BLUE_BGR) < 0.05  # the bar ends where the tree says it does
    first = buttons[0]
    assert first.bounds is not None
    element_box = device.box_of(device.find(xpath="(//button[@data-testid='delete'])[1]"))
    assert max(abs(a - b) for a, b in zip(element_box.as_list(), first.bounds.as_list())) <= 1
    lists = [n for n in tree.nodes() if n.scrollable]
    assert [n.resource_id for n in lists] == ["posts"]
    assert lists[0].bounds is not None and lists[0].bounds.bottom == device.size[1]


def test_hostile_post_text_stays_text(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    tree = device.ui_tree()
    assert tree.find_text("<img src=x onerror=alert(1)>")
    assert device.driver.find_elements("css selector", "img") == []


def test_tap_by_text_then_back_closes_the_dialog(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    assert not device.exists(id="dialog")
    device.tap("Delete")
    assert device.exists(id="dialog")
    assert device.ui_tree().find_text("Delete post by Alice?")
    device.back()
    assert not device.exists(id="dialog")
    assert [e["action"] for e in device.action_log()] == ["open_dialog", "dismiss_dialog"]
    assert deletes(device) == []


def test_tap_at_a_point_in_screenshot_pixels(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    bob_row = [n for n in device.ui_tree().nodes() if n.resource_id == "post_row"][1]
    button = next(n for n in bob_row.walk() if n.resource_id == "delete")
    assert button.bounds is not None
    device.tap(x=button.bounds.center[0], y=button.bounds.center[1])
    assert device.ui_tree().find_text("Delete post by Bob?")
    device.tap("Delete")  # with the dialog open, the dialog's button is the one a tap reaches
    assert deletes(device) == ["p2"]
    assert "Bob" not in authors(device.ui_tree())  # no delay: the list redrew at once


def test_stale_screen_blind_retry_deletes_the_next_post(device: Device, feed_server: FeedServer) -> None:
    """TSR figure 2 with real rendering: the list stays stale, a blind re-tap deletes Bob."""
    device.open_url(feed_server.page_url(delay_ms=1500))
    device.tap("Delete")
    device.tap(id="confirm_delete")
    assert authors(device.ui_tree())[0] == "Alice"  # deleted in the backend, still drawn
    device.tap("Delete")  # the harmful retry on the stale row
    device.tap(id="confirm_delete")
    assert deletes(device) == ["p1", "p2"]
    time.sleep(1.7)
    assert authors(device.ui_tree())[:2] == ["Carol", "Dave"]
    assert device.ground_truth()["shown"][:2] == ["p3", "p4"]


def test_pull_to_refresh_redraws_the_stale_list(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url(delay_ms=60_000, refresh_ms=500))
    device.tap("Delete")
    device.tap(id="confirm_delete")
    before = device.screenshot()
    assert authors(device.ui_tree())[0] == "Alice"
    assert device.pull_to_refresh() is True
    assert device.ui_tree().find_text("Refreshing")  # the spinner, by its accessibility label
    deadline = time.monotonic() + 5
    while "Alice" in authors(device.ui_tree()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert authors(device.ui_tree())[0] == "Bob"
    assert [e["action"] for e in device.action_log()].count("refresh") == 1
    assert deletes(device) == ["p1"]
    changed = cv2.absdiff(before.bgr, device.screenshot().bgr).any(axis=2)
    assert changed[200:400].any()  # the first row's pixels changed


def test_missing_capabilities_fail_with_a_clear_message(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    with pytest.raises(CapabilityUnavailable, match="'mobile: shell' is not available.*browser session"):
        device.mobile("shell", {"command": "ls"})
    with pytest.raises(CapabilityUnavailable, match="browser session with no apps"):
        device.activate_app("com.guistate.feed")
    with pytest.raises(CapabilityUnavailable, match="only on the simulated phone"):
        device.set_faults(refresh_delay=1.0)
    with pytest.raises(ElementNotFound, match="no element with text='No such post' after waiting 0.5 s; on screen: "
                                              ".*'Delete'"):
        device.find("No such post", timeout=0.5)
    device.open_url("about:blank")
    with pytest.raises(CapabilityUnavailable, match="exposes no window.__guistate"):
        device.action_log()



def test_a_web_find_is_the_reachable_match_and_names_a_bad_xpath(device: Device, feed_server: FeedServer) -> None:
    """The page evaluates the XPath and ranks the matches in one script: the same answers as the
    driver's own find (a row's button under the dialog is not picked; a bad expression is an
    invalid locator, named)."""
    device.open_url(feed_server.page_url())
    assert device.find("Delete").get_attribute("data-testid") == "delete"  # the first row's, before the dialog
    device.tap("Delete")
    assert device.exists(id="dialog")
    # the rows' Delete buttons are still in the DOM, under the scrim: the dialog's button is the one a tap reaches
    assert device.find("Delete").get_attribute("data-testid") == "confirm_delete"
    with pytest.raises(DeviceError, match=r"locator xpath='//\*\[' is not valid"):
        device.find(xpath="//*[")
    with pytest.raises(DeviceError, match="selects a #text node, not an element"):
        device.find(xpath="//body//text()")
    with pytest.raises(ElementNotFound, match="no element with xpath="):
        device.find(xpath="//*[@data-testid='no-such-thing']")


def test_chromium_screenshots_take_the_devtools_route_with_the_same_pixels_and_dialog_check(
        device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url())
    fast = device.screenshot()
    assert device.screenshot_route == "devtools"
    w3c = Device(device.driver, url=device.url)
    w3c.devtools_screenshots = False
    plain = w3c.screenshot()
    assert w3c.screenshot_route == "w3c"
    assert fast.size == plain.size == (1082, 2402)
    assert np.array_equal(fast.bgr, plain.bgr)  # the same pixels, only encoded with less effort
    for dev in (device, w3c):  # an open JavaScript dialog fails both routes the same way
        device.driver.execute_script("setTimeout(() => confirm('Delete the post?'), 0)")
        time.sleep(0.3)
        with pytest.raises(DeviceError, match=r"screenshot failed .*unexpected alert open.*Delete the post\?"):
            dev.screenshot()
    assert device.screenshot_route == "devtools"  # a dialog is the page's state, not a missing route
    assert device.screenshot().size == (1082, 2402)  # chromedriver dismissed it ("dismiss and notify")


def test_the_devtools_capture_is_the_dialog_check_from_the_first_screenshot_on(
        device: Device, feed_server: FeedServer) -> None:
    """chromedriver's DevTools command checks for an open dialog before it runs, as its W3C screenshot
    does: the route sends nothing else, and a dialog met by the session's first try fails that
    screenshot instead of turning the route off (a W3C screenshot after it would pass the dialog unseen)."""
    device.open_url(feed_server.page_url())
    fresh = Device(device.driver, url=device.url)
    sent: list[str] = []
    execute = device.driver.execute

    def counted(command: str, params: Any = None) -> Any:
        sent.append(command)
        return execute(command, params)

    device.driver.execute = counted
    try:
        device.driver.execute_script("setTimeout(() => alert('Saved'), 0)")
        time.sleep(0.3)
        with pytest.raises(DeviceError, match=r"screenshot failed .*unexpected alert open.*Saved"):
            fresh.screenshot()
        assert fresh.screenshot_route == "devtools (untried)"
        sent.clear()
        frames = [fresh.screenshot() for _ in range(3)]
    finally:
        device.driver.execute = execute
    assert fresh.screenshot_route == "devtools"
    assert all(f.size == (1082, 2402) for f in frames)
    assert sent == [COMMAND] * 3, sent  # one DevTools command a screenshot, no `title` beside it
