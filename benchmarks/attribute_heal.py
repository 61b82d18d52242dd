"""A Healenium-style baseline for the benchmark: heal by UI-tree attributes alone.

Healenium keeps the last good element's attributes and, when its locator breaks, scores every
element of the current page by weighted attribute similarity and uses the best one above a score
cap (0.5 by default), without checking the pixels or the effect. This re-implements that idea on
the attributes `learn.node_attrs` stored, so both healers run from the same memory in one run.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode
from pytest_guistate.memory.locator import Locator, function_key
from pytest_guistate.memory.store import MemoryStore

__all__ = ["attribute_heal", "attribute_score"]

_WEIGHTS = {"class": 0.15, "rid": 0.3, "text": 0.2, "desc": 0.2, "position": 0.15}
SCORE_CAP = 0.5


def _ratio(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def attribute_score(stored: dict[str, Any], node: UINode, screen: tuple[int, int]) -> float:
    """Weighted similarity of class, resource-id name, text, description and relative position."""
    if node.bounds is None:
        return 0.0
    score = _WEIGHTS["class"] * (stored.get("class") == node.cls)
    score += _WEIGHTS["rid"] * _ratio(str(stored.get("rid", "")).rpartition("/")[2], node.resource_id.rpartition("/")[2])
    score += _WEIGHTS["text"] * _ratio(str(stored.get("text", "")), node.text)
    score += _WEIGHTS["desc"] * _ratio(str(stored.get("desc", "")), node.content_desc)
    bounds = stored.get("bounds")
    if bounds:
        sx, sy = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
        cx, cy = node.bounds.center
        distance = math.hypot((sx - cx) / screen[0], (sy - cy) / screen[1])
        score += _WEIGHTS["position"] * max(0.0, 1.0 - distance)
    return float(score)


def attribute_heal(store: MemoryStore, observation: Observation, locator: Locator,
                   function: str | None) -> UINode | None:
    """The best-scoring displayed element for the newest remembered attributes, or None."""
    entries = [e for e in store.patches(function_key(locator, function), observation.package) if e.attrs]
    if not entries or observation.tree is None:
        return None
    same_screen = [e for e in entries if e.screen == observation.frame.size] or entries
    stored = max(same_screen, key=lambda e: e.created).attrs
    size = observation.frame.size
    nodes = [n for n in observation.tree.nodes() if n.displayed and n.bounds is not None and not n.bounds.is_empty
             and n.package != "com.android.systemui" and n.cls != "hierarchy"]
    scored = [(attribute_score(stored, n, size), n) for n in nodes]
    if not scored:
        return None
    best_score, best = max(scored, key=lambda pair: pair[0])
    return best if best_score >= SCORE_CAP else None
