"""XCUITest page source (`<AppiumAUT>`, WDA's attribute order) and XPath over it.

WDA writes, per element, `type value name label enabled visible accessible focused x y width
height index` (`focused` since WebDriverAgent 8 / driver 4.25.4, no longer tvOS only) and leaves an attribute out when its value is null (FBXPath.m). As in the Android
`PageSource`, the document is built with lxml (hostile app text is escaped) and XPath hits are
mapped back to nodes through a side table, so the XML carries no private attributes.
"""

from __future__ import annotations

import re

from lxml import etree

from pytest_guistate.devices.sim.ios.translate import AUT, IosNode, kids
from pytest_guistate.devices.sim.xml import xpath_nodes

__all__ = ["IosSource"]

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ORDER = ("type", "value", "name", "label", "enabled", "visible", "accessible", "focused")


class IosSource:
    """One immutable dump: the XML text and XPath over it."""

    def __init__(self, root: IosNode) -> None:
        self._nodes: dict[etree._Element, IosNode] = {}
        self._doc = self._add(None, root)
        self._aut = {element for element, node in self._nodes.items() if node.cls == AUT}
        body = etree.tostring(self._doc, encoding="unicode", pretty_print=True)
        self.xml: str = '<?xml version="1.0" encoding="UTF-8"?>\n' + body

    def _add(self, parent: etree._Element | None, node: IosNode) -> etree._Element:
        tag = node.cls if re.fullmatch(r"[A-Za-z_][\w.\-]*", node.cls) else "XCUIElementTypeOther"
        element = etree.Element(tag) if parent is None else etree.SubElement(parent, tag)
        self._nodes[element] = node
        if node.cls != AUT:
            for name in _ORDER:
                value = node.attribute(name)
                if value is not None:
                    element.set(name, _XML_INVALID.sub("", value))
            x, y, width, height = node.bounds.to_xywh()
            for name, number in (("x", x), ("y", y), ("width", width), ("height", height)):
                element.set(name, str(number))
            element.set("index", str(node.index))
        for child in kids(node):
            self._add(element, child)
        return element

    def find_xpath(self, expression: str, scope: IosNode | None = None) -> list[IosNode]:
        """Nodes matched by `expression` (from `scope` if given), document order; AppiumAUT never."""
        context = self._doc
        if scope is not None:
            context = next(element for element, node in self._nodes.items() if node.key == scope.key)
        return xpath_nodes(context, expression, self._nodes, self._aut)
