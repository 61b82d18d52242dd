"""The task state S_t of TSR (seed 000): global summary, progress tracker, transition-aware focus.

It lives beside the device and is updated once per step (`updater.py`); it never replaces the
screen. `TaskState.to_dict()` is deliberately small: it is what an LLM actor receives each step
and what a failure report shows, so it names milestones and facts, never pixels.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Union

from pytest_guistate.core.checks import Check, CheckSpec, as_check

__all__ = ["Conflict", "Fact", "Focus", "Milestone", "PlanItem", "Progress", "TaskState", "normalise_plan"]


@dataclass(frozen=True)
class Milestone:
    """One item of the decomposition. With a `check` it can be verified on the screen."""

    name: str
    check: Check | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a milestone needs a non-empty name, got {self.name!r}")
        if self.check is not None and not isinstance(self.check, Check):
            object.__setattr__(self, "check", as_check(self.check))


PlanItem = Union[str, Milestone, "tuple[str, CheckSpec]"]


def normalise_plan(plan: list[PlanItem] | tuple[PlanItem, ...]) -> list[Milestone]:
    """str -> Milestone(name); (name, check) -> Milestone(name, check). Duplicate names are refused."""
    milestones: list[Milestone] = []
    for position, item in enumerate(plan):
        if isinstance(item, Milestone):
            milestone = item
        elif isinstance(item, str):
            milestone = Milestone(item)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            milestone = Milestone(item[0], as_check(item[1]))
        else:
            raise TypeError(
                f"plan item {position} is {item!r}: use a str, Milestone(name, check=...) or a (name, check) tuple"
            )
        milestones.append(milestone)
    names = [m.name for m in milestones]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate milestone names in the plan: {duplicates}")
    return milestones


@dataclass
class Fact:
    """A durable fact (CONTEXT_INFO): its value and where it came from (step and app)."""

    key: str
    value: Any
    step: str | None
    step_index: int | None
    app: str
    anchor_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": _jsonable(self.value), "step": self.step, "app": self.app}


@dataclass
class Conflict:
    """The state and the screen disagreed about a milestone; the screen won."""

    milestone: str
    step_index: int | None
    evidence: str
    resolution: str  # e.g. "not completed", "kept completed, flagged"

    def to_dict(self) -> dict[str, Any]:
        return {"milestone": self.milestone, "step": self.step_index, "evidence": self.evidence,
                "resolution": self.resolution}


@dataclass
class Focus:
    """Transition-aware focus: what the last action did and what to look at next."""

    last_action: str | None = None
    verdict: str | None = None  # changed | no_change | uncertain | None (not compared)
    regions: list[str] = field(default_factory=list)  # "list row 'Post 3' [0,300][1080,450]"
    next_focus: str = ""
    conflicts: list[Conflict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "last_action": self.last_action,
            "verdict": self.verdict,
            "regions": list(self.regions),
            "next_focus": self.next_focus,
            "conflicts": [c.to_dict() for c in self.conflicts],
        }


@dataclass
class TaskState:
    """S_t. `plan` is the decomposition; `completed` keeps completion order; `how` says who
    completed each milestone ("declared" by the test, "auto" by the updater, "actor")."""

    goal: str = ""
    plan: list[Milestone] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    how: dict[str, str] = field(default_factory=dict)
    completed_at: dict[str, int | None] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)
    focus: Focus = field(default_factory=Focus)
    step_index: int = 0  # number of steps this state has seen
    route_mark: int = 0  # step index of the last STATE_CHANGE: milestones after it are "on this screen"

    @property
    def decomposition(self) -> list[str]:
        return [m.name for m in self.plan]

    @property
    def remaining(self) -> list[str]:
        done = set(self.completed)
        return [m.name for m in self.plan if m.name not in done]

    @property
    def current(self) -> str | None:
        remaining = self.remaining
        return remaining[0] if remaining else None

    def milestone(self, name: str) -> Milestone | None:
        for milestone in self.plan:
            if milestone.name == name:
                return milestone
        return None

    def is_done(self, name: str) -> bool:
        return name in self.completed

    def complete(self, name: str, how: str, step_index: int | None) -> None:
        if name not in self.completed:
            self.completed.append(name)
            self.how[name] = how
            self.completed_at[name] = step_index

    def copy(self) -> TaskState:
        """Independent copy (milestones and checks are immutable and shared)."""
        clone = copy.copy(self)
        clone.plan = list(self.plan)
        clone.completed = list(self.completed)
        clone.how = dict(self.how)
        clone.completed_at = dict(self.completed_at)
        clone.facts = dict(self.facts)
        clone.focus = Focus(
            last_action=self.focus.last_action,
            verdict=self.focus.verdict,
            regions=list(self.focus.regions),
            next_focus=self.focus.next_focus,
            conflicts=list(self.focus.conflicts),
        )
        return clone

    def to_dict(self) -> dict[str, Any]:
        """The serialised S_t an actor receives: summary, tracker, focus."""
        remaining = self.remaining
        return {
            "summary": {"goal": self.goal, "facts": {k: f.to_dict() for k, f in self.facts.items()}},
            "tracker": {
                "decomposition": self.decomposition,
                "completed": list(self.completed),
                "current": remaining[0] if remaining else None,
                "remaining": remaining[1:] if remaining else [],
            },
            "focus": self.focus.to_dict(),
            "step": self.step_index,
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def progress(self) -> Progress:
        """Where the test is on its plan now (a snapshot: completed, current, the rest, total)."""
        remaining = self.remaining
        return Progress(list(self.completed), remaining[0] if remaining else None, remaining[1:], len(self.plan))


@dataclass(frozen=True)
class Progress:
    """Where the test is on its plan. `remaining` excludes `current`."""

    completed: list[str]
    current: str | None
    remaining: list[str]
    total: int

    @property
    def done(self) -> bool:
        return self.current is None

    def to_dict(self) -> dict[str, Any]:
        return {"completed": list(self.completed), "current": self.current,
                "remaining": list(self.remaining), "total": self.total}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)
