"""Light records less (issue 12): a light step that no check reads fetches no page source.

A small lazy screen over the real simulated phone counts page sources and refuses a late tree the
way `Device` does (`TreeExpired` once an input was sent or a newer screenshot taken).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.detect import route_change
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, TreeExpired
from pytest_guistate.core.oracle_mask import StatusBars
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.report.recorder import ArtifactRecorder
from tests.helpers.lazy_screen import LazyScreen

FEED = "com.guistate.feed"


def session_on(policy: TierPolicy) -> tuple[TaskSession, LazyScreen]:
    clock = VirtualClock()
    screen = LazyScreen(Phone(app_package=FEED, clock=clock, seed=1))
    session = TaskSession(screen, policy=policy, clock=clock, settle=SettlePolicy(timeout_s=0.6, interval_s=0.15))
    return session, screen


def test_a_light_step_no_check_reads_fetches_no_page_source() -> None:
    session, screen = session_on(TierPolicy.for_tier("light"))
    session.goal("open and cancel the delete dialog")
    opened = session.perform("open the dialog", lambda: screen.tap_text("Delete"))
    cancelled = session.perform("cancel", lambda: screen.tap_text("Cancel"))
    assert screen.page_source_calls == 0
    for record in (opened, cancelled):
        assert not record.reads_trees and record.page_sources == 0
        assert record.package_before == record.package_after == ""  # unknown: no page source was read
    assert opened.verdict == "changed" and opened.regions  # the pixels still say what changed
    assert all(region["element"] is None for region in opened.regions)  # raw, not snapped to containers
    # a check reading the tree reads the trees again, before and after (triage, the route detector)

    def dialog_open(observation: Observation) -> bool:
        return observation.tree is not None and observation.tree.has_text("Delete post?")

    checked = session.perform("open it again", lambda: screen.tap_text("Delete"), expect=dialog_open)
    assert checked.reads_trees and checked.page_sources == 2
    assert checked.package_before == checked.package_after == FEED
    # a locator check is answered by a find only on a screen that finds (issue 24); this one does not,
    # so the step reads its trees as for any check
    located = session.perform("cancel again", lambda: screen.tap_text("Cancel"), expect=gone("Delete post?"))
    assert located.reads_trees and located.page_sources == 1  # the before-tree was read with the last check


def test_standard_reads_every_step_tree_as_before() -> None:
    session, screen = session_on(TierPolicy.for_tier("standard"))
    session.goal("open the delete dialog")
    record = session.perform("open the dialog", lambda: screen.tap_text("Delete"))
    assert record.reads_trees and record.page_sources and record.page_sources >= 2
    assert record.package_after == FEED and any(region["element"] is not None for region in record.regions)


def test_a_pending_milestone_check_makes_a_light_step_read_its_trees() -> None:
    session, screen = session_on(TierPolicy.for_tier("light"))
    session.goal("open the dialog", plan=[("dialog open", visible("Delete post?"))])
    record = session.perform("open the dialog", lambda: screen.tap_text("Delete"))
    assert record.reads_trees and screen.page_source_calls > 0
    assert session.progress.completed == ["dialog open"]


def test_an_unmet_lazy_step_reads_its_tree_while_the_screen_is_current() -> None:
    """A policy gating transitions without step trees: the failed look's tree is read before
    anything is written (redaction, snapping), not after the screen moved on."""
    policy = dataclasses.replace(TierPolicy.for_tier("light"), gate_transitions=True)
    session, screen = session_on(policy)
    session.goal("a tap on nothing")
    with pytest.raises(StepFailed) as failed, session.step("tap the empty bottom edge"):
        screen.tap(540, 2395)
    record = failed.value.record
    assert not record.reads_trees and record.outcome == "failed"
    assert session._last is not None and session._last[0].tree_fetched
    # the refresh's (where to pull: the settled screen's list) and the failed look's, none per settle poll
    assert screen.page_source_calls == 2
    assert record.attempts[-1].refreshed_by == "pull-to-refresh"


def test_status_bars_are_learnt_per_screen_size() -> None:
    phone = Phone(app_package=FEED, clock=VirtualClock(), seed=1)
    tree = parse_page_source(phone.page_source())
    bar = next(n for n in tree.nodes() if n.resource_id.endswith("status_bar"))
    bar.bounds = Box(0, 0, 1080, 100)  # taller than the 3 % band the oracle falls back to
    bars = StatusBars()
    assert bars.boxes(None, 1080, 2400) == [Box(0, 0, 1080, 72)]  # nothing learnt: the top band
    assert bars.boxes(tree, 1080, 2400) == [Box(0, 0, 1080, 100)]
    assert bars.boxes(None, 1080, 2400) == [Box(0, 0, 1080, 100)]  # remembered, no tree needed
    assert bars.boxes(None, 2400, 1080) == [Box(0, 0, 2400, 32)]  # rotated: not the portrait bar


def _observation(colour: tuple[int, int, int], *, current: bool) -> Observation:
    pixels = np.zeros((200, 100, 3), np.uint8)
    pixels[:] = colour
    pixels[50:80, 10:60] = (255, 255, 255)
    ok, png = cv2.imencode(".png", pixels)
    assert ok

    def fetch():  # type: ignore[no-untyped-def]
        raise TreeExpired("moved on")

    return Observation(Frame(png.tobytes()), fetch_tree=fetch, tree_current=lambda: current)


def test_route_change_without_page_sources_uses_the_changed_pixel_fraction() -> None:
    before, after = _observation((0, 0, 0), current=False), _observation((9, 9, 9), current=True)
    transition = Transition(verdict="changed", regions=[], crops=[], ignored=[], unstable=[], identical_bytes=False,
                            diff_ratio=0.8, elapsed_ms=0.0)
    assert route_change(before, after, known_only=True, transition=transition) == "screen changed (80% of the pixels)"
    transition.diff_ratio = 0.2
    assert route_change(before, after, known_only=True, transition=transition) is None


def test_a_frame_whose_tree_can_no_longer_be_read_is_written_filled(tmp_path: Path) -> None:
    recorder = ArtifactRecorder(tmp_path, nodeid="t.py::test_x", tier="light")
    gone = _observation((0, 0, 200), current=True)
    recorder.on_observation(gone)  # light: waits for its tree instead of fetching it now
    gone._current = lambda: False  # the screen moved on before anyone read the tree
    recorder.on_observation(_observation((0, 200, 0), current=True))
    recorder.put("final.png", gone.frame.png)
    [written] = recorder.flush_extra()
    pixels = cv2.imdecode(np.frombuffer((tmp_path / written).read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) == 1  # all of it hidden, not written as it was
    recorder.close_writer()
