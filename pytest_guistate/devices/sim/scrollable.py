"""`new UiScrollable(...)` in `-android uiautomator` locators (issue 25): scroll a list until a view shows.

The forms tests write: `new UiScrollable(new UiSelector().scrollable(true)).scrollIntoView(new
UiSelector().text("Settings"))`, `.scrollTextIntoView("x")`, `.scrollDescriptionIntoView("x")`, with
`.setAsVerticalList()` and `.setMaxSearchSwipes(n)` before them. The container is the first view
the inner selector matches (it must be scrollable); the phone swipes inside it, a page at a time,
until the target is on screen or a swipe moves nothing, forward (down) first and then back; the
result is the target, as UiAutomator2 returns it. UiAutomator sweeps back to the start first; the sim
sweeps forward first, so a target below is found without touching the top of the list (a target
that is nowhere ends with a backward swipe at the top, which pulls to refresh as a finger would).
Horizontal lists and `getChildByText` are not simulated (refused as invalid selectors).
"""

from __future__ import annotations

import re
from typing import Protocol

from pytest_guistate.devices.sim.errors import W3CError
from pytest_guistate.devices.sim.locators import select_ui
from pytest_guistate.devices.sim.model import SimNode

__all__ = ["is_ui_scrollable", "scroll_into_view"]

_START = re.compile(r"^\s*new\s+UiScrollable\s*\(")
_DEFAULT_SWIPES = 30  # UiScrollable's default max search swipes
_STRING = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*$')


class _Swipeable(Protocol):
    width: int
    height: int

    def root(self) -> SimNode: ...
    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None: ...


def is_ui_scrollable(selector: str) -> bool:
    return _START.match(selector) is not None


def _invalid(selector: str, why: str) -> W3CError:
    return W3CError("invalid selector", f"{why} in {selector!r}")


def _balanced(text: str, start: int, selector: str) -> int:
    """Index just past the ')' closing the '(' before `start` (string literals skipped)."""
    depth, i, quoted = 1, start, False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise _invalid(selector, "unbalanced parentheses")


def _calls(selector: str) -> tuple[str, list[tuple[str, str]]]:
    """(container selector, [(method, argument text), ...]) of a UiScrollable expression."""
    start = _START.match(selector)
    assert start is not None
    end = _balanced(selector, start.end(), selector)
    container = selector[start.end():end - 1]
    calls: list[tuple[str, str]] = []
    rest = selector[end:].strip().rstrip(";").strip()
    while rest:
        call = re.match(r"^\.\s*(\w+)\s*\(", rest)
        if call is None:
            raise _invalid(selector, f"cannot parse near {rest[:40]!r}")
        close = _balanced(rest, call.end(), selector)
        calls.append((call.group(1), rest[call.end():close - 1].strip()))
        rest = rest[close:].strip()
    return container, calls


def _text_arg(selector: str, method: str, arg: str) -> str:
    match = _STRING.match(arg)
    if match is None:
        raise _invalid(selector, f"{method}() takes one string")
    return re.sub(r"\\(.)", r"\1", match.group(1))


def scroll_into_view(phone: _Swipeable, selector: str) -> list[SimNode]:
    """The target views once scrolled into view; [] when the list ends without them."""
    container_selector, calls = _calls(selector)
    target: str | None = None
    swipes = _DEFAULT_SWIPES
    for method, arg in calls:
        if method == "setAsVerticalList":
            continue
        if method == "setMaxSearchSwipes":
            if not arg.isdigit():
                raise _invalid(selector, "setMaxSearchSwipes() takes a whole number")
            swipes = int(arg)
        elif method == "scrollIntoView":
            target = arg
        elif method == "scrollTextIntoView":
            target = f'new UiSelector().text("{_text_arg(selector, method, arg)}")'
        elif method == "scrollDescriptionIntoView":
            target = f'new UiSelector().description("{_text_arg(selector, method, arg)}")'
        else:
            raise _invalid(selector, f"UiScrollable.{method}() is not supported by the simulated phone")
    if target is None:
        raise _invalid(selector, "a UiScrollable locator needs scrollIntoView / scrollTextIntoView / "
                                 "scrollDescriptionIntoView")
    containers = [n for n in select_ui(list(phone.root().walk()), container_selector) if n.scrollable]
    if not containers:
        return []  # no scrollable container on this screen: nothing found (the driver's no such element)
    key = containers[0].key
    for direction in (1, -1):
        for _ in range(swipes + 1):
            root = phone.root()
            found = select_ui(list(root.walk()), target)
            if found:
                return found
            container = next((n for n in root.walk() if n.key == key), None)
            if container is None or not _swipe(phone, container, direction):
                break
    return []


def _signature(phone: _Swipeable) -> tuple[tuple[str, str], ...]:
    return tuple((n.key, n.bounds.to_bounds()) for n in phone.root().walk())


def _swipe(phone: _Swipeable, container: SimNode, direction: int) -> bool:
    """One page inside the container (direction 1: content moves up, what is below shows); moved?"""
    box = container.bounds
    x = box.center[0]
    low, high = box.top + box.height * 4 // 5, box.top + box.height // 5
    before = _signature(phone)
    start, end = (low, high) if direction == 1 else (high, low)
    phone.swipe(x, start, x, end, 300)
    return _signature(phone) != before
