"""Plain-text explanations: the `StepFailed` message and the pytest report section "guistate".

Both must read well in a terminal and inside JUnit XML, so: no ANSI, short lines, every claim
with its evidence (what was expected, what the oracle and the tree showed, that the screen was
settled and refreshed, which crops decided it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pytest_guistate.core.records import ArtifactSink, StepRecord, stored_names
from pytest_guistate.core.state import Progress, TaskState
from pytest_guistate.core.tiers import TierPolicy

if TYPE_CHECKING:
    from pytest_guistate.core.anchors import AnchorGraph
    from pytest_guistate.core.steploop import Verification

__all__ = ["TaskRecord", "failure_section", "progress_text", "step_failure_text"]


class TaskRecord(Protocol):
    """What the "guistate" section reads of a test (its `TaskSession`): the state and its
    tracker, the step records, the anchors and the counters, all read-only."""

    @property
    def name(self) -> str: ...

    @property
    def policy(self) -> TierPolicy: ...

    @property
    def state(self) -> TaskState: ...

    @property
    def progress(self) -> Progress: ...

    @property
    def steps(self) -> list[StepRecord]: ...

    @property
    def anchors(self) -> AnchorGraph: ...

    @property
    def artifacts(self) -> ArtifactSink: ...

    @property
    def episodes(self) -> int: ...

    @property
    def retries(self) -> int: ...

    @property
    def conflicts(self) -> int: ...


def _attempt_line(record: StepRecord, i: int) -> str:
    a = record.attempts[i]
    parts = [f"{a.stage}:"]
    if a.verdict is not None:
        parts.append(f"oracle {a.verdict}")
    if a.polls:
        parts.append(f"after {a.polls} settle poll(s)")
    if a.refreshed_by:
        parts.append(f"refreshed by {a.refreshed_by}")
    if a.evidence:
        parts.append(f"- {a.evidence}")
    return " ".join(parts)


def step_failure_text(record: StepRecord, verification: Verification, why: str, policy: TierPolicy) -> str:
    """Why a step failed, in the order the loop tried things."""
    if record.expect:
        expected = f"expected {record.expect}"
    else:
        expected = "expected a visible change on screen (no expect= given; transition gating)"
    stages = {a.stage for a in record.attempts}
    recovery = []
    recovery.append("settled" if "settle" in stages else "not settled")
    refreshed = [a.refreshed_by for a in record.attempts if a.refreshed_by]
    if "refresh" in stages:
        recovery.append(f"refreshed ({refreshed[-1]})")
    elif refreshed:
        recovery.append(f"not refreshed ({refreshed[-1]})")
    elif not policy.refresh:
        recovery.append(f"no refresh at tier {policy.tier.value}")
    lines = [
        f"step {record.index} {record.name!r} failed: {expected}",
        f"  {', '.join(recovery)}; the action ran {record.actions} time(s); {why}",
    ]
    lines += [f"  {_attempt_line(record, i)}" for i in range(len(record.attempts))]
    transition = verification.judgement.transition
    if transition is not None:
        if transition.regions:
            boxes = ", ".join(
                f"{r.box.to_bounds()}" + (f" ({r.container})" if r.container else "") for r in transition.regions[:4])
            lines.append(f"  changed regions vs before: {boxes}")
        else:
            lines.append("  changed regions vs before: none")
        crops = ", ".join(c.box.to_bounds() for c in transition.crops[:4])
        if crops:
            lines.append(f"  crops of the after-frame: {crops}")
    return "\n".join(lines)


def progress_text(progress: Progress) -> str:
    done = ", ".join(progress.completed) or "none"
    remaining = ", ".join(progress.remaining) or "none"
    return (f"completed ({len(progress.completed)}/{progress.total}): {done}\n"
            f"current: {progress.current or 'none'}\nremaining: {remaining}")


def failure_section(task: TaskRecord, *, max_anchors: int = 8) -> str:
    """The "guistate" report section: what the test was doing when it failed."""
    state = task.state
    progress = task.progress
    lines = [f"guistate {task.name or ''} (tier {task.policy.tier.value})".replace("  ", " ")]
    lines.append(f"goal: {state.goal or '(no goal declared)'}")
    if state.plan:
        lines.append(f"progress: {len(progress.completed)}/{progress.total} milestones")
        for milestone in state.plan:
            if state.is_done(milestone.name):
                how = state.how.get(milestone.name, "")
                lines.append(f"  [x] {milestone.name}" + (f" ({how})" if how else ""))
            elif milestone.name == progress.current:
                lines.append(f"  [>] {milestone.name}  <- current")
            else:
                lines.append(f"  [ ] {milestone.name}")
    if state.facts:
        facts = "; ".join(f"{k} = {f.value!r} (step {f.step!r}, {f.app or 'unknown app'})" for k, f in state.facts.items())
        lines.append(f"facts: {facts}")
    steps = task.steps
    if steps:
        last = steps[-1]
        lines.append(f"last step {last.index} {last.name!r}: {last.outcome or 'running'}, "
                     f"verdict {last.verdict or 'not compared'}, action ran {last.actions} time(s)")
        if last.expect:
            lines.append(f"  expected: {last.expect}")
        if last.attempts:
            lines.append(f"  saw: {last.attempts[-1].evidence or '-'}")
        if last.regions:
            regions = ", ".join(f"{r['box']}" + (f" ({r['container']})" if r.get("container") else "")
                                for r in last.regions[:4])
            lines.append(f"  regions: {regions}")
        if last.crops:
            lines.append(f"  crops: {', '.join(stored_names(task.artifacts, last.crops[:4]))}")
    if state.focus.next_focus:
        lines.append(f"next focus: {state.focus.next_focus}")
    lines.append(f"steps: {len(steps)}, stale-screen episodes: {task.episodes}, retries: {task.retries}, "
                 f"conflicts: {task.conflicts}")
    anchors = task.anchors.last(max_anchors)
    if anchors:
        lines.append(f"anchors (last {len(anchors)} of {len(task.anchors)}):")
        lines += [f"  {anchor.line()}" for anchor in anchors]
    return "\n".join(lines)
