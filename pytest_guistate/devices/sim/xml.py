"""UiAutomator2-style page source from a `SimNode` tree, and XPath over it for the server.

The document is built with lxml (never by string concatenation), so hostile app text such as
`<img src=x onerror=alert(1)>` is escaped like any other text. XPath hits are mapped back to
`SimNode`s through a side table keyed by element, so the XML a client sees carries no private
attributes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import TypeVar

from lxml import etree

from pytest_guistate.devices.sim.model import SimError, SimNode

__all__ = ["PageSource", "xpath_nodes"]

N = TypeVar("N")

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_FLAGS = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "long-clickable", "password",
          "scrollable", "selected")


def _clean(value: str) -> str:
    """XML 1.0 forbids most control characters; Android's dumper replaces them too."""
    return _XML_INVALID.sub("?", value)


class PageSource:
    """One immutable dump of a tree: the XML text and an XPath evaluator mapping hits to nodes."""

    def __init__(self, root: SimNode, width: int, height: int, rotation: int = 0) -> None:
        self._nodes: dict[etree._Element, SimNode] = {}
        doc = etree.Element("hierarchy", {"index": "0", "class": "hierarchy", "rotation": str(rotation),
                                          "width": str(width), "height": str(height)})
        self._nodes[doc] = root
        for index, child in enumerate(root.children):
            self._add(doc, child, index)
        self._doc = doc
        body: str = etree.tostring(doc, encoding="unicode", pretty_print=True)
        self.xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n" + body

    def _add(self, parent: etree._Element, node: SimNode, index: int) -> None:
        element = etree.SubElement(parent, _tag(node.cls))
        element.set("index", str(index))
        element.set("package", _clean(node.package))
        element.set("class", _clean(node.cls))
        element.set("text", _clean(node.text))
        element.set("resource-id", _clean(node.resource_id))
        element.set("content-desc", _clean(node.content_desc))
        for flag in _FLAGS:
            element.set(flag, node.attribute(flag) or "false")
        element.set("bounds", node.bounds.to_bounds())
        element.set("displayed", "true" if node.displayed else "false")
        self._nodes[element] = node
        for child_index, child in enumerate(node.children):
            self._add(element, child, child_index)

    def find_xpath(self, expression: str) -> list[SimNode]:
        """Nodes matched by `expression` in document order (SimError "invalid selector" otherwise)."""
        return xpath_nodes(self._doc, expression, self._nodes)


def xpath_nodes(context: etree._Element, expression: str, nodes: Mapping[etree._Element, N],
                skip: Collection[etree._Element] = ()) -> list[N]:
    """`expression` evaluated from `context`, each hit mapped back through `nodes`, document order.

    One place for both personas' XPath: hits in `skip` (the iOS `AppiumAUT` root, a synthetic
    `<hierarchy>`) are dropped; a syntax error, a non-node-set result or a hit that is no element
    is an "invalid selector" worded like WDA's `Cannot evaluate results for XPath expression "…"`.
    """
    def refuse(why: str) -> SimError:
        return SimError("invalid selector", f'Cannot evaluate results for XPath expression "{expression}": {why}')

    try:
        result = context.xpath(expression)
    except (etree.XPathError, TypeError, ValueError) as exc:
        raise refuse(f"it is not valid XPath ({exc})") from exc
    if not isinstance(result, list):
        raise refuse(f"it selects a {type(result).__name__} ({result!r}), not elements")
    found: list[N] = []
    for item in result:
        if isinstance(item, etree._Element) and item in skip:
            continue
        node = nodes.get(item) if isinstance(item, etree._Element) else None
        if node is None:
            raise refuse(f"it selects non-element values ({item!r})")
        found.append(node)
    return found


def _tag(cls: str) -> str:
    """Class names are valid XML names (`android.widget.TextView`); anything else becomes a View."""
    return cls if re.fullmatch(r"[A-Za-z_][\w.\-]*", cls) else "android.view.View"
