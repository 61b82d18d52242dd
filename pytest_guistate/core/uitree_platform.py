"""What UiAutomator2 and XCUITest page sources say differently about the same roles (issue 11).

UiAutomator2 states roles as attributes (`clickable`, `scrollable`, `password`, `checkable`,
`checked`, `text`, `content-desc`, `resource-id`, `bounds` in pixels). XCUITest (WebDriverAgent)
states them through the element *type* (`XCUIElementTypeButton`, `...Cell`, `...Switch`,
`...SecureTextField`) and the attributes `name label value enabled visible accessible x y width
height` in points; there is no `clickable` and no `resource-id`. This module reads one raw
attribute dict into the platform-neutral roles `UINode` carries, so the rest of the plugin asks
"is it tappable / editable / a password" and never which driver produced the tree.

Facts used (Appium XCUITest driver "Element Attributes"; WebDriverAgent `wdValue`/`wdName`):
`name` is the accessibility identifier, else the label (it is what the `accessibility id` and
`id` locator strategies match); a Switch's `value` is "1"/"0"; a selected Button's `value` is
"1"; a StaticText's or text field's `value` is its text (a field's placeholder when empty);
frames are integral points.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from xml.etree.ElementTree import Element

__all__ = ["ANDROID", "IOS", "IOS_PREFIX", "POPOVER_DISMISS", "UNKNOWN", "Roles", "detect_platform",
           "editable_class", "ios_label", "is_ime_package", "is_ios_container_type", "is_ios_modal", "roles_of",
           "short_type"]

ANDROID, IOS, UNKNOWN = "android", "ios", "unknown"
IOS_PREFIX = "XCUIElementType"
_TRUE = {"true", "1", "yes"}

# XCUIElementType* suffixes (the prefix stripped) by role.
_IOS_TAPPABLE = frozenset({
    "Button", "Cell", "Switch", "Toggle", "Link", "TextField", "SecureTextField", "SearchField", "TextView",
    "Slider", "Stepper", "SegmentedControl", "Tab", "MenuItem", "MenuBarItem", "PickerWheel", "PageIndicator",
    "CheckBox", "RadioButton", "PopUpButton", "ComboBox", "DisclosureTriangle", "Icon", "ColorWell",
    "Incrementor",
})
_IOS_EDITABLE = frozenset({"TextField", "SecureTextField", "SearchField", "TextView"})
_IOS_SCROLLABLE = frozenset({"Table", "CollectionView", "ScrollView"})
_IOS_CHECKABLE = frozenset({"Switch", "Toggle", "CheckBox", "RadioButton"})
_IOS_PASSWORD = frozenset({"SecureTextField"})
# Types whose `value` is the text they show (elsewhere it is a state: a switch's "0", a slider's "50%").
_IOS_TEXT_VALUE = frozenset({"StaticText", "TextField", "SecureTextField", "SearchField", "TextView", "PickerWheel"})
_IOS_CONTAINERS = frozenset({
    "Cell", "Other", "Table", "CollectionView", "ScrollView", "Alert", "Sheet", "NavigationBar", "TabBar",
    "Toolbar", "Keyboard", "WebView", "Group", "Popover", "SegmentedControl", "Picker", "DatePicker",
})
_IOS_NEVER_CONTAINER = frozenset({"Application", "Window", "AppiumAUT"})  # the screen itself
# An iPad action sheet is a Popover: UIKit's `PopoverDismissRegion` around it takes a tap outside (and dismisses)
_IOS_MODAL = frozenset({"Alert", "Sheet", "Popover"})
POPOVER_DISMISS = "PopoverDismissRegion"
_TRAIT_TAPPABLE = ("Button", "Link", "Adjustable")  # newer WebDriverAgent sources list `traits`
# Android soft keyboards: the IME window a multi-window UiAutomator2 dump lists beside the app's
# (Gboard, AOSP LatinIME, Samsung Keyboard, SwiftKey); any package naming an `inputmethod` counts too.
_IME_PACKAGES = frozenset({"com.google.android.inputmethod.latin", "com.android.inputmethod.latin",
                           "com.samsung.android.honeyboard", "com.touchtype.swiftkey"})


def _flag(attrs: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = attrs.get(name)
    return default if value is None else value.strip().lower() in _TRUE


def short_type(cls: str) -> str:
    """`XCUIElementTypeButton` -> `Button`; `android.widget.Button` -> `Button`."""
    if cls.startswith(IOS_PREFIX):
        return cls[len(IOS_PREFIX):]
    return cls.rpartition(".")[2]


def editable_class(cls: str) -> bool:
    """A class name (as stored in memory entries too) that is a text input on either platform."""
    if cls.startswith(IOS_PREFIX):
        return short_type(cls) in _IOS_EDITABLE
    return "EditText" in cls or "TextField" in cls


def is_ios_container_type(cls: str) -> bool | None:
    """True/False for iOS types that always/never group others; None when children decide."""
    kind = short_type(cls)
    if kind in _IOS_NEVER_CONTAINER:
        return False
    return True if kind in _IOS_CONTAINERS else None


def is_ime_package(package: str) -> bool:
    """The package of an Android soft keyboard (its window is not the app's)."""
    return package in _IME_PACKAGES or ".inputmethod" in package


def ios_label(attrs: Mapping[str, str]) -> str:
    """The iOS label: WebDriverAgent's `label`, or Mac2's `title` (macOS XCTest says `title`)."""
    return attrs.get("label") or attrs.get("title") or ""


def is_ios_modal(cls: str) -> bool:
    return cls.startswith(IOS_PREFIX) and short_type(cls) in _IOS_MODAL


def detect_platform(top: Element) -> str:
    """`ios` for an `AppiumAUT` / `XCUIElementType*` document, `android` for a `<hierarchy>` or
    `android.*` classes / `bounds="[l,t][r,b]"` geometry, else `unknown` (read like Android)."""
    if top.tag == "AppiumAUT" or top.tag.startswith(IOS_PREFIX) or top.get("type", "").startswith(IOS_PREFIX):
        return IOS
    if top.tag == "hierarchy":
        return ANDROID
    for element in _first(top.iter(), 50):
        if element.tag.startswith(IOS_PREFIX) or element.get("type", "").startswith(IOS_PREFIX):
            return IOS
        if element.get("class", "").startswith("android.") or "bounds" in element.attrib:
            return ANDROID
    return UNKNOWN


def _first(items: Iterable[Element], limit: int) -> Iterable[Element]:
    for i, item in enumerate(items):
        if i >= limit:
            return
        yield item


@dataclass(frozen=True)
class Roles:
    """The platform-neutral reading of one node's attributes (see `UINode` for the meaning)."""

    cls: str
    text: str
    content_desc: str
    resource_id: str
    value: str
    clickable: bool
    long_clickable: bool
    scrollable: bool
    password: bool
    checkable: bool
    checked: bool
    selected: bool
    focused: bool
    enabled: bool
    displayed: bool
    accessible: bool


def roles_of(attrs: Mapping[str, str], tag: str, platform: str) -> Roles:
    """Read a raw attribute dict as the roles of `platform` ("ios" or anything else)."""
    if platform == IOS:
        return _ios_roles(attrs, tag)
    cls = attrs.get("class") or attrs.get("type") or tag
    text = attrs.get("text") or attrs.get("value") or attrs.get("label") or ""
    return Roles(
        cls=cls,
        text=text,
        content_desc=attrs.get("content-desc") or attrs.get("name") or "",
        resource_id=attrs.get("resource-id") or "",
        # an empty input shows its hint, and older Android reports that as its `text`
        value=text if editable_class(cls) and text != attrs.get("hint") else "",
        clickable=_flag(attrs, "clickable"),
        long_clickable=_flag(attrs, "long-clickable"),
        scrollable=_flag(attrs, "scrollable"),
        password=_flag(attrs, "password") or "SecureTextField" in (attrs.get("type") or ""),
        checkable=_flag(attrs, "checkable"),
        checked=_flag(attrs, "checked"),
        selected=_flag(attrs, "selected"),
        focused=_flag(attrs, "focused"),
        enabled=_flag(attrs, "enabled", True),
        displayed=_flag(attrs, "displayed", True) and _flag(attrs, "visible", True),
        accessible=_flag(attrs, "accessible", True),
    )


def _ios_roles(attrs: Mapping[str, str], tag: str) -> Roles:
    cls = attrs.get("type") or tag
    kind = short_type(cls)
    # Mac2 (macOS XCTest) sources say `identifier` / `title` where WebDriverAgent says `name` / `label`
    label = ios_label(attrs)
    name, value = attrs.get("name") or attrs.get("identifier") or "", attrs.get("value") or ""
    shown = value
    if kind in _IOS_EDITABLE and value and value == attrs.get("placeholderValue"):
        value = ""  # an empty field reports its placeholder as its value: shown, not typed
    traits = attrs.get("traits") or ""
    accessible = _flag(attrs, "accessible")
    # a React Native touchable or a custom control: an accessibility element grouping its texts
    grouped_control = kind == "Other" and accessible and bool(label)
    tappable = kind in _IOS_TAPPABLE or any(t in traits for t in _TRAIT_TAPPABLE) or grouped_control
    checkable = kind in _IOS_CHECKABLE
    return Roles(
        cls=cls,
        text=label or (shown if kind in _IOS_TEXT_VALUE else ""),
        content_desc=name,
        resource_id="",
        value=value,
        clickable=tappable,
        long_clickable=False,
        scrollable=kind in _IOS_SCROLLABLE,
        password=kind in _IOS_PASSWORD,
        checkable=checkable,
        checked=checkable and value.strip().lower() in _TRUE,
        selected=_flag(attrs, "selected") or (kind == "Button" and value == "1"),
        focused=_flag(attrs, "focused") or _flag(attrs, "hasFocus"),
        enabled=_flag(attrs, "enabled", True),
        displayed=_flag(attrs, "visible", True),
        accessible=accessible,
    )
