"""Views to `SimNode`s, hit testing and noise overlays: the phone's view-tree plumbing.

Kept apart from `phone.py` (input, lifecycle, faults) so each reads in one sitting.
"""

from __future__ import annotations

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import View
from pytest_guistate.devices.sim.model import SimNode

__all__ = ["find_view", "hit", "scroll_target", "to_simnodes"]


def to_simnodes(view: View, package: str, clip: Box | None = None) -> SimNode | None:
    """Convert with clipping: bounds are cut to every enclosing scroll viewport; a node cut to
    nothing is dropped with its subtree (rows scrolled off screen leave the tree, like UiAutomator2)."""
    bounds = view.box if clip is None else view.box.intersection(clip)
    if bounds.is_empty and view.cls != "hierarchy":
        return None
    pkg = view.package or package
    node = SimNode(
        key=view.key, cls=view.cls, bounds=bounds, text=view.text, content_desc=view.desc, resource_id=view.rid,
        package=pkg, clickable=view.is_clickable, long_clickable=view.on_long is not None,
        focusable=view.focusable or view.is_clickable, focused=view.focused, password=view.password,
        scrollable=view.scrollable, checkable=view.checkable, checked=view.checked, enabled=view.enabled,
        selected=view.selected, displayed=True,
    )
    inner = bounds if view.clip else clip
    for child in view.children:
        converted = to_simnodes(child, pkg, inner)
        if converted is not None:
            node.children.append(converted)
    return node


def _hit(view: View, x: int, y: int, want_long: bool) -> View | None:
    if not view.box.contains_point(x, y):
        return None
    for child in reversed(view.children):
        found = _hit(child, x, y, want_long)
        if found is not None:
            return found
    if view.is_clickable or (want_long and view.on_long is not None):
        return view
    return None


def hit(windows: list[View], x: int, y: int, want_long: bool = False) -> tuple[View | None, bool]:
    """The view a touch at (x, y) goes to, top window first: `(target, swallowed)`.

    A modal window (dialog, system pop-up) swallows touches that miss its buttons, so nothing
    underneath reacts, as with a real dialog that is not cancelable on outside touch.
    """
    for window in reversed(windows):
        if window.cls == "android.widget.Toast":
            continue  # toasts never take touches
        target = _hit(window, x, y, want_long)
        if target is not None:
            return target, False
        if window.modal:
            return None, True
    return None, False


def find_view(root: View, key: str) -> View | None:
    for view in root.walk():
        if view.key == key:
            return view
    return None


def scroll_target(windows: list[View], x: int, y: int) -> View | None:
    """The innermost scrollable (or pull-to-refresh) view under (x, y) in the top touchable window."""
    for window in reversed(windows):
        if window.cls == "android.widget.Toast":
            continue
        if not window.box.contains_point(x, y):
            if window.modal:
                return None
            continue
        found: View | None = None
        for view in window.walk():
            if (view.scrollable or view.on_refresh is not None) and view.box.contains_point(x, y):
                found = view
        return found
    return None
