"""The UI tree of a step, compact for the journal and shaped for the viewer's outline.

Journal side (`compact_tree`): the accessibility tree after a step as nested short-keyed dicts,
bounded (at most `MAX_NODES` nodes, `MAX_DEPTH` levels, texts cut to `MAX_TEXT` characters) so a 100-step test adds
kilobytes, not megabytes. Password nodes never carry their text, whatever the app put there.
Viewer side (`intern_trees`, `highlight`): every step's tree as one table of distinct nodes (the
page's script builds the shown step's outline from it), and the ids of the nodes under a step's
changed regions (the smallest node enclosing each region, as the oracle snaps regions to
containers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_TEXT", "compact_tree", "highlight", "intern_trees", "tree_key"]

MAX_NODES = 400
MAX_DEPTH = 64  # deeper is hostile or generated: cut, so nothing here (or in json, or the page) recurses past it
MAX_TEXT = 80


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "\u2026"


def compact_tree(tree: Any) -> dict[str, Any] | None:
    """`UITree` -> {"n": node, "omitted": count}; node = {c, t?, d?, r?, b?, f?, k?}."""
    root = getattr(tree, "root", None)
    if root is None:
        return None
    budget = [MAX_NODES]
    omitted = [0]

    def convert(node: Any, depth: int) -> dict[str, Any]:
        budget[0] -= 1
        out: dict[str, Any] = {"c": str(node.cls).rpartition(".")[2] or "node", "p": node.index_path}
        password = bool(node.password)
        if node.text and not password:
            out["t"] = _cut(str(node.text))
        if node.content_desc:
            out["d"] = _cut(str(node.content_desc))
        if node.resource_id:
            out["r"] = _cut(str(node.resource_id).rpartition("/")[2])
        if node.bounds is not None:
            out["b"] = list(node.bounds.as_list())
        flags = "".join(letter for letter, on in (("c", node.clickable), ("f", node.focused), ("p", password),
                                                  ("s", node.scrollable), ("x", node.checked)) if on)
        if flags:
            out["f"] = flags
        kids = []
        for child in node.children:
            if budget[0] <= 0 or depth + 1 >= MAX_DEPTH:
                omitted[0] += sum(1 for _ in child.walk())
                continue
            kids.append(convert(child, depth + 1))
        if kids:
            out["k"] = kids
        return out

    return {"n": convert(root, 0), "omitted": omitted[0]}


def tree_key(compact: dict[str, Any]) -> str:
    """A content hash: identical trees of consecutive steps are stored and rendered once."""
    text = json.dumps(compact, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _walk(node: dict[str, Any], depth: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    yield depth, node
    for child in node.get("k") or []:
        yield from _walk(child, depth + 1)


def intern_trees(trees: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Trees as one table of distinct nodes (hash-consed: equal subtrees are stored once) and
    the root row of each tree. Consecutive screens differ in a few nodes (a clock, a toggle), so
    100 steps cost little more than one tree. Row = [class, id, text, desc, resource id, bounds,
    flags, [child rows]]; the viewer's script builds the outline of the shown step from it."""
    table: list[list[Any]] = []
    rows: dict[str, int] = {}

    def put(node: dict[str, Any]) -> int:
        kids = [put(child) for child in node.get("k") or []]
        row = [node.get("c", ""), str(node.get("p", "")), node.get("t", ""), node.get("d", ""), node.get("r", ""),
               node.get("b") or [], node.get("f", ""), kids]
        key = json.dumps(row, separators=(",", ":"), ensure_ascii=False)
        if key not in rows:
            rows[key] = len(table)
            table.append(row)
        return rows[key]

    roots = {key: put(tree["n"]) for key, tree in trees.items()}
    omitted = {key: int(tree.get("omitted") or 0) for key, tree in trees.items() if tree.get("omitted")}
    return {"nodes": table, "roots": roots, "omitted": omitted}


def _area(box: list[int]) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


def _inside(inner: list[int], outer: list[int]) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def highlight(compact: dict[str, Any] | None, regions: list[list[int]]) -> list[str]:
    """Ids of the smallest nodes enclosing each changed region (none for a full-screen change)."""
    if not compact or not regions:
        return []
    nodes = [n for _, n in _walk(compact["n"]) if n.get("b") and _area(n["b"]) > 0]
    if not nodes:
        return []
    screen = max(_area(n["b"]) for n in nodes)
    found: list[str] = []
    for region in regions:
        around = [n for n in nodes if _inside(region, n["b"]) and _area(n["b"]) < screen]
        if not around:
            continue
        best = min(around, key=lambda n: _area(n["b"]))
        if str(best.get("p", "")) not in found:
            found.append(str(best.get("p", "")))
    return found
