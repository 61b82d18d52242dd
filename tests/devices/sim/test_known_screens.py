"""A screenshot byte for byte like a screen this session already read takes that screen's tree,
without a page source (issue 24): back on the list after a dialog, a worker session's launch
screen after its reset. Identical pixels are the same screen, as the oracle holds for a step whose
frames did not change. A locator check on such a screen is still answered by the driver's find, which
sees a change to the tree that redrew nothing; `device.known_screens = 0` reads every new screenshot's tree."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy

FEED = "com.guistate.feed"
PERSONAS = {
    "android": {"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": FEED},
    "ios": {"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": FEED},
}


def _read(device: Any) -> tuple[Any, int]:
    """An observation with its tree read, and the page sources that cost."""
    sources = device.page_source_calls
    observation = device.observe()
    _ = observation.tree
    return observation, device.page_source_calls - sources


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_screen_seen_before_is_not_read_again(open_device: Any, platform: str) -> None:
    device = open_device(PERSONAS[platform])
    feed, cost = _read(device)
    assert cost == 1
    device.tap(desc="Delete post by Bob")
    dialog, cost = _read(device)
    assert cost == 1 and not dialog.frame.same_bytes(feed.frame)
    device.tap(id="android:id/button2") if platform == "android" else device.tap(desc="Cancel")
    back, cost = _read(device)
    assert back.frame.same_bytes(feed.frame), "closing the dialog should restore the feed's pixels"
    assert cost == 0 and back.tree is feed.tree and back.package == feed.package
    assert visible("Alice")(back).ok and gone("Delete post?")(back).ok
    assert back.finds == 2, "a locator check on a known screen still asks the driver (a tree may change unseen)"

    device.known_screens = 0
    again, cost = _read(device)
    assert again.frame.same_bytes(feed.frame) and cost == 1  # off: every screenshot's tree is read


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_changed_pixel_is_another_screen(open_device: Any, platform: str) -> None:
    """Scrolling the list by a little changes pixels: the tree is read, never the old one reused."""
    device = open_device(PERSONAS[platform])
    first, _ = _read(device)
    width, height = device.size
    device.swipe(width // 2, height * 3 // 4, width // 2, height * 3 // 4 - height // 6)
    moved, cost = _read(device)
    assert not moved.frame.same_bytes(first.frame) and cost == 1 and moved.tree is not first.tree


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_standard_steps_back_on_known_screens_read_no_tree(open_device: Any, platform: str) -> None:
    """Open and cancel the dialog twice at standard: after the first pair every screen is known."""
    device = open_device(PERSONAS[platform])
    session = TaskSession(device, policy=TierPolicy.for_tier("standard"), reuse_window_s=60.0)
    cancel = {"id": "android:id/button2"} if platform == "android" else {"desc": "Cancel"}
    for i in range(2):
        session.perform(f"open {i}", lambda: device.tap(desc="Delete post by Bob"), expect=visible("Delete post?"))
        session.perform(f"cancel {i}", lambda: device.tap(**cancel), expect=gone("Delete post?"))
    assert all(record.outcome == "ok" for record in session.steps)
    assert [record.page_sources for record in session.steps] == [2, 0, 0, 0]
    assert all(record.regions for record in session.steps), "every step's change is still snapped to regions"


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_byte_identical_screenshot_is_checked_and_decoded_once(
    open_device: Any, platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: a screenshot with the very bytes of the last one (a screen that did not change, as a
    settle poll mostly sees) is a Frame of its own that shares the last one's decoded copy for the
    oracle: no base64 decode, PNG check or half-size decode again. A changed screen is checked and
    decoded anew."""
    from pytest_guistate.devices import device as device_module

    device = open_device(PERSONAS[platform])
    first = device.observe().frame
    _ = first.small(2)  # the oracle's copy, decoded
    checked: list[int] = []
    original = device_module.check_png
    monkeypatch.setattr(
        device_module, "check_png", lambda png, *a, **k: (checked.append(len(png)), original(png, *a, **k))
    )
    again = device.observe().frame
    assert again is not first and again.png == first.png and checked == []
    assert again.decoded_small(2) is first.decoded_small(2)  # no decode of its own
    device.tap(desc="Delete post by Bob")
    dialog = device.observe().frame
    assert checked and not dialog.same_bytes(first) and dialog.decoded_small(2) is not first.decoded_small(2)
