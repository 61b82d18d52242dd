"""What `Device` does differently on an XCUITest (iOS) session (issue 11), beside `web.py`.

* Locators: `id=` is the accessibility identifier (`accessibility id`, XCUITest's `name`);
  `desc=` is the accessibility label or the name, `text=` the label or the value (both as an
  `-ios predicate string`), `xpath=` passes through.
* A secure field is the element type `XCUIElementTypeSecureTextField` (no `password` attribute).
* There is no back key: back is the navigation bar's back button; where there is no navigation
  bar (a full-screen pushed view) an edge swipe; nothing at all is a clear error. The driver's
  own `back` silently does nothing when it finds no button, so it is not used.
* Home is the home button, `mobile: pressButton` with `name: home` (SpringBoard comes to the front).
"""

from __future__ import annotations

from typing import Any

from appium.webdriver.common.appiumby import AppiumBy

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, UITree

__all__ = ["HOME", "SECURE_FIELD", "back_target", "ios_locator", "ios_package", "is_ios", "predicate_literal"]

SECURE_FIELD = "XCUIElementTypeSecureTextField"
_NAV_BAR = "XCUIElementTypeNavigationBar"
_ALERT = "XCUIElementTypeAlert"
HOME: tuple[str, dict[str, Any]] = ("pressButton", {"name": "home"})


def is_ios(caps: dict[str, object]) -> bool:
    """An XCUITest session, by its (returned) capabilities."""
    name = str(caps.get("platformName", "")).lower()
    driver = str(caps.get("automationName", caps.get("appium:automationName", ""))).lower()
    return name == "ios" or driver == "xcuitest"


def predicate_literal(value: str) -> str:
    """A double-quoted NSPredicate string (backslash escapes)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ios_locator(kind: str, value: str) -> tuple[str, str]:
    """The XCUITest locator for one of Device's locator kinds (see the module docstring)."""
    literal = predicate_literal(value)
    if kind == "id":
        return AppiumBy.ACCESSIBILITY_ID, value
    if kind == "desc":
        return AppiumBy.IOS_PREDICATE, f"label == {literal} OR name == {literal}"
    if kind == "text":
        return AppiumBy.IOS_PREDICATE, f"label == {literal} OR value == {literal}"
    return AppiumBy.XPATH, value


def _attr(node: UINode, name: str) -> str:
    return node.attrs.get(name, "")


def _type(node: UINode) -> str:
    return _attr(node, "type") or node.cls


def ios_package(tree: UITree) -> str:
    """The foreground app's name (the `XCUIElementTypeApplication`'s), the package of an iOS observation."""
    for node in tree.nodes():
        if _type(node) == "XCUIElementTypeApplication":
            return _attr(node, "name") or _attr(node, "label")
    return ""


def back_target(tree: UITree) -> tuple[str, Box | None, str]:
    """How to go back on this screen: `("button", its box, "")`, `("swipe", None, "")` (no
    navigation bar), or `("none", None, why)`; boxes are in the tree's units."""
    alerts = [n for n in tree.nodes() if _type(n) == _ALERT]
    if alerts:
        labels = [_attr(b, "label") or _attr(b, "name") for b in alerts[0].walk() if _type(b).endswith("Button")]
        return "none", None, (f"an alert is open ({_attr(alerts[0], 'label') or 'untitled'}): iOS has no back; "
                              f"tap one of its buttons {labels}")
    bars = [n for n in tree.nodes() if _type(n) == _NAV_BAR and n.bounds is not None]
    if not bars:
        return "swipe", None, ""
    bar = bars[0]
    assert bar.bounds is not None
    buttons = [b for b in bar.walk() if _type(b) == "XCUIElementTypeButton" and b.bounds is not None]
    named_back = [b for b in buttons if "back" in (_attr(b, "name") + _attr(b, "label")).lower()]
    left = [b for b in buttons if b.bounds is not None and b.bounds.center[0] < bar.bounds.left + bar.bounds.width / 3]
    ordered = named_back or sorted(left, key=lambda b: b.bounds.left if b.bounds else 0)
    chosen = ordered[0] if ordered else None
    if chosen is None or chosen.bounds is None:
        title = _attr(bar, "name") or "this screen"
        return "none", None, f"no back button in the navigation bar of {title!r}: it is the root of its navigation stack"
    return "button", chosen.bounds, ""
