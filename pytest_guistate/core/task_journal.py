"""Bookkeeping after each step: artifacts, anchors, the state update, listeners, frame memory.

Kept apart from `task_session.py` so the verbs read as the policy they implement. The `Journal` owns
the anchor graph, the task state S_t (it is the only one to replace it, after a step) and the
conflict and updater-error counts; the session reads them from it. What the journal reads of
the session is `JournalHost` (the tier, the step records, the screen and its frames), not the
session itself. Listeners (journal file, HTML, Allure) are notified from here, and a listener
that raises is reported as a `GuistateWarning` naming what its report will miss, never silently
dropped.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_guistate.core import watchdog
from pytest_guistate.core.anchors import Anchor, AnchorGraph, AnchorType, LinkType
from pytest_guistate.core.artifact_names import crop_name, frame_name
from pytest_guistate.core.detect import is_system_alert, popup_title, route_change
from pytest_guistate.core.detectors import run_detectors
from pytest_guistate.core.errors import GuistateWarning, RecordingFailed
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import Conflict, TaskState
from pytest_guistate.core.updater import reconcile

if TYPE_CHECKING:
    from pytest_guistate.core.observation import Screen
    from pytest_guistate.core.records import ArtifactSink
    from pytest_guistate.core.settle import Clock
    from pytest_guistate.core.steploop import SessionHooks, Verification
    from pytest_guistate.core.tiers import TierPolicy
    from pytest_guistate.core.updater import StateUpdater

__all__ = ["FrameWindow", "Journal", "JournalHost"]


@dataclass
class _Later:
    """A step `Journal.close_later` keeps until its look is judged: what its end was."""

    record: StepRecord
    before: Observation | None
    verification: Verification
    judged: Callable[[], None]
    ended: float
    page_sources: int | None


class FrameWindow:
    """Keeps at most `size` frames with decoded pixels; older ones keep only PNG bytes.

    A 1080x2400 frame decoded is ~7.8 MB; a 500-step test would hold gigabytes otherwise
    (MEASURED.md). Pinned frames (the current step's before-frame) are released last.
    """

    def __init__(self, size: int) -> None:
        if size < 2:
            raise ValueError(f"the frame window must hold at least 2 frames, got {size}")
        self.size = size
        self._frames: list[Frame] = []
        self._pinned: set[int] = set()

    def add(self, frame: Frame) -> None:
        if all(f is not frame for f in self._frames):
            self._frames.append(frame)
        self.trim()

    def pin(self, frame: Frame) -> None:
        self._pinned = {id(frame)}
        self.add(frame)

    def unpin(self) -> None:
        self._pinned = set()
        self.trim()

    def trim(self) -> None:
        while len(self._frames) > self.size:
            victim = next((f for f in self._frames if id(f) not in self._pinned), None)
            if victim is None:
                return
            victim.release_pixels()
            self._frames.remove(victim)

    def __len__(self) -> int:
        return len(self._frames)


class JournalHost(Protocol):
    """What the journal reads of the test it keeps the books of (its `TaskSession`), read live:
    the tier may change before the first step (`retier`), the frame window with it."""

    @property
    def policy(self) -> TierPolicy: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def screen(self) -> Screen: ...

    @property
    def frames(self) -> FrameWindow: ...

    @property
    def updater(self) -> StateUpdater: ...

    @property
    def artifacts(self) -> ArtifactSink: ...

    @property
    def hooks(self) -> SessionHooks: ...

    @property
    def current_step(self) -> StepRecord | None: ...

    @property
    def steps(self) -> list[StepRecord]: ...

    @property
    def last_observation(self) -> Observation | None: ...


class Journal:
    """The books of one test: its anchors, its state S_t and the listeners told of each change.

    `host` is what is recorded (read through `JournalHost`); listeners get it at `on_finish`."""

    def __init__(self, host: JournalHost, listeners: list[Any]) -> None:
        self.host = host
        self.listeners = listeners
        self.anchors = AnchorGraph(on_add=self.emit_anchor)
        self.state = TaskState()
        self.conflicts = 0  # state-vs-screen conflicts recorded
        self.updater_errors = 0  # state updates that raised
        self._subgoals: dict[str, Anchor] = {}
        self._last_subgoal: Anchor | None = None
        self._pending: list[Anchor] = []  # EXCEPTIONs since the last SUBGOAL, linked "blocks" when it comes
        self._emitted_step = 0  # index of the last step handed to the listeners
        self._later: _Later | None = None  # a step whose look is judged beside the test, recorded by `flush`

    # -- listeners -------------------------------------------------------------------------
    def _emit(self, method: str, arg: Any) -> None:
        for listener in self.listeners:
            fn = getattr(listener, method, None)
            if fn is None:
                continue
            try:
                fn(arg)
            except RecordingFailed:
                raise  # nothing more can be recorded: the test must not run on without its record
            except Exception as exc:  # noqa: BLE001 - a reporter must not fail the test; say what is lost
                warnings.warn(GuistateWarning(
                    f"guistate listener {type(listener).__name__}.{method} raised {type(exc).__name__}: {exc}; "
                    "its report will miss this event"), stacklevel=3)

    def emit_anchor(self, anchor: Anchor) -> None:
        self._emit("on_anchor", anchor)

    def emit_state(self, state: TaskState) -> None:
        self._emit("on_state", state)

    # -- anchors ---------------------------------------------------------------------------
    def anchor(self, type: AnchorType, title: str, *, step_index: int | None = None, detail: str = "",
               app: str = "", crops: list[str] | None = None, data: dict[str, Any] | None = None) -> Anchor | None:
        """Add an anchor when the tier records anchors (None otherwise)."""
        if not self.host.policy.anchors:
            return None
        self.flush()  # the timeline reads in order
        open_step = self.host.current_step
        if step_index is None and open_step is not None:
            step_index = open_step.index
        return self.anchors.add(type, title, step_index=step_index, detail=detail, app=app, crops=crops,
                                data=data, timestamp=None)

    def exception(self, title: str, record: StepRecord | None, **kwargs: Any) -> Anchor | None:
        """An EXCEPTION anchor (on `record`'s step), linked "blocks" to the milestone current now
        when that one completes."""
        current = self.state.current
        data = dict(kwargs.pop("data", {}) or {})
        data.setdefault("milestone", current)
        anchor = self.anchor(AnchorType.EXCEPTION, title, step_index=record.index if record else None, data=data,
                             **kwargs)
        if anchor is not None:
            self._pending.append(anchor)
            if record is not None:
                record.anchors.append(anchor.id)
        return anchor

    def subgoal(self, name: str, how: str, step_index: int | None, app: str) -> None:
        anchor = self.anchor(AnchorType.SUBGOAL, name, step_index=step_index, app=app,
                             detail="declared by the test" if how == "declared" else f"completed ({how})",
                             data={"milestone": name, "how": how})
        if anchor is None:
            return
        if self._last_subgoal is not None:
            self.anchors.link(self._last_subgoal, anchor, LinkType.ENABLES)
        for exc in [a for a in self._pending if a.data.get("milestone") == name]:
            self.anchors.link(exc, anchor, LinkType.BLOCKS)
        self._pending = [a for a in self._pending if a.data.get("milestone") != name]
        self._subgoals[name] = anchor
        self._last_subgoal = anchor

    def conflict(self, conflict: Conflict, app: str) -> None:
        self.conflicts += 1
        anchor = self.exception(f"conflict: milestone {conflict.milestone!r}", None, app=app,
                                detail=f"{conflict.evidence} -> {conflict.resolution}",
                                data={"kind": "conflict", "milestone": conflict.milestone,
                                      "resolution": conflict.resolution})
        if anchor is not None:
            anchor.step_index = conflict.step_index
            earlier = self._subgoals.get(conflict.milestone)
            if earlier is not None:
                self.anchors.link(anchor, earlier, LinkType.RESULT_OF)

    # -- after a step ----------------------------------------------------------------------
    def close_step(self, record: StepRecord, before: Observation | None, verification: Verification | None) -> None:
        """The bookkeeping of a finished step; a budget interrupt waits until it is done (issue 22)."""
        self.flush()
        with watchdog.deferred():
            self._close_step(record, before, verification)

    def close_later(self, record: StepRecord, before: Observation | None, verification: Verification,
                    judged: Callable[[], None]) -> None:
        """A step whose look is judged beside the test (issue 42, `StepLoop.judge_beside`): what belongs
        to its end is taken now (its end time, its page sources, the commands and source line the
        listeners keep through `on_step_end`), and it is recorded, as `close_step` does, at the next
        `flush`: the session's next step once its action has run, any read of the state, steps or
        anchors, the test's end. `judged()` puts the judgement in `verification` (or raises why not)."""
        self.flush()
        self._later = _Later(record, before, verification, judged, self.host.clock.monotonic(),
                             self._page_sources(record))
        self.host.frames.unpin()  # the next step pins its own before-screen
        self._emit("on_step_end", record)
        record.pending = self.flush  # its judged fields, read before the next flush, wait for it

    def flush(self) -> None:
        """Record the step judged beside the test, if one waits: its judgement is taken (waited for
        if still running) and the step is closed as `close_step` would have closed it then."""
        later, self._later = self._later, None
        if later is None:
            return
        later.record.pending = None
        try:
            later.judged()
        except BaseException:
            self.close_failed_step(later.record, later.before)
            raise
        with watchdog.deferred():
            self._close_step(later.record, later.before, later.verification, later)

    def _close_step(self, record: StepRecord, before: Observation | None, verification: Verification | None,
                    later: _Later | None = None) -> None:
        host = self.host
        after = verification.after if verification is not None else None
        transition = verification.judgement.transition if verification is not None else None
        record.ended = host.clock.monotonic() if later is None else later.ended
        if verification is not None:
            record.verdict = verification.judgement.verdict
        trees = record.reads_trees  # else (light, no check) only what was read: no page source for the journal
        if after is not None:
            record.package_after = after.package if trees else after.known_package
            record.context_after = after.context or record.context_after
        if transition is not None:
            record.transition = transition.to_dict()
            record.regions = [region.to_dict() for region in transition.regions]
        failed = record.outcome == "failed"
        self._store_artifacts(record, before, after, transition, failed)
        app = record.package_after if after is not None else record.package_before
        route = None
        if after is not None:
            route = route_change(before, after) if trees else route_change(before, after, known_only=True,
                                                                          transition=transition)
        record.route_changed = route is not None
        self._update(record, before, after, transition, app)  # SUBGOALs first: the timeline reads in order
        self._step_anchors(record, before, after, failed, app, route, transition)
        # counted last (the detectors read trees too); a step recorded later was counted at its end: the
        # next step's reads are its own
        record.page_sources = self._page_sources(record) if later is None else later.page_sources
        if later is None:
            host.frames.unpin()
        self._emitted_step = record.index
        self._emit("on_step", record)
        self.emit_state(self.state)

    def _page_sources(self, record: StepRecord) -> int | None:
        """The page sources the screen fetched since `record` began (None: the screen does not count them)."""
        calls = getattr(self.host.screen, "page_source_calls", None)
        if isinstance(calls, int) and record.page_sources_at_start is not None:
            return calls - record.page_sources_at_start
        return record.page_sources

    def close_failed_step(self, record: StepRecord, before: Observation | None) -> None:
        """Journal a step that failed while reading the screen (issue 22), without letting the
        bookkeeping hide the error that ended it: if the full close fails too (the device is gone,
        the budget is spent, the disk is full), the bare record still goes to the listeners."""
        try:
            self.close_step(record, before, None)
        except BaseException as exc:  # noqa: BLE001 - the step's own error is re-raised by the caller
            if record.ended is None:
                record.ended = self.host.clock.monotonic()
            self.host.frames.unpin()
            if self._emitted_step == record.index:
                return  # the listeners have the step; the step's own error is what the test reports
            try:
                self._emit("on_step", record)
            except BaseException as again:  # noqa: BLE001 - said, not raised: the original error wins
                warnings.warn(GuistateWarning(f"step {record.index} {record.name!r} could not be journaled: "
                                              f"{type(again).__name__}: {again}"), stacklevel=3)
            else:
                if not isinstance(exc, RecordingFailed):
                    warnings.warn(GuistateWarning(
                        f"step {record.index} {record.name!r} was journaled without its anchors and state: "
                        f"{type(exc).__name__}: {exc}"), stacklevel=3)

    def _store_artifacts(self, record: StepRecord, before: Observation | None, after: Observation | None,
                         transition: Any, failed: bool) -> None:
        policy, sink = self.host.policy, self.host.artifacts
        keep_crops = policy.keep_step_crops or (failed and policy.keeps_crops_on_failure)
        if transition is not None and keep_crops:
            for i, crop in enumerate(transition.crops):
                if crop.region_index == -1 and not failed:
                    continue  # the whole-screen fallback is a frame, not a crop: only kept on failure
                record.crops.append(sink.put(crop_name(record.index, i), crop.encode,
                                             cut_from=after.frame if after is not None else None))
        keep_failed = failed and policy.keeps_crops_on_failure  # a failed step's pair: the report's before | after
        if before is not None and (policy.keep_frames or keep_failed):
            record.frames.append(sink.put(frame_name(record.index, "before"), before.frame.png))
        if after is not None and (policy.keep_frames or keep_failed):
            record.frames.append(sink.put(frame_name(record.index, "after"), after.frame.png))

    def _step_anchors(self, record: StepRecord, before: Observation | None, after: Observation | None,
                      failed: bool, app: str, why: str | None, transition: Any = None) -> None:
        if after is not None:
            if why is not None:
                anchor = self.anchor(AnchorType.STATE_CHANGE, f"after {record.name!r}: {why}", step_index=record.index,
                                     app=app, crops=record.crops[:1], data={"reason": why, "from": record.package_before})
                if anchor is not None:
                    record.anchors.append(anchor.id)
            title = popup_title(before, after) if self.host.policy.anchors else None  # only anchors use it
            if title is not None:
                if is_system_alert(title) or not record.confirmed:
                    self.exception(f"pop-up {title!r}", record, app=app, crops=record.crops[:1],
                                   data={"kind": "popup", "title": title})
                else:
                    anchor = self.anchor(AnchorType.STATE_CHANGE, f"dialog {title!r} opened", step_index=record.index,
                                         app=app, data={"reason": "dialog", "title": title})
                    if anchor is not None:
                        record.anchors.append(anchor.id)
        if record.episode:
            stages = " -> ".join(f"{a.stage}:{a.verdict or '-'}{'' if a.expect_ok is None else '/expect ' + ('met' if a.expect_ok else 'unmet')}"
                                 for a in record.attempts)
            self.exception(f"stale screen after {record.name!r}", record, app=app, crops=list(record.crops),
                           detail=f"{stages}; outcome {record.outcome}",
                           data={"kind": "stale_screen", "outcome": record.outcome,
                                 "attempts": [a.to_dict() for a in record.attempts]})
        detect = self.host.hooks.detect_anchors
        if detect is not None and self.host.policy.anchors:  # the project's own (hookspecs.py), before the
            run_detectors(self, detect, record, before, after, transition, app)  # failure: it blocks the FINISH
        if failed:
            first_line = record.explanation.splitlines()[0] if record.explanation else "failed"
            self.exception(f"step {record.name!r} failed", record, app=app,
                           crops=list(record.crops) + list(record.frames[-1:]), detail=first_line,
                           data={"kind": "step_failed", "error": record.error})

    def _update(self, record: StepRecord, before: Observation | None, after: Observation | None,
                transition: Any, app: str) -> None:
        updater = self.host.updater
        old = self.state
        try:
            new = updater.update(old.copy(), record, before, after, transition)
            if not isinstance(new, TaskState):
                raise TypeError(f"{type(updater).__name__}.update returned {type(new).__name__}, "
                                "expected TaskState")
        except Exception as exc:  # propagate, but surfaced first (TSR: measure updater errors)
            self.updater_errors += 1
            self.exception(f"state updater error: {type(exc).__name__}", record, app=app, detail=str(exc)[:200],
                           data={"kind": "updater_error"})
            raise
        reconcile(old, new, after, record.index)
        self.state = new
        for conflict in new.focus.conflicts:
            self.conflict(conflict, app)
        for name in [n for n in new.completed if not old.is_done(n)]:
            self.subgoal(name, new.how.get(name, "auto"), record.index, app)
        if self.host.policy.state_snapshots:
            record.state = new.to_dict()

    # -- end -------------------------------------------------------------------------------
    def finish(self, outcome: str, error: BaseException | None) -> None:
        self.flush()
        host = self.host
        detail = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}" if error else ""
        last = host.last_observation
        # no page source at the end only to name the app of an anchor that is not recorded (light)
        app = "" if last is None else _package_at_finish(last) if host.policy.anchors else last.known_package
        anchor = self.anchor(AnchorType.FINISH, f"test {outcome}", step_index=len(host.steps) or None,
                             detail=detail, app=app,
                             data={"outcome": outcome, "progress": self.state.progress().to_dict()})
        if anchor is not None:
            for subgoal in self._subgoals.values():
                self.anchors.link(anchor, subgoal, LinkType.RESULT_OF)
            if error is not None and self._pending:
                self.anchors.link(self._pending[-1], anchor, LinkType.BLOCKS)
        self._emit("on_finish", host)


def _package_at_finish(observation: Observation) -> str:
    """The FINISH anchor's app: the newest screen's package, "" when its tree can no longer be read
    (a settle poll nobody read, the screen moved on since) or the device failed to give it (the step
    that read it met that error already and the test reports it): the record is finished either way."""
    if observation.tree_available is False:
        return observation.known_package
    try:
        return observation.package
    except Exception:  # noqa: BLE001 - see above: never a second failure for the one the step met
        return ""
