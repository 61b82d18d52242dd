"""Triage: one primary label per failure, derived by fixed rules from steps, anchors and state.

Labels come from AGMem's failure classes (AGMem, seed 001: grounding error, hidden-operation
blindness, visual state misunderstanding, cognitive failure split into goal drift and progress
hallucination per TSR §2) plus the two a CI person meets first: stale-screen repetition (TSR
figure 2) and environment. Rules are checked in the order below; the first that matches wins,
and the label names its evidence (which step, anchor or conflict), so a person can check it.
Grounding and the reversed-state rule read `StepRecord.expect_box` / `expect_before`, which the
session fills on a failed step; the tap point itself is not recorded (the device does not report it).

| order | label | rule (first match wins) |
|---|---|---|
| 1 | environment | error text of a step, or the exception lines of the test's error, names the device/server (device lost, session gone, connection refused, HTTP 5xx, WebDriverException, DeviceError), or an EXCEPTION anchor with `data.kind` in {device_lost, server_error, crash} |
| 2 | progress_hallucination | a claim the screen refused (a `Conflict` resolved "not completed": `milestone()` or the updater claimed it, the check failed; state `focus.conflicts`, a `conflict` anchor, or a `MilestoneNotVisible` error). A live milestone that later left the screen ("reopened") is a regression, not a claim |
| 3 | goal_drift (app) | the last >= 2 steps ran in an app reached by an app-switch STATE_CHANGE that is not the start app, no milestone completed there and the goal/plan never names it (so a target missing there is drift, not a hidden operation) |
| 4 | grounding_error (locator) | a locator found nothing (`no element with kind='value'`) while the "on screen:" list of its message held something reading like the value (same words in another case or spacing, a label holding the whole value, a close spelling): the evidence names the closest candidates (issue 34) |
| 4b | hidden_operation | the failing step's target was never on screen (`ElementNotFound`, NoSuchElement, "no element", "not on screen"), or an anchor `data.kind == "hidden_operation"` |
| 5 | grounding_error | an anchor `data.kind == "grounding"`, or text says "did not hit"/"missed"; or the failing step changed the screen, its unmet expect located its element on screen (`expect_box`), did not already hold before, and no changed region touches that element (a `scrim` region, the dimmed screen behind a dialog, is no place the step acted on) nor is a dialog that closed (the touch landed on the dialog): the tap landed beside its target |
| 6 | visual_state_misunderstanding (reversed) | the failing step's expect already held on the before-screen (`expect_before.ok`) and the action changed the screen away from it (a toggle tapped that was already on) |
| 7 | stale_screen_repetition | an action was repeated (the failing step ran it more than once, or the same action ran >= 3 times in a row with no visible change), or a stale episode decided the failure: the failing step's effect never showed and the screen was never shown fresh (no refresh took effect) or never changed at all |
| 8 | expected_effect_missing | the failing step ran its action once, the screen changed, a refresh took effect and the fresh screen still lacks the expected effect: not stale, not repeated - the action did something else (a wrong button, a wrong target); the evidence names what changed and what the expect saw (issue 15) |
| 9 | goal_drift | >= 8 steps with visible changes and no milestone progress while milestones remain |
| 10 | visual_state_misunderstanding | the failing step changed the screen but its expectation was not met (the screen did something other than what the test thought it would) |
| 11 | unclassified | none of the above; evidence says so |
"""

from __future__ import annotations

import difflib
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
    "expected_effect_missing",
    "goal_drift",
    "visual_state_misunderstanding",
    "unclassified",
)
TriageLabel = str

_ENV = re.compile(
    r"device lost|device is gone|session (?:is )?(?:gone|not found|deleted)|invalid session|no active session|"
    r"invalidsessionid|connection refused|connectionerror|remotedisconnected|max retries exceeded|server error|"
    r"http 5\d\d|\b5\d\d\b.*server|webdriverexception|deviceerror|instrumentation (?:crashed|died)|app crashed|"
    r"\banr\b",
    re.IGNORECASE,
)
_HIDDEN = re.compile(
    r"elementnotfound|nosuchelement|no element match|no element with|no visible node|not on screen|never on screen|"
    r"could not find|not found on",
    re.IGNORECASE,
)
_GROUNDING = re.compile(r"did not hit|missed the target|outside (?:the )?target|hit .* instead of", re.IGNORECASE)
_CONFLICT = re.compile(r"milestonenotvisible|claimed but not visible|not visible on (?:the )?screen", re.IGNORECASE)
_APP_SWITCH = re.compile(r"app (\S+) -> (\S+)")
_CLAIM_REFUSED = ("not completed", None)  # Conflict.resolution of a claim the screen refused
_DRIFT_STEPS = 8
_SHOWN = 160  # characters of an error quoted in evidence


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
        for step in self.steps[::-1]:
            if step.get("outcome") == "failed" or step.get("error"):
                return step
        return self.steps[-1] if self.steps and self.error else None

    @property
    def error_lines(self) -> str:
        """The exception lines of a pytest traceback ("E   ..."): the source lines it quotes
        (e.g. `except WebDriverException` in a library frame) are not evidence."""
        lines = [line[1:].strip() for line in self.error.splitlines() if line.startswith("E ")]
        return "\n".join(lines) if lines else self.error

    def kind_anchor(self, *kinds: str) -> dict[str, Any] | None:
        for anchor in self.anchors:
            if str((anchor.get("data") or {}).get("kind", "")) in kinds:
                return anchor
        return None


def _text(step: dict[str, Any]) -> str:
    attempts = " ".join(str(a.get("evidence", "")) for a in step.get("attempts") or [])
    return " ".join(str(step.get(k) or "") for k in ("error", "explanation")) + " " + attempts


def _short(text: object) -> str:
    line = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return line if len(line) <= _SHOWN else line[:_SHOWN - 1] + "…"


def _where(step: dict[str, Any]) -> str:
    return f"step {step.get('index')} {step.get('name')!r}"


def _boxes(step: dict[str, Any]) -> list[list[int]]:
    """Changed regions of a step (snapped boxes), from the record or its last attempt. A `scrim` region
    (the screen dimmed behind a dialog or drawer that came or went, `core/oracle_types.Region.kind`)
    touches every element and says nothing of where the step acted: left out."""
    boxes: list[Any] = [r.get("box") for r in step.get("regions") or [] if isinstance(r, dict)
                        and r.get("kind") != "scrim"]
    if not any(boxes) and step.get("attempts"):
        boxes = list((step["attempts"][-1] or {}).get("regions") or [])
    return [[int(v) for v in b] for b in boxes if isinstance(b, (list, tuple)) and len(b) == 4]


def _closed_dialog(region: Any) -> bool:
    """A changed region that is a dialog which closed (the oracle names it "dialog '...' vanished",
    `core/oracle_dim.Overlay.label`; read here as text, so the gate does not import OpenCV)."""
    container = str(region.get("container") or "") if isinstance(region, dict) else ""
    return container.startswith("dialog ") and container.endswith(" vanished")


def _touches(a: Sequence[int], b: Sequence[int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _bounds(box: Sequence[int]) -> str:
    return f"[{box[0]},{box[1]}][{box[2]},{box[3]}]"


def _environment(f: _Facts) -> Triage | None:
    anchor = f.kind_anchor("device_lost", "server_error", "crash")
    if anchor:
        return Triage("environment", [f"anchor {anchor.get('id')}: {anchor.get('title')}"], anchor.get("step"),
                      anchor.get("id"))
    for step in reversed(f.steps):
        match = _ENV.search(str(step.get("error") or ""))
        if match:
            return Triage("environment", [(f"{_where(step)} error names the device: {match.group(0)!r} "
                                           f"({_short(step.get('error'))})")], step.get("index"))
    match = _ENV.search(f.error_lines)
    if match:
        return Triage("environment", [(f"test error names the device/server: {match.group(0)!r} "
                                       f"({_short(f.error_lines[match.start():])})")])
    return None


def _hallucination(f: _Facts) -> Triage | None:
    conflicts = f.conflicts or ((f.state.get("focus") or {}).get("conflicts")) or []
    claims = [c for c in conflicts if c.get("resolution") in _CLAIM_REFUSED]
    if claims:
        c = claims[-1]
        return Triage("progress_hallucination",
                      [f"milestone {c.get('milestone')!r} claimed but not on screen: {c.get('evidence')}"],
                      c.get("step"))
    for anchor in reversed(f.anchors):
        data = anchor.get("data") or {}
        if data.get("kind") == "conflict" and data.get("resolution") in _CLAIM_REFUSED:
            return Triage("progress_hallucination", [f"conflict anchor {anchor.get('id')}: {anchor.get('title')}"],
                          anchor.get("step"), anchor.get("id"))
    match = _CONFLICT.search(f.error_lines)
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
                said = _short(failing.get("error") or failing.get("explanation") or match.group(0))
                return Triage(label, [f"{_where(failing)}: {match.group(0)} ({said})"], failing.get("index"))
        match = pattern.search(f.error_lines)
        if match:
            return Triage(label, [f"test error: {match.group(0)} ({_short(f.error_lines[match.start():])})"])
        return None

    return rule


_MISS = re.compile(r"no element with (?P<by>[^=\s]+(?: [^=\s]+)?)=(?P<q>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_SELECTOR_ARG = re.compile(r'\("((?:[^"\\]|\\.)*)"\)')


def _listed(rest: str) -> list[str]:
    """The quoted labels at the start of `rest`, one after another (", " between): what a miss's
    message listed on screen, up to whatever follows the list (a memory note, the next line)."""
    labels: list[str] = []
    at = len(rest) - len(rest.lstrip())
    while (item := _QUOTED.match(rest, at)) is not None:
        labels.append(item.group(1) if item.group(1) is not None else item.group(2))
        at = item.end()
        if not rest.startswith(", ", at):
            break
        at += 2
    return labels


def _closest(wanted: str, shown: Sequence[str]) -> list[str]:
    """What on screen reads most like the locator's value: the same words in another case or
    spacing, a label holding the whole value, or a close spelling (difflib ratio >= 0.75). A label
    that is one word of the value ("Delete" for "Delete post by Judy") is not close."""
    key = " ".join(wanted.split()).casefold()
    labels = list(dict.fromkeys(s for s in shown if s.strip()))
    same = [s for s in labels if " ".join(s.split()).casefold() == key]
    inside = [s for s in labels if key and key in " ".join(s.split()).casefold() and s not in same]
    near = difflib.get_close_matches(key, [s.casefold() for s in labels], n=3, cutoff=0.75)
    spelled = [s for s in labels if s.casefold() in near and s not in same and s not in inside]
    return [*same, *inside, *spelled][:3]


def _locator_miss(f: _Facts) -> Triage | None:
    """A locator found nothing while something that reads like its value was on screen (issue 34):
    a locator / grounding failure (a renamed label, a case CSS changed, a label moved into a shadow
    root), not a hidden operation. With nothing close on screen the hidden-operation rule decides."""
    failing = f.failing
    texts: list[tuple[dict[str, Any] | None, str]] = [(failing, _text(failing))] if failing is not None else []
    texts.append((None, f.error_lines))
    for step, text in texts:
        miss = _MISS.search(text)
        if miss is None:
            continue
        quoted = miss.group("q")[1:-1]
        inner = _SELECTOR_ARG.search(quoted)
        wanted = inner.group(1) if inner else quoted
        _, _, rest = text[miss.end():].partition("on screen:")
        shown = _listed(rest)
        closest = _closest(wanted, shown)
        if not closest:
            return None
        where = _where(step) if step is not None else "test error"
        said = (f"{where}: the locator {miss.group('by')}={wanted!r} found nothing, yet the screen showed "
                f"{', '.join(repr(c) for c in closest)}: a locator (grounding) failure, not a hidden operation")
        return Triage("grounding_error", [said], step.get("index") if step is not None else None)
    return None


def _grounding(f: _Facts) -> Triage | None:
    found = _by_pattern("grounding_error", _GROUNDING, "grounding")(f)
    failing = f.failing
    if found is not None or failing is None:
        return found
    target, changed = failing.get("expect_box"), _boxes(failing)
    held_before = (failing.get("expect_before") or {}).get("ok")
    if failing.get("verdict") != "changed" or not target or not changed or held_before:
        return None
    if any(_touches(box, target) for box in changed):
        return None
    if any(_closed_dialog(r) for r in failing.get("regions") or []):
        return None  # a dialog closed: the touch landed on it (its button), the effect is what is missing
    return Triage("grounding_error", [
        (f"{_where(failing)} changed the screen only at {', '.join(_bounds(b) for b in changed[:3])}, not at the "
         f"element its expectation is about ({failing.get('expect')}) at {_bounds(target)}: the action landed "
         "beside its target")], failing.get("index"))


def _reversed(f: _Facts) -> Triage | None:
    failing = f.failing
    before = (failing or {}).get("expect_before") or {}
    if failing is None or before.get("ok") is not True or failing.get("verdict") != "changed":
        return None
    after = next((str(a.get("evidence")) for a in reversed(failing.get("attempts") or [])
                  if a.get("expect_ok") is False), "unmet")
    return Triage("visual_state_misunderstanding", [
        (f"{_where(failing)}: the screen already showed the expected state before the action "
         f"({before.get('evidence')}); the action changed it and now {after}")], failing.get("index"))


def _refreshed_by(step: dict[str, Any]) -> str:
    """What refreshed the step's screen ("" when no refresh took effect)."""
    return next((str(a.get("refreshed_by")) for a in reversed(step.get("attempts") or [])
                 if a.get("stage") == "refresh" and a.get("refreshed_by")), "")


def _never_changed(step: dict[str, Any]) -> bool:
    verdicts = [a.get("verdict") for a in step.get("attempts") or [] if a.get("verdict") is not None]
    return bool(verdicts) and all(v in ("no_change", "uncertain") for v in verdicts) or \
        (not verdicts and step.get("verdict") in ("no_change", "uncertain"))


def _stale(f: _Facts) -> Triage | None:
    """Issue 15: only an action that was repeated, or a stale screen that decided the failure (never
    refreshed, or never changed), is a stale-screen repetition; a fresh screen that changed is not."""
    failing = f.failing
    if failing is not None and failing.get("episode") and not failing.get("confirmed"):
        attempts = failing.get("attempts") or []
        repeated = int(failing.get("actions") or 1) > 1
        if repeated or not _refreshed_by(failing) or _never_changed(failing):
            stages = " -> ".join(str(a.get("stage")) for a in attempts) or "its checks"
            what = (f"the expected effect ({failing.get('expect')}) never showed" if failing.get("expect")
                    else "had no visible effect")
            why = (f"the action ran {failing.get('actions')} times" if repeated else
                   "the screen was never refreshed" if not _refreshed_by(failing) else "the screen never changed")
            last = f": {attempts[-1].get('evidence')}" if attempts and attempts[-1].get("evidence") else ""
            return Triage("stale_screen_repetition", [f"{_where(failing)} {what} after {stages} ({why}){last}"],
                          failing.get("index"))
    run: list[dict[str, Any]] = []
    for step in f.steps:
        same = run and step.get("name") == run[-1].get("name") and step.get("verdict") == "no_change"
        run = [*run, step] if same else ([step] if step.get("verdict") == "no_change" else [])
        if len(run) >= 3:
            return Triage("stale_screen_repetition",
                          [f"{step.get('name')!r} repeated {len(run)} times with no visible change"],
                          step.get("index"))
    return None


def _effect_missing(f: _Facts) -> Triage | None:
    """The wrong-button case: one action, a visible change, a refreshed (fresh) screen, no expected effect."""
    failing = f.failing
    if failing is None or not failing.get("expect") or failing.get("confirmed") or failing.get("error"):
        return None
    attempts = failing.get("attempts") or []
    by = _refreshed_by(failing)
    if int(failing.get("actions") or 1) > 1 or not by or _never_changed(failing):
        return None
    if not any(a.get("expect_ok") is False for a in attempts[-1:]):
        return None
    return Triage("expected_effect_missing", [
        (f"{_where(failing)} ran once and changed the screen at {_changed_at(failing, attempts)}, but after settle and refresh "
         f"({by}) the fresh screen still shows: {attempts[-1].get('evidence')}; nothing was repeated and the "
         f"screen was not stale: the action did something other than {failing.get('expect')} "
         "(a wrong button or target?)")], failing.get("index"))


def _changed_at(failing: dict[str, Any], attempts: list[dict[str, Any]]) -> str:
    """Where the step's screen changed: its final regions, else the regions of the latest look whose
    verdict was "changed", naming that look when a later one no longer saw the change."""
    regions = [r for r in failing.get("regions") or [] if isinstance(r, dict) and r.get("box")]
    if regions:
        return ", ".join(_bounds(r["box"]) + (f" ({r['container']})" if r.get("container") else "")
                         for r in regions[:3])
    changed = [i for i, a in enumerate(attempts) if a.get("verdict") == "changed"]
    if not changed:
        return "a place the record does not name (no look kept its regions)"
    look, later = attempts[changed[-1]], attempts[changed[-1] + 1:]
    boxes = [b for b in look.get("regions") or [] if isinstance(b, (list, tuple)) and len(b) == 4]
    where = ", ".join(_bounds(b) for b in boxes[:3]) or "a place the record does not name"
    if later:
        return (f"{where} (seen at the {look.get('stage')} look; the {later[-1].get('stage')} look after it "
                f"saw {later[-1].get('verdict') or 'no verdict'} against the before-screen)")
    return f"{where} (the {look.get('stage')} look)"


def _since_progress(f: _Facts) -> tuple[list[str], int, list[dict[str, Any]]]:
    """Milestones still to do, the step of the last milestone, and the steps after it."""
    tracker = f.state.get("tracker") or {}
    remaining = [r for r in [tracker.get("current"), *(tracker.get("remaining") or [])] if r]
    done = [int(a["step"]) for a in f.anchors if a.get("type") == "SUBGOAL" and a.get("step") is not None]
    last = max(done) if done else 0
    return remaining, last, [s for s in f.steps if int(s.get("index", 0)) > last]


def _app_drift(f: _Facts) -> Triage | None:
    remaining, last, tail = _since_progress(f)
    if not remaining or len(tail) < 2:
        return None
    planned = {str(a.get("app")) for a in f.anchors if a.get("type") == "SUBGOAL" and a.get("app")}
    planned |= {str(f.steps[0]["package_before"])} if f.steps[0].get("package_before") else set()
    tracker = f.state.get("tracker") or {}
    words = " ".join([str((f.state.get("summary") or {}).get("goal", "")), *map(str, tracker.get("completed") or []),
                      *remaining]).lower()
    apps = {str(s.get("package_after") or s.get("package_before") or "") for s in tail[-2:]}
    if not planned or len(apps) != 1 or "" in apps or apps & planned:
        return None
    app = apps.pop()
    if app.rsplit(".", 1)[-1].lower() in words:
        return None  # the goal or plan names this app: going there is part of the task
    switch = next((a for a in f.anchors if a.get("type") == "STATE_CHANGE" and int(a.get("step") or -1) > last
                   and (a.get("app") == app or app in str(a.get("title")))), None)
    if switch is None:
        return None
    return Triage("goal_drift", [
        (f"after anchor {switch.get('id')} ({switch.get('title')}) the test stayed in {app}, which is not the "
         f"start app, where no milestone happened and which the goal/plan never names; the failure came there "
         f"({_where(tail[-1])}); still to do: {remaining[0]!r}")], tail[-1].get("index"), switch.get("id"))


def _drift(f: _Facts) -> Triage | None:
    remaining, _, tail = _since_progress(f)
    moving = [s for s in tail if s.get("verdict") == "changed"]
    if remaining and len(moving) >= _DRIFT_STEPS:
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
                      [(f"{_where(failing)} changed the screen but the expectation was not met: {evidence}")],
                      failing.get("index"))
    return None


_RULES: Sequence[Callable[[_Facts], Triage | None]] = (
    _environment,
    _hallucination,
    _app_drift,
    _locator_miss,
    _by_pattern("hidden_operation", _HIDDEN, "hidden_operation"),
    _grounding,
    _reversed,
    _stale,
    _effect_missing,
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
