"""The step loop on a synthetic screen: settle -> refresh -> retry-only-if-proven, per tier."""

from __future__ import annotations

import json
import warnings

import cv2
import numpy as np
import pytest

from pytest_guistate.core.anchors import AnchorType, LinkType
from pytest_guistate.core.artifact_names import frame_name
from pytest_guistate.core.checks import as_check, gone
from pytest_guistate.core.detect import undrawn_change
from pytest_guistate.core.errors import (
    GuistateError,
    GuistateWarning,
    MilestoneNotVisible,
    ProgressIncomplete,
    StepFailed,
)
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.records import MemoryArtifacts
from pytest_guistate.core.settle import SettlePolicy, VirtualClock
from pytest_guistate.core.steploop import SessionHooks
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.uitree import parse_page_source
from tests.core._synthetic import PACKAGE, STATUS_H, ListScreen, decoded_frames


def make(tier: str = "standard", *, hooks: SessionHooks | None = None, listeners: tuple = (), **screen_kwargs):
    clock = VirtualClock()
    screen = ListScreen(clock, **screen_kwargs)
    session = TaskSession(screen, policy=TierPolicy.for_tier(tier), clock=clock, name="test_x", hooks=hooks,
                          listeners=listeners, settle=SettlePolicy(timeout_s=1.0, interval_s=0.1))
    return session, screen, clock


def stages(record) -> list[str]:
    return [a.stage for a in record.attempts]


def test_effect_at_once_is_ok_and_before_is_reused() -> None:
    session, screen, _ = make()
    first = session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    assert first.outcome == "ok" and first.confirmed and first.verdict == "changed"
    assert not first.reused_before
    second = session.perform("increment", screen.increment, expect="Count: 1")
    assert second.reused_before  # no action since the previous after-observation
    assert screen.deletes() == ["Post 2"]
    assert first.regions and first.crops  # standard keeps step crops
    assert isinstance(session.artifacts, MemoryArtifacts) and session.artifacts.get(first.crops[0])[:4] == b"\x89PNG"


def test_stale_list_is_refreshed_never_deleted_twice() -> None:
    session, screen, _ = make(redraw_delay=5.0)
    rec = session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    assert rec.outcome == "refreshed" and rec.actions == 1
    assert stages(rec) == ["initial", "settle", "refresh"]
    assert rec.attempts[-1].refreshed_by == "pull-to-refresh"
    assert screen.deletes() == ["Post 2"]
    assert session.episodes == 1 and session.retries == 0
    stale = [a for a in session.anchors if a.type is AnchorType.EXCEPTION]
    assert stale and stale[0].data["kind"] == "stale_screen" and stale[0].data["outcome"] == "refreshed"


def test_late_redraw_is_caught_by_settling() -> None:
    session, screen, _ = make(redraw_delay=0.25)
    rec = session.perform("delete post 1", lambda: screen.delete("Post 1"), expect=gone("Post 1"), idempotent=False)
    # settle stops as soon as two frames agree; the redraw at 0.25 s may land in the settle or the refresh
    assert rec.outcome in ("settled", "refreshed") and rec.actions == 1
    assert screen.deletes() == ["Post 1"]


def test_dropped_tap_on_idempotent_action_is_retried_once() -> None:
    session, screen, _ = make()
    screen.drop_taps = 1
    rec = session.perform("set counter", lambda: screen.set_counter(5), expect="Count: 5")
    assert rec.outcome == "retried" and rec.actions == 2 and rec.retries == 1
    assert stages(rec) == ["initial", "settle", "refresh", "retry"]
    assert [e for e in screen.log if e[0] == "set"] == [("set", 5)]
    assert session.retries == 1


def test_non_idempotent_action_is_never_repeated() -> None:
    session, screen, _ = make()
    screen.drop_taps = 1
    with pytest.raises(StepFailed) as info:
        session.perform("increment", screen.increment, expect="Count: 1", idempotent=False)
    message = str(info.value)
    assert "step 1 'increment' failed: expected text 'Count: 1' (substring) visible" in message
    assert "settled, refreshed (pull-to-refresh)" in message
    assert "non-idempotent" in message and "ran 1 time(s)" in message
    assert "crops of the after-frame: [0,0][360,640]" in message
    assert screen.counter == 0 and info.value.record is session.steps[-1]
    rec = session.steps[-1]
    assert rec.outcome == "failed" and rec.frames == [frame_name(1, "before"), frame_name(1, "after")]
    failed = [a for a in session.anchors if a.data.get("kind") == "step_failed"]
    assert failed and failed[0].crops  # the frames/crops that decided it


def test_no_expect_gates_on_a_visible_change() -> None:
    session, screen, _ = make()
    ok = session.perform("increment", screen.increment)
    assert ok.outcome == "ok" and ok.verdict == "changed"
    with pytest.raises(StepFailed, match="expected a visible change"):
        session.perform("tap nothing", screen.nothing, max_retries=2)
    rec = session.steps[-1]
    assert rec.actions == 3  # idempotent and proven no change: retried up to max_retries
    assert "still unmet after 3 run(s)" in rec.explanation


def test_uncertain_effect_is_not_retried_blindly() -> None:
    session, screen, _ = make()
    hooks_verdicts = []

    def override(before, after, transition, expect):
        hooks_verdicts.append(transition.verdict)
        return "uncertain"

    session.hooks.transition_check = override
    with pytest.raises(StepFailed, match="cannot be proven"):
        session.perform("increment", screen.increment)
    assert screen.counter == 1 and session.steps[-1].actions == 1
    assert hooks_verdicts[0] == "changed"


def test_a_ripple_alone_waits_for_its_fade_before_any_retry() -> None:
    """A tap whose only trace is its ripple: the first look is `uncertain` (never `no_change`, which
    would prove no effect), a layer still moving between two settle polls stays a ripple, and once
    it has faded the tap is judged to have done nothing, as a tap with no trace at all is."""
    session, screen, _ = make(clickable_rows=True)
    with pytest.raises(StepFailed, match="expected a visible change"):
        session.perform("tap post 2", lambda: screen.press_row(1, fade_s=0.3), max_retries=1)
    rec = session.steps[-1]
    assert [a.verdict for a in rec.attempts[:3]] == ["uncertain", "uncertain", "no_change"]
    assert [a.stage for a in rec.attempts[:4]] == ["initial", "settle", "refresh", "retry"]
    assert rec.actions == 2  # retried only after the evidence said no effect


def test_a_slow_fade_is_never_taken_for_the_change() -> None:
    """A layer fading over 2 s moves too little between polls for the settle to count, but it moves:
    never `changed` (a false pass), and while it is there never proof of no effect (a retry)."""
    session, screen, _ = make(clickable_rows=True)
    with pytest.raises(StepFailed, match="cannot be proven"):
        session.perform("tap post 2", lambda: screen.press_row(1, fade_s=2.0), max_retries=1)
    rec = session.steps[-1]
    assert "changed" not in [a.verdict for a in rec.attempts] and rec.actions == 1


def test_a_highlight_that_stays_is_the_taps_effect_once_it_stands_still() -> None:
    """The same layer, but it stays (a row the app marks as activated, the tree says nothing): it
    did not move between two settle polls, so it is the change, and the step is not retried."""
    session, screen, _ = make(clickable_rows=True)
    rec = session.perform("tap post 2", lambda: screen.press_row(1, fade_s=None))
    assert [a.verdict for a in rec.attempts] == ["uncertain", "changed"]
    assert rec.outcome == "settled" and rec.actions == 1
    assert rec.regions and rec.regions[0]["box"][1] == 140  # the row


def test_with_step_never_retries_and_raises() -> None:
    session, screen, _ = make()
    with session.step("increment", expect="Count: 1") as s:
        screen.increment()
    assert s.outcome == "ok" and s.transition is not None and s.transition.verdict == "changed"
    screen.drop_taps = 1
    with pytest.raises(StepFailed, match="cannot be re-run"), session.step("increment again", expect="Count: 2"):
        screen.increment()
    assert screen.counter == 1


def test_body_exception_is_recorded_and_propagates() -> None:
    session, _, _ = make()
    with pytest.raises(ZeroDivisionError), session.step("boom"):
        _ = 1 / 0
    rec = session.steps[-1]
    assert rec.outcome == "failed" and rec.error.startswith("ZeroDivisionError")
    with pytest.raises(RuntimeError):
        session.perform("raise", lambda: (_ for _ in ()).throw(RuntimeError("x")))
    assert session.steps[-1].error == "RuntimeError: x"


def test_steps_do_not_nest() -> None:
    session, screen, _ = make()
    with pytest.raises(GuistateError, match="do not nest"), session.step("outer", expect="Post 1"):
        session.perform("inner", screen.increment)


def test_light_tier_does_not_gate_but_checks_expect_and_keeps_crops_on_failure() -> None:
    session, screen, _ = make("light")
    rec = session.perform("tap nothing", screen.nothing)
    assert rec.outcome == "ok" and rec.verdict == "no_change"  # verdict recorded, not gated
    assert rec.crops == [] and len(session.anchors) == 0
    with pytest.raises(StepFailed) as info:
        session.perform("increment", screen.increment, expect="Count: 9", idempotent=False)
    # an unmet expect settles and refreshes at light too (issue 15), and the message says so
    assert session.steps[-1].crops and stages(session.steps[-1]) == ["initial", "settle", "refresh"]
    assert "refreshed (pull-to-refresh)" in str(info.value) and "no refresh" not in str(info.value)
    assert "after settle and refresh" in session.state.focus.next_focus


def test_light_tier_refreshes_a_stale_list_on_an_unmet_expect() -> None:
    session, screen, _ = make("light", redraw_delay=5.0)  # the redraw outlasts the 1 s settle timeout
    rec = session.perform("delete post 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    assert rec.outcome == "refreshed" and stages(rec) == ["initial", "settle", "refresh"]
    assert screen.deletes() == ["Post 2"] and rec.actions == 1


def test_off_tier_only_acts_and_checks_expect() -> None:
    session, screen, _ = make("off")
    rec = session.perform("increment", screen.increment)
    assert rec.outcome == "ok" and rec.attempts == [] and screen.observations == 0
    rec = session.perform("increment", screen.increment, expect="Count: 2")
    assert rec.verdict is None and rec.outcome == "ok"
    with pytest.raises(StepFailed):
        session.perform("increment", screen.increment, expect="Count: 9")
    assert session.steps[-1].actions == 1 and len(session.anchors) == 0 and session.artifacts.items == {}


def test_refresh_order_step_then_session_then_hook() -> None:
    calls: list[str] = []
    hooks = SessionHooks(refresh=lambda scr, obs: calls.append("hook") or True)
    session, screen, _ = make(hooks=hooks, redraw_delay=9.0)

    def session_refresh() -> None:
        calls.append("session")
        screen.pull_to_refresh()

    session.goal("delete posts", refresh=session_refresh)
    session.perform("delete 1", lambda: screen.delete("Post 1"), expect=gone("Post 1"), idempotent=False,
                    refresh=lambda: calls.append("step") or screen.pull_to_refresh())
    session.perform("delete 2", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    assert calls == ["step", "session"]
    assert [a.refreshed_by for a in session.steps[1].attempts if a.stage == "refresh"] == ["session refresh"]
    session._refresh = None
    screen.redraw_delay = 9.0
    with pytest.raises(StepFailed):
        session.perform("delete 3", lambda: screen.delete("Post 3"), expect=gone("Post 3"), idempotent=False)
    assert calls[-1] == "hook"  # the hook said it refreshed, but did not: still unmet, never re-deleted
    assert screen.deletes() == ["Post 1", "Post 2", "Post 3"]


def test_blinking_banner_is_flagged_by_the_stability_probe() -> None:
    session, screen, _ = make(blink=True, tap_s=0.1)
    with pytest.raises(StepFailed) as info:
        session.perform("tap nothing", screen.nothing, max_retries=0)
    first = info.value.record.attempts[0]
    # the banner flipped between before and after; the probe saw it flip again with no action
    assert first.verdict in ("no_change", "uncertain") and not first.met
    assert info.value.record.attempts[1].polls == 10  # never settled: the banner keeps blinking
    assert session.perform("increment", screen.increment).outcome == "ok"  # a real change still counts


def test_a_toast_that_ended_before_the_probes_frame_is_the_taps_effect_never_a_reason_to_tap_again() -> None:
    """A tap whose only effect is a toast: the after-frame shows it, and the stability probe's frame
    comes after it ended (on a loaded machine the two frames are seconds apart; here the toast lasts
    less than the probe's interval). The probe used to take the toast for flicker, judge no change,
    and tap again (the hybrid app's Help tapped twice under load). The page source read for the
    after-frame holds the toast's words: the tap is met at once, and runs once."""
    session, screen, _ = make()
    rec = session.perform("tap help", lambda: screen.show_toast("Sign in first", lasts_s=0.05))
    assert screen.log == [("toast", "Sign in first")] and rec.actions == 1
    assert rec.outcome == "ok" and rec.verdict == "changed" and stages(rec) == ["initial"]
    assert any("'Sign in first'" in note and "seen before it ended" in note for note in rec.transition["notes"])
    # the same toast still on screen one frame later: met, as before
    session, screen, _ = make()
    assert session.perform("tap help", lambda: screen.show_toast("Sign in first", lasts_s=5.0)).actions == 1


def test_a_change_gone_one_frame_later_that_the_page_source_does_not_name_is_never_retried() -> None:
    """The same toast where the dump does not hold it (an Android toast): the probe cannot tell an
    effect that ended from a blink, so the step is `uncertain`, fails as unproven, and is not repeated."""
    session, screen, _ = make()
    with pytest.raises(StepFailed, match="gone one frame later: it cannot be proven"):
        session.perform("tap help", lambda: screen.show_toast("Sign in first", lasts_s=0.05, in_tree=False))
    rec = session.steps[-1]
    assert rec.actions == 1 and [e for e in screen.log if e[0] != "refresh"] == [("toast", "Sign in first")]
    assert rec.attempts[0].verdict == "uncertain" and not rec.attempts[0].met


def test_ignore_hook_hides_a_blinking_banner() -> None:
    hooks = SessionHooks(extra_ignore_regions=lambda obs: [Box(290, 590, 350, 630)])
    session, screen, _ = make(blink=True, hooks=hooks, tap_s=0.1)
    with pytest.raises(StepFailed, match="initial: oracle no_change"):
        session.perform("tap nothing", screen.nothing, max_retries=0)
    assert session.steps[-1].attempts[1].polls == 1  # with the banner ignored the screen settles at once
    assert session.perform("increment", screen.increment).outcome == "ok"
    with pytest.raises(TypeError, match="expected Box"):
        session.hooks.extra_ignore_regions = lambda obs: [(0, 0, 1, 1)]
        session.perform("increment", screen.increment)


def test_goal_plan_milestones_and_progress() -> None:
    session, screen, _ = make()
    session.goal("clean the feed", plan=["open feed", ("post 1 deleted", gone("Post 1")), "done"])
    assert session.progress.current == "open feed" and session.progress.total == 3
    assert session.milestone("open feed") is True
    session.perform("delete 1", lambda: screen.delete("Post 1"), expect=gone("Post 1"), idempotent=False)
    assert session.progress.completed == ["open feed", "post 1 deleted"]  # auto-completed by the updater
    assert session.state.how["post 1 deleted"] == "auto"
    with pytest.raises(ProgressIncomplete, match="current: done"):
        session.assert_complete()
    session.milestone("done")
    session.assert_complete()
    subgoals = [a for a in session.anchors if a.type is AnchorType.SUBGOAL]
    assert [a.title for a in subgoals] == ["open feed", "post 1 deleted", "done"]
    links = {(link.src, link.dst, link.type) for link in session.anchors.links}
    assert (subgoals[0].id, subgoals[1].id, LinkType.ENABLES) in links
    with pytest.raises(ValueError, match="did you mean 'done'"):
        session.milestone("Done!")


def test_milestone_check_failure_screen_wins() -> None:
    session, _, _ = make()
    session.goal("g", plan=[("checked out", "Thank you")])
    with pytest.raises(MilestoneNotVisible, match="screen disagrees"):
        session.milestone("checked out")
    assert session.progress.completed == [] and session.conflicts == 1
    conflict = [a for a in session.anchors if a.data.get("kind") == "conflict"]
    assert conflict and "not completed" in conflict[0].detail
    session.on_milestone_failure = "record"
    assert session.milestone("checked out") is False and session.conflicts == 2


def test_plan_ceiling_warns_without_truncating() -> None:
    session, _, _ = make()
    with pytest.warns(GuistateWarning, match="ceiling of 12"):
        session.goal("long", plan=[f"m{i}" for i in range(14)])
    assert session.progress.total == 14
    with pytest.raises(GuistateError):
        session.goal("again")


def test_remember_recall_names_step_and_app() -> None:
    session, screen, _ = make()
    session.perform("read price in A", screen.increment)
    session.remember("price_a", 12.5)
    session.perform("open app B", lambda: screen.open_app("com.shop.b"))
    with session.step("read price in B", expect="item 1"):
        screen.nothing()
        session.remember("price_b", 11.0)
    with session.step("buy cheaper", expect="item 1"):
        cheaper = min(session.recall("price_a"), session.recall("price_b"))
    assert cheaper == 11.0
    facts = session.state.to_dict()["summary"]["facts"]
    assert facts["price_a"] == {"value": 12.5, "step": "read price in A", "app": PACKAGE}
    assert facts["price_b"]["app"] == "com.shop.b"
    deps = [a for a in session.anchors if a.type is AnchorType.DEPENDENCY]
    assert deps[0].data["source_app"] == PACKAGE and deps[1].data["source_app"] == "com.shop.b"
    assert "from step 'read price in A' in com.example.list" in deps[0].detail
    ctx = {a.data["key"]: a.id for a in session.anchors if a.type is AnchorType.CONTEXT_INFO}
    assert (deps[0].id, ctx["price_a"], LinkType.RESULT_OF) in {(lk.src, lk.dst, lk.type) for lk in session.anchors.links}
    with pytest.raises(KeyError, match=r"known keys: \['price_a', 'price_b'\]"):
        session.recall("price_c")
    changes = [a for a in session.anchors if a.type is AnchorType.STATE_CHANGE]
    assert any("app com.example.list -> com.shop.b" in a.title for a in changes)


def test_popup_dialog_anchor() -> None:
    session, screen, _ = make()
    session.perform("open dialog", lambda: screen.show_dialog("Delete post?"), expect="Delete post?")
    assert any(a.type is AnchorType.STATE_CHANGE and "Delete post?" in a.title for a in session.anchors)
    session2, screen2, _ = make()
    with pytest.raises(StepFailed):
        session2.perform("increment", lambda: screen2.show_dialog("App isn't responding"), expect="Count: 1",
                         idempotent=False)
    assert any(a.type is AnchorType.EXCEPTION and a.data.get("kind") == "popup" for a in session2.anchors)


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_step(self, record) -> None:
        self.events.append(f"step:{record.name}:{record.outcome}")

    def on_anchor(self, anchor) -> None:
        self.events.append(f"anchor:{anchor.type.value}")

    def on_finish(self, session) -> None:
        self.events.append(f"finish:{session.outcome}")


class Broken:
    def on_step(self, record) -> None:
        raise OSError("disk full")


def test_listeners_finish_and_failure_section() -> None:
    recorder = Recorder()
    session, screen, _ = make(listeners=(recorder, Broken()))
    session.goal("delete post 2", plan=[("gone", gone("Post 2"))])
    with pytest.warns(GuistateWarning, match="Broken.on_step raised OSError: disk full"):
        session.perform("delete", lambda: screen.delete("Post 2"), expect=gone("Post 2"), idempotent=False)
    screen.drop_taps = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GuistateWarning)
        with pytest.raises(StepFailed) as info:
            session.perform("increment", screen.increment, expect="Count: 1", idempotent=False)
    session.finish("failed", info.value)
    session.finish("passed")  # second call ignored
    assert session.outcome == "failed"
    assert recorder.events[0] == "anchor:SUBGOAL" and "step:delete:ok" in recorder.events
    assert recorder.events[-1] == "finish:failed"
    finish = session.anchors.of_type(AnchorType.FINISH)[0]
    assert finish.title == "test failed" and finish.detail.startswith("StepFailed")
    text = session.failure_section(max_anchors=3)
    assert "\x1b" not in text
    for needle in ("goal: delete post 2", "[x] gone (auto)", "last step 2 'increment': failed",
                   "expected: text 'Count: 1' (substring) visible", "stale-screen episodes: 1",
                   "anchors (last 3 of"):
        assert needle in text, (needle, text)
    json.dumps([r.to_dict() for r in session.steps])
    json.dumps(session.anchors.to_dict())


def test_updater_errors_propagate_and_are_anchored() -> None:
    class BadUpdater:
        def update(self, state, record, before, after, transition):
            raise RuntimeError("LLM returned prose")

    clock = VirtualClock()
    screen = ListScreen(clock)
    session = TaskSession(screen, updater=BadUpdater(), clock=clock)
    with pytest.raises(RuntimeError, match="prose"):
        session.perform("increment", screen.increment)
    assert session.updater_errors == 1
    assert any(a.data.get("kind") == "updater_error" for a in session.anchors)


def test_full_tier_keeps_frames_and_snapshots() -> None:
    session, screen, _ = make("full")
    session.goal("g", plan=["a"])
    rec = session.perform("increment", screen.increment)
    assert rec.frames == [frame_name(1, "before"), frame_name(1, "after")]
    assert rec.state is not None and rec.state["tracker"]["current"] == "a"


def test_memory_stays_flat_over_500_steps() -> None:
    session, screen, _ = make("standard")
    window = session.policy.frames_window
    for i in range(1, 501):
        session.perform(f"increment {i}", screen.increment, expect=f"Count: {i}")
        assert decoded_frames(screen.frames) <= window
    assert len(session.steps) == 500 and screen.counter == 500
    assert sum(1 for r in session.steps if r.reused_before) == 499


class SlidingSwitch(ListScreen):
    """A switch whose knob slides for 0.3 s after the tap, and a screen that says so (`in_motion`, as
    a browser page does)."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(clock)
        self.slid_at: float | None = None

    def toggle(self) -> None:
        if self._tap():
            self.slid_at = self.clock()

    def in_motion(self) -> bool:
        return self.slid_at is not None and self.clock() - self.slid_at < 0.3

    def _draw(self):
        img = super()._draw()
        if self.slid_at is not None:
            x = 240 + round(60 * min(1.0, (self.clock() - self.slid_at) / 0.3))
            cv2.rectangle(img, (x, 50), (x + 30, 70), (0, 0, 200), -1)
        return img


def test_a_knob_still_sliding_is_the_effect_not_flicker() -> None:
    """A no-expect step whose small change was still moving: the stability probe's frame differs, which
    read as flicker (no change, then 'settled': a stale-screen episode for a switch that worked). The
    screen says it is moving, so the step's after-frame is the one once it stops."""
    clock = VirtualClock()
    screen = SlidingSwitch(clock)
    session = TaskSession(screen, policy=TierPolicy.for_tier("standard"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=1.0, interval_s=0.1))
    record = session.perform("notifications on", screen.toggle)
    assert (record.outcome, stages(record), record.attempts[0].verdict) == ("ok", ["initial"], "changed")
    assert session.episodes == 0 and not screen.in_motion()


class BackdropFirst(ListScreen):
    """Bootstrap's modal in its shape: the tap starts a backdrop fading in for 0.3 s (the screen says it
    moves, as a browser page does); only then is the dialog in the tree and drawn."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(clock)
        self.opened_at: float | None = None
        self.title = ""

    def open(self, title: str) -> None:
        if self._tap():
            self.opened_at, self.title = self.clock(), title

    def _progress(self) -> float:
        return 0.0 if self.opened_at is None else min(1.0, (self.clock() - self.opened_at) / 0.3)

    def in_motion(self) -> bool:
        return self.opened_at is not None and self._progress() < 1.0

    def _advance(self) -> None:
        super()._advance()
        if self.opened_at is not None and self._progress() >= 1.0:
            self.dialog = self.title

    def _draw(self):
        img = super()._draw()
        if self.opened_at is not None:
            gain = 1.0 - 0.5 * self._progress()
            img[100:] = (img[100:] * gain).astype(img.dtype)
        return img


def test_an_unmet_first_look_while_the_screen_moves_is_no_stale_screen() -> None:
    """The first look after the tap sees the backdrop half faded and no dialog yet: taken mid-motion,
    it is no stale screen. The step waits for the motion and is met at its first look: 'ok', no
    stale-screen episode (it was 'settled', an episode, for a dialog that opened as it should)."""
    clock = VirtualClock()
    screen = BackdropFirst(clock)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect="Delete Post 2?")
    assert (record.outcome, stages(record), record.actions) == ("ok", ["initial"], 1)
    assert session.episodes == 0 and not screen.in_motion()


class SlidesUnseen(BackdropFirst):
    """The dialog then slides for 0.3 s while the page already says "still" (a CSS transition that ended
    between the screenshot and the question has left `getAnimations()`)."""

    def in_motion(self) -> bool:
        return self.opened_at is not None and self.clock() - self.opened_at < 0.3

    def _draw(self):
        img = super()._draw()
        if self.opened_at is not None and self.dialog is not None:
            x = 60 + round(150 * min(1.0, (self.clock() - self.opened_at - 0.3) / 0.3))
            cv2.rectangle(img, (x, 340), (x + 40, 370), (0, 0, 200), -1)
        return img


def test_the_frame_kept_after_the_motion_is_the_one_at_rest() -> None:
    """The look that first meets the expectation shows the dialog still sliding, and the page no longer
    says it moves: the step keeps the frame once the frames stop changing, not that look's."""
    clock = VirtualClock()
    screen = SlidesUnseen(clock)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    start = clock()
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect="Delete Post 2?")
    assert (record.outcome, stages(record)) == ("ok", ["initial"])
    assert clock() - start >= 0.6, clock() - start  # the kept frame was taken after the slide ended


class LateDialog(ListScreen):
    """A dialog written into the page source at once and drawn `draw_s` later (a fade that had not
    begun when the after-frame was taken: real Chromium under Ionic's alert); None: never drawn."""

    def __init__(self, clock: VirtualClock, draw_s: float | None) -> None:
        super().__init__(clock)
        self.draw_s = draw_s
        self.opened_at: float | None = None

    def open(self, title: str) -> None:
        self.show_dialog(title)
        self.opened_at = self.clock()

    def _draw(self):
        title, drawn = self.dialog, self.draw_s is not None and self.opened_at is not None and (
            self.clock() - self.opened_at >= self.draw_s)
        if not drawn:
            self.dialog = None  # in the tree, not yet on screen
        try:
            return super()._draw()
        finally:
            self.dialog = title


@pytest.mark.parametrize("draw_s", [0.25, None])
def test_a_change_the_tree_shows_and_the_screen_has_not_drawn_waits_for_the_screen(draw_s) -> None:
    """The expectation holds in the page source while the after-frame shows nothing new: the
    evidence was a whole-screen 'no change'. The screen wins: the kept frame is the first that
    draws the change (its crop is the dialog); a change never drawn is said in the transition."""
    clock = VirtualClock()
    screen = LateDialog(clock, draw_s)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    start = clock()
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect="Delete Post 2?")
    assert record.outcome == "ok" and record.actions == 1
    transition = session.last_transition
    if draw_s is not None:
        assert record.attempts[0].verdict == "changed"
        (crop,) = transition.crops
        assert crop.box.contains(Box(40, 250, 320, 390)) and crop.box.area < 0.5 * 360 * 640, crop.box
        assert 0.25 <= clock() - start < 0.25 + 0.3
    else:
        assert record.attempts[0].verdict == "no_change"
        assert any("'Delete Post 2?'" in note and "did not draw" in note for note in transition.notes), transition.notes
        assert clock() - start <= 1.5 + 0.3  # bounded by MOTION_BOUND_S, not the settle timeout


class FaintDialog(ListScreen):
    """A dialog that opens over a scrim drawn at 10 % opacity for `faint_s`, then whole (UI5 Web
    Components: a class a timer drops, no animation). `says`: the page says it moves while faint (a
    translucent dialog, `web.MOVING_JS`); else nothing is listed as moving at all."""

    def __init__(self, clock: VirtualClock, faint_s: float, says: bool) -> None:
        super().__init__(clock)
        self.faint_s, self.says = faint_s, says
        self.opened_at: float | None = None

    def open(self, title: str) -> None:
        self.show_dialog(title)
        self.opened_at = self.clock()

    def faint(self) -> bool:
        return self.opened_at is not None and self.clock() - self.opened_at < self.faint_s

    def in_motion(self) -> bool:
        return self.says and self.faint()

    def _draw(self):
        title = self.dialog
        self.dialog = None
        try:
            page = super()._draw()
        finally:
            self.dialog = title
        if title is None:
            return page
        page = (page.astype(np.float32) * 0.7).astype(np.uint8)  # the scrim
        whole = page.copy()
        cv2.rectangle(whole, (40, 250), (320, 390), (250, 250, 250), -1)
        cv2.rectangle(whole, (40, 250), (320, 390), (0, 0, 0), 2)
        cv2.putText(whole, title, (55, 320), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 2)
        return cv2.addWeighted(whole, 0.1, page, 0.9, 0) if self.faint() else whole


@pytest.mark.parametrize(("faint_s", "says"), [(0.05, False), (0.6, True)])
def test_a_dialog_drawn_faint_is_evidenced_once_whole(faint_s: float, says: bool) -> None:
    """The scrim makes the step's change at once while the dialog is still faint: the crop kept was
    the faint dialog. A dialog that appeared is looked at once more (nothing listed as moving: UI5's
    50 ms), and on while the page says it is translucent (held 0.6 s): the crop is the dialog whole."""
    clock = VirtualClock()
    screen = FaintDialog(clock, faint_s, says)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    start = clock()
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect="Delete Post 2?")
    assert record.outcome == "ok" and record.actions == 1 and record.attempts[0].verdict == "changed"
    assert clock() - start <= faint_s + 0.5  # a few polls, not the settle timeout
    crop = next(c for c in session.last_transition.crops if c.box.contains(Box(40, 250, 320, 390)))
    clock.sleep(1.0)
    whole = screen.observe().frame.bgr[crop.box.top:crop.box.bottom, crop.box.left:crop.box.right]
    assert abs(float(crop.pixels.mean()) - float(whole.mean())) < 3, (crop.pixels.mean(), whole.mean())


def test_an_attempt_lists_the_items_that_changed_not_the_scrim_behind_a_dialog() -> None:
    """Issue 43: the dimmed page behind a dialog is a `scrim` region of the transition (visible change,
    never cropped); an attempt's regions are where the step acted, which triage reads when the record
    keeps no regions of its own: the dialog, not the whole dimmed screen."""
    clock = VirtualClock()
    screen = FaintDialog(clock, 0.0, False)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect="Delete Post 2?")
    assert record.outcome == "ok" and session.last_transition is not None
    regions = session.last_transition.regions
    assert [r.kind for r in regions][-1] == "scrim", regions
    scrim = regions[-1].box.as_list()
    assert record.attempts and all(scrim not in a.regions for a in record.attempts)
    assert any(a.regions for a in record.attempts)


class StillDialog(FaintDialog):
    """A dialog drawn whole at once on a screen showing no clock: a look again takes the very bytes.
    A screenshot takes the driver `shot_s` (virtual time, not a sleep of the session's)."""

    def __init__(self, clock: VirtualClock, shot_s: float) -> None:
        super().__init__(clock, faint_s=0.0, says=False)
        self.shot_s = shot_s

    def observe(self):
        self.clock.t += self.shot_s
        return super().observe()

    def _draw(self):
        img = super()._draw()
        img[:STATUS_H] = 60
        return img


class SleepLog(VirtualClock):
    """A virtual clock that lists the session's sleeps (the screen's own time is not one)."""

    def __init__(self) -> None:
        super().__init__()
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        super().sleep(seconds)


@pytest.mark.parametrize(("shot_s", "check_s"), [(0.0, 0.12), (0.11, 0.0)], ids=["slow check", "slow screenshot"])
def test_a_dialog_already_drawn_is_looked_at_once_more_without_a_wait_or_a_second_judgement(
        shot_s: float, check_s: float) -> None:
    """Issue 42: a dialog appeared and nothing moves. The look again comes one poll interval (0.1 s)
    after the action returned, not one interval after the after-frame's screenshot and judgement (a
    slow check or a slow screenshot already gave the screen that time), and a look again with the
    after-frame's very bytes keeps the first judgement: the check runs once, not twice. The dialog
    faint for 50 ms (`test_a_dialog_drawn_faint_is_evidenced_once_whole`) is still waited for."""
    clock = SleepLog()
    screen = StillDialog(clock, shot_s)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    session.perform("look", screen.nothing, expect="Post 1")
    asked: list[float] = []
    shown = as_check("Delete Post 2?")

    def check(observation):  # a find that takes the driver `check_s`
        asked.append(clock())
        clock.t += check_s
        return shown(observation)

    clock.slept.clear()
    record = session.perform("open the dialog", lambda: screen.open("Delete Post 2?"), expect=check)
    assert record.outcome == "ok" and record.attempts[0].verdict == "changed"
    assert len(asked) == 1, f"the check ran {len(asked)} times: the same frame judged again"
    assert sum(clock.slept) == 0, f"slept {clock.slept} with nothing left to draw"
    assert session.last_transition.crops


def test_an_expectation_already_on_screen_before_a_no_op_does_not_wait() -> None:
    """Nothing new in the page source: a step whose action drew nothing and whose expectation already
    held costs no poll (the rule above only waits for what the tree says is on screen and new)."""
    clock = VirtualClock()
    screen = ListScreen(clock)
    session = TaskSession(screen, policy=TierPolicy.for_tier("full"), clock=clock, name="test_x",
                          settle=SettlePolicy(timeout_s=3.0, interval_s=0.1))
    session.perform("look", screen.nothing, expect="Post 1")
    observed, start = screen.observations, clock()
    record = session.perform("no-op", screen.nothing, expect="Post 2")
    assert record.outcome == "ok" and record.attempts[0].polls == 0
    assert screen.observations - observed <= 1 and clock() - start < 0.1


def _page(*nodes: str) -> str:
    return ('<hierarchy width="360" height="640"><android.widget.FrameLayout bounds="[0,0][360,640]">'
            + "".join(nodes) + "</android.widget.FrameLayout></hierarchy>")


@pytest.mark.parametrize(("after", "undrawn"), [
    ('<android.widget.TextView text="Saved" bounds="[10,100][200,140]"/>', "Saved"),  # new on screen
    ('<android.widget.TextView text="Saved" bounds="[10,900][200,940]"/>', None),  # laid out below the fold
    ('<android.widget.TextView text="Saved" bounds="[0,0][1,1]"/>', None),  # a visually hidden live region
    ('<android.widget.TextView text="12:01" bounds="[0,0][360,20]"/>', None),  # inside a masked region
])
def test_what_the_page_source_shows_on_screen_and_new(after: str, undrawn: str | None) -> None:
    before = parse_page_source(_page('<android.widget.TextView text="12:00" bounds="[0,0][360,20]"/>'))
    node = undrawn_change(before, parse_page_source(_page(after)), [Box(0, 0, 360, 24)])
    assert (node.text if node is not None else None) == undrawn
