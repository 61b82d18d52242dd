"""Closing the web Feed's dimmed dialog on real Chromium (issue 15): the scrim undims every pixel,
yet the step's region is the dialog (from the before-tree) and its crop is smaller than the screen."""

from __future__ import annotations

import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.settle import SettlePolicy
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.web_feed import FeedServer

pytestmark = pytest.mark.appium


def test_cancelling_the_dimmed_dialog_crops_the_dialog_not_the_screen(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url(delay_ms=0))
    session = TaskSession(device, name="real_dim", settle=SettlePolicy(timeout_s=2.0, interval_s=0.15))
    session.perform("open delete dialog", lambda: device.tap("Delete"), expect=visible("Delete post?"))
    with session.step("cancel", expect=gone("Delete post?")) as step:
        device.tap(id="cancel_delete")
    transition = step.transition
    assert transition is not None and transition.verdict == "changed"
    width, height = device.screenshot().size
    first = transition.regions[0]
    assert first.container is not None and "vanished" in first.container, transition.regions
    assert transition.crops and all(c.box.area < 0.5 * width * height for c in transition.crops), \
        [c.box for c in transition.crops]
    assert any("undim" in note for note in transition.notes), transition.notes


@pytest.mark.parametrize("change", ["appeared", "vanished"])
def test_a_full_screen_dialog_layer_gives_the_dialog_box_not_the_frame(device: Device, feed_server: FeedServer,
                                                                        change: str) -> None:
    """Issue 23: the web app's `role="dialog"` element is the full-screen dim layer; opening and
    closing it gave a region of the whole frame (container null). The dialog box is its content."""
    device.open_url(feed_server.page_url(delay_ms=0, scrim_dialog=True))
    session = TaskSession(device, name="real_dim_layer", settle=SettlePolicy(timeout_s=2.0, interval_s=0.15))
    with session.step("open delete dialog", expect=visible("Delete post?")) as opened:
        device.tap("Delete")
    step = opened
    if change == "vanished":
        with session.step("cancel", expect=gone("Delete post?")) as closed:
            device.tap(id="cancel_delete")
        step = closed
    transition = step.transition
    assert transition is not None and transition.verdict == "changed"
    width, height = device.screenshot().size
    first = transition.regions[0]
    assert first.container is not None and change in first.container, transition.regions
    assert first.box.area < 0.5 * width * height, first.box
    assert transition.crops and all(c.box.area < 0.5 * width * height for c in transition.crops), \
        [c.box for c in transition.crops]
