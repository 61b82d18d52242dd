"""`TaskSession`: the per-test task-state machine (TSR) around a `Screen` - the `guistate` fixture.

Verbs: `goal` (summary + plan), `step` / `perform` (act, observe, verify with settle -> refresh ->
retry-only-if-proven-and-idempotent), `milestone`, `remember` / `recall`, `assert_complete`,
`finish`. Each step updates S_t through the `StateUpdater`, records anchors, and notifies
listeners (journal, HTML, Allure reporters). What a tier switches on is in `tiers.py`;
the verification loop itself is `steploop.py`; bookkeeping after a step, the state and the
anchors are `task_journal.py`'s `Journal`. `milestone`, `assert_complete`, `remember` and
`recall` are the verbs that do not act: the screen wins (a milestone whose check fails on the settled
screen is not completed; the conflict is an EXCEPTION anchor), and a recall records a DEPENDENCY
anchor naming the step and app the value came from.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal, Protocol, TypeVar

from pytest_guistate.core import watchdog
from pytest_guistate.core.anchors import Anchor, AnchorType, LinkType
from pytest_guistate.core.checks import Check, CheckSpec, as_check
from pytest_guistate.core.cycles import CycleGuard
from pytest_guistate.core.errors import (
    GuistateError,
    GuistateWarning,
    MilestoneNotVisible,
    ProgressIncomplete,
    StepFailed,
)
from pytest_guistate.core.explain import (
    failure_section,
    progress_text,
    step_failure_text,
)
from pytest_guistate.core.observation import Observation, Screen, TreeExpired
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_types import OracleConfig, Transition
from pytest_guistate.core.records import ArtifactSink, MemoryArtifacts, StepRecord
from pytest_guistate.core.settle import Clock, SettlePolicy, SystemClock, settle
from pytest_guistate.core.state import (
    Conflict,
    Fact,
    PlanItem,
    Progress,
    TaskState,
    normalise_plan,
)
from pytest_guistate.core.steploop import Judgement, SessionHooks, StepLoop, Verification
from pytest_guistate.core.task_journal import FrameWindow, Journal
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.core.updater import OfflineUpdater, StateUpdater

_T = TypeVar("_T")

__all__ = ["SessionListener", "StepHandle", "TaskSession"]

_OUTCOME_BY_STAGE = {"initial": "ok", "settle": "settled", "wait": "settled", "refresh": "refreshed", "retry": "retried"}


def _tree_still_readable(observation: Observation) -> bool:
    """False when the tree was never read and the screen has moved on (someone else observed it
    since): such an observation cannot serve as a before-screen, take a new one. Asked without
    fetching where the screen can tell: a step reads the tree before acting if it needs it."""
    available = observation.tree_available
    if available is not None:
        return available
    try:
        _ = observation.tree
    except TreeExpired:
        return False
    return True


class SessionListener(Protocol):
    """Reporters implement any subset of these (missing methods are skipped); the journal calls them."""

    def on_step(self, record: StepRecord) -> None: ...

    def on_anchor(self, anchor: Anchor) -> None: ...

    def on_state(self, state: TaskState) -> None: ...

    def on_finish(self, session: TaskSession) -> None: ...


class StepHandle:
    """What `with session.step(...) as s` yields; filled in when the block exits."""

    def __init__(self, record: StepRecord, flush: Callable[[], None]) -> None:
        self.record = record
        self.before: Observation | None = None
        self.verification: Verification | None = None
        self._flush = flush

    @property
    def transition(self) -> Transition | None:
        """The oracle's judgement of the final check (a look judged beside the test is waited for)."""
        verification = self.verification
        if verification is None:
            return None
        if verification.pending is not None:
            self._flush()
        return verification.judgement.transition

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def outcome(self) -> str:
        return self.record.outcome


class TaskSession:
    """Task state beside the device for one test. See the module docstring and `tiers.py`.

    `on_milestone_failure`: "raise" (default) raises `MilestoneNotVisible` when a declared
    milestone's check fails on the (settled) screen; "record" only records the conflict and
    returns False. Either way the milestone is not completed: the screen wins.
    `reuse_window_s`: a step reuses the previous after-observation as its before-observation when
    no action happened since (no session action, and the screen's `action_count`, if it has one,
    is unchanged) and it is at most this old; one screenshot + page source saved per step.
    """

    def __init__(
        self,
        screen: Screen,
        oracle: VisualOracle | None = None,
        policy: TierPolicy | None = None,
        updater: StateUpdater | None = None,
        hooks: SessionHooks | None = None,
        listeners: Sequence[SessionListener] = (),
        settle: SettlePolicy | None = None,
        clock: Clock | None = None,
        name: str = "",
        *,
        artifacts: ArtifactSink | None = None,
        on_milestone_failure: Literal["raise", "record"] = "raise",
        reuse_window_s: float = 1.0,
        probe: bool = True,
    ) -> None:
        if on_milestone_failure not in ("raise", "record"):
            raise ValueError(f"on_milestone_failure must be 'raise' or 'record', got {on_milestone_failure!r}")
        self.screen = screen
        # a screen without system bars (a desktop browser's page) has nothing at its edges to set aside
        self.oracle = oracle or VisualOracle(OracleConfig(ignore_status_bar=bool(getattr(screen, "system_bars", True))))
        self.policy = policy or TierPolicy.for_tier("standard")
        self.updater: StateUpdater = updater or OfflineUpdater()
        self.hooks = hooks or SessionHooks()
        self.settle_policy = settle or SettlePolicy()
        self.clock: Clock = clock or SystemClock()
        self.name = name
        self.artifacts: ArtifactSink = artifacts if artifacts is not None else MemoryArtifacts()
        self.on_milestone_failure = on_milestone_failure
        self.reuse_window_s = reuse_window_s
        self.journal = Journal(self, list(listeners))  # owns the state S_t and the anchor graph
        self.anchors = self.journal.anchors
        self.frames = FrameWindow(self.policy.frames_window)
        self.loop = StepLoop(self.screen, self.oracle, self.policy, self.settle_policy, self.clock, self.hooks,
                             self._observe, self._note_action, probe=probe, poll=self._observe_poll)
        self._steps: list[StepRecord] = []
        self._refresh: Callable[[], object] | None = None
        self._goal_set = False
        self._epoch = 0  # session actions so far (steps, performs, refreshes)
        self._last: tuple[Observation, int, float, object] | None = None  # obs, epoch, time, screen actions
        self._open_step: StepRecord | None = None
        self._looked_again: Observation | None = None  # a before-screen taken again after a locator's wait
        self._last_transition: Transition | None = None
        self._beside = True  # a look nothing waits for may be judged beside the test (`judging_at_once`)
        self.episodes = 0  # stale-screen episodes (a first check unmet)
        self.retries = 0
        self.outcome: str | None = None  # set by finish()
        self.cycles = CycleGuard()  # screens going round without a milestone (issue 14)

    def retier(self, policy: TierPolicy) -> None:
        """Switch tier before the first step (the auto tier learns the plan length at `goal()`)."""
        if self._steps:
            raise GuistateError("the tier can only change before the first step")
        self.policy = policy
        self.loop.policy = policy
        self.frames = FrameWindow(policy.frames_window)

    # -- read-only views -------------------------------------------------------------------
    @property
    def state(self) -> TaskState:
        self.journal.flush()
        return self.journal.state

    @property
    def conflicts(self) -> int:
        """State-vs-screen conflicts recorded so far (the journal counts them)."""
        self.journal.flush()
        return self.journal.conflicts

    @property
    def updater_errors(self) -> int:
        """State updates that raised so far (the journal counts them)."""
        self.journal.flush()
        return self.journal.updater_errors

    @property
    def last_observation(self) -> Observation | None:
        """The newest look at the screen (None before the first)."""
        return self._last[0] if self._last else None

    @property
    def current_step(self) -> StepRecord | None:
        """The step whose action is running now (None between steps)."""
        return self._open_step

    @property
    def steps(self) -> list[StepRecord]:
        self.journal.flush()
        return list(self._steps)

    @property
    def last_transition(self) -> Transition | None:
        """What the oracle saw at the last judged step (a look judged beside the test is waited for)."""
        self.journal.flush()
        return self._last_transition

    @contextmanager
    def judging_at_once(self) -> Iterator[None]:
        """Inside, every step is judged before `step`/`perform` returns: for callers that read the
        returned record at once (the LLM actor, the action cache), never a look judged beside it."""
        self.journal.flush()
        was, self._beside = self._beside, False
        try:
            yield
        finally:
            self._beside = was

    @property
    def progress(self) -> Progress:
        return self.state.progress()

    @property
    def goal_text(self) -> str:
        return self.state.goal

    def failure_section(self, max_anchors: int = 8) -> str:
        """Plain-text report section "guistate" (no ANSI): goal, progress, last step, anchors."""
        self.journal.flush()
        return failure_section(self, max_anchors=max_anchors)

    # -- goal and plan ---------------------------------------------------------------------
    def goal(self, text: str, plan: Sequence[PlanItem] = (), *, refresh: Callable[[], object] | None = None) -> None:
        """Declare the task: S_0 comes from this alone. Plans longer than the tier's
        `max_plan_length` warn (TSR: over-decomposition makes the actor verify item by item)."""
        if self._goal_set:
            raise GuistateError(f"goal() was already declared for this test ({self.state.goal!r})")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("goal() needs the task in words, e.g. goal('delete the second post', plan=[...])")
        milestones = normalise_plan(list(plan))
        ceiling = self.policy.max_plan_length
        if len(milestones) > ceiling:
            warnings.warn(GuistateWarning(
                f"plan has {len(milestones)} milestones, above the ceiling of {ceiling}: a checklist split "
                "this finely makes the actor verify item by item (TSR). Group related items; the plan "
                "is kept as given."), stacklevel=2)
        self._goal_set = True
        self.state.goal = text.strip()
        self.state.plan = milestones
        self._refresh = refresh
        self.state.focus.next_focus = f"continue with: {milestones[0].name}" if milestones else "continue with the goal"
        self.journal.emit_state(self.state)

    # -- acting ----------------------------------------------------------------------------
    @contextmanager
    def step(self, name: str, *, expect: CheckSpec | None = None, idempotent: bool = True,
             refresh: Callable[[], object] | None = None) -> Iterator[StepHandle]:
        """Run the block as one action and verify its effect. A block cannot run twice, so this
        form never retries: if the effect is still missing after settle and refresh it raises
        `StepFailed`."""
        check = as_check(expect) if expect is not None else None
        record = self._begin(name, "step", check, idempotent)
        handle = StepHandle(record, self.journal.flush)
        try:
            before = self._observing(record, None, "before the action", self._before, record)
            handle.before = before
            self._note_action(name, read_tree=record.reads_trees)
            record.actions = 1
            try:
                yield handle
            except BaseException as exc:
                self._body_error(record, self._met_before(before), exc)
                raise
            before = handle.before = self._met_before(before)
            self._observing(record, before, "after the action", self.journal.flush)  # the last step judged beside
            verification = self._observing(record, before, "after the action", self._verify, record, before, check,
                                           refresh, "initial")
            handle.verification = verification
            if verification is None or verification.met:
                self._succeed(record, before, verification, 0)
                return
            why = ("the action is declared non-idempotent (idempotent=False), so it is never repeated"
                   if not idempotent else
                   "a `with guistate.step(...)` block cannot be re-run; use guistate.perform(name, action, ...) "
                   "for a step that may be retried")
            self._fail(record, before, verification, why, check)
        finally:
            self._open_step = None

    def perform(self, name: str, action: Callable[[], object], *, expect: CheckSpec | None = None,
                idempotent: bool = True, refresh: Callable[[], object] | None = None,
                max_retries: int = 1) -> StepRecord:
        """Run `action` and verify its effect; repeat it only when the re-check (after settle and
        refresh) proves it did not take effect AND `idempotent`. Never repeats a non-idempotent
        action: fails with the explanation instead."""
        if not callable(action):
            raise TypeError(f"perform({name!r}, action=...) needs a callable, got {type(action).__name__}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        check = as_check(expect) if expect is not None else None
        record = self._begin(name, "perform", check, idempotent)
        try:
            before = self._observing(record, None, "before the action", self._before, record)
            attempt_before = before
            for attempt in range(max_retries + 1):
                self._note_action(name, read_tree=record.reads_trees)
                record.actions += 1
                try:
                    action()
                except BaseException as exc:
                    self._body_error(record, self._met_before(attempt_before), exc)
                    raise
                met = self._met_before(attempt_before)
                # the previous step, if judged beside the test, is recorded now: its judgement ran during this action
                self._observing(record, met, "after the action", self.journal.flush)
                if attempt == 0:
                    before = met
                attempt_before = met
                verification = self._observing(record, attempt_before, "after the action", self._verify, record,
                                               attempt_before, check, refresh, "initial" if attempt == 0 else "retry")
                if verification is None or verification.met:
                    self._succeed(record, before, verification, attempt)
                    return record
                refusal = self._refuse_retry(verification, check, idempotent, attempt, max_retries)
                if refusal:
                    self._fail(record, before, verification, refusal, check)
                self.retries += 1
                attempt_before = verification.after
            raise AssertionError("unreachable: the retry loop always returns or fails")  # pragma: no cover
        finally:
            self._open_step = None

    def observe(self, *, settled: bool = False, until: Callable[[Observation], bool] | None = None) -> Observation:
        """The current screen (the last observation when still fresh); for actors and hooks.

        `settled=True` first waits (bounded by the settle policy) until frames stop changing,
        so an actor decides on a finished screen rather than a spinner mid-load; `until` ends
        that wait as soon as it holds on a new frame (what the caller waits for has shown). Its
        tree is read here: the callers (actor, AI check, memory) use it after they act."""
        self.journal.flush()
        observation = self._fresh()
        if settled and self.policy.settle:
            observation = settle(self.screen, self.oracle, observation, self.settle_policy, self.clock,
                                 ignore=self.loop.ignore, until=until, observe=self._observe_poll).observation
        _ = observation.tree
        return observation

    # -- progress --------------------------------------------------------------------------
    def milestone(self, name: str) -> bool:
        """Mark `name` reached. Its check (if any) is evaluated on the current screen, after a
        settle if needed; if it fails the screen wins (see `on_milestone_failure`)."""
        state = self.state
        milestone = state.milestone(name)
        if milestone is None:
            if state.plan:
                close = difflib.get_close_matches(name, state.decomposition, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"milestone {name!r} is not in the plan {state.decomposition}{hint}")
            state.plan.append(normalise_plan([name])[0])  # no plan declared: milestones are ad hoc
            milestone = state.plan[-1]
        if state.is_done(name):
            return True
        step_index = self._steps[-1].index if self._steps else None
        if milestone.check is not None:
            observation = self._fresh()
            result = milestone.check(observation)
            if not result.ok and self.policy.settle:
                observation = settle(self.screen, self.oracle, observation, self.settle_policy, self.clock,
                                     ignore=self.loop.ignore, observe=self._observe_poll).observation
                result = milestone.check(observation)
            if not result.ok:
                conflict = Conflict(name, step_index, f"declared reached but {result.evidence}", "not completed")
                self._record_conflicts([conflict], observation.package)
                self.journal.emit_state(state)
                if self.on_milestone_failure == "raise":
                    raise MilestoneNotVisible(
                        f"milestone {name!r} declared reached, but the screen disagrees: {result.evidence}. "
                        f"The screen wins: not completed.\n{progress_text(self.progress)}", name, result.evidence)
                return False
        state.complete(name, "declared", step_index)
        last = self._last[0] if self._last else None
        app = "" if last is None else last.package if self.policy.anchors else last.known_package
        self.journal.subgoal(name, "declared", step_index, app)
        state.focus.next_focus = f"continue with: {state.current}" if state.current else "all milestones complete"
        self.journal.emit_state(state)
        return True

    def assert_complete(self) -> None:
        progress = self.progress
        if progress.current is not None:
            raise ProgressIncomplete(f"task not complete: {self.state.goal!r}\n{progress_text(progress)}",
                                     progress.completed, progress.current, progress.remaining)

    # -- facts -----------------------------------------------------------------------------
    def remember(self, key: str, value: Any, *, source: str | None = None, app: str | None = None) -> None:
        """Keep a fact for later steps (CONTEXT_INFO). `source` defaults to the current (or last)
        step's name, `app` to the foreground package of the latest observation."""
        if not isinstance(key, str) or not key:
            raise ValueError(f"remember() needs a non-empty str key, got {key!r}")
        step = self._open_step or (self._steps[-1] if self._steps else None)
        source = source if source is not None else (step.name if step else None)
        app = app if app is not None else self._foreground()
        fact = Fact(key, value, source, step.index if step else None, app)
        anchor = self.journal.anchor(AnchorType.CONTEXT_INFO, f"remember {key!r}",
                                     step_index=step.index if step else None,
                                     detail=f"{value!r} from step {source!r}" if source else repr(value),
                                     app=app, data={"key": key, "value": repr(value), "source_step": source})
        fact.anchor_id = anchor.id if anchor else None
        self.state.facts[key] = fact
        self.journal.emit_state(self.state)

    def recall(self, key: str) -> Any:
        """The remembered value; records a DEPENDENCY anchor naming the step and app it came from."""
        facts = self.state.facts
        if key not in facts:
            raise KeyError(f"nothing remembered under {key!r}; known keys: {sorted(facts)}")
        fact = facts[key]
        step = self._open_step or (self._steps[-1] if self._steps else None)
        used_in = step.name if step else None
        # inside a step the value is used by it; between steps, by whatever the test does next
        where = (f", used in step {used_in!r}" if self._open_step is not None
                 else f", used after step {used_in!r}" if used_in else "")
        source = f"step {fact.step!r}" if fact.step else "the test"
        anchor = self.journal.anchor(
            AnchorType.DEPENDENCY, f"recall {key!r} (from {fact.app or 'unknown app'})",
            step_index=step.index if step else None,
            detail=f"{fact.value!r} from {source} in {fact.app or 'unknown app'}" + where,
            app=self._foreground(),
            data={"key": key, "value": repr(fact.value), "source_step": fact.step, "source_app": fact.app,
                  "used_in_step": used_in})
        if anchor is not None and fact.anchor_id is not None:
            self.anchors.link(anchor, fact.anchor_id, LinkType.RESULT_OF)
        return fact.value

    def _record_conflicts(self, conflicts: list[Conflict], app: str) -> None:
        for conflict in conflicts:
            self.state.focus.conflicts.append(conflict)
            self.journal.conflict(conflict, app)

    def _foreground(self) -> str:
        if self._last is not None:
            return self._last[0].package
        if self.policy.compare:
            return self._observe("observe").package
        return ""

    # -- end -------------------------------------------------------------------------------
    def finish(self, outcome: str, error: BaseException | None = None) -> None:
        """Close the session: FINISH anchor, listeners' on_finish. A second call does nothing."""
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.journal.finish(outcome, error)

    def context_switched(self, before: str, after: str, how: str, listed: Sequence[str] = ()) -> None:
        """The device's context changed (issue 37). Inside a step the step's record says so (its after-
        screen's context); outside one the switch is a step of its own, kind "context", with no oracle:
        a switch changes what the driver reads, not the screen, so there is nothing to compare."""
        open_step = self._open_step
        note = _web_view_note(before, how, listed)
        if open_step is not None:
            open_step.context_after = after
            if note:
                open_step.web_view = f"{open_step.web_view}; {note}" if open_step.web_view else note
            return
        via = "" if how == "switch_context" else " (the test's own driver call)"
        name = note.split(":")[0] if note else f"switch context {before or '?'} -> {after}{via}"
        record = self._begin(name, "context", None, True)
        try:
            record.context, record.context_after = before, after
            record.outcome, record.confirmed, record.actions = "ok", True, 1
            record.explanation = f"contexts listed: {', '.join(listed)}" if listed else ""
            record.web_view = note
            self.journal.close_step(record, None, None)
        finally:
            self._open_step = None

    # -- internals -------------------------------------------------------------------------
    def _begin(self, name: str, kind: str, check: Check | None, idempotent: bool) -> StepRecord:
        if self._open_step is not None:
            raise GuistateError(f"step {name!r} started inside step {self._open_step.name!r}: steps do not nest")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a step needs a non-empty name, got {name!r}")
        watchdog.check(f"the start of step {len(self._steps) + 1} {name!r}")  # the test's wall-clock budget
        record = StepRecord(len(self._steps) + 1, name, kind, check.description if check else None, idempotent,
                            started=self.clock.monotonic(),
                            page_sources_at_start=getattr(self.screen, "page_source_calls", None),
                            reads_trees=self._reads_trees(check))
        self._steps.append(record)
        self._open_step = record
        return record

    def _observe(self, source: str, *, poll: bool = False) -> Observation:
        take = getattr(self.screen, "observe_poll", None) if poll else None
        observation = take() if take is not None else self.screen.observe()
        step = self._open_step
        observation.frame.source = f"step {step.index} {source}" if step else source
        self.frames.add(observation.frame)
        self._last = (observation, self._epoch, self.clock.monotonic(), getattr(self.screen, "action_count", None))
        return observation

    def _observe_poll(self, source: str) -> Observation:
        """A settle poll: a screen the next poll supersedes, whose tree is read only if something
        reads it (`core/settle.py`); a recording screen (`observe_poll`) does not read it at once."""
        return self._observe(source, poll=True)

    def _fresh(self) -> Observation:
        if self._last is None:
            return self._observe("observe")
        observation, epoch, taken, actions = self._last
        unmoved = epoch == self._epoch and getattr(self.screen, "action_count", None) == actions
        if unmoved and self.clock.monotonic() - taken <= self.reuse_window_s and _tree_still_readable(observation):
            return observation
        fresh = self._observe("observe")
        if unmoved and observation.tree_fetched and not fresh.tree_fetched and fresh.frame.same_bytes(observation.frame):
            fresh.tree = observation.tree  # the same screen, no input since: its tree is already read (issue 24)
        return fresh

    def _before(self, record: StepRecord) -> Observation | None:
        if not self.policy.compare:
            return None  # tier off: nothing compares frames
        last = self._last[0] if self._last else None
        before = self._fresh()
        record.reused_before = before is last
        record.package_before = before.package if record.reads_trees else before.known_package
        record.context = before.context
        self.frames.pin(before.frame)
        return before

    def look_again_before(self) -> None:
        """A locator in the open step waited for its element (issue 34): the step's before-screen
        becomes the screen the action meets, taken now, right before the input, so the oracle never
        compares against a screen from before the element appeared. Nothing to do outside a step or
        at tier `off` (no before-screen)."""
        record = self._open_step
        if record is None or not self.policy.compare:
            return
        before = self._observe("before the action (after a locator's wait)")
        if record.reads_trees:
            _ = before.tree  # read while it is this frame's: the input comes next
        record.reused_before = False
        record.package_before = before.package if record.reads_trees else before.known_package
        self.frames.pin(before.frame)
        self._looked_again = before

    def _met_before(self, before: Observation | None) -> Observation | None:
        """The step's before-screen: the one taken again after a locator's wait, else `before`."""
        again, self._looked_again = self._looked_again, None
        return again if again is not None and before is not None else before

    def _note_action(self, what: str, *, read_tree: bool = True) -> None:
        """Before any action: the newest observation's tree is read now, while it is still that
        frame's (it is this step's before-screen, which the journal and triage read afterwards).
        `read_tree=False`: a light step nothing will read it for (`_reads_trees`)."""
        if self._last is not None and read_tree:
            _ = self._last[0].tree
        self._epoch += 1

    def _reads_trees(self, check: Check | None) -> bool:
        """Whether this step reads its trees: always with `step_trees` (standard, full); at light
        only when a check will (the expect, the current or latest milestone's check through the
        offline updater, or any other updater), and then the before-tree too (triage, routes)."""
        if self.policy.step_trees or not isinstance(self.updater, OfflineUpdater):
            return True
        if check is not None and (check.needs_tree or not getattr(self.screen, "find_checks", False)):
            return True  # a locator check is a find only on a screen that answers finds (issue 24)
        # the state as journaled so far: a step judged beside the test that is not recorded yet changes no
        # milestone (it was judged beside because no milestone had a check), and waiting for it here would
        # put its judgement back on the test's path
        state = self.journal.state
        names = [state.current, state.completed[-1] if state.completed else None]
        return any(m is not None and m.check is not None for m in map(state.milestone, filter(None, names)))

    def _verify(self, record: StepRecord, before: Observation | None, check: Check | None,
                refresh: Callable[[], object] | None, stage: str) -> Verification | None:
        if before is None and check is None:
            return None  # tier off and nothing expected: the action itself is all there is
        acted = self.clock.monotonic()  # the action has returned: what it opened has been drawing since
        # its tree is read by the step loop next, not by the recorder at once: at standard the
        # oracle's pixels start while that page source is read (`StepLoop._pixels_ahead`)
        after = self._observe("after", poll=True)
        if self._beside and before is not None and self.loop.judges_beside(before, after, check, record.reads_trees):
            # nothing waits for this verdict: judged while the test goes on, recorded by `_succeed`'s
            # `Journal.close_later` once judged (issue 42)
            verification = Verification(True, stage, after, Judgement(True, None, None, None),
                                        pending=self.loop.judge_beside(before, after))
        else:
            refreshers = [("step refresh", refresh), ("session refresh", self._refresh)]
            verification = self.loop.verify(record, before, after, check, refreshers, stage=stage, acted_at=acted)
        if not verification.met:
            self.loop.complete(before, verification, trees=record.reads_trees)  # light: the report needs the tree now
        if self._last is not None and self._last[0] is verification.after:
            # the reuse window counts from here: the after-screen was just judged (its tree read if
            # anything needed it), as when the recorder fetched every tree inside observe()
            observation, epoch, _, actions = self._last
            self._last = (observation, epoch, self.clock.monotonic(), actions)
        self._judged(record, verification)
        return verification

    def _judged(self, record: StepRecord, verification: Verification) -> None:
        """What the session keeps of a judged look (a look judged beside the test: once judged)."""
        if verification.pending is not None:
            return
        if verification.judgement.transition is not None:
            self._last_transition = verification.judgement.transition
        if record.attempts and not record.attempts[0].met and not record.episode:
            record.episode = True
            self.episodes += 1

    def _take_judgement(self, record: StepRecord, verification: Verification, ended: float) -> None:
        """A look judged beside the test: its judgement in the placeholder's place, the attempt it was.
        A judgement that raised (a screenshot OpenCV cannot decode) fails the step it judged, as it
        would have on the test's path, named by the frame it could not read."""
        pending = verification.pending
        if pending is None:
            return
        try:
            judgement = pending.result()
        except Exception as exc:
            verification.pending = None
            record.outcome = "failed"
            record.error = f"{type(exc).__name__}: {exc}"
            record.explanation = (f"step {record.index} {record.name!r} failed while reading the screen after the "
                                  f"action (judged beside the test): {record.error}")
            raise
        verification.judgement, verification.pending = judgement, None
        self.loop.record_attempt(record, verification.stage, judgement, ended)
        self._judged(record, verification)

    def _refuse_retry(self, verification: Verification, check: Check | None, idempotent: bool,
                      attempt: int, max_retries: int) -> str:
        """Why the action may not run again ("" = it may)."""
        if not idempotent:
            return "the action is declared non-idempotent (idempotent=False), so it is never repeated"
        if not self.policy.retry:
            return f"retries are off at tier {self.policy.tier.value}"
        if verification.ended and not verification.met:
            boxes = ", ".join(box.to_bounds() for box in verification.ended)
            return (f"the first after-frame showed a change ({boxes}) that was gone one frame later: it cannot be "
                    "proven that the action did not take effect, so it is not repeated blindly")
        if not verification.proven_no_effect(check):
            return (f"the oracle's verdict is {verification.judgement.verdict!r}: it cannot be proven that the "
                    "action did not take effect, so it is not repeated blindly")
        if attempt >= max_retries:
            return f"still unmet after {attempt + 1} run(s) of the action (max_retries={max_retries})"
        return ""

    def _succeed(self, record: StepRecord, before: Observation | None, verification: Verification | None,
                 attempt: int) -> None:
        record.confirmed = verification is not None
        if verification is None:
            record.outcome = "ok"
        else:
            record.outcome = "retried" if attempt > 0 else _OUTCOME_BY_STAGE[verification.stage]
        if verification is not None and verification.pending is not None:
            ended = self.clock.monotonic()  # nothing of the judgement was on the test's path: no time of it
            self.journal.close_later(record, before, verification,
                                     lambda: self._take_judgement(record, verification, ended))
        else:
            self.journal.close_step(record, before, verification)
        if self.policy.compare:  # a loop is seen in compared frames only (a step judged beside reads no tree: none)
            self.cycles.after_step(record, verification, milestones_done=len(self.journal.state.completed),
                                   steps=self._steps,
                                   journal=self.journal, artifacts=self.artifacts,
                                   scale_divisor=self.oracle.config.scale_divisor)

    def _fail(self, record: StepRecord, before: Observation | None, verification: Verification, why: str,
              check: Check | None = None) -> None:
        record.outcome = "failed"
        self._expect_evidence(record, before, verification, check)
        record.explanation = step_failure_text(record, verification, why, self.policy)
        self.journal.close_step(record, before, verification)
        raise StepFailed(record.explanation, record)

    @staticmethod
    def _expect_evidence(record: StepRecord, before: Observation | None, verification: Verification,
                         check: Check | None) -> None:
        """Triage evidence of a failed step: where the unmet expect found its element (grounding:
        did the change land there?) and whether it already held before the action (the test
        misread the state: the action moved the screen away from what it expected)."""
        result = verification.judgement.expect_result
        if result is not None and result.box is not None:
            record.expect_box = result.box.as_list()
        if check is None or before is None:
            return
        try:
            record.expect_before = check(before).to_dict()
        except Exception as exc:  # noqa: BLE001 - StepFailed must win; the record says why this is missing
            record.expect_before = {"ok": None, "evidence": f"check raised {type(exc).__name__}: {exc}", "box": None}

    def _observing(self, record: StepRecord, before: Observation | None, when: str,
                   read: Callable[..., _T], *args: Any) -> _T:
        """`read(*args)`, a look at the screen around the action; if it raises (a screenshot or page
        source that failed, a bad frame, the budget), the step is journaled as failed with that error
        before the exception goes on (issue 22: only the finish line used to carry it). A verdict the
        step already journaled (`StepFailed`) passes through."""
        try:
            return read(*args)
        except StepFailed:
            raise
        except BaseException as exc:
            if not record.outcome:
                record.outcome = "failed"
                record.error = f"{type(exc).__name__}: {exc}"
                record.explanation = (f"step {record.index} {record.name!r} failed while reading the screen {when}: "
                                      f"{record.error}")
                self.journal.close_failed_step(record, before)
            raise

    def _body_error(self, record: StepRecord, before: Observation | None, exc: BaseException) -> None:
        record.outcome = "failed"
        record.error = f"{type(exc).__name__}: {exc}"
        record.explanation = f"step {record.index} {record.name!r} raised {record.error}"
        self.journal.close_step(record, before, None)


def _web_view_note(name: str, how: str, listed: Sequence[str]) -> str:
    """What the journal says of a web view that went away under the device ("gone") or that a native
    screen started showing ("appeared"), issue 44; "" for a switch."""
    now = f" (contexts listed: {', '.join(listed)})" if listed else ""
    if how == "gone":
        return (f"web view {name} went away: the screen is read from NATIVE_APP; the device stays in {name}, "
                f"where the next call raises WebViewGone, until the test switches{now}")
    if how == "appeared":
        return f"web view {name} appeared: its page is mapped into the NATIVE_APP screen{now}"
    return ""
