"""Closing the web Feed's dimmed dialog on real Chromium (issue 15): the scrim undims every pixel,
yet the step's region is the dialog (from the before-tree) and its crop is smaller than the screen."""

from __future__ import annotations

import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.session import TaskSession
from pytest_guistate.core.settle import SettlePolicy
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
