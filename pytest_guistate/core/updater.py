"""State updaters: S_t = U(I, S_{t-1}, r_{t-1}, o_{t-1}, o_t), one call per step (TSR §3).

`OfflineUpdater` is the deterministic U the plugin ships: it needs no LLM, only the oracle's
transition, the accessibility tree and the milestone checks the test declared. An LLM updater
(in `pytest_guistate.llm`) implements the same `StateUpdater` protocol; whichever U runs, the
session passes its result through `reconcile`, because the state is guidance and the screen
wins (TSR's lesson): a milestone U claims but whose check fails on o_t is not completed.

Conflict rule (documented because it changes progress): the *latest* completed milestone, if
it has a check, stays "live": it is re-verified on every o_t until a later milestone completes
or the test moves to another app or screen (a STATE_CHANGE). If its check fails while it is
live, the screen wins: the milestone is reopened (removed from `completed`, so `current` moves
back to it), a `Conflict` goes into `focus.conflicts` and the session records an EXCEPTION
anchor "conflict". Earlier milestones are sealed: their evidence is expected to leave the
screen as the test moves on (a confirm dialog closes once confirmed). Auto-completion runs
first, so a step that closes a dialog *and* reaches the next milestone is progress, not a
conflict. `OfflineUpdater(conflicts="flag")` keeps the milestone completed and only records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle_types import Region, Transition
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import Conflict, TaskState

__all__ = ["OfflineUpdater", "StateUpdater", "describe_regions", "next_focus", "reconcile"]


class StateUpdater(Protocol):
    """U of TSR. Must return a TaskState (may be `state` mutated or a new one); errors propagate."""

    def update(
        self,
        state: TaskState,
        record: StepRecord,
        before: Observation | None,
        after: Observation | None,
        transition: Transition | None,
    ) -> TaskState: ...


def describe_regions(regions: Sequence[Region], limit: int = 4) -> list[str]:
    """Readable region names: "list row 'Post 3' [0,300][1080,450]" (container label when snapped)."""
    described = []
    for region in regions[:limit]:
        where = region.box.to_bounds()
        described.append(f"{region.container!r} {where}" if region.container else f"area {where}")
    if len(regions) > limit:
        described.append(f"... {len(regions) - limit} more")
    return described


def next_focus(state: TaskState, record: StepRecord) -> str:
    """What the actor should look at next (TSR's transition-aware focus), as one instruction."""
    if record.outcome == "failed":
        if record.expect:
            tried = "settle and refresh" if any(a.stage == "refresh" for a in record.attempts) else "settling"
            return f"verify '{record.name}': expected {record.expect}, still unmet after {tried}"
        return f"verify '{record.name}' took effect: no visible change; do not repeat it blindly"
    if record.verdict == "uncertain" and not record.confirmed:
        return f"verify the state after '{record.name}': the change was uncertain"
    if record.verdict == "no_change" and not record.confirmed:
        return f"pull to refresh, then verify '{record.name}' took effect"
    if record.outcome == "refreshed":
        return f"verify the list refreshed after '{record.name}'"
    current = state.current
    if current is None:
        return "all milestones complete: verify the goal and finish" if state.plan else "continue with the goal"
    return f"continue with: {current}"


def reconcile(previous: TaskState, new: TaskState, after: Observation | None, step_index: int) -> list[Conflict]:
    """Screen wins over any updater: newly completed milestones whose check fails on `after` are
    reopened. Returns the conflicts (also appended to `new.focus.conflicts`)."""
    if after is None:
        return []
    conflicts: list[Conflict] = []
    for name in [n for n in new.completed if not previous.is_done(n)]:
        milestone = new.milestone(name)
        if milestone is None or milestone.check is None:
            continue
        result = milestone.check(after)
        if not result.ok:
            new.completed.remove(name)
            new.how.pop(name, None)
            new.completed_at.pop(name, None)
            conflict = Conflict(name, step_index, f"updater marked it done but {result.evidence}", "not completed")
            conflicts.append(conflict)
            new.focus.conflicts.append(conflict)
    return conflicts


class OfflineUpdater:
    """Deterministic U: focus from the oracle, milestones from their checks, conflicts from the screen."""

    def __init__(self, *, conflicts: Literal["reopen", "flag"] = "reopen", auto_complete: bool = True) -> None:
        if conflicts not in ("reopen", "flag"):
            raise ValueError(f"conflicts must be 'reopen' or 'flag', got {conflicts!r}")
        self.conflicts = conflicts
        self.auto_complete = auto_complete

    def update(
        self,
        state: TaskState,
        record: StepRecord,
        before: Observation | None,
        after: Observation | None,
        transition: Transition | None,
    ) -> TaskState:
        new = state.copy()
        new.step_index = record.index
        if record.route_changed:
            new.route_mark = record.index  # earlier milestones are sealed (see the conflict rule)
        new.focus.conflicts = []
        new.focus.last_action = record.name
        new.focus.verdict = transition.verdict if transition is not None else record.verdict
        new.focus.regions = describe_regions(transition.regions) if transition is not None else []
        if after is not None:
            if self.auto_complete:
                self._auto_complete(new, after, record.index)
            self._check_latest(new, after, record.index)
        new.focus.next_focus = next_focus(new, record)
        return new

    def _auto_complete(self, state: TaskState, after: Observation, step_index: int) -> None:
        """Complete the current milestone while its check passes (in order: no skipping ahead,
        a later milestone's text may be on screen long before it is reached)."""
        while True:
            current = state.current
            milestone = state.milestone(current) if current is not None else None
            if milestone is None or milestone.check is None or not milestone.check(after).ok:
                return
            state.complete(milestone.name, "auto", step_index)

    def _check_latest(self, state: TaskState, after: Observation, step_index: int) -> None:
        """Re-verify the live milestone (see the conflict rule in the module docstring)."""
        if not state.completed:
            return
        name = state.completed[-1]
        at = state.completed_at.get(name)
        milestone = state.milestone(name)
        if milestone is None or milestone.check is None or at is None or at < state.route_mark or at == step_index:
            return
        result = milestone.check(after)
        if result.ok:
            return
        if self.conflicts == "reopen":
            state.completed.remove(name)
            state.how.pop(name, None)
            state.completed_at.pop(name, None)
            resolution = "reopened"
        else:
            resolution = "kept completed, flagged"
        state.focus.conflicts.append(
            Conflict(name, step_index, f"marked done at step {at} but now {result.evidence}", resolution))
