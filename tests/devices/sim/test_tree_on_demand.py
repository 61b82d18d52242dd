"""Tree on demand (issue 12) at the device: `Device.observe()` takes the screenshot, the page
source comes on the first read of `.tree`, once, and never after the screen moved on. Driven
through the stock Appium client against the simulated phone; the counts come from the server's
request log as well as from the device's own counter."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options

from pytest_guistate.core.observation import TreeExpired
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer


@pytest.fixture
def device(server: SimServer) -> Iterator[Device]:
    options = UiAutomator2Options()
    options.set_capability("appium:appPackage", "com.guistate.feed")
    dev = Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True)
    yield dev
    dev.close()


def _sources(server: SimServer, device: Device) -> int:
    sid = device.driver.session_id
    return sum(1 for r in server.request_log() if r.path == f"/session/{sid}/source")


def test_observe_fetches_no_tree_until_read_then_once(server: SimServer, device: Device) -> None:
    observation = device.observe()
    assert not observation.tree_fetched and observation.tree_at is None
    assert device.page_source_calls == 0 and _sources(server, device) == 0
    tree = observation.tree
    assert tree is not None and tree.has_text("Carol")
    assert observation.tree is tree and observation.package == "com.guistate.feed"
    assert device.page_source_calls == 1 == _sources(server, device)
    assert observation.tree_at is not None and observation.tree_at >= observation.frame.timestamp


def test_concurrent_first_reads_fetch_once(server: SimServer, device: Device) -> None:
    observation = device.observe()
    barrier = threading.Barrier(4)
    seen: list[object] = []

    def read() -> None:
        barrier.wait()
        seen.append(observation.tree)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(seen) == 4 and all(t is seen[0] for t in seen)
    assert device.page_source_calls == 1 == _sources(server, device)


def test_a_tree_read_after_an_input_or_a_newer_frame_is_refused(server: SimServer, device: Device) -> None:
    first = device.observe()
    device.tap(desc="Delete post by Carol")  # the dialog opens: the old frame's tree is gone for good
    with pytest.raises(TreeExpired, match="an input was sent"):
        _ = first.tree
    second = device.observe()
    device.observe()
    with pytest.raises(TreeExpired, match="a newer screenshot"):
        _ = second.tree
    assert _sources(server, device) == 0  # refused before asking: no tree of another screen


def test_eager_mode_fetches_with_the_screenshot(server: SimServer, device: Device) -> None:
    device.tree_on_demand = False
    observation = device.observe()
    assert observation.tree_fetched and device.page_source_calls == 1
    device.tap(desc="Delete post by Carol")
    assert observation.tree is not None and observation.tree.has_text("Carol")  # the tree of its own frame


def test_pull_to_refresh_reuses_the_tree_just_read(server: SimServer, device: Device) -> None:
    observation = device.observe()
    assert observation.tree is not None
    assert device.pull_to_refresh()
    assert device.page_source_calls == 1 == _sources(server, device)
    assert device.pull_to_refresh()  # the screen moved on (an input): a fresh page source
    assert device.page_source_calls == 2


def test_session_reads_the_before_tree_before_acting_and_counts_per_step(server: SimServer, device: Device) -> None:
    session = TaskSession(device, policy=TierPolicy.for_tier("standard"))
    with session.step("open the dialog", expect="Delete post by Carol?") as step:
        assert step.before is not None and step.before.tree_fetched  # read before the tap
        device.tap(desc="Delete post by Carol")
    record = session.steps[0]
    assert record.outcome == "ok" and record.route_changed is False
    assert record.page_sources == device.page_source_calls == _sources(server, device) == 2


def test_an_observation_taken_outside_the_session_is_not_mistaken_for_the_before(
    server: SimServer, device: Device,
) -> None:
    session = TaskSession(device, policy=TierPolicy.for_tier("standard"), reuse_window_s=60.0)
    with session.step("open the dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    after = session.steps[0]
    device.tap(id="android:id/button2")  # cancel, outside any step: an input the session did not send
    device.observe()  # and a look of the test's own
    with session.step("open it again", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    record = session.steps[1]
    assert after.outcome == "ok" and record.outcome == "ok"
    assert record.reused_before is False  # the first step's after is stale: a new before was taken
    assert record.verdict == "changed"  # judged against the list without the dialog, not the old frame
