"""Replaying an action cache without the model (issue 21): `--guistate-llm=cache` (strict) and
`cache-fallback`.

Each cached step goes through `session.perform`: the screen must be the one the step acted on
(label similarity at least `CacheThresholds.screen`), a tap's target is found again by its fingerprint
(score at least `target`, no rival element within `margin`, with the cached target's identity
(`identity.py`), not under a dialog the cached screen did not have), then the action runs and the
cached effect must show (the cached expectation, else a next screen like the cached one, and the
milestone the step completed when recorded), after the step loop's settle and refresh. That is a
**hit**. The run's end is judged the same way (`settled_milestones`).
Anything else is a **miss** with its reason and the nearest candidate. A non-idempotent step runs
only when the previous step's effect was verified, and `perform(idempotent=False)` never repeats it.
A cached AI check is replayed by re-verifying its evidence on a screen like the one judged.

With the cross-run memory on, a target the fingerprint no longer trusts (gone or ambiguous) is asked
of the memory by its remembered look (`memory_heal.py`); a healed target is tapped inside the same
`perform` with the same cached effect, so the step is a hit only when that effect shows (else a
false heal prevented, a miss), and only when the cache's own words pick the healed element among its
lookalikes (`identity.pick_lookalike`). No heal is tried under a dialog the cached screen did not have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.checks import Check, CheckResult, CheckSpec, all_of
from pytest_guistate.core.detect import refreshable_list
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.llm.actor import expect_check, swipe_points
from pytest_guistate.llm.actuator import Actuator
from pytest_guistate.llm.cache.cachefile import (
    CachedCheck,
    CachedRun,
    CachedStep,
    TargetMatch,
    best_target,
    claim_words,
    named_alone,
    screen_labels,
    screen_rows,
    screen_similarity,
    state_after,
)
from pytest_guistate.llm.cache.identity import (
    NEIGHBOUR_SHARE,
    carries,
    identity,
    identity_words,
    lookalikes,
    pick_lookalike,
    row_words,
    surroundings,
    target_hint,
)
from pytest_guistate.llm.cache.memory_heal import ElementMemory, HealedLook, memory_key
from pytest_guistate.llm.cache.record import CacheRecorder, screen_of, target_of
from pytest_guistate.llm.cache.secrets import fill
from pytest_guistate.report.redact import REDACTED

if TYPE_CHECKING:
    from pytest_guistate.core.task_session import TaskSession

__all__ = ["CacheMiss", "CacheThresholds", "Miss", "ReplayOutcome", "StepStatus", "held_milestones", "replay_check",
           "replay_run", "settled_milestones", "unmet_milestones"]


class CacheMiss(AssertionError):
    """The strict mode's failure: the step, the reason, the nearest candidate, the cached screen."""

    def __init__(self, message: str, miss: Miss) -> None:
        super().__init__(message)
        self.miss = miss


@dataclass(frozen=True)
class CacheThresholds:
    """`screen`: least label similarity with the cached screen (a new list row or a renamed label
    keeps it ~0.7-0.9; another screen is < 0.3). `target`: least fingerprint score (the same element
    restyled with its id kept ~0.8; a neighbour row's button ~0.6-0.8, hence `margin`)."""

    screen: float = 0.4
    next_screen: float = 0.4
    target: float = 0.72
    margin: float = 0.05


@dataclass
class StepStatus:
    """What happened to one step, for the journal, the viewer, Allure and the summary."""

    n: int
    name: str
    status: str  # hit | miss | live
    reason: str = ""
    step: int | None = None  # the StepRecord index, when an action ran

    def line(self) -> str:
        return f"{self.status}" + (f" ({self.reason})" if self.reason else "") + f": {self.name}"


@dataclass
class Miss:
    step: CachedStep | None
    reason: str
    nearest: str = ""
    screen_title: str = ""
    run_index: int = 0
    memory: str = ""  # why the cross-run memory could not heal the target, when it was asked
    twins: int = 0  # an ambiguous target: how many elements on screen carry its identity and kind

    def target_hint(self) -> str:
        """The recorded target in words, for the live actor, when the miss is an ambiguity ('' else)."""
        fp = self.step.fingerprint if self.step is not None else {}
        return target_hint(fp, self.twins) if self.twins > 1 and fp else ""

    def message(self, path: object) -> str:
        what = f"step {self.step.n} '{self.step.summary()}'" if self.step is not None else "the run's end"
        near = f" (closest {self.nearest})" if self.nearest else ""
        healing = f"; memory: {self.memory}" if self.memory else ""
        where = f"; cached on '{self.screen_title}'" if self.screen_title else ""
        return f"cache miss at {what}: {self.reason}{near}{healing}{where} [{path}]"


@dataclass
class ReplayOutcome:
    statuses: list[StepStatus] = field(default_factory=list)
    miss: Miss | None = None
    remaining: list[CachedStep] = field(default_factory=list)  # not replayed (from the missed step on)
    non_idempotent_done: list[int] = field(default_factory=list)  # cached step numbers already acted on
    acted: tuple[Any, ...] | None = None  # the missed step when its action ran (for a goal reached anyway)

    @property
    def hit(self) -> bool:
        return self.miss is None


def _next_screen_check(cached: dict[str, Any], threshold: float) -> Callable[[Observation], CheckResult]:
    """A check: the screen after the action is like the one the cached step led to."""
    title = str(cached.get("title") or "the cached next screen")

    def check(observation: Observation) -> CheckResult:
        similarity = screen_similarity(cached, screen_of(observation))
        return CheckResult(similarity >= threshold, f"screen like {title!r} (similarity {similarity:.2f})")

    check.__name__ = f"screen like {title!r}"
    return check


def _foreign_dialog(tree: UITree | None, cached_screen: dict[str, Any]) -> tuple[UINode | None, str]:
    """The dialog on screen that the cached screen did not show, and its label; (None, '') if none."""
    modal = tree.modal() if tree is not None else None
    if modal is None or modal.bounds is None:
        return None, ""
    title = next((n.text for n in modal.walk() if n.text), "a dialog")
    return (None, "") if title in (cached_screen.get("labels") or []) else (modal, title)


def _under_dialog(tree: UITree | None, node: UINode | None, cached_screen: dict[str, Any]) -> str:
    """The label of a dialog covering `node` that the cached screen did not show, else ''."""
    modal, title = _foreign_dialog(tree, cached_screen)
    if modal is None or modal.bounds is None or node is None or node.bounds is None or modal.bounds.contains(node.bounds):
        return ""
    return title


def _wanted(fp: dict[str, Any]) -> str:
    """How a miss names the cached target: its identity, else whatever it had."""
    want = identity(fp)
    return want.label if want.words else str(fp.get("text") or fp.get("desc") or fp.get("rid") or fp.get("kind", "element"))


def _target(tree: UITree, step: CachedStep, thresholds: CacheThresholds) -> tuple[TargetMatch, str]:
    """The element to act on, or why it cannot be trusted. Only an element with the cached target's
    identity (`identity.py`) is a candidate: the same id, kind and place with other words (the
    switch of the row that replaced "Dark mode") is a miss naming both."""
    fp = step.fingerprint
    want = identity(fp)  # a switch is named by its label, not by its "OFF"
    wanted = _wanted(fp)
    match = best_target(tree, fp, accept=lambda row: carries(want, identity(row)))
    if match.node is None or match.score < thresholds.target:
        located, refused = _named_alone(tree, step)
        if located is not None:
            match = located
        else:
            return _not_found(tree, step, thresholds, refused)
    if match.runner_up >= match.score - thresholds.margin:
        return match, f"ambiguous: two elements like {wanted!r} ({match.score:.2f} and {match.runner_up:.2f})"
    if match.told_apart_by_place_only():
        return match, (f"ambiguous: two elements like {wanted!r} alike in all but their place ({match.score:.2f} and "
                       f"{match.runner_up:.2f}); a place is no proof of which one is meant")
    dialog = _under_dialog(tree, match.node, step.screen)
    if dialog:
        return match, f"{wanted!r} is under a dialog the cached screen did not have ({dialog!r})"
    return match, ""


def _not_found(tree: UITree, step: CachedStep, thresholds: CacheThresholds, refused: str) -> tuple[TargetMatch, str]:
    """The miss when no element with the cached identity scores high enough: the element in the target's
    place has another identity (the switch of the row that replaced "Dark mode"), or nothing is like it.
    `refused`: why the recorded locator did not re-find it either ('' when it had none)."""
    fp = step.fingerprint
    want = identity(fp)
    wanted = _wanted(fp)
    located = f"; {refused}" if refused else ""
    anyone = best_target(tree, fp)
    if anyone.node is not None and anyone.score >= thresholds.target:
        there = identity(anyone.row)
        named = repr(there.label) if there.words else "not named (nothing in it or its row says what it is)"
        if anyone.row.get("disabled"):  # a disabled control's row is shown without its neighbours
            named += ", and disabled"
        return anyone, (f"cached {want.label!r} {want.noun()}; on screen the {there.noun()} in its place is "
                        f"{named} (identity: its {want.how}){located}")
    return anyone, f"no element like {wanted!r} on screen{located}"


def _named_alone(tree: UITree, step: CachedStep) -> tuple[TargetMatch | None, str]:
    """The target re-found by the locator that named it alone when recorded (`cachefile.named_alone`, the
    one `guistate export-test` writes), when its fingerprint no longer scores high enough: each row's
    Delete became an icon button, so its text, id and kind changed, but `desc="Delete post by Bob"` still
    names one element. Accepted only on the evidence the exported test has and more: the locator names
    exactly one element of this screen's tree (two are no proof: Bob posted twice), that element is one
    the actor is shown, it carries the cached identity ("Delete"), which must say something, and its row
    and the labels around it show at least half of the words of the cached row and surroundings (Bob's
    name and text), so a lone "Delete" of another post is not it. Returns the match, or (None, why not): ''
    when no locator named it alone, or that locator names nothing now."""
    fp = step.fingerprint
    located = named_alone(step.target or {})
    if located is None:
        return None, ""
    kind, value = located
    said = f"its recorded {kind}={value!r}"
    nodes = tree.by_locator(kind, value)
    if not nodes:
        return None, ""  # gone with the rest: the miss has nothing to add
    if len(nodes) > 1:
        return None, f"{said} names {len(nodes)} elements on this screen"
    node = nodes[0]
    rows = screen_rows(tree)
    row = next((r for r in rows if r["id"] == node.index_path), None)
    want = identity(fp)
    if row is None or node.bounds is None:
        return None, f"{said} names an element the screen does not show"
    if not want.words or not carries(want, identity(row)):
        return None, f"{said} names {identity(row).label!r}, which does not say it is {want.label!r}"
    near = fp.get("near")
    cues = identity_words(" ".join([str(fp.get("in") or ""), *map(str, near if isinstance(near, list) else [])]))
    cues -= want.words
    shown = cues & (row_words(row) | identity_words(" ".join(surroundings(rows, row))))
    if len(shown) < NEIGHBOUR_SHARE * len(cues):
        return None, f"{said} names an element whose row is not the cached one ({len(shown)} of {len(cues)} words)"
    found = best_target(tree, fp, accept=lambda r: r["id"] == row["id"])
    label = str(row.get("text") or row.get("desc") or row.get("rid") or node.kind)
    return TargetMatch(node, found.score, 0.0, label, found.parts, row,
                       via=f"found by {said}, which names it alone as when recorded (fingerprint {found.score:.2f})"), ""


def _unready(node: UINode | None, step: CachedStep) -> str:
    """Why the recorded element cannot take the step's action as it did when recorded, else '': it is
    disabled now, or a switch or check box is already in another state than it was (a tap would undo
    what the step did then: a switch already on is turned off)."""
    fp = step.fingerprint
    if node is None or step.tool not in ("tap", "type_text"):
        return ""
    want = identity(fp)
    if not node.enabled:
        return f"the {want.label!r} {want.noun()} is disabled on this screen"
    cached = fp.get("checked")
    if isinstance(cached, bool) and node.checkable and bool(node.checked) != cached:
        after = step.effect.get("checked")
        undo = f", and the step turned it {_on(after)}" if isinstance(after, bool) and after != cached else ""
        return (f"the {want.label!r} {want.noun()} is already {_on(node.checked)} (it was {_on(cached)} when the "
                f"step was recorded{undo}): replaying the tap would not do what the step did")
    return ""


def _on(checked: object) -> str:
    return "on" if checked else "off"


def _state_check(step: CachedStep, node: UINode | None) -> Callable[[Observation], CheckResult] | None:
    """A check: the switch or check box the step acted on shows the state the recorded step left it
    in (None when the cache has no such state). The screen alone cannot say it: a tap on a disabled
    switch, or one that now asks to confirm first, leaves a screen like the cached next screen."""
    fp = step.fingerprint
    want = step.effect.get("checked")
    if not isinstance(want, bool) or node is None:
        return None
    label = identity(fp)

    def check(observation: Observation) -> CheckResult:
        now = state_after(observation.tree, node, fp)
        shown = "not on screen" if now is None else _on(now)
        return CheckResult(now is want, f"the {label.label!r} {label.noun()} is {_on(want)} (now {shown})")

    check.__name__ = f"{label.label!r} {_on(want)}"
    return check


def _action(step: CachedStep, actuator: Actuator, session: TaskSession, tree: UITree | None, match: TargetMatch | None,
            device: tuple[int, int], heal: _Heal | None = None,
            args: dict[str, Any] | None = None) -> Callable[[], object]:
    """The callable `perform` runs for a cached step (the same verbs as the live actor); with `heal`,
    a tap or typing goes to the healed point, and the memory is told the step acts on its heal.
    `args`: the step's arguments with its secret placeholders filled (`cache.secrets.fill`)."""
    tool, args = step.tool, step.args if args is None else args
    if tool == "tap":
        if heal is not None:
            return heal.acting(lambda: actuator.tap_point(*heal.point))
        assert match is not None and match.node is not None and match.node.bounds is not None
        x, y = match.node.bounds.center
        return lambda: actuator.tap_point(x, y)
    if tool == "type_text":
        node = match.node if match is not None and heal is None else None
        text = str(args.get("text", ""))

        def type_into() -> None:
            if heal is not None:
                actuator.tap_point(*heal.point)
            elif node is not None and node.bounds is not None and not node.focused:
                actuator.tap_point(*node.bounds.center)
            actuator.type_focused(text)
        return heal.acting(type_into) if heal is not None else type_into
    if tool == "swipe":
        start, end = swipe_points(tree, None, str(args.get("direction", "up")), device)
        return lambda: actuator.swipe(*start, *end)
    if tool == "back":
        return actuator.back
    if tool == "home":
        return actuator.home
    if tool == "wait":
        seconds = min(float(args.get("seconds", 1)), 5.0)
        return lambda: session.clock.sleep(seconds)
    return actuator.pull_to_refresh  # refresh


def _shown(tree: UITree | None, value: object) -> bool:
    """A remembered value (a price) is on the screen: some label contains it."""
    text = str(value).strip()
    return bool(text) and tree is not None and any(text in label for label in screen_labels(tree))


@dataclass
class _Look:
    """The current screen judged against a cached step's conditions (`problem` empty: all hold)."""

    observation: Observation
    match: TargetMatch | None
    problem: str = ""
    nearest: str = ""
    healable: bool = False  # the problem is the target alone (gone or ambiguous), no foreign dialog on screen
    twins: int = 0  # the problem is an ambiguity: the elements on screen that carry the target's identity

    @classmethod
    def take(cls, session: TaskSession, step: CachedStep, thresholds: CacheThresholds, *, settled: bool) -> _Look:
        """Judge the current screen; `settled`: wait first until the conditions hold (a price that
        loads late) or the screen has settled, whichever comes first."""
        if step.tool == "type_text" and REDACTED in str(step.args.get("text", "")):
            return cls(session.observe(), None, "the text to type was a secret and is stored redacted (a cache "
                                                "written before secrets became `[secret N]` placeholders): "
                                                "re-record the cache")
        if not settled:
            return cls.judge(session.observe(), step, thresholds)
        latest: list[_Look] = []  # each polled screen is judged once: the settled one was the last

        def holds(seen: Observation) -> bool:
            latest[:] = [cls.judge(seen, step, thresholds)]
            return not latest[0].problem

        observation = session.observe(settled=True, until=holds)
        if latest and latest[0].observation is observation:
            return latest[0]
        return cls.judge(observation, step, thresholds)

    @classmethod
    def judge(cls, observation: Observation, step: CachedStep, thresholds: CacheThresholds) -> _Look:
        current = screen_of(observation)
        tree = observation.tree
        similarity = screen_similarity(step.screen, current)
        if similarity < thresholds.screen:
            return cls(observation, None, f"the screen is not the one the step acted on (similarity {similarity:.2f} "
                                          f"< {thresholds.screen:.2f}; now on '{current['title']}')")
        remembered = step.args["remember"] if isinstance(step.args.get("remember"), dict) else {}
        # Only a value read off the cached screen (a price) must be read off this one too; a note the model kept
        # for itself (a policy's "goal 1: delete Erin=confirmed") was never on a screen and is replayed as it is.
        cached_labels = step.screen.get("labels", []) if isinstance(step.screen, dict) else []
        observed = {key: value for key, value in remembered.items()
                    if str(value).strip() and any(str(value).strip() in str(label) for label in cached_labels)}
        unseen = [f"{key}={value}" for key, value in observed.items() if not _shown(tree, value)]
        if unseen:
            return cls(observation, None, f"the value the step remembered ({', '.join(unseen)}) is not on this screen")
        if step.target is None or tree is None:
            return cls(observation, None)
        match, problem = _target(tree, step, thresholds)
        if not problem:  # the element is the recorded one; it must also take the action as it did then
            unready = _unready(match.node, step)
            if unready:  # no heal: the memory would find the same element
                return cls(observation, match, unready, match.describe())
        healable = bool(problem) and _foreign_dialog(tree, step.screen)[0] is None
        twins = len(lookalikes(screen_rows(tree), step.fingerprint)) if problem.startswith("ambiguous") else 0
        return cls(observation, match, problem, match.describe() if problem and match.node is not None else "",
                   healable, twins)


@dataclass
class _Heal:
    """A target the memory found by its remembered look, for one replayed step."""

    memory: ElementMemory
    session: TaskSession
    result: HealedLook  # memory.heal.HealResult
    before: Observation  # the observation healed on
    wanted: str
    edit: dict[str, Any] | None = None  # the cache file's edit this heal proposes (`ElementMemory.acting_on`)

    @property
    def point(self) -> tuple[int, int]:
        assert self.result.point is not None
        return self.result.point

    def status(self) -> str:
        """The hit's reason, as the journal, the terminal, Allure and the summary show it."""
        how = "by its remembered look" if getattr(self.result, "cue", "looks") == "looks" else "as the only text field"
        return f"healed: {self.wanted!r} found {how} at {self.point}, score {float(self.result.score):.2f}"

    def acting(self, act: Callable[[], object]) -> Callable[[], None]:
        """`act`, run as the current step's action on this heal (the memory settles it when the step ends)."""
        def run() -> None:
            self.memory.acting_on(self.result, self.before, edit=self.edit)
            record = self.session.current_step
            if record is not None:
                record.cache = f"hit ({self.status()})"
            act()
        return run


def _heal(memory: ElementMemory, session: TaskSession, look: _Look, step: CachedStep, has_effect: bool,
          edit: dict[str, Any] | None = None) -> _Heal | str:
    """Ask the memory for the target on the judged screen: the heal, or why there is none. `edit`: where the
    step is in the cache file ({"file", "run", "step"}); the heal then proposes the step's new target there,
    as the recording would have written it on this screen (`record.target_of`): applied, the next replay
    finds the element by its fingerprint, with no memory and no heal."""
    target = step.target or {}
    key = memory_key(step.fingerprint, target.get("locators") or [])
    if key is None:
        return "the cached target has no locator to remember it by"
    if not has_effect:
        return "not healed: the cached step has no effect to verify a heal by"
    result = memory.heal_on(look.observation, *key.locator, key.function, instance=key.instance)
    if not result.ok or result.point is None:
        return str(result.reason)
    tree = look.observation.tree
    if tree is not None:  # the look alone cannot tell a grid's tiles apart: the cache's own words must
        nodes = {n.index_path: n for n in tree.nodes()}
        pick = pick_lookalike(screen_rows(tree), nodes, step.fingerprint, getattr(result, "node", None))
        if not pick.ok:
            return f"not healed: {pick.reason}"
    node = getattr(result, "node", None)
    proposal = None
    if edit is not None and tree is not None and isinstance(node, UINode) and step.target is not None:
        new = target_of(tree, node, str(step.target.get("context") or ""))
        proposal = {**edit, "name": step.summary(), "n": step.n, "old": step.target, "new": new}
    return _Heal(memory, session, result, look.observation, key.wanted, proposal)


def _missed(outcome: ReplayOutcome, cached: CachedRun, position: int, run_index: int, reason: str,
            nearest: str = "", memory: str = "", twins: int = 0) -> ReplayOutcome:
    """End the replay at `cached.steps[position]` with a named miss (`memory`: why no heal; `twins`: the
    lookalikes on screen when the target is ambiguous)."""
    step = cached.steps[position]
    outcome.miss = Miss(step, reason, nearest, str(step.screen.get("title") or ""), run_index, memory, twins)
    outcome.remaining = cached.steps[position:]
    status = reason + (f"; memory: {memory}" if memory else "")
    outcome.statuses.append(StepStatus(step.n, step.summary(), "miss", status))
    return outcome


def replay_run(session: TaskSession, actuator: Actuator, cached: CachedRun, recorder: CacheRecorder, *,
               thresholds: CacheThresholds = CacheThresholds(), run_index: int = 0,
               memory: ElementMemory | None = None, secrets: dict[str, str] | None = None,
               cache_file: str = "") -> ReplayOutcome:
    """Replay `cached` until its end or the first miss (which is returned, not raised); `memory`:
    the test's cross-run memory, asked for a target the fingerprint no longer trusts; `secrets`: what
    each `[secret N]` placeholder of a typed text stands for in this run (never stored); `cache_file`: the
    cache's path, where a verified heal proposes the healed step's new target (`guistate heal-diff`)."""
    outcome = ReplayOutcome()
    previous_verified = True  # the run's start is a known state
    for position, step in enumerate(cached.steps):
        miss = partial(_missed, outcome, cached, position, run_index)
        if not step.idempotent and not previous_verified:
            return miss("the previous step's effect was not verified, so this non-idempotent step is not replayed")
        # The previous step's verification left a fresh screen; only when the step's conditions do not
        # hold on it is the screen looked at again once it has settled (a spinner, a transition).
        look = _Look.take(session, step, thresholds, settled=False)
        if look.problem:
            look = _Look.take(session, step, thresholds, settled=True)
        expect: CheckSpec | None = expect_check(step.effect.get("expect"))
        next_screen = step.effect.get("next_screen") or {}
        if expect is None and next_screen.get("labels"):
            expect = _next_screen_check(next_screen, thresholds.next_screen)
        reached = _milestone_check(session, step.milestone)
        if reached is not None:  # the milestone the step completed gets the live step's settle and refresh
            expect = all_of(expect, reached) if expect is not None else reached
        heal: _Heal | None = None
        if look.problem and look.healable and memory is not None:
            where = {"file": cache_file, "run": run_index, "step": position} if cache_file else None
            found = _heal(memory, session, look, step, expect is not None, where)
            if isinstance(found, str):
                return miss(look.problem, look.nearest, found, look.twins)
            unready = _unready(getattr(found.result, "node", None), step)
            if unready:
                return miss(look.problem, look.nearest, f"not healed: {unready}")
            heal = found
        elif look.problem:
            return miss(look.problem, look.nearest, twins=look.twins)
        observation, tree, match = look.observation, look.observation.tree, look.match
        state = _state_check(step, _acted_node(match, heal))
        if state is not None:  # the switch the step acted on must be left as the recording left it
            expect = all_of(expect, state) if expect is not None else state
        remembered = step.args["remember"] if isinstance(step.args.get("remember"), dict) else {}
        size = (tree.width, tree.height) if tree is not None and tree.width and tree.height else observation.frame.size
        completed_before = list(session.state.completed)
        name = f"{step.summary().split(' (in ')[0]} [cache]"
        for key, value in remembered.items():  # read off this screen, as the model did when it was cached
            session.remember(str(key), value, source=f"action cache step {step.n}")
        args = fill(step.args, secrets or {})
        try:
            with session.judging_at_once():  # the record is cached below: its verdict, regions and crops
                record = session.perform(name, _action(step, actuator, session, tree, match, size, heal, args),
                                         expect=expect, idempotent=step.idempotent)
        except StepFailed as exc:
            if not step.idempotent:
                outcome.non_idempotent_done.append(step.n)
            why = f"the cached effect did not show ({str(exc).splitlines()[0][:160]})"
            if heal is not None:
                why = f"the healed target {heal.wanted!r} at {heal.point} did not give the cached effect " \
                      f"(false heal prevented): {why}"
            result = miss(why)
            result.statuses[-1].step = exc.record.index if exc.record is not None else None
            result.acted = (step, exc.record, observation, _acted_node(match, heal), completed_before)
            return result
        if not step.idempotent:
            outcome.non_idempotent_done.append(step.n)
        previous_verified = bool(record.confirmed) or expect is None and step.tool in ("wait", "refresh", "swipe")
        if step.tool == "wait" and expect is None:
            previous_verified = False  # waiting proves nothing about the screen
        recorder.step(step.tool, args, step.name, record, observation, _acted_node(match, heal),
                      step.idempotent, completed_before, learn=heal is None)
        outcome.statuses.append(StepStatus(step.n, step.summary(), "hit", heal.status() if heal else match.via if match else "",
                                           step=record.index))
    return outcome


def _acted_node(match: TargetMatch | None, heal: _Heal | None) -> UINode | None:
    """The element the step acted on: the healed one, else the fingerprint's match."""
    if heal is not None:
        return getattr(heal.result, "node", None)
    return match.node if match is not None else None


def _milestone_check(session: TaskSession, name: str | None) -> Check | None:
    """The check of the declared milestone a cached step completed, if it is still to be reached."""
    state = session.state
    milestone = state.milestone(name) if name else None
    if milestone is None or milestone.check is None or name not in state.remaining:
        return None
    return milestone.check


def held_milestones(session: TaskSession) -> list[str]:
    """Milestones still to reach whose checks already hold on the current screen, before the run
    acts: a `gone("Bob")` that holds because Bob's post is below the first screen. Such a
    milestone is no proof that a later action reached it."""
    observation = session.observe()
    return [m.name for m in session.state.plan if m.name in session.state.remaining and m.check is not None
            and m.check(observation).ok]


def settled_milestones(session: TaskSession, actuator: Actuator) -> list[str]:
    """Unmet milestones at a replayed run's end, judged like a live step's effect: fresh, then
    settled, then (a list on screen) after a pull-to-refresh run as a step of its own, so a late
    redraw is not a miss and the fallback never pays the model for what a refresh fixes."""
    unmet = unmet_milestones(session)
    if not unmet or refreshable_list(session.observe().tree) is None:
        return unmet
    checks = [m.check for m in session.state.plan if m.name in unmet and m.check is not None]
    try:
        session.perform("refresh: milestones at the run's end [cache]", actuator.pull_to_refresh,
                        expect=all_of(*checks), idempotent=True, max_retries=0)
    except StepFailed:
        pass  # still unmet after the refresh: the caller names the miss with the milestones
    return _unmet(session, session.observe())


def unmet_milestones(session: TaskSession) -> list[str]:
    """Declared milestones whose checks do not hold on the current screen (the actor's `done` rule).

    Judged first on the screen the last replayed step just verified; only when something is unmet is
    the screen looked at again once it has settled (an animation, a late redraw): a settle costs a poll
    interval and a screenshot, and a hit run must cost about what the same test scripted does."""
    unmet = _unmet(session, session.observe())
    return _unmet(session, session.observe(settled=True)) if unmet else unmet


def _unmet(session: TaskSession, observation: Observation) -> list[str]:
    state = session.state
    return [m.name for m in state.plan if m.name in state.remaining and m.check is not None
            and not m.check(observation).ok]


def replay_check(session: TaskSession, cached: CachedCheck | None, claim: str,
                 thresholds: CacheThresholds = CacheThresholds()) -> tuple[bool, str]:
    """Re-verify a cached AI check on the current screen: (holds, reason when not). As for the
    milestones, the screen is settled and judged again only when the fresh one does not hold."""
    if cached is None:
        return False, f"no cached AI check for the claim {claim!r}"
    holds, reason = _judge_check(session.observe(), cached, claim, thresholds)
    if holds:
        return holds, reason
    return _judge_check(session.observe(settled=True), cached, claim, thresholds)


def _judge_check(observation: Observation, cached: CachedCheck, claim: str, thresholds: CacheThresholds) -> tuple[bool, str]:
    similarity = screen_similarity(cached.screen, screen_of(observation))
    if similarity < thresholds.screen:
        return False, (f"the screen is not the one the check judged (similarity {similarity:.2f}; "
                       f"cached on '{cached.screen.get('title', '')}')")
    tree = observation.tree
    now = claim_words(claim, tree)
    changed = [w for w, shown in cached.words.items() if now.get(w) != shown]
    if changed:
        return False, (f"the claim's words {changed} are {'shown' if now.get(changed[0]) else 'not shown'} now, "
                       "unlike on the screen the check judged")
    for item in cached.evidence:
        fp = item.get("fingerprint")
        if not isinstance(fp, dict) or tree is None:
            return False, "the cached evidence names no element to verify"
        match = best_target(tree, fp)
        if match.node is None or match.score < thresholds.target:
            return False, f"cited element {fp.get('text') or fp.get('rid') or fp.get('kind')!r} is not on screen"
        quote = str(item.get("quote") or "")
        shown = (*match.node.shown_texts, match.node.content_desc)
        if quote and not any(quote in text for text in shown):
            return False, f"cited element shows {match.node.label!r}, not the quoted {quote!r}"
    return True, ""
