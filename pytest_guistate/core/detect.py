"""Cheap detectors on two observations: did the app or screen change, did a pop-up appear?

They feed STATE_CHANGE and EXCEPTION anchors. Both use the accessibility tree, not pixels (but
at light, where no page source is fetched for them, a large changed pixel fraction): a
list refresh repaints most of the screen but keeps its structure, while navigating to another
screen replaces the set of view ids; a dialog shows up as a new Dialog/alert node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.uitree import UINode, UITree

__all__ = ["appeared_in", "is_system_alert", "popup_title", "refreshable_list", "route_change", "undrawn_change"]

_DIALOG_HINTS = ("Dialog", "AlertDialog", "Alert", "PopupWindow")
_DIALOG_IDS = ("alertTitle", "parentPanel", "dialog", "aerr_", "popup")
_SYSTEM_ALERTS = ("isn't responding", "not responding", "has stopped", "keeps stopping")
_LIST_HINTS = ("RecyclerView", "ListView", "ScrollView", "SwipeRefreshLayout", "CollectionView", "Table")


def _signature(tree: UITree) -> set[str]:
    """Structure of a screen: resource ids (else class names) of its nodes, without the text."""
    ids = {n.resource_id for n in tree.nodes() if n.resource_id}
    return ids if len(ids) >= 3 else {f"{n.cls}@{n.depth}" for n in tree.nodes()}


def route_change(before: Observation | None, after: Observation, *, similarity: float = 0.5,
                 known_only: bool = False, transition: Transition | None = None,
                 changed_fraction: float = 0.5) -> str | None:
    """Why the screen counts as a different one ("app a -> b", "screen structure changed"), or None.

    `known_only` (light tier): fetch no page source; packages and trees only when already read,
    else the pixels: `changed_fraction` or more of the screen strictly changed (`transition`)."""
    if before is None:
        return None
    package: Callable[[Observation], str | None] = (
        (lambda obs: obs.known_package) if known_only else (lambda obs: obs.package))
    a_app, b_app = package(before), package(after)
    if a_app and b_app and a_app != b_app:
        return f"app {a_app} -> {b_app}"
    if known_only and not (before.tree_fetched and after.tree_fetched):
        if transition is not None and transition.diff_ratio >= changed_fraction:
            return f"screen changed ({transition.diff_ratio:.0%} of the pixels)"
        return None
    if before.tree is None or after.tree is None:
        return None
    a, b = _signature(before.tree), _signature(after.tree)
    if not a or not b:
        return None
    jaccard = len(a & b) / float(len(a | b))
    if jaccard < similarity:
        return f"screen structure changed (similarity {jaccard:.2f})"
    return None


def _is_dialog(node: UINode) -> bool:
    return any(h in node.cls for h in _DIALOG_HINTS) or any(h in node.resource_id for h in _DIALOG_IDS)


def _dialog_text(node: UINode) -> str:
    for child in node.walk():
        if child.text:
            return child.text
    return node.label


def popup_title(before: Observation | None, after: Observation) -> str | None:
    """Text of a dialog present in `after` but not in `before` (None if no new dialog)."""
    if after.tree is None:
        return None
    old = {(n.cls, n.resource_id, n.bounds) for n in before.tree.nodes() if _is_dialog(n)} if (
        before is not None and before.tree is not None) else set()
    for node in after.tree.nodes():
        if _is_dialog(node) and (node.cls, node.resource_id, node.bounds) not in old:
            return _dialog_text(node)
    return None


def is_system_alert(title: str) -> bool:
    """An ANR / crash dialog: always an EXCEPTION, whatever the step expected."""
    lowered = title.lower()
    return any(marker in lowered for marker in _SYSTEM_ALERTS)


def refreshable_list(tree: UITree | None) -> UINode | None:
    """The first list a pull-to-refresh can act on: scrollable (on iOS the first Table /
    CollectionView / ScrollView), else a list-like class (a short RecyclerView is not scrollable,
    yet a SwipeRefreshLayout around it still refreshes)."""
    if tree is None:
        return None
    candidates = [n for n in tree.nodes() if n.displayed and n.bounds is not None and not n.bounds.is_empty]
    modal = tree.modal() if tree.platform == "ios" else None
    if modal is not None and modal.bounds is not None:  # an iOS Alert's button ScrollView is no list to refresh
        alert = modal.bounds
        candidates = [n for n in candidates if n.bounds is not None and not alert.contains(n.bounds)]
    for node in candidates:
        if node.scrollable:
            return node
    for node in candidates:
        if any(hint in node.cls for hint in _LIST_HINTS):
            return node
    return None


_UNDRAWABLE_PX = 2


def _drawn_key(node: UINode) -> tuple[object, ...]:
    return (node.cls, node.resource_id, node.text, node.content_desc, node.checked, node.bounds)


def undrawn_change(before: UITree, after: UITree, masked: Sequence[Box] = ()) -> UINode | None:
    """A node the after-tree shows on screen that the before-tree did not (new, moved, retexted,
    toggled), outside `masked` (status bar, flicker): asked when the pixels showed no change. The
    tree already holds what the screen has not drawn yet (a dialog whose fade has not begun, a
    frame taken before the redraw): its after-frame is no evidence of the step (issue 34's race)."""
    screen = after.screen_box
    seen = {_drawn_key(n) for n in before.nodes() if n.displayed and n.bounds is not None}
    for node in after.nodes():
        box = node.bounds
        if not node.displayed or box is None or min(box.width, box.height) <= _UNDRAWABLE_PX or _drawn_key(node) in seen:
            continue  # a 1x1 visually hidden live region ("sr-only") draws nothing however new
        if screen is not None and not screen.intersects(box):
            continue  # laid out below the fold: nothing to draw
        if any(m.contains(box) for m in masked):
            continue
        return node
    return None


def appeared_in(before: UITree, after: UITree, box: Box) -> UINode | None:
    """A node of the after-tree over `box` whose text or description the before-tree showed nowhere:
    words that appeared (a toast's message, a snackbar), which no blink or animation writes into the
    page source. Asked of a change the after-frame showed and the next frame no longer did: with such a
    node it was the action's effect, seen before it ended, not flicker."""
    said = {words for n in before.nodes() if n.displayed for words in (n.text, n.content_desc) if words}
    for node in after.nodes():
        bounds = node.bounds
        if not node.displayed or bounds is None or not bounds.intersects(box):
            continue
        if any(words and words not in said for words in (node.text, node.content_desc)):
            return node
    return None
