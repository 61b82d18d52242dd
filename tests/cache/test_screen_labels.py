"""The action cache's screen labels leave out what is there on one run and gone on the next: a toast
on either platform (iOS has no toast type: a lone text in a window above the app's, the rule the
cassettes' matching uses, `cassette.toast_ids`), while an alert's texts stay: they are the app's state."""

from __future__ import annotations

from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.devices.sim.ios.phone import IosPhone
from pytest_guistate.llm.cache.cachefile import screen_labels, screen_signature
from tests.helpers.direct_screen import DirectScreen

FEED = "com.guistate.feed"


def _ios_feed() -> tuple[DirectScreen, VirtualClock]:
    clock = VirtualClock()
    caps = {"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": FEED}
    return DirectScreen(IosPhone.from_capabilities(caps, clock=clock)), clock


def test_an_ios_toast_is_not_a_label_of_the_screen_an_alert_is() -> None:
    screen, clock = _ios_feed()
    screen.tap_text("Delete post by Carol")
    alert = screen.observe().tree
    assert alert is not None and {"Delete post?", "Delete post by Carol?", "Cancel"} <= set(screen_labels(alert))
    screen.tap_text("Delete")
    clock.sleep(1.0)  # the list redrawn, the toast still up (it lasts 1.5 s)
    with_toast = screen.observe().tree
    assert with_toast is not None and any(n.text == "Post deleted" for n in with_toast.nodes())
    assert "Post deleted" not in screen_labels(with_toast)
    clock.sleep(2.0)
    gone = screen.observe().tree
    assert gone is not None and not any(n.text == "Post deleted" for n in gone.nodes())
    assert screen_signature(with_toast, FEED)["hash"] == screen_signature(gone, FEED)["hash"]
