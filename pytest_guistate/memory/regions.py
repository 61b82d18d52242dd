"""Where a heal may land: the actionable elements of the UI tree, and the words around them.

Searching only inside elements that can be tapped (clickable or editable, displayed, on screen)
is what keeps a heal off labels, toasts and invisible nodes - the false heals of attribute-only
tools. Without a tree the whole screen is one region and the hit's own box is the target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.core.uitree_platform import editable_class
from pytest_guistate.memory.match import Hit

__all__ = ["EDITABLE_CLASSES", "Target", "actionable_regions", "context_words", "editable_nodes", "is_editable",
           "target_for"]

_SYSTEM = ("com.android.systemui",)
_WORD = re.compile(r"[A-Za-z0-9]+")
_MAX_CONTEXT_SHARE = 0.4  # a "row" bigger than this is the page, not the element's surroundings
EDITABLE_CLASSES = ("EditText", "TextField")  # Android / iOS text inputs (and iOS SearchField, TextView)


@dataclass(frozen=True)
class Target:
    box: Box
    score: float = 0.0
    node: UINode | None = None


def is_editable(cls: str) -> bool:
    """The node's class is a text input (its role, whatever its placeholder says), on either platform."""
    return editable_class(cls)


def _actionable(node: UINode, screen: Box) -> bool:
    """A tappable or editable node of `tree.actionable()` (enabled, not a keyboard key) on `screen`."""
    return (node.bounds is not None and node.package not in _SYSTEM
            and not node.bounds.intersection(screen).is_empty
            and (node.is_tappable or node.is_editable))


def _tappable_nodes(tree: UITree, screen: Box) -> list[UINode]:
    """Actionable nodes that can be reached now (with a dialog up -- Android's alert panel, an iOS
    Alert or Sheet -- only the dialog's; never a disabled control or one under the keyboard)."""
    nodes = [n for n in tree.actionable() if _actionable(n, screen)]
    modal = tree.modal()
    if modal is not None and modal.bounds is not None:  # a dialog is up: only its buttons can be tapped
        panel = modal.bounds
        nodes = [n for n in nodes if panel.contains(n.bounds)]  # type: ignore[arg-type]
    return nodes


def editable_nodes(tree: UITree, size: tuple[int, int]) -> list[UINode]:
    """Every text input that can be reached on screen, password fields included (they count when
    deciding whether a field is the only one of its role, even though their pixels are never kept)."""
    return [n for n in _tappable_nodes(tree, Box(0, 0, size[0], size[1])) if is_editable(n.cls)]


def actionable_regions(tree: UITree | None, size: tuple[int, int]) -> list[Target]:
    """Maximal actionable elements (those inside another are covered by its search)."""
    screen = Box(0, 0, size[0], size[1])
    if tree is None:
        return [Target(screen)]
    nodes = _tappable_nodes(tree, screen)
    boxes = [n.bounds.intersection(screen) for n in nodes]  # type: ignore[union-attr]
    out: list[Target] = []
    for i, (node, box) in enumerate(zip(nodes, boxes, strict=True)):
        if any(j != i and other.contains(box) and other != box for j, other in enumerate(boxes)):
            continue
        if any(t.box == box for t in out):
            continue
        out.append(Target(box, node=node))
    return out


def target_for(hit: Hit, region: Target, tree: UITree | None) -> Target:
    """The smallest actionable element containing the hit's centre (its centre is what is tapped)."""
    if tree is None or region.node is None:
        return Target(hit.box, hit.score)
    cx, cy = hit.box.center
    inside = [n for n in region.node.walk()
              if n.is_actionable and n.bounds is not None and n.bounds.contains_point(cx, cy)
              and (n.is_tappable or n.is_editable)]
    node = min(inside, key=lambda n: n.bounds.area) if inside else region.node  # type: ignore[union-attr]
    assert node.bounds is not None
    return Target(node.bounds, hit.score, node)


def context_words(tree: UITree, box: Box | None) -> set[str]:
    """Words shown by the element at `box` and its smallest surrounding container (its row);
    with `box=None`, every word on screen."""
    if box is None:
        return _words(n for n in tree.nodes() if n.displayed)
    screen = Box(0, 0, tree.width or 10**6, tree.height or 10**6)
    limit = _MAX_CONTEXT_SHARE * (screen.area if tree.width and tree.height else 10**12)
    containers = [n for n in tree.nodes() if n.bounds is not None and n.children and n.bounds.contains(box)
                  and n.bounds != box and n.bounds.area <= limit]
    scope = min(containers, key=lambda n: n.bounds.area) if containers else None  # type: ignore[union-attr]
    return _words(scope.walk() if scope is not None else (n for n in tree.nodes() if n.bounds == box))


def _words(nodes: Iterable[UINode]) -> set[str]:
    words: set[str] = set()
    for node in nodes:
        for text in (node.text, node.content_desc):
            words.update(w.lower() for w in _WORD.findall(text))
    return words
