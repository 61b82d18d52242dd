"""One accessibility node with its roles read per platform (see `uitree.py` for the contract).

Kept apart from the tree and its parser so each stays small; import it from `core.uitree`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree_platform import (
    IOS,
    UNKNOWN,
    editable_class,
    ios_label,
    is_ios_container_type,
    is_ios_modal,
    short_type,
)

__all__ = ["UINode"]

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
_TEXT_VALUE_KINDS = ("StaticText", "TextField", "SecureTextField", "SearchField", "TextView", "PickerWheel")


@dataclass
class UINode:
    """One accessibility node, its roles read per platform; `attrs` keeps every raw attribute.

    `text`: what the node shows (Android `text`; iOS `label`, or `value` for texts and fields).
    `content_desc`: Android `content-desc`; iOS `name` (accessibility id). `resource_id`: Android
    only. `clickable`: Android's flag, or on iOS an interactive type (Button, Cell, Switch, Link,
    text fields, Slider, segmented-control buttons, Tab, MenuItem ...). `scrollable`, `password`,
    `checkable`, `checked`: the flags on Android, the type (Table/CollectionView/ScrollView,
    SecureTextField, Switch with `value` "1") on iOS. `displayed`: Android `displayed`, iOS `visible`.
    """

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
    platform: str = UNKNOWN
    value: str = ""  # iOS `value` (a switch's "0"/"1", a field's content); Android: an input's text
    checkable: bool = False
    long_clickable: bool = False
    selected: bool = False
    accessible: bool = True
    content_view: bool = field(default=False, repr=False)  # iOS: a Cell's unnamed inner Other (see _convert)
    keyboard: bool = field(default=False, repr=False)  # part of the soft keyboard (iOS Keyboard, Android IME window)

    def walk(self) -> Iterator[UINode]:
        """This node and its descendants in document order (iterative: deep trees are fine)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    # -- roles ----------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """The short type: `Button` for both `android.widget.Button` and `XCUIElementTypeButton`."""
        return short_type(self.cls)

    @property
    def is_tappable(self) -> bool:
        return self.clickable

    @property
    def is_editable(self) -> bool:
        return editable_class(self.cls)

    @property
    def is_scrollable(self) -> bool:
        return self.scrollable

    @property
    def is_password(self) -> bool:
        return self.password

    @property
    def is_checkable(self) -> bool:
        return self.checkable

    @property
    def is_modal(self) -> bool:
        """A dialog that takes the touches (Android's alert panel, an iOS Alert or action Sheet)."""
        return self.resource_id == "android:id/parentPanel" or is_ios_modal(self.cls)

    @property
    def is_drawn(self) -> bool:
        """Whether it can be on screen at all: iOS lists off-screen and hidden elements with
        visible="false"; Android's dump holds drawn views (its flag is kept as before)."""
        return self.displayed or self.platform != IOS

    @property
    def is_control(self) -> bool:
        """A control as drawn, whether or not it can react now: tappable, editable or scrollable,
        displayed, with geometry; of the soft keyboard only its action keys (typing is `type_text`)."""
        return (self.bounds is not None and not self.bounds.is_empty and self.displayed
                and (self.clickable or self.scrollable or self.is_editable)
                and (not self.keyboard or self.is_keyboard_action))

    @property
    def is_actionable(self) -> bool:
        """A control that can react now: `is_control` and enabled (a disabled button ignores a tap)."""
        return self.is_control and self.enabled

    @property
    def is_keyboard_action(self) -> bool:
        """A soft-keyboard key that is more than a character: iOS the keyboard's buttons (Return /
        Search, Next keyboard; characters are `Key`s), Android the IME's editor-action key (Gboard's
        `key_pos_ime_action`: Search / Done / Next)."""
        if not self.keyboard:
            return False
        if self.platform == IOS:
            return self.kind == "Button"
        return self.resource_id.endswith("ime_action")

    @property
    def is_container(self) -> bool:
        if self.bounds is None or self.bounds.is_empty:
            return False
        if self.platform == IOS:
            if not self.displayed or self.content_view:
                return False
            fixed = is_ios_container_type(self.cls)
            return bool(self.children) if fixed is None else fixed
        if self.children:
            return True
        return any(hint in self.cls for hint in _CONTAINER_HINTS)

    @property
    def is_empty_layer(self) -> bool:
        """A container with nothing in it: no children, no text, no name, no control. It draws at
        most a background, and when what lies beneath shows through it is a transparent layer
        (a large app's childless overlay FrameLayout for tooltips and snackbars, an empty iOS
        `Other` over a table) that says nothing about where a change under it was."""
        return (not self.children and self.is_container and not self.is_control and not self.is_checkable
                and not self.text and not self.content_desc and not (self.platform == IOS and self.value))

    @property
    def label(self) -> str:
        """What a person would call this node. Android: text, else description, else hint, else id. iOS:
        `label`, else `name`, else a text's value -- a switch is "Auto-Correction", not "0"."""
        if self.platform == IOS:
            return ios_label(self.attrs) or self.content_desc or self.text or self.kind
        return (self.text or self.content_desc or self.attrs.get("hint") or self.resource_id.rpartition("/")[2]
                or self.cls)

    @property
    def locator_id(self) -> str:
        """The id a locator names it by: resource-id after "/" (Android), `name` (iOS accessibility id)."""
        if self.platform == IOS:
            return self.content_desc
        return self.resource_id.rpartition("/")[2]

    def has_id(self, wanted: str) -> bool:
        """`wanted` is its full resource-id, the part after "/", or its iOS `name`."""
        if self.platform == IOS:
            return bool(wanted) and self.content_desc == wanted
        return self.resource_id == wanted or self.resource_id.rpartition("/")[2] == wanted

    @property
    def descriptions(self) -> tuple[str, ...]:
        """What `desc=` matches, the same for a tap, a find, a check and the memory: Android its
        `content-desc`; iOS its accessibility label or its `name` (WebDriverAgent's `label`, which
        carries "Delete post by Alice", and the identifier, e.g. "delete")."""
        if self.platform == IOS:
            label = ios_label(self.attrs)
            return (label, self.content_desc) if label and label != self.content_desc else (self.content_desc,)
        return (self.content_desc,)

    @property
    def shown_texts(self) -> tuple[str, ...]:
        """Texts a text check matches (the description aside): iOS adds a field's typed value; a web
        node whose case CSS changed adds the text as the page wrote it (`source-text`, issue 34)."""
        if self.platform == IOS and self.value and self.value != self.text and self.kind in _TEXT_VALUE_KINDS:
            return (self.text, self.value)
        source = self.attrs.get("source-text")
        return (self.text, source) if source else (self.text,)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.index_path,
            "class": self.cls,
            "kind": self.kind,
            "platform": self.platform,
            "label": self.label,
            "text": self.text,
            "value": "" if self.password else self.value,
            "content_desc": self.content_desc,
            "resource_id": self.resource_id,
            "locator_id": self.locator_id,
            "bounds": self.bounds.as_list() if self.bounds else None,
            "clickable": self.clickable,
            "editable": self.is_editable,
            "scrollable": self.scrollable,
            "checkable": self.checkable,
            "checked": self.checked,
            "enabled": self.enabled,
            "displayed": self.displayed,
            "focused": self.focused,
            "password": self.password,
        }
