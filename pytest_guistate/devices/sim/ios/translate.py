"""The phone's Android-shaped tree, as XCUITest/WebDriverAgent would report the same screen.

One model, two personas (issue 11): the apps build one view tree; this module turns its
`SimNode`s (pixels, Android classes, resource ids) into `IosNode`s (points, `XCUIElementType*`,
`name`/`label`/`value`), keeping every node's key so element ids and staleness behave the same.
What follows WDA (`XCUIElement+FBWebDriverAttributes`, driver docs "Element Attributes"):
`name` is the accessibility identifier, else the label; a text field's `value` is its text,
else its placeholder; a secure field's value is dots; a switch's value is "0"/"1" and its
label is the row's title; a cell's label joins its texts. The status bar is not part of an
app's source on iOS, so it is left out (its pixels stay in the screenshot). A row partly scrolled
out of its list keeps its whole frame (WDA reports the element's frame, not the visible part; the
Android persona clips to the list as UiAutomator2 does); a tap on it goes to the part still shown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import cast

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import View
from pytest_guistate.devices.sim.keyboard import KEYBOARD_PACKAGE
from pytest_guistate.devices.sim.model import SimNode

__all__ = ["AUT", "ELEMENT_TYPES", "IosNode", "kids", "nodes_of", "translate"]

AUT = "AppiumAUT"
SYSTEMUI = "com.android.systemui"
SPRINGBOARD = "com.apple.springboard"
_LISTS = ("RecyclerView", "ListView")


@dataclass
class IosNode(SimNode):
    """A node with WDA's attribute set; `bounds` are points. `name`/`label`/`value` None = absent."""

    name: str | None = None
    label: str | None = None
    value: str | None = None
    accessible: bool = False
    index: int = 0
    bundle_id: str = ""
    shown: Box | None = None  # the part inside its scroll view, when the frame reaches past it (points)

    def attribute(self, name: str) -> str | None:
        """Attribute values as WDA returns them (strings, `true`/`false`, None when absent)."""
        flags = {"enabled": self.enabled, "visible": self.displayed, "accessible": self.accessible,
                 "selected": self.selected, "focused": self.focused, "hittable": self.displayed and self.enabled}
        if name in flags:
            return "true" if flags[name] else "false"
        x, y, width, height = self.bounds.to_xywh()
        values: dict[str, str | None] = {
            "type": self.cls, "name": self.name, "label": self.label, "value": self.value,
            "index": str(self.index), "rect": f'{{"x":{x},"y":{y},"width":{width},"height":{height}}}',
            "placeholderValue": None,
        }
        if name == "bundleId":
            return self.bundle_id or None
        if name == "elementType":  # XCUIElementType's raw value, what predicates compare as a number
            number = ELEMENT_TYPES.get(self.cls.removeprefix("XCUIElementType"))
            return None if number is None else str(number)
        return values.get(name)


# XCUIElementType's raw values in declaration order (Any = 0, Other = 1, Application = 2, ... Cell = 75)
ELEMENT_TYPES = {kind: number for number, kind in enumerate(["Any", "Other", "Application", "Group", "Window", "Sheet", "Drawer", "Alert", "Dialog", "Button", "RadioButton", "RadioGroup", "CheckBox", "DisclosureTriangle", "PopUpButton", "ComboBox", "MenuButton", "ToolbarButton", "Popover", "Keyboard", "Key", "NavigationBar", "TabBar", "TabGroup", "Toolbar", "StatusBar", "Table", "TableRow", "TableColumn", "Outline", "OutlineRow", "Browser", "CollectionView", "Slider", "PageIndicator", "ProgressIndicator", "ActivityIndicator", "SegmentedControl", "Picker", "PickerWheel", "Switch", "Toggle", "Link", "Image", "Icon", "SearchField", "ScrollView", "ScrollBar", "StaticText", "TextField", "SecureTextField", "DatePicker", "TextView", "Menu", "MenuItem", "MenuBar", "MenuBarItem", "Map", "WebView", "IncrementArrow", "DecrementArrow", "Timeline", "RatingIndicator", "ValueIndicator", "SplitGroup", "Splitter", "RelevanceIndicator", "ColorWell", "HelpTag", "Matte", "DockItem", "Ruler", "RulerMarker", "Grid", "LevelIndicator", "Cell", "LayoutArea", "LayoutItem", "Handle", "Stepper", "Tab", "TouchBar", "StatusItem"])}


def nodes_of(root: SimNode) -> Iterator[IosNode]:
    """`root.walk()` typed for a translated tree (every node of it is an `IosNode`)."""
    for node in root.walk():
        yield cast(IosNode, node)


def kids(node: SimNode) -> list[IosNode]:
    return cast(list[IosNode], node.children)


def _pt(box: Box, scale: float) -> Box:
    return Box(round(box.left / scale), round(box.top / scale), round(box.right / scale), round(box.bottom / scale))


def _identifier(node: SimNode) -> str:
    """An app's own resource id becomes its accessibilityIdentifier; framework ids are not set."""
    rid = node.resource_id
    if not rid or rid.startswith("android:id/") or node.package in (SYSTEMUI, "com.android.launcher3"):
        return ""
    return rid.rpartition("/")[2]


def _keyboard_type(node: SimNode) -> str:
    """The keyboard window in XCUITest's shape: Other > Keyboard > Other (keys) > Key / Button."""
    return {"keyboard": "XCUIElementTypeKeyboard", "key": "XCUIElementTypeKey",
            "button": "XCUIElementTypeButton"}.get(node.resource_id, "XCUIElementTypeOther")


def _type(node: SimNode, parent_type: str) -> str:
    cls = node.cls
    if node.package == KEYBOARD_PACKAGE:
        return _keyboard_type(node)
    if node.resource_id.endswith(":id/toolbar"):
        return "XCUIElementTypeNavigationBar"
    if node.resource_id == "android:id/parentPanel":
        return "XCUIElementTypeAlert"
    if cls == "android.webkit.WebView":
        return "XCUIElementTypeWebView"
    if cls == "android.widget.EditText":
        return "XCUIElementTypeSecureTextField" if node.password else "XCUIElementTypeTextField"
    if cls == "android.widget.Switch":
        return "XCUIElementTypeSwitch"
    if cls == "android.widget.Button":
        return "XCUIElementTypeButton"
    if cls == "android.widget.ProgressBar":
        return "XCUIElementTypeActivityIndicator"
    if cls == "android.widget.Toast":
        return "XCUIElementTypeStaticText"
    if any(hint in cls for hint in _LISTS):
        return "XCUIElementTypeCollectionView" if "grid" in node.key else "XCUIElementTypeTable"
    if node.key.startswith("launcher/app/") and node.key.count("/") == 2:
        return "XCUIElementTypeIcon"
    if cls in ("android.widget.ImageView", "android.widget.CheckBox"):
        return "XCUIElementTypeButton" if node.clickable else "XCUIElementTypeImage"
    if cls == "android.widget.TextView":
        return "XCUIElementTypeButton" if node.clickable else "XCUIElementTypeStaticText"
    if parent_type in ("XCUIElementTypeTable", "XCUIElementTypeCollectionView") or (
            node.clickable and node.children):
        return "XCUIElementTypeCell"
    return "XCUIElementTypeOther"


def _texts(node: SimNode) -> list[str]:
    return [n.text for n in node.walk() if n is not node and n.text and n.cls == "android.widget.TextView"]


class _Translator:
    def __init__(self, scale: float, views: Mapping[str, View]) -> None:
        self.scale = scale
        self.views = views

    def node(self, node: SimNode, parent_type: str, index: int, siblings: list[SimNode]) -> IosNode:
        kind = _type(node, parent_type)
        label, value = self._label_value(node, kind, siblings)
        identifier = _identifier(node)
        children = node.children
        if node.package == KEYBOARD_PACKAGE:  # a key is named by its key name and labelled by what it shows
            label, value = (node.text or node.content_desc or None) if kind != "XCUIElementTypeOther" else None, None
            identifier = node.content_desc if kind != "XCUIElementTypeOther" else ""
        if kind == "XCUIElementTypeNavigationBar":
            label, identifier = None, next(iter(_texts(node)), "")  # WDA: a bar is named by its title
        elif kind == "XCUIElementTypeAlert":
            label = next(iter(_texts(node)), None)  # an alert is named and labelled by its title
            children = sorted(children, key=lambda c: (c.bounds.top, c.bounds.left))  # UIKit: left to right
        name = identifier or label or None
        view = self.views.get(node.key)
        clipped = view is not None and view.box != node.bounds  # a row partly scrolled out of its list
        frame = _pt(view.box if clipped and view is not None else node.bounds, self.scale)
        out = IosNode(key=node.key, cls=kind, bounds=frame, text=value or label or "",
                      package=node.package, clickable=node.clickable, focused=node.focused, password=node.password,
                      checked=node.checked, enabled=node.enabled, selected=node.selected, displayed=True,
                      name=name, label=label, value=value, index=index,
                      accessible=kind not in _CONTAINERS, shown=_pt(node.bounds, self.scale) if clipped else None)
        out.children = [self.node(child, kind, i, children) for i, child in enumerate(children)]
        return out

    def _label_value(self, node: SimNode, kind: str, siblings: list[SimNode]) -> tuple[str | None, str | None]:
        if kind in ("XCUIElementTypeTextField", "XCUIElementTypeSecureTextField"):
            view = self.views.get(node.key)
            hint = view.style.hint if view is not None else ""
            return node.content_desc or None, node.text or hint or None
        if kind == "XCUIElementTypeSwitch":
            title = next((s.text for s in siblings if s is not node and s.resource_id == "android:id/title"), "")
            return title or node.content_desc or None, "1" if node.checked else "0"
        if kind == "XCUIElementTypeStaticText":
            text = node.text or node.content_desc
            return text or None, text or None
        if kind == "XCUIElementTypeCell":
            joined = ", ".join(_texts(node))
            return node.content_desc or joined or None, None
        if kind == "XCUIElementTypeActivityIndicator":
            return node.content_desc or "In progress", "1"
        return node.content_desc or node.text or None, None


_CONTAINERS = frozenset({"XCUIElementTypeOther", "XCUIElementTypeWindow", "XCUIElementTypeApplication",
                         "XCUIElementTypeKeyboard",
                         "XCUIElementTypeTable", "XCUIElementTypeCollectionView", "XCUIElementTypeScrollView",
                         "XCUIElementTypeNavigationBar", "XCUIElementTypeAlert"})


def translate(root: SimNode, views: Mapping[str, View], *, scale: float, width_pt: int, height_pt: int,
              bundle_id: str, app_name: str) -> IosNode:
    """The `<AppiumAUT>` root: the application, one window per Android window (status bar left out)."""
    tr = _Translator(scale, views)
    screen = Box(0, 0, width_pt, height_pt)
    app = IosNode(key="ios/application", cls="XCUIElementTypeApplication", bounds=screen, text=app_name,
                  package=bundle_id, name=app_name, label=app_name, bundle_id=bundle_id)
    windows = [w for w in root.children if w.package != SYSTEMUI]
    for i, window in enumerate(windows):
        shell = IosNode(key=f"ios/window/{window.key}", cls="XCUIElementTypeWindow", bounds=screen, index=i,
                        package=window.package)
        content = tr.node(window, "XCUIElementTypeWindow", 0, [])
        if content.cls == "XCUIElementTypeAlert":  # UIKit hosts an alert in its own window, over a dimmed Other
            dim = IosNode(key=f"ios/dim/{window.key}", cls="XCUIElementTypeOther", bounds=screen,
                          package=window.package)
            dim.children = [content]
            content = dim
        shell.children = [content]
        app.children.append(shell)
    aut = IosNode(key="ios/aut", cls=AUT, bounds=screen)
    aut.children = [app]
    return aut
