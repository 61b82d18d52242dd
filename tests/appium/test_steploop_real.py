"""The step loop and the oracle against real Appium + Chromium: the stale Feed, deleted exactly once.

TSR figure 2 with real rendering and real timing: the backend deletes at once, the list redraws
only after `delay_ms` or a pull-to-refresh. The loop must settle, refresh and re-check, never
re-tap the non-idempotent confirm; the page's action log is the ground truth.
"""

from __future__ import annotations

import time

import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.settle import SettlePolicy
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.web_feed import FeedServer

pytestmark = pytest.mark.appium


def deletes(device: Device) -> list[str]:
    return [e["post_id"] for e in device.action_log() if e["action"] == "delete_post"]


@pytest.mark.parametrize("delay_ms", [0, 1500, 60_000])
def test_refresh_before_retry_deletes_exactly_once(device: Device, feed_server: FeedServer, delay_ms: int) -> None:
    device.open_url(feed_server.page_url(delay_ms=delay_ms, refresh_ms=500))
    session = TaskSession(device, name=f"real_feed_{delay_ms}", settle=SettlePolicy(timeout_s=3.0, interval_s=0.15))
    session.goal("delete Alice's post", plan=[("confirm dialog", visible("Delete post?")),
                                              ("post deleted", gone("Alice", exact=True))])
    session.perform("open delete dialog", lambda: device.tap("Delete"), expect=visible("Delete post?"))
    confirm = session.perform("confirm delete", lambda: device.tap(id="confirm_delete"),
                              expect=gone("Alice", exact=True), idempotent=False)
    assert deletes(device) == ["p1"]  # never the next post
    assert confirm.actions == 1
    stages = [a.stage for a in confirm.attempts]
    if delay_ms == 0:
        assert confirm.outcome == "ok" and stages == ["initial"]
    else:
        assert confirm.outcome in ("settled", "refreshed") and stages[0] == "initial"
        assert not confirm.attempts[0].met  # the first look saw the stale list
        assert any(a.data.get("kind") == "stale_screen" for a in session.anchors)
    if delay_ms == 60_000:  # only a refresh can redraw within the test: it must have been used
        assert confirm.outcome == "refreshed" and confirm.attempts[-1].refreshed_by == "pull-to-refresh"
        assert [e["action"] for e in device.action_log()].count("refresh") == 1
    session.assert_complete()


def test_oracle_finds_the_list_change_not_the_whole_screen(device: Device, feed_server: FeedServer) -> None:
    device.open_url(feed_server.page_url(delay_ms=60_000, refresh_ms=300, toast_ms=60_000))
    device.tap("Delete")
    device.tap(id="confirm_delete")
    before = device.observe()
    alice_row = next(n for n in before.tree.nodes() if n.resource_id == "post_row") if before.tree else None
    assert alice_row is not None and alice_row.bounds is not None
    device.pull_to_refresh()
    time.sleep(0.8)  # spinner 300 ms, then the redraw and the toast
    after = device.observe()
    assert not after.tree or not after.tree.find_text("Refreshing")
    transition = VisualOracle().compare(before.frame, after.frame, after.tree)
    assert transition.verdict == "changed"
    toolbar = before.tree.by_resource_id("toolbar")[0].bounds if before.tree else None
    assert toolbar is not None
    assert any(r.raw.contains(alice_row.bounds) or alice_row.bounds.contains(r.raw) or
               r.raw.intersects(alice_row.bounds) for r in transition.regions)
    assert all(r.raw.top >= toolbar.bottom for r in transition.regions)  # the app bar did not change
    assert transition.crops  # a crop of the after-frame for the report
