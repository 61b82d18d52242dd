"""Locator strategies of the UiAutomator2 driver, evaluated on a `SimNode` tree.

XPath runs on an lxml tree built from the nodes themselves (same tags and attributes as the page
source UiAutomator2 dumps), so every XPath hit maps back to a node key without re-parsing XML.
A phone that offers its own `find_xpath(expression) -> list[SimNode]` (the real `Phone` does, over
the very page source it serves) is used instead for searches from the screen root.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from pytest_guistate.devices.sim.errors import W3CError
from pytest_guistate.devices.sim.model import SimNode
from pytest_guistate.devices.sim.xml import xpath_nodes

__all__ = ["STRATEGIES", "build_xml", "find_nodes", "select_ui"]

STRATEGIES = ("id", "accessibility id", "xpath", "class name", "-android uiautomator")

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TAG_INVALID = re.compile(r"[^A-Za-z0-9_.\-]")
_BOOL_ATTRS = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "long-clickable",
    "password",
    "scrollable",
    "selected",
    "displayed",
)


def _tag(cls: str) -> str:
    tag = _TAG_INVALID.sub("_", cls) or "node"
    return tag if tag[0].isalpha() or tag[0] == "_" else f"_{tag}"


def build_xml(root: SimNode, width: int, height: int) -> tuple[Any, dict[Any, SimNode]]:
    """An lxml `<hierarchy>` for `root` and a map from each lxml element back to its node."""
    hierarchy = etree.Element(
        "hierarchy", {"index": "0", "class": "hierarchy", "rotation": "0", "width": str(width), "height": str(height)}
    )
    by_element: dict[Any, SimNode] = {}

    def add(parent: Any, node: SimNode, index: int) -> None:
        attrs = {
            "index": str(index),
            "package": node.package,
            "class": node.cls,
            "text": node.text,
            "resource-id": node.resource_id,
            "content-desc": node.content_desc,
        }
        attrs.update({name: node.attribute(name) or "false" for name in _BOOL_ATTRS})
        attrs["bounds"] = node.bounds.to_bounds()
        element = etree.SubElement(parent, _tag(node.cls), {k: _XML_INVALID.sub("", v) for k, v in attrs.items()})
        by_element[element] = node
        for i, child in enumerate(node.children):
            add(element, child, i)

    if root.cls == "hierarchy":  # the phone's root already is the <hierarchy> of the dump
        by_element[hierarchy] = root
        for i, child in enumerate(root.children):
            add(hierarchy, child, i)
    else:
        add(hierarchy, root, 0)
    return hierarchy, by_element


def _xpath(root: SimNode, scope: SimNode | None, expression: str, width: int, height: int) -> list[SimNode]:
    hierarchy, by_element = build_xml(root, width, height)
    context = hierarchy
    if scope is not None:
        context = next(element for element, node in by_element.items() if node.key == scope.key)
    return xpath_nodes(context, expression, by_element, skip=() if hierarchy in by_element else (hierarchy,))


# new UiSelector().text("x").resourceId("y") ... : the single-selector subset, no child selectors.
_UI_CALL = re.compile(r'\.\s*(\w+)\s*\(\s*("(?:[^"\\]|\\.)*"|true|false|-?\d+)?\s*\)')
_UI_PREFIX = re.compile(r"^\s*(new\s+)?UiSelector\s*\(\s*\)")


def _ui_predicate(method: str, arg: str | None) -> Callable[[SimNode], bool] | int:
    if arg is None:
        raise W3CError("invalid selector", f"UiSelector.{method}() needs an argument")
    if arg.startswith('"'):
        value: Any = re.sub(r"\\(.)", r"\1", arg[1:-1])
    elif arg in ("true", "false"):
        value = arg == "true"
    else:
        value = int(arg)
    text_fields: dict[str, Callable[[SimNode], str]] = {
        "text": lambda n: n.text,
        "description": lambda n: n.content_desc,
        "resourceId": lambda n: n.resource_id,
        "className": lambda n: n.cls,
        "packageName": lambda n: n.package,
    }
    for prefix, get in text_fields.items():
        if method == prefix:
            return lambda n: get(n) == value
        if method == prefix + "Contains":
            return lambda n: str(value) in get(n)
        if method == prefix + "StartsWith":
            return lambda n: get(n).startswith(str(value))
        if method == prefix + "Matches":
            try:
                pattern = re.compile(str(value))
            except re.error as exc:
                raise W3CError("invalid selector", f"bad regex in {method}: {exc}") from exc
            return lambda n: pattern.fullmatch(get(n)) is not None
    flags = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable", "selected")
    long_click = {"longClickable": "long_clickable"}
    if method in flags or method in long_click:
        attr = long_click.get(method, method)
        return lambda n: getattr(n, attr) is value
    if method == "instance" and isinstance(value, int):
        return value
    raise W3CError("invalid selector", f"UiSelector.{method}() is not supported by the simulated phone")


def select_ui(nodes: list[SimNode], selector: str) -> list[SimNode]:
    """The nodes a `new UiSelector()...` expression matches (the UiScrollable locator's parts)."""
    return _uiautomator(nodes, selector)


_STATEMENT = re.compile(r'(?:[^;"]|"(?:[^"\\]|\\.)*")+')


def _uiautomator(nodes: list[SimNode], selector: str) -> list[SimNode]:
    """Statements separated by `;` (outside string literals) answer with the union of their matches,
    each node once, in statement order, as the UiAutomator2 server's `findMany` does."""
    statements = [m.group(0).strip() for m in _STATEMENT.finditer(selector) if m.group(0).strip()]
    if len(statements) <= 1:
        return _ui_statement(nodes, selector)
    found: dict[int, SimNode] = {}
    for statement in statements:
        for node in _ui_statement(nodes, statement):
            found.setdefault(id(node), node)
    return list(found.values())


def _ui_statement(nodes: list[SimNode], selector: str) -> list[SimNode]:
    prefix = _UI_PREFIX.match(selector)
    if prefix is None:
        raise W3CError("invalid selector", f"only 'new UiSelector()...' is supported, got {selector!r}")
    rest = selector[prefix.end() :].strip().rstrip(";").strip()
    predicates: list[Callable[[SimNode], bool]] = []
    instance: int | None = None
    position = 0
    for call in _UI_CALL.finditer(rest):
        if call.start() != position:
            break
        position = call.end()
        predicate = _ui_predicate(call.group(1), call.group(2))
        if isinstance(predicate, int):
            instance = predicate
        else:
            predicates.append(predicate)
    if position != len(rest):
        raise W3CError("invalid selector", f"cannot parse UiSelector near {rest[position:][:40]!r}")
    found = [n for n in nodes if all(p(n) for p in predicates)]
    if instance is not None:
        return found[instance : instance + 1]
    return found


def find_nodes(
    root: SimNode,
    using: str,
    value: str,
    *,
    scope: SimNode | None = None,
    width: int,
    height: int,
    xpath_helper: Callable[[str], list[SimNode]] | None = None,
) -> list[SimNode]:
    """All nodes matching a locator, in document order; `scope` limits the search to its descendants."""
    if using == "xpath":
        if xpath_helper is not None and scope is None:
            return xpath_helper(value)
        return _xpath(root, scope, value, width, height)
    candidates = list((scope or root).walk())
    if scope is not None:
        candidates = candidates[1:]
    if using == "id":
        return [
            n
            for n in candidates
            if n.resource_id and (n.resource_id == value or n.resource_id.endswith(":id/" + value))
        ]
    if using == "accessibility id":
        return [n for n in candidates if n.content_desc == value]
    if using == "class name":
        return [n for n in candidates if n.cls == value]
    if using == "-android uiautomator":
        return _uiautomator(candidates, value)
    raise W3CError("invalid selector", f"locator strategy {using!r} is not supported; use one of {list(STRATEGIES)}")
