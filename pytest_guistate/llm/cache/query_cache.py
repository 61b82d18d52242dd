"""A `guistate.query` in the action cache (issue 46): what was read, from which elements, and how to
read **today's** value from the same elements at 0 tokens.

A read is kept per part of the value as the element's fingerprint (`cachefile.fingerprint`: kind, id,
neighbours, place) plus what makes it the same element whatever value it shows:

* `field`: which of its texts held the value (text, desc, value) or `checked` (a switch's state);
* `template`: that text with the value masked (`$#`, `Total: $#`, `Cart, # items`; `*` for a name);
* `row`: the identity words of the row it sits in, the value's own words left out ("phone case" for
  a price in the Phone Case row) -- the action cache's identity rule for a value that changes.

A list is kept as columns (every element of the same kind, id and template, in screen order), so a
replay reads the list the screen shows today. Replay finds each element again: same kind and id, the
same template, and the same row words exactly; none is a named miss (`gone`, or `renamed` when the
element is there in other rows), two are `ambiguous` unless the screen it was read on had both too
(`twins`) and their surroundings tell them apart. A
password field or a text that holds a registered secret is never read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree import UITree
from pytest_guistate.core.values import Shape, ShapeError, field_of, leaves, numbers_in
from pytest_guistate.llm.cache.cachefile import fingerprint, screen_rows
from pytest_guistate.llm.cache.identity import identity_words, surroundings
from pytest_guistate.llm.prompt import context_of
from pytest_guistate.llm.query import decides, holds, node_texts, same_row, screen_decimal

__all__ = ["QueryMiss", "read_again", "read_prints"]

_NUMBER = re.compile(r"(?<![\d.,])[-\u2212]?\d[\d.,'\u00a0\u202f]*\d|(?<![\d.,])\d")


class QueryMiss(ValueError):
    """The cached read cannot be made on this screen; the message says why (gone, renamed, ambiguous)."""


def _field(node: UINode, shape: Shape, value: Any, decimal: str) -> tuple[str, str]:
    """Which text of the element held the value, and that text."""
    if shape.kind == "bool" and node.checkable:
        return "checked", ""
    for name, text in (("text", node.text), ("desc", node.content_desc), ("value", node.value)):
        if text and holds(shape, value, _only(node, text), decimal):
            return name, text
    return "text", node.text


def _only(node: UINode, text: str) -> UINode:
    """The element as if it showed only `text` (to ask which of its texts holds a value)."""
    return UINode(node.cls, node.bounds, text=text, checkable=False, platform="android")


def _mask(text: str, shape: Shape, value: Any) -> str:
    if shape.kind in ("int", "float"):
        return _NUMBER.sub("#", text)
    if shape.kind == "str":
        at = text.casefold().find(str(value).casefold())
        return text[:at] + "*" + text[at + len(str(value)) :] if at >= 0 else "*"
    return ""


def _row(tree: UITree, node: UINode, value: Any) -> list[str]:
    own = identity_words(str(value)) if isinstance(value, str) else frozenset()
    return sorted(identity_words(context_of(tree, node)) - own)


def _print(tree: UITree, node: UINode, shape: Shape, value: Any, decimal: str) -> dict[str, Any]:
    name, text = _field(node, shape, value, decimal)
    fp = fingerprint(tree, node)
    for key in ("text", "desc", "in", "checked"):  # they show the value: today's differ
        fp.pop(key, None)
    fp.update({"field": name, "template": _mask(text, shape, value), "row": _row(tree, node, value)})
    if shape.kind in ("int", "float"):
        found = numbers_in(text, decimal)
        fp["nth"] = next((i for i, n in enumerate(found) if abs(n - float(value)) <= 0.005), 0)
    if shape.kind == "bool":
        fp["negated"] = decides(node) is not value  # "is X off?" reads the switch's state the other way (`negated`)
    return fp


def read_prints(shape: Shape, value: Any, evidence: Sequence[dict[str, Any]], tree: UITree) -> list[dict[str, Any]]:
    """The reads to cache for a verified value. A list's items that are alike become one column
    (`path` `*` or `*.field`); a count of cited elements is a column read as its length (`count`)."""
    decimal = screen_decimal(tree)
    nodes = {e["path"]: tree.by_index_path(e["element_id"]) for e in evidence}
    reads: list[dict[str, Any]] = []
    if shape.kind == "list":
        assert shape.item is not None
        item = shape.item
        fields = [(k, s) for k, s in item.fields] if item.kind == "record" else [("", item)]
        for key, leaf in fields:
            column = [(i, nodes.get(f"{i}.{key}" if key else str(i))) for i in range(len(value))]
            prints = [
                _print(tree, n, leaf, field_of(value[i], key) if key else value[i], decimal)
                for i, n in column
                if n is not None
            ]
            if len(prints) != len(value) or len({(p.get("rid"), p["kind"], p["template"]) for p in prints}) > 1:
                return []  # not one column: not replayable as today's list
            if prints:
                reads.append({"path": "*." + key if key else "*", **_column(prints[0])})
        return reads
    if shape.kind == "int" and sum(1 for e in evidence if e["path"] == "") > 1:
        counted = [tree.by_index_path(e["element_id"]) for e in evidence]
        prints = [_print(tree, n, Shape("str"), n.label or "x", decimal) for n in counted if n is not None]
        return [{"path": "", "count": True, **_column(prints[0])}] if prints else []
    for path, leaf, part in leaves(shape, value):
        node = nodes.get(path)
        if node is None:
            return []
        fp = _print(tree, node, leaf, part, decimal)
        fp["twins"] = len(_mine(tree, fp, leaf)) > 1  # only then may its neighbours tell it from a twin
        reads.append({"path": path, **fp})
    return reads


def _column(fp: dict[str, Any]) -> dict[str, Any]:
    """A column's fingerprint: its kind, id, field and template; no row (each item has its own)."""
    return {k: v for k, v in fp.items() if k in ("kind", "rid", "field", "template", "nth", "negated")}


def _alike(tree: UITree, fp: dict[str, Any], shape: Shape) -> list[UINode]:
    """Elements of the read's kind, id and template, in screen order (password fields never)."""
    rows = {str(r["id"]): r for r in screen_rows(tree)}
    out = []
    for node in tree.nodes():
        row = rows.get(node.index_path)
        if (
            row is None
            or node.password
            or node.kind != fp.get("kind")
            or str(row.get("rid") or "") != str(fp.get("rid") or "")
        ):
            continue
        if fp.get("field") == "checked":
            if node.checkable:
                out.append(node)
            continue
        text = _text(node, str(fp.get("field")))
        if text and _mask(text, shape, _read_str(text, str(fp.get("template")))) == fp.get("template"):
            out.append(node)
    return out


def _own(node: UINode, field: str, shape: Shape, template: str) -> Any:
    """The value as `_row` leaves it out of a candidate's row: a name's words, nothing of a number."""
    return _read_str(_text(node, field), template) if shape.kind == "str" else None


def _text(node: UINode, field: str) -> str:
    return {"text": node.text, "desc": node.content_desc, "value": node.value}.get(field, node.text) or ""


def _read_str(text: str, template: str) -> str:
    """The part of `text` where the template has `*` (the whole text for `*`)."""
    head, star, tail = template.partition("*")
    if not star or not text.startswith(head) or not text.endswith(tail) or len(text) < len(head) + len(tail):
        return text
    return text[len(head) : len(text) - len(tail)]


def _read(node: UINode, fp: dict[str, Any], shape: Shape, decimal: str) -> Any:
    if fp.get("field") == "checked" or shape.kind == "bool":
        state = decides(node)
        if state is None:
            raise QueryMiss(f"the {node.label!r} element no longer shows a yes/no")
        return state is not bool(fp.get("negated"))
    text = _text(node, str(fp.get("field")))
    if shape.kind in ("int", "float"):
        found = numbers_in(text, decimal)
        nth = int(fp.get("nth") or 0)
        if nth >= len(found):
            raise QueryMiss(f"the element {node.label!r} shows no number where {fp.get('template')!r} had one")
        return found[nth]
    return _read_str(text, str(fp.get("template") or "*"))


def _describe(fp: dict[str, Any]) -> str:
    rid = f"id {fp['rid']!r}, " if fp.get("rid") else ""
    return f"{fp.get('kind')} ({rid}{fp.get('template') or fp.get('field')!r})"


def _mine(tree: UITree, fp: dict[str, Any], shape: Shape, alike: list[UINode] | None = None) -> list[UINode]:
    """The elements like the read in a row of the same words."""
    want = set(fp.get("row") or [])
    field, template = str(fp.get("field")), str(fp.get("template"))
    candidates = _alike(tree, fp, shape) if alike is None else alike
    return [n for n in candidates if set(_row(tree, n, _own(n, field, shape, template))) == want]


def _find(tree: UITree, fp: dict[str, Any], shape: Shape) -> UINode:
    """The cached element on today's screen. Its neighbours pick one of two alike only when the screen
    it was read on had both (`twins`): a twin that appeared since is `ambiguous`, never a guess."""
    alike = _alike(tree, fp, shape)
    what = _describe(fp)
    if not alike:
        raise QueryMiss(f"gone: no element like the cached {what} on screen")
    want = set(fp.get("row") or [])
    mine = _mine(tree, fp, shape, alike)
    if not mine:
        rows = sorted({" ".join(_row(tree, n, "")) or "-" for n in alike})[:4]
        raise QueryMiss(f"renamed or moved: no {what} in a row {' '.join(sorted(want))!r}; on screen in rows {rows}")
    if len(mine) > 1 and fp.get("near") and fp.get("twins"):
        lines = screen_rows(tree)
        by_id = {str(r["id"]): r for r in lines}
        near = [n for n in mine if list(surroundings(lines, by_id.get(n.index_path, {}))) == list(fp["near"])]
        mine = near or mine
    if len(mine) > 1:
        raise QueryMiss(f"ambiguous: {len(mine)} elements like the cached {what} in a row {' '.join(sorted(want))!r}")
    return mine[0]


def read_again(
    shape: Shape, reads: Sequence[dict[str, Any]], tree: UITree | None, secrets: Sequence[str] = ()
) -> tuple[Any, list[dict[str, Any]]]:
    """Today's value from the cached reads (converted with `shape`) and the elements read; `QueryMiss`
    when an element cannot be found again or its text cannot give the value."""
    if tree is None:
        raise QueryMiss("the screen has no UI tree")
    if not reads:
        raise QueryMiss("the cached query keeps no element to read again (re-record it)")
    decimal = screen_decimal(tree)
    cited: list[dict[str, Any]] = []

    def took(path: str, node: UINode) -> None:
        if any(s and s in t for s in secrets for t in node_texts(node)):
            raise QueryMiss(f"the element {node.index_path!r} shows a registered secret; it is never read")
        box = node.bounds.as_list() if node.bounds is not None else None
        cited.append({"path": path, "element_id": node.index_path, "quote": "", "label": node.label, "box": box})

    if shape.kind == "list":
        assert shape.item is not None
        item = shape.item
        columns = {str(r["path"]): r for r in reads}
        if item.kind != "record":
            found = _alike(tree, columns["*"], item)
            for i, node in enumerate(found):
                took(str(i), node)
            raw: Any = [_read(n, columns["*"], item, decimal) for n in found]
        else:
            keys = [k for k, _ in item.fields]
            first = keys[0]
            anchors = _alike(tree, columns[f"*.{first}"], dict(item.fields)[first])
            raw = []
            for i, anchor in enumerate(anchors):
                record: dict[str, Any] = {}
                for key, leaf in item.fields:
                    if key == first:
                        node = anchor
                    else:
                        same = [n for n in _alike(tree, columns[f"*.{key}"], leaf) if same_row(anchor, n)]
                        if len(same) != 1:
                            raise QueryMiss(
                                f"the row of {anchor.label!r} has {len(same)} elements like the cached "
                                f"{_describe(columns[f'*.{key}'])}"
                            )
                        node = same[0]
                    took(f"{i}.{key}", node)
                    record[key] = _read(node, columns[f"*.{key}"], leaf, decimal)
                raw.append(record)
        if not raw:
            raise QueryMiss(f"gone: no element like the cached {_describe(reads[0])} on screen")
    elif shape.kind == "int" and reads[0].get("count"):
        found = _alike(tree, reads[0], Shape("str"))
        for node in found:
            took("", node)
        raw = len(found)
    else:
        parts: dict[str, Any] = {}
        for fp in reads:
            leaf = shape if shape.kind != "record" else dict(shape.fields)[str(fp["path"])]
            node = _find(tree, fp, leaf)
            took(str(fp["path"]), node)
            parts[str(fp["path"])] = _read(node, fp, leaf, decimal)
        raw = parts[""] if shape.kind != "record" else parts
    try:
        return shape.convert(raw), cited
    except ShapeError as exc:
        raise QueryMiss(f"today's value does not convert: {exc}") from None
