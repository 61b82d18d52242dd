"""Triage: one primary label per failure, derived by fixed rules from steps, anchors and state.

Labels come from AGMem's failure classes (DESIGN §3: grounding error, hidden-operation
blindness, visual state misunderstanding, cognitive failure split into goal drift and progress
hallucination per TSR §2) plus the two a CI person meets first: stale-screen repetition (TSR
figure 2) and environment. Rules are checked in the order below; the first that matches wins,
and the label names its evidence (which step, anchor or conflict), so a person can check it.

| order | label | rule (first match wins) |
|---|---|---|
| 1 | environment | error text of the test or a step names the device/server (device lost, session gone, connection refused, HTTP 5xx, WebDriverException, DeviceError), or an EXCEPTION anchor with `data.kind` in {device_lost, server_error, crash} |
| 2 | progress_hallucination | a conflict between state and screen (state `focus.conflicts`, an EXCEPTION anchor with `data.kind == "conflict"`, or a `MilestoneNotVisible` error): a milestone was claimed but is not visible |
| 3 | hidden_operation | the failing step's target was never on screen (`ElementNotFound`, NoSuchElement, "no element", "not on screen"), or an anchor `data.kind == "hidden_operation"` |
| 4 | grounding_error | the tapped point did not hit the intended element (step `data`/error says "did not hit", "missed", "outside the target"), or an anchor `data.kind == "grounding"` |
| 5 | stale_screen_repetition | the failing step (or >= 2 steps) was a stale-screen episode whose effect never showed after settle and refresh, or the same action repeated >= 3 times in a row with no visible change |
| 6 | goal_drift | the last >= 2 steps ran in an app where no milestone was completed and no planned step points, after an unplanned STATE_CHANGE; or >= 8 steps with visible changes and no milestone progress while milestones remain |
| 7 | visual_state_misunderstanding | the failing step changed the screen but its expectation was not met (the screen did something other than what the test thought it would) |
| 8 | unclassified | none of the above; evidence says so |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LABELS", "Triage", "TriageLabel", "triage"]

LABELS = (
    "environment",
    "progress_hallucination",
    "hidden_operation",
    "grounding_error",
    "stale_screen_repetition",
    "goal_drift",
    "visual_state_misunderstanding",
    "unclassified",
)
TriageLabel = str

_ENV = re.compile(
    r"device lost|device is gone|session (?:is )?(?:gone|not found|deleted)|invalid session|connection refused|"
    r"connectionerror|remotedisconnected|max retries exceeded|server error|http 5\d\d|\b5\d\d\b.*server|"
    r"webdriverexception|deviceerror|instrumentation (?:crashed|died)|app crashed|anr\b",
    re.IGNORECASE,
)
_HIDDEN = re.compile(
    r"elementnotfound|nosuchelement|no element match|no visible node|not on screen|never on screen|could not find|"
    r"not found on",
    re.IGNORECASE,
)
_GROUNDING = re.compile(r"did not hit|missed the target|outside (?:the )?target|hit .* instead of", re.IGNORECASE)
_CONFLICT = re.compile(r"milestonenotvisible|claimed but not visible|not visible on (?:the )?screen", re.IGNORECASE)
_DRIFT_STEPS = 8


@dataclass(frozen=True)
class Triage:
    label: TriageLabel
    evidence: list[str] = field(default_factory=list)
    step: int | None = None  # the step the evidence points at
    anchor: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "evidence": list(self.evidence), "step": self.step, "anchor": self.anchor}

    def line(self) -> str:
        where = f" (step {self.step})" if self.step is not None else ""
        return f"{self.label}{where}: " + "; ".join(self.evidence)


@dataclass
class _Facts:
    steps: list[dict[str, Any]]
    anchors: list[dict[str, Any]]
    state: dict[str, Any]
    error: str
    conflicts: list[dict[str, Any]]

    @property
    def failing(self) -> dict[str, Any] | None:
        for step in reversed(self.steps):
            if step.get("outcome") == "failed" or step.get("error"):
                return step
        return self.steps[-1] if self.steps and self.error else None

    def kind_anchor(self, *kinds: str) -> dict[str, Any] | None:
        for anchor in self.anchors:
            if str((anchor.get("data") or {}).get("kind", "")) in kinds:
                return anchor
        return None


def _text(step: dict[str, Any]) -> str:
    attempts = " ".join(str(a.get("evidence", "")) for a in step.get("attempts") or [])
    return " ".join(str(step.get(k) or "") for k in ("error", "explanation")) + " " + attempts


def _environment(f: _Facts) -> Triage | None:
    anchor = f.kind_anchor("device_lost", "server_error", "crash")
    if anchor:
        return Triage("environment", [f"anchor {anchor.get('id')}: {anchor.get('title')}"], anchor.get("step"),
                      anchor.get("id"))
    for step in reversed(f.steps):
        match = _ENV.search(str(step.get("error") or ""))
        if match:
            return Triage("environment", [f"step {step.get('index')} error names the device: {match.group(0)!r}"],
                          step.get("index"))
    match = _ENV.search(f.error)
    if match:
        return Triage("environment", [f"test error names the device/server: {match.group(0)!r}"])
    return None


def _hallucination(f: _Facts) -> Triage | None:
    conflicts = f.conflicts or ((f.state.get("focus") or {}).get("conflicts")) or []
    if conflicts:
        c = conflicts[-1]
        return Triage("progress_hallucination",
                      [f"milestone {c.get('milestone')!r} claimed but not on screen: {c.get('evidence')}"],
                      c.get("step"))
    anchor = f.kind_anchor("conflict")
    if anchor:
        return Triage("progress_hallucination", [f"conflict anchor {anchor.get('id')}: {anchor.get('title')}"],
                      anchor.get("step"), anchor.get("id"))
    match = _CONFLICT.search(f.error)
    if match:
        return Triage("progress_hallucination", [f"test error: {match.group(0)}"])
    return None


def _by_pattern(label: str, pattern: re.Pattern[str], kind: str) -> Callable[[_Facts], Triage | None]:
    def rule(f: _Facts) -> Triage | None:
        anchor = f.kind_anchor(kind)
        if anchor:
            return Triage(label, [f"anchor {anchor.get('id')}: {anchor.get('title')}"], anchor.get("step"),
                          anchor.get("id"))
        failing = f.failing
        if failing is not None:
            match = pattern.search(_text(failing))
            if match:
                return Triage(label, [f"step {failing.get('index')} {failing.get('name')!r}: {match.group(0)}"],
                              failing.get("index"))
        match = pattern.search(f.error)
        if match:
            return Triage(label, [f"test error: {match.group(0)}"])
        return None

    return rule


def _stale(f: _Facts) -> Triage | None:
    failing = f.failing
    if failing is not None and failing.get("episode") and not failing.get("confirmed"):
        stages = [a.get("stage") for a in failing.get("attempts") or []]
        return Triage("stale_screen_repetition",
                      [(f"step {failing.get('index')} {failing.get('name')!r} had no visible effect after "
                        f"{' -> '.join(map(str, stages)) or 'its checks'}")], failing.get("index"))
    episodes = [s for s in f.steps if s.get("episode")]
    if len(episodes) >= 2 and f.failing is not None:
        return Triage("stale_screen_repetition",
                      [f"{len(episodes)} stale-screen episodes (steps {[s.get('index') for s in episodes]})"],
                      episodes[-1].get("index"))
    run: list[dict[str, Any]] = []
    for step in f.steps:
        same = run and step.get("name") == run[-1].get("name") and step.get("verdict") == "no_change"
        run = [*run, step] if same else ([step] if step.get("verdict") == "no_change" else [])
        if len(run) >= 3:
            return Triage("stale_screen_repetition",
                          [f"{step.get('name')!r} repeated {len(run)} times with no visible change"],
                          step.get("index"))
    return None


def _drift(f: _Facts) -> Triage | None:
    if not f.steps:
        return None
    tracker = f.state.get("tracker") or {}
    remaining = [tracker.get("current"), *(tracker.get("remaining") or [])]
    remaining = [r for r in remaining if r]
    if not remaining:
        return None
    milestone_steps = [int(a["step"]) for a in f.anchors if a.get("type") == "SUBGOAL" and a.get("step") is not None]
    milestone_apps = {a.get("app") for a in f.anchors if a.get("type") == "SUBGOAL" and a.get("app")}
    last_progress = max(milestone_steps) if milestone_steps else -1
    tail = [s for s in f.steps if int(s.get("index", 0)) > last_progress]
    tail_apps = {str(s["package_after"]) for s in tail[-2:] if s.get("package_after")}
    changes = [a for a in f.anchors if a.get("type") == "STATE_CHANGE" and int(a.get("step") or -1) > last_progress]
    if milestone_apps and len(tail) >= 2 and tail_apps and not tail_apps & milestone_apps and changes:
        return Triage("goal_drift",
                      [(f"after anchor {changes[0].get('id')} ({changes[0].get('title')}) the test stayed in "
                        f"{sorted(tail_apps)} where no milestone happened; still to do: {remaining[0]!r}")],
                      tail[-1].get("index"), changes[0].get("id"))
    moving = [s for s in tail if s.get("verdict") == "changed"]
    if len(moving) >= _DRIFT_STEPS:
        return Triage("goal_drift",
                      [(f"{len(moving)} steps changed the screen since the last milestone without progress; "
                        f"still to do: {remaining[0]!r}")], tail[-1].get("index"))
    return None


def _misunderstanding(f: _Facts) -> Triage | None:
    failing = f.failing
    if failing is None:
        return None
    attempts = failing.get("attempts") or []
    if any(a.get("verdict") == "changed" and a.get("expect_ok") is False for a in attempts):
        evidence = next(str(a.get("evidence")) for a in attempts if a.get("expect_ok") is False)
        return Triage("visual_state_misunderstanding",
                      [(f"step {failing.get('index')} {failing.get('name')!r} changed the screen but the "
                        f"expectation was not met: {evidence}")], failing.get("index"))
    return None


_RULES: Sequence[Callable[[_Facts], Triage | None]] = (
    _environment,
    _hallucination,
    _by_pattern("hidden_operation", _HIDDEN, "hidden_operation"),
    _by_pattern("grounding_error", _GROUNDING, "grounding"),
    _stale,
    _drift,
    _misunderstanding,
)


def triage(
    steps: Sequence[dict[str, Any]],
    anchors: Sequence[dict[str, Any]] = (),
    state: dict[str, Any] | None = None,
    error: str | None = None,
    *,
    conflicts: Sequence[dict[str, Any]] = (),
) -> Triage:
    """The primary label of a failed test (inputs are journal dicts: StepRecord/Anchor/TaskState;
    `conflicts` are every `Conflict.to_dict()` seen during the run, since `focus` resets per step)."""
    facts = _Facts(list(steps), list(anchors), dict(state or {}), str(error or ""), list(conflicts))
    for rule in _RULES:
        result = rule(facts)
        if result is not None:
            return result
    return Triage("unclassified", ["no triage rule matched the steps, anchors and error"])
