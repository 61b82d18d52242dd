"""Checks: small predicates on an `Observation` that say whether an expected effect is on screen.

A check is what turns "the tap did something" into "the tap did *the right thing*": the step
loop evaluates `expect=` and milestone checks with them. Anything a user passes is normalised by
`as_check`: a str means "this text or content-desc is visible", a callable `(Observation) ->
bool | CheckResult` is wrapped, and the factories below build the common ones with evidence
(what was found, where) so a failure message can say what the screen showed instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_guistate.core.finding import FoundNode, NodeQuery
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.core.uitree_platform import IOS

__all__ = [
    "Check",
    "CheckResult",
    "CheckSpec",
    "all_of",
    "as_check",
    "frame_check",
    "gone",
    "switched",
    "visible",
]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a check: `evidence` is one readable line; `box` locates it when known."""

    ok: bool
    evidence: str
    box: Box | None = None

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "evidence": self.evidence, "box": self.box.as_list() if self.box else None}


@dataclass(frozen=True)
class Check:
    """A named predicate. `description` is what a failure message calls the expectation."""

    description: str
    fn: Callable[[Observation], CheckResult | bool]
    query: NodeQuery | None = None  # a plain locator check (`visible`/`gone`): a find may answer it
    parts: tuple[Check, ...] = ()  # the checks of an `all_of`

    @property
    def needs_tree(self) -> bool:
        """False for locator checks (and `all_of` them): a find may answer them without a page
        source, so a light step need not read its trees for them (issue 24)."""
        if self.query is not None:
            return False
        return not self.parts or any(part.needs_tree for part in self.parts)

    def __call__(self, observation: Observation) -> CheckResult:
        result = self.fn(observation)
        if isinstance(result, CheckResult):
            return result
        if isinstance(result, bool):
            return CheckResult(result, f"{self.description}: {'true' if result else 'false'}")
        raise TypeError(
            f"check {self.description!r} returned {type(result).__name__}; a check must return bool or CheckResult"
        )


# str | Check | (Observation) -> bool | CheckResult, or a list/tuple of those (all must pass)
CheckSpec = str | Check | Callable[[Observation], CheckResult | bool] | list[Any] | tuple[Any, ...]


def _is_visible(node: UINode, screen: Box | None, keys: Box | None, modal: set[int] | None) -> bool:
    """What a person can see: displayed, on screen, not wholly under the soft keyboard, and on iOS
    the open alert / action sheet or what it holds: it dims the screen and takes the touches (WebDriverAgent
    still lists the screen beneath it; UiAutomator2's dump holds only the dialog's window; an iPad
    popover leaves the screen beneath in view). A disabled control is still visible."""
    bounds = node.bounds
    if not node.displayed or bounds is None or bounds.is_empty:
        return False
    if screen is not None and not bounds.intersects(screen):
        return False
    if keys is not None and not node.keyboard and keys.contains(bounds):
        return False
    return modal is None or id(node) in modal


def _covers(tree: UITree) -> tuple[Box | None, set[int] | None]:
    """The soft keyboard's box and (iOS) the open alert / sheet with all it holds (ids of its
    nodes): what `_is_visible` leaves out is under the one or beneath the other."""
    modal = tree.modal() if tree.platform == IOS else None
    if modal is None or modal.kind not in _DIMMING_MODALS:
        return tree.keyboard_box, None  # an iPad popover leaves the screen beneath it in view
    return tree.keyboard_box, {id(node) for node in modal.walk()}


_DIMMING_MODALS = ("Alert", "Sheet")


def _describe_target(text: str | None, id: str | None, desc: str | None, exact: bool) -> str:
    parts = []
    if text is not None:
        parts.append(f"text {text!r}" + ("" if exact else " (substring)"))
    if id is not None:
        parts.append(f"id {id!r}")
    if desc is not None:
        parts.append(f"content-desc {desc!r}" + ("" if exact else " (substring)"))
    return " and ".join(parts)


def _matcher(text: str | None, id: str | None, desc: str | None, exact: bool) -> Callable[[UINode], bool]:
    def same(value: str, wanted: str) -> bool:
        return value == wanted if exact else wanted in value

    def match(node: UINode) -> bool:
        if text is not None and not (any(same(shown, text) for shown in node.shown_texts)
                                     or (desc is None and same(node.content_desc, text))):
            return False
        if desc is not None and not any(same(described, desc) for described in node.descriptions if described):
            return False
        return id is None or node.has_id(id)

    return match


def _find(observation: Observation, text: str | None, id: str | None, desc: str | None, exact: bool) -> list[UINode]:
    tree = observation.tree
    if tree is None:
        return []
    screen = tree.screen_box
    keys, modal = _covers(tree)
    match = _matcher(text, id, desc, exact)
    return [node for node in tree.nodes() if match(node) and _is_visible(node, screen, keys, modal)]


def _tree_check(
    verdict: str,
    text: str | None,
    id: str | None,
    desc: str | None,
    exact: bool,
    judge: Callable[[str, Sequence[UINode | FoundNode]], CheckResult],
) -> Check:
    """What `visible` and `gone` share: a named target, its visible nodes found, `judge` decides.
    The driver answers with a find when it can give the tree's verdict (`Observation.find`, issue
    24); otherwise, or once the tree is read anyway, the tree answers."""
    if text is None and id is None and desc is None:
        raise ValueError(f"{verdict}() needs at least one of text=, id=, desc=")
    target = _describe_target(text, id, desc, exact)
    query = NodeQuery(text, id, desc, exact)

    def fn(observation: Observation) -> CheckResult:
        answer = observation.find(query)
        if answer is not None:
            return judge(target, answer.found)
        if observation.tree is None:
            return CheckResult(False, f"{target} cannot be checked: no accessibility tree in this observation")
        return judge(target, _find(observation, text, id, desc, exact))

    return Check(f"{target} {verdict}", fn, query)


def visible(text: str | None = None, *, id: str | None = None, desc: str | None = None, exact: bool = False) -> Check:
    """Passes when a displayed node on screen matches: `text` (its text -- on iOS its label, or a
    field's value -- or content-desc / iOS name when `desc` is not given), `id` (full resource-id,
    its part after "/", or the iOS accessibility id `name`), `desc` (content-desc; on iOS the
    accessibility label or the name, as for `device.tap(desc=...)`). Substring unless `exact`.
    Visible: displayed, on screen, not under the soft keyboard, not behind an iOS alert."""

    def judge(target: str, found: Sequence[UINode | FoundNode]) -> CheckResult:
        if found:
            node = found[0]
            return CheckResult(True, f"{target} visible as {node.kind} {node.label!r}", node.bounds)
        return CheckResult(False, f"{target} not visible")

    return _tree_check("visible", text, id, desc, exact, judge)


def gone(text: str | None = None, *, id: str | None = None, desc: str | None = None, exact: bool = False) -> Check:
    """Passes when no displayed node matches (the negation of `visible`, with the node as evidence)."""

    def judge(target: str, found: Sequence[UINode | FoundNode]) -> CheckResult:
        if found:
            node = found[0]
            where = node.bounds.to_bounds() if node.bounds else "?"
            return CheckResult(False, f"{target} still visible at {where} ({node.label!r})", node.bounds)
        return CheckResult(True, f"{target} gone")

    return _tree_check("gone", text, id, desc, exact, judge)


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def switched(label: str, on: bool = True) -> Check:
    """Passes when the one switch, check box or radio button bound to `label` is on (`on=False`: off).

    Bound: the innermost element that holds both a text or description showing `label` (in any case,
    "Dark-mode" for "Dark mode") and exactly one checkable control. A screen where no such control, or
    two, are bound to the label fails naming that: the state of another switch proves nothing."""
    wanted = _words(label)
    if not wanted:
        raise ValueError("switched() needs the label the switch is bound to, e.g. switched('Dark mode')")

    def fn(observation: Observation) -> CheckResult:
        tree = observation.tree
        if tree is None:
            return CheckResult(False, f"no UI tree to find the {label!r} switch in")
        bound: dict[int, tuple[UINode, UINode]] = {}
        for node in tree.nodes():
            inside = [n for n in node.walk() if n is not node]
            controls = [n for n in inside if n.checkable]
            if len(controls) == 1 and any(wanted in _words(f"{n.text} {n.content_desc}") for n in inside):
                control = controls[0]
                if id(control) not in bound or node.depth > bound[id(control)][0].depth:
                    bound[id(control)] = (node, control)
        if len(bound) != 1:
            return CheckResult(False, f"{len(bound)} switches bound to {label!r} on screen (expected one)")
        control = next(iter(bound.values()))[1]
        state = "on" if control.checked else "off"
        return CheckResult(bool(control.checked) is on, f"the {label!r} switch is {state}", control.bounds)

    return Check(f"{label!r} switch {'on' if on else 'off'}", fn)


def frame_check(predicate: Callable[[Frame], bool], description: str) -> Check:
    """A check on pixels alone (e.g. a colour at a point), for what the UI tree does not expose."""
    if not description:
        raise ValueError("frame_check() needs a description: it is what a failure message shows")

    def fn(observation: Observation) -> CheckResult:
        ok = predicate(observation.frame)
        if not isinstance(ok, bool):
            raise TypeError(f"frame_check {description!r}: predicate returned {type(ok).__name__}, expected bool")
        return CheckResult(ok, f"{description}: {'yes' if ok else 'no'}")

    return Check(description, fn)


def all_of(*checks: CheckSpec) -> Check:
    """Passes when every check passes; the evidence names the first that failed."""
    parts = [as_check(c) for c in checks]
    if not parts:
        raise ValueError("all_of() needs at least one check")

    def fn(observation: Observation) -> CheckResult:
        results = [part(observation) for part in parts]
        for result in results:
            if not result.ok:
                return result
        return CheckResult(True, "; ".join(r.evidence for r in results), results[0].box)

    return Check(" and ".join(p.description for p in parts), fn, parts=tuple(parts))


def as_check(spec: CheckSpec) -> Check:
    """Normalise what users write (str, callable, list of those, Check) to a `Check`."""
    if isinstance(spec, Check):
        return spec
    if isinstance(spec, str):
        if not spec:
            raise ValueError("an empty string is not a check: name the text that must be visible")
        return visible(spec)
    if isinstance(spec, (list, tuple)):
        return all_of(*spec)
    if callable(spec):
        name = getattr(spec, "__name__", type(spec).__name__)
        return Check(f"{name}(observation)", spec)
    raise TypeError(
        f"not a check: {spec!r} ({type(spec).__name__}); use a str, visible()/gone()/frame_check(), "
        "or a callable (Observation) -> bool | CheckResult"
    )
