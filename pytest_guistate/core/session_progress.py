"""Progress and facts, the verbs that do not act: `milestone`, `assert_complete`, `remember`,
`recall` — a mixin of `TaskSession` (kept apart so `session.py` reads as the step loop's policy).

The screen wins: a milestone whose check fails on the settled screen is not completed; the
conflict is recorded (EXCEPTION anchor) and raised or returned per `on_milestone_failure`.
A recall records a DEPENDENCY anchor naming the step and app the value came from.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.anchors import AnchorType, LinkType
from pytest_guistate.core.errors import MilestoneNotVisible, ProgressIncomplete
from pytest_guistate.core.explain import progress_text
from pytest_guistate.core.settle import settle
from pytest_guistate.core.state import Conflict, Fact, normalise_plan

if TYPE_CHECKING:
    from pytest_guistate.core.anchors import AnchorGraph
    from pytest_guistate.core.observation import Observation, Screen
    from pytest_guistate.core.oracle import VisualOracle
    from pytest_guistate.core.records import StepRecord
    from pytest_guistate.core.session_journal import Journal
    from pytest_guistate.core.settle import Clock, SettlePolicy
    from pytest_guistate.core.state import Progress, TaskState
    from pytest_guistate.core.steploop import StepLoop
    from pytest_guistate.core.tiers import TierPolicy

__all__ = ["ProgressVerbs"]


class ProgressVerbs:
    """Needs, from the session it is mixed into, the attributes and methods declared here."""

    _steps: list[StepRecord]
    _open_step: StepRecord | None
    _last: tuple[Observation, int, float, object] | None
    journal: Journal
    anchors: AnchorGraph
    policy: TierPolicy
    screen: Screen
    oracle: VisualOracle
    settle_policy: SettlePolicy
    clock: Clock
    loop: StepLoop
    on_milestone_failure: str

    @property
    def state(self) -> TaskState:
        raise NotImplementedError

    @property
    def progress(self) -> Progress:
        raise NotImplementedError

    def _fresh(self) -> Observation:
        raise NotImplementedError

    def _observe(self, source: str) -> Observation:
        raise NotImplementedError

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
                                     ignore=self.loop.ignore, observe=self._observe).observation
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
