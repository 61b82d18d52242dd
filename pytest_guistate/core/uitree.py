"""The accessibility tree (Appium page source) as plain dataclasses.

Page source is untrusted input from the app under test, so it is parsed with defusedxml.
UiAutomator2 (`bounds="[l,t][r,b]"`) and XCUITest (`x`, `y`, `width`, `height`) geometry are
both understood; nodes without geometry are kept (they still carry text) but never used as
containers. The oracle uses `smallest_container` to snap a changed region to the list row,
dialog or panel it belongs to (AGMem §3.2: a crop cut too tight loses the item it belongs to).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from pytest_guistate.core.geometry import Box

__all__ = ["UINode", "UITree", "UITreeError", "parse_page_source"]


class UITreeError(ValueError):
    """Page source that cannot be parsed (malformed or hostile XML)."""


_TRUE = {"true", "1", "yes"}

# Class-name fragments of views that group other views: a changed region is snapped to the
# smallest of these that encloses it.
_CONTAINER_HINTS = (
    "Layout",
    "ViewGroup",
    "RecyclerView",
    "ListView",
    "ScrollView",
    "Dialog",
    "Window",
    "Cell",
    "Other",
    "Table",
    "CollectionView",
    "CardView",
    "Toolbar",
    "ActionBar",
)


@dataclass
class UINode:
    """One accessibility node. `attrs` keeps every raw attribute for hooks and reports."""

    cls: str
    bounds: Box | None
    text: str = ""
    content_desc: str = ""
    resource_id: str = ""
    package: str = ""
    clickable: bool = False
    focused: bool = False
    password: bool = False
    scrollable: bool = False
    checked: bool = False
    enabled: bool = True
    displayed: bool = True
    depth: int = 0
    index_path: str = ""  # e.g. "0/2/1": a stable id within one dump, used as element id by the LLM actor
    attrs: dict[str, str] = field(default_factory=dict, repr=False)
    children: list[UINode] = field(default_factory=list, repr=False)

    def walk(self) -> Iterator[UINode]:
        """Pre-order, iteratively: a hostile page source nests thousands deep (no RecursionError)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    @property
    def is_container(self) -> bool:
        if self.bounds is None or self.bounds.is_empty:
            return False
        if self.children:
            return True
        return any(hint in self.cls for hint in _CONTAINER_HINTS)

    @property
    def label(self) -> str:
        """What a person would call this node: its text, else its description, else its id."""
        return self.text or self.content_desc or self.resource_id.rpartition("/")[2] or self.cls

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.index_path,
            "class": self.cls,
            "text": self.text,
            "content_desc": self.content_desc,
            "resource_id": self.resource_id,
            "bounds": self.bounds.as_list() if self.bounds else None,
            "clickable": self.clickable,
            "focused": self.focused,
            "password": self.password,
        }


@dataclass
class UITree:
    """A parsed page source; `root` is the `<hierarchy>` (or top) element."""

    root: UINode
    width: int | None = None
    height: int | None = None

    def nodes(self) -> Iterator[UINode]:
        return self.root.walk()

    def find(self, predicate: Callable[[UINode], bool]) -> list[UINode]:
        return [node for node in self.nodes() if predicate(node)]

    def find_text(self, text: str, *, exact: bool = True) -> list[UINode]:
        if exact:
            return self.find(lambda n: n.text == text or n.content_desc == text)
        return self.find(lambda n: text in n.text or text in n.content_desc)

    def has_text(self, text: str, *, exact: bool = False) -> bool:
        return bool(self.find_text(text, exact=exact))

    def by_resource_id(self, resource_id: str) -> list[UINode]:
        return self.find(
            lambda n: n.resource_id == resource_id or n.resource_id.rpartition("/")[2] == resource_id
        )

    def by_index_path(self, index_path: str) -> UINode | None:
        for node in self.nodes():
            if node.index_path == index_path:
                return node
        return None

    def password_boxes(self) -> list[Box]:
        """Regions to redact before any frame or crop is written."""
        return [n.bounds for n in self.nodes() if n.password and n.bounds is not None]

    def packages(self) -> set[str]:
        return {n.package for n in self.nodes() if n.package}

    def smallest_container(self, box: Box, *, screen: Box | None = None) -> UINode | None:
        """The smallest container node enclosing `box`, ignoring the whole-screen root."""
        best: UINode | None = None
        for node in self.nodes():
            if not node.is_container or node.bounds is None or not node.bounds.contains(box):
                continue
            if screen is not None and node.bounds.contains(screen):
                continue  # the full-screen window says nothing about where the change was
            if best is None or node.bounds.area < best.bounds.area:  # type: ignore[union-attr]
                best = node
        return best

    def actionable(self) -> list[UINode]:
        """Nodes an actor may act on: clickable, editable or scrollable, with geometry."""
        return [
            n
            for n in self.nodes()
            if n.bounds is not None
            and not n.bounds.is_empty
            and n.displayed
            and (n.clickable or n.scrollable or "EditText" in n.cls or "TextField" in n.cls)
        ]


def _flag(attrs: dict[str, str], name: str, default: bool = False) -> bool:
    value = attrs.get(name)
    return default if value is None else value.strip().lower() in _TRUE


def _bounds_of(attrs: dict[str, str]) -> Box | None:
    if "bounds" in attrs:
        try:
            return Box.from_bounds(attrs["bounds"])
        except ValueError:
            return None
    if all(k in attrs for k in ("x", "y", "width", "height")):
        try:
            return Box.from_xywh(*(int(float(attrs[k])) for k in ("x", "y", "width", "height")))
        except ValueError:
            return None
    return None


def _node(element: Element, depth: int, index_path: str) -> UINode:
    attrs = {k: v for k, v in element.attrib.items()}
    return UINode(
        cls=attrs.get("class") or attrs.get("type") or element.tag,
        bounds=_bounds_of(attrs),
        text=attrs.get("text") or attrs.get("value") or attrs.get("label") or "",
        content_desc=attrs.get("content-desc") or attrs.get("name") or "",
        resource_id=attrs.get("resource-id") or "",
        package=attrs.get("package") or "",
        clickable=_flag(attrs, "clickable"),
        focused=_flag(attrs, "focused"),
        password=_flag(attrs, "password") or "SecureTextField" in (attrs.get("type") or ""),
        scrollable=_flag(attrs, "scrollable"),
        checked=_flag(attrs, "checked"),
        enabled=_flag(attrs, "enabled", True),
        displayed=_flag(attrs, "displayed", True) and _flag(attrs, "visible", True),
        depth=depth,
        index_path=index_path,
        attrs=attrs,
    )


def _convert(element: Element, depth: int, index_path: str) -> UINode:
    """The element tree as `UINode`s, iteratively (a 1,000-deep page source is no RecursionError)."""
    root = _node(element, depth, index_path)
    stack = [(element, root)]
    while stack:
        parent_element, parent = stack.pop()
        for i, child in enumerate(list(parent_element)):
            path = f"{parent.index_path}/{i}" if parent.index_path else str(i)
            node = _node(child, parent.depth + 1, path)
            parent.children.append(node)
            stack.append((child, node))
    return root


def parse_page_source(xml: str | bytes) -> UITree:
    """Parse Appium page source. Raises `UITreeError` saying what is wrong with it."""
    if isinstance(xml, str):
        xml = xml.encode("utf-8")
    if not xml.strip():
        raise UITreeError("empty page source: the device returned no accessibility tree")
    try:
        top = SafeET.fromstring(xml)
    except DefusedXmlException as exc:
        raise UITreeError(f"page source refused as unsafe XML ({type(exc).__name__}: {exc})") from exc
    except ParseError as exc:
        snippet = xml[:80].decode("utf-8", "replace")
        raise UITreeError(f"malformed page source XML: {exc} (starts with {snippet!r})") from exc
    root = _convert(top, 0, "")
    width = _int_or_none(top.attrib.get("width"))
    height = _int_or_none(top.attrib.get("height"))
    return UITree(root=root, width=width, height=height)


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
