"""The accessibility tree (Appium page source) as plain dataclasses, the same on both platforms.

Page source is untrusted input from the app under test, so it is parsed with defusedxml.
UiAutomator2 (`<hierarchy>`, `bounds="[l,t][r,b]"` in pixels, role attributes such as
`clickable`) and XCUITest (`<AppiumAUT>`, `XCUIElementType*` elements, `x y width height` in
points, roles given by the type) are both read into one `UINode` shape (issue 11); the per-platform
rules live in `uitree_platform.py`. The rest of the plugin asks roles, never raw attributes:
`node.is_actionable / is_tappable / is_editable / is_scrollable / is_password / is_checkable /
checked`, `node.label` (what a person calls it: iOS `label`, then `name`; never a switch's "0"),
`node.value` (its state or content), `node.locator_id` (resource-id tail, or the iOS `name` that
the `accessibility id` strategy matches), and on the tree `platform`, `screen_box`, `actionable()`,
`password_boxes()`, `smallest_container()`.

Units: boxes everywhere else in the plugin are screenshot pixels. `parse_page_source(xml)` keeps
the source's own unit (`tree.unit`: "px" for UiAutomator2 and unknown shapes, "pt" for XCUITest);
`parse_page_source(xml, scale=s)` (or `tree.rescale(s)` afterwards) multiplies every box and the
screen size by `s` screenshot pixels per source unit (3.0 for a 390x844-pt iPhone shot at
1170x2532 px) and marks the tree "px". The Device layer, which knows the screenshot size, does
this once per dump. The screen size comes from the `<hierarchy>` root's `width`/`height` on
Android and from `XCUIElementTypeApplication` on iOS (the `AppiumAUT` root has no geometry).

Nodes without geometry are kept (they still carry text) but never used as containers. The
oracle uses `smallest_container` to snap a changed region to the list row, dialog or panel it
belongs to (AGMem §3.2: a crop cut too tight loses the item it belongs to); on iOS that is a
Cell / Other / Table, never the Window or Application.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree_platform import (
    IOS,
    POPOVER_DISMISS,
    UNKNOWN,
    detect_platform,
    ios_label,
    is_ime_package,
    roles_of,
)

__all__ = ["UINode", "UITree", "UITreeError", "parse_page_source"]


class UITreeError(ValueError):
    """Page source that cannot be parsed (malformed or hostile XML)."""


@dataclass
class UITree:
    """A parsed page source; `root` is the `<hierarchy>` / `<AppiumAUT>` (or top) element.

    `width`/`height`: the screen in `unit` ("px" or "pt"); `scale`: screenshot pixels per source
    unit already applied (1.0 when the geometry is as the driver sent it)."""

    root: UINode
    width: int | None = None
    height: int | None = None
    platform: str = UNKNOWN
    unit: str = "px"
    scale: float = 1.0

    def nodes(self) -> Iterator[UINode]:
        return self.root.walk()

    @property
    def screen_box(self) -> Box | None:
        """The whole screen, in the tree's unit; None when the source does not say its size."""
        return Box(0, 0, self.width, self.height) if self.width and self.height else None

    def rescale(self, factor: float) -> UITree:
        """Multiply every box and the screen size by `factor` (points -> screenshot pixels), in place."""
        if not factor > 0:
            raise ValueError(f"a tree's scale factor must be > 0, got {factor!r}")
        if factor != 1.0:
            for node in self.nodes():
                if node.bounds is not None:
                    node.bounds = node.bounds.scale(factor)
            self.width = round(self.width * factor) if self.width else self.width
            self.height = round(self.height * factor) if self.height else self.height
            self.scale *= factor
        self.unit = "px"
        return self

    def fit_to(self, screenshot_width: int) -> UITree:
        """Rescale a tree still in points so its screen is `screenshot_width` pixels wide (the
        factor is screenshot width / `width`); a tree already in pixels, or without a size, is
        returned as is."""
        if self.unit == "px" or not self.width or screenshot_width <= 0:
            return self
        return self.rescale(screenshot_width / self.width)

    def find(self, predicate: Callable[[UINode], bool]) -> list[UINode]:
        return [node for node in self.nodes() if predicate(node)]

    def find_text(self, text: str, *, exact: bool = True) -> list[UINode]:
        if exact:
            return self.find(lambda n: text in n.shown_texts or n.content_desc == text)
        return self.find(lambda n: any(text in t for t in n.shown_texts) or text in n.content_desc)

    def has_text(self, text: str, *, exact: bool = False) -> bool:
        return bool(self.find_text(text, exact=exact))

    def by_resource_id(self, resource_id: str) -> list[UINode]:
        return self.find(
            lambda n: n.resource_id == resource_id or n.resource_id.rpartition("/")[2] == resource_id
        )

    def by_locator(self, kind: str, value: str) -> list[UINode]:
        """Nodes a `device.find(kind=value)` could return (`id`: resource id or its part after "/", iOS
        `name`; `desc`: the descriptions; `text`: the shown texts, iOS label). One locator that names
        more than one would act on the first: an exported test and a heal proposal use only one that
        names a single node."""
        if kind == "id":
            return self.by_id(value)
        if kind == "desc":
            return self.find(lambda n: value in n.descriptions)
        return self.find(lambda n: value in (n.text, *n.shown_texts, n.attrs.get("label", "")))

    def by_id(self, wanted: str) -> list[UINode]:
        """Nodes a locator `id=` names: resource-id (full or after "/") or iOS `name`."""
        return self.find(lambda n: n.has_id(wanted))

    def by_index_path(self, index_path: str) -> UINode | None:
        for node in self.nodes():
            if node.index_path == index_path:
                return node
        return None

    def password_boxes(self) -> list[Box]:
        """Regions to redact before any frame or crop is written (Android `password`, iOS SecureTextField)."""
        return [n.bounds for n in self.nodes() if n.is_password and n.bounds is not None]

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
            if best is None or best.bounds is None or node.bounds.area < best.bounds.area:
                best = node
        return best

    def controls(self) -> list[UINode]:
        """The controls a person can reach on this screen, disabled ones included (the actor is
        shown them, marked disabled): `node.is_control`, on screen, not hidden by the keyboard.

        On iOS an Alert / Sheet / Popover takes the touches: WebDriverAgent still lists the screen
        beneath it (Android's dump holds only the dialog's window), so then only the modal's nodes
        count (and, around a popover, UIKit's `PopoverDismissRegion`, a tap outside that closes it);
        and a table lists rows beyond the screen, so a node must also overlap the screen (on
        Android too: a source given without visible-bounds clipping lists views past the edge).
        The soft keyboard covers the app on both platforms: an app node lying wholly under it
        is still listed by the driver, but a tap there lands on a key."""
        nodes = [n for n in self.nodes() if n.is_control]
        screen = self.screen_box
        if screen is not None:
            nodes = [n for n in nodes if screen.intersects(n.bounds)]  # type: ignore[arg-type]
        if self.platform == IOS:
            modal = self.modal()
            if modal is not None and modal.bounds is not None:
                nodes = [n for n in nodes if modal.bounds.contains(n.bounds)  # type: ignore[arg-type]
                         or n.content_desc == POPOVER_DISMISS]
        keys = self.keyboard_box
        if keys is not None:
            nodes = [n for n in nodes if n.keyboard or not keys.contains(n.bounds)]  # type: ignore[arg-type]
        return nodes

    def actionable(self) -> list[UINode]:
        """The controls an actor or a healer may act on: `controls()` that are enabled (a button
        with `enabled="false"` takes no tap; a check still sees it, the prompt marks it disabled)."""
        return [n for n in self.controls() if n.enabled]

    def keyboard(self) -> UINode | None:
        """The soft keyboard's top node when one is up: iOS the displayed `XCUIElementTypeKeyboard`,
        Android the IME window (a top-level window of a keyboard package, see `is_ime_package`)."""
        found = [child for node in self.nodes() if not node.keyboard for child in node.children
                 if child.keyboard and child.displayed and child.bounds is not None]
        return found[-1] if found else None

    @property
    def keyboard_box(self) -> Box | None:
        """Where the soft keyboard is, or None when none is shown. iOS: the Keyboard's frame. Android:
        what the IME window's leaves cover (its top node may span the whole screen, and the nav
        buttons an IME draws, `android:id/input_method_nav_*`, are not the keyboard); a keyboard
        of no size (hidden, its window still listed) is none."""
        top = self.keyboard()
        if top is None or top.bounds is None:
            return None
        if self.platform == IOS:
            return None if top.bounds.is_empty else top.bounds
        leaves = [n.bounds for n in top.walk() if not n.children and n.displayed and n.bounds is not None
                  and not n.bounds.is_empty and not n.resource_id.startswith("android:id/input_method_nav")]
        if not leaves:
            return None
        return Box(min(b.left for b in leaves), min(b.top for b in leaves),
                   max(b.right for b in leaves), max(b.bottom for b in leaves))

    def modal(self) -> UINode | None:
        """The topmost displayed dialog that takes the touches (the last in document order), if any;
        one of no size (an alert WebDriverAgent still lists as it goes away) takes nothing."""
        found = [n for n in self.nodes() if n.is_modal and n.displayed and n.bounds is not None
                 and not n.bounds.is_empty]
        return found[-1] if found else None


def _number(attrs: dict[str, str], key: str) -> float:
    value = float(attrs[key])
    if not math.isfinite(value):
        raise ValueError(f"{key}={attrs[key]!r} is not a finite number")
    return value


def _bounds_of(attrs: dict[str, str], factor: float) -> Box | None:
    if "bounds" in attrs:
        try:
            box = Box.from_bounds(attrs["bounds"])
        except ValueError:
            return None
        return box if factor == 1.0 else box.scale(factor)
    if all(k in attrs for k in ("x", "y", "width", "height")):
        try:
            x, y, w, h = (_number(attrs, k) for k in ("x", "y", "width", "height"))
        except ValueError:
            return None
        if factor == 1.0:
            return Box.from_xywh(int(x), int(y), int(w), int(h))
        return Box(round(x * factor), round(y * factor), round((x + w) * factor), round((y + h) * factor))
    return None


def _node(element: Element, depth: int, index_path: str, platform: str, factor: float) -> UINode:
    attrs = {k: v for k, v in element.attrib.items()}
    roles = roles_of(attrs, element.tag, platform)
    return UINode(
        cls=roles.cls, bounds=_bounds_of(attrs, factor), text=roles.text, content_desc=roles.content_desc,
        resource_id=roles.resource_id, package=attrs.get("package") or "", clickable=roles.clickable,
        focused=roles.focused, password=roles.password, scrollable=roles.scrollable, checked=roles.checked,
        enabled=roles.enabled, displayed=roles.displayed, depth=depth, index_path=index_path, attrs=attrs,
        platform=platform, value=roles.value, checkable=roles.checkable, long_clickable=roles.long_clickable,
        selected=roles.selected, accessible=roles.accessible,
    )


def _convert(top: Element, platform: str, factor: float) -> UINode:
    """Element tree -> UINode tree, iteratively (a hostile 10 000-deep source must not recurse)."""
    root = _node(top, 0, "", platform, factor)
    stack: list[tuple[Element, UINode]] = [(top, root)]
    while stack:
        element, node = stack.pop()
        kids = list(element)
        for i, child in enumerate(kids):
            path = f"{node.index_path}/{i}" if node.index_path else str(i)
            converted = _node(child, node.depth + 1, path, platform, factor)
            converted.content_view = platform == IOS and len(kids) == 1 and _is_content_view(node, converted)
            converted.keyboard = node.keyboard or (converted.kind == "Keyboard" if platform == IOS
                                                   else is_ime_package(converted.package))
            node.children.append(converted)
            stack.append((child, converted))
    return root


def _is_content_view(parent: UINode, child: UINode) -> bool:
    """UIKit puts a cell's views in an unnamed content view (`Cell > Other > ...`): the row is
    the Cell, so a change snaps to it and rows of one Table still merge into the list."""
    return (parent.kind == "Cell" and child.kind == "Other" and not child.content_desc
            and not ios_label(child.attrs))


def _screen_size(top: Element, root: UINode, platform: str, factor: float) -> tuple[int | None, int | None]:
    if platform == IOS:
        app = next((n for n in root.walk() if n.cls == "XCUIElementTypeApplication" and n.bounds is not None
                    and not n.bounds.is_empty), None)
        if app is not None and app.bounds is not None:
            return app.bounds.width, app.bounds.height
        # an Application of zero size (Mac2, some sources): the screen reaches the windows' far edges
        return _extent([n for n in root.walk() if n.cls == "XCUIElementTypeWindow"])
    width, height = _int_or_none(top.attrib.get("width")), _int_or_none(top.attrib.get("height"))
    # `adb shell uiautomator dump` (`<hierarchy rotation="0">`) and Espresso (a DecorView root)
    # give no size: the screen is what the top-level windows cover. UiAutomator2's size is
    # `Display.getSize()`, which leaves out the navigation bar (1080 x 2088 on a 2220-px-high
    # phone, 2208 wide in landscape): a window drawn edge to edge, or the bar's own, reaches further.
    reach_w, reach_h = _extent([root] if root.bounds is not None else root.children)
    if not (width and height):
        return reach_w, reach_h
    if factor != 1.0:
        width, height = round(width * factor), round(height * factor)
    return max(width, reach_w or 0), max(height, reach_h or 0)


def _extent(nodes: list[UINode]) -> tuple[int | None, int | None]:
    boxes = [n.bounds for n in nodes if n.bounds is not None and not n.bounds.is_empty]
    if not boxes:
        return None, None
    return max(b.right for b in boxes), max(b.bottom for b in boxes)


def parse_page_source(xml: str | bytes, *, scale: float | None = None) -> UITree:
    """Parse Appium page source (UiAutomator2 or XCUITest). Raises `UITreeError` saying what is
    wrong with it. `scale`: screenshot pixels per source unit; given, the tree comes back in pixels."""
    if scale is not None and not scale > 0:
        raise UITreeError(f"page source scale must be > 0 screenshot pixels per unit, got {scale!r}")
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
    platform = detect_platform(top)
    factor = 1.0 if scale is None else float(scale)
    root = _convert(top, platform, factor)
    width, height = _screen_size(top, root, platform, factor)
    unit = "pt" if platform == IOS and scale is None else "px"
    return UITree(root=root, width=width, height=height, platform=platform, unit=unit, scale=factor)


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
