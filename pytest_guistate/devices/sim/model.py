"""The contract between the simulated phone (apps, pixels, UI tree) and its WebDriver server.

`server.py` speaks HTTP/W3C and knows nothing of apps; `phone.py` knows apps and pixels and
nothing of HTTP. They meet here: a `SimNode` tree (what UiAutomator2 would dump) and the
`PhoneModel` protocol (what the server may ask a phone to do).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_guistate.core.geometry import Box

__all__ = ["AppState", "PhoneModel", "ProxyReply", "SimError", "SimNode", "WebEngine", "WebViewState"]


class AppState:
    """Appium's `queryAppState` codes."""

    NOT_INSTALLED = 0
    NOT_RUNNING = 1
    RUNNING_IN_BACKGROUND = 3
    RUNNING_IN_FOREGROUND = 4


class SimError(Exception):
    """A phone-level refusal the server maps to a W3C error (e.g. typing into a non-editable)."""

    def __init__(self, w3c_error: str, message: str) -> None:
        super().__init__(message)
        self.w3c_error = w3c_error  # e.g. "invalid element state", "invalid argument"
        self.message = message


@dataclass
class SimNode:
    """One view of the current screen, with UiAutomator2's attribute set.

    `key` is stable across re-renders for as long as the view exists (e.g. ``feed/post/p3/delete``),
    so the server can hand out element ids and detect staleness: an element whose key is no
    longer in the current tree is stale.
    """

    key: str
    cls: str
    bounds: Box
    text: str = ""
    content_desc: str = ""
    resource_id: str = ""
    package: str = ""
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    password: bool = False
    scrollable: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    selected: bool = False
    displayed: bool = True
    children: list[SimNode] = field(default_factory=list)

    def walk(self) -> Iterator[SimNode]:
        """Depth-first, document order (the order XPath results come in)."""
        yield self
        for child in self.children:
            yield from child.walk()

    def attribute(self, name: str) -> str | None:
        """Attribute values as a UiAutomator2 server returns them (strings, `true`/`false`)."""
        mapping: dict[str, Any] = {
            "text": self.text,
            "content-desc": self.content_desc,
            "contentDescription": self.content_desc,
            "resource-id": self.resource_id,
            "resourceId": self.resource_id,
            "class": self.cls,
            "className": self.cls,
            "package": self.package,
            "clickable": self.clickable,
            "long-clickable": self.long_clickable,
            "longClickable": self.long_clickable,
            "focusable": self.focusable,
            "focused": self.focused,
            "password": self.password,
            "scrollable": self.scrollable,
            "checkable": self.checkable,
            "checked": self.checked,
            "enabled": self.enabled,
            "selected": self.selected,
            "displayed": self.displayed,
            "bounds": self.bounds.to_bounds(),
        }
        if name not in mapping:
            return None
        value = mapping[name]
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


@dataclass(frozen=True)
class WebViewState:
    """The web view on screen: its app, which web view it is (a new one each time the app shows
    one anew) and its bounds in screen pixels."""

    package: str
    generation: int
    box: Box


@dataclass(frozen=True)
class ProxyReply:
    """What a web view's chromedriver answered: its HTTP status and JSON body, passed on unchanged."""

    status: int
    body: dict[str, Any]

    @property
    def value(self) -> Any:
        return self.body.get("value")


class WebEngine(Protocol):
    """The browser behind a web view (`webview.WebViewBrowser`), as the server proxies to it."""

    def command(self, method: str, suffix: str, body: dict[str, Any] | None, timeout: float = ...) -> ProxyReply:
        """A command of its session (`suffix` is the path after `/session/<id>`)."""


class PhoneModel(Protocol):
    """What the WebDriver server needs from one simulated phone (one per WebDriver session).

    Coordinates are screen pixels of the full-size frame. Every method is called with the
    server's per-session lock held, so implementations need not be thread-safe themselves.
    """

    width: int
    height: int

    def root(self) -> SimNode:
        """The current UI tree (after applying any time-based state such as a delayed redraw)."""

    def page_source(self) -> str:
        """UiAutomator2-style XML of `root()` (`<hierarchy>` with class-named tags)."""

    def screenshot_png(self) -> bytes:
        """PNG of the current screen, pixels consistent with `root()`."""

    def tap(self, x: int, y: int) -> None: ...

    def long_press(self, x: int, y: int, duration_ms: int) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        """A drag; downward from the top of a scrollable list is pull-to-refresh."""

    def type_text(self, key: str, text: str) -> None:
        """Append text to the editable node `key` (send_keys); raises SimError if not editable."""

    def clear_text(self, key: str) -> None: ...

    def back(self) -> None: ...

    def press_home(self) -> None: ...

    def activate_app(self, package: str) -> None: ...

    def terminate_app(self, package: str) -> bool: ...

    def app_state(self, package: str) -> int: ...

    def current_package(self) -> str: ...

    def current_activity(self) -> str:
        """`getCurrentActivity` (UiAutomator2); refused by a persona that has no activities."""

    def remove_app(self, package: str) -> bool:
        """`mobile: removeApp`: False when the app was not installed."""

    def install_app(self, package: str) -> None:
        """`mobile: installApp` of one of the sim's own apps."""

    def keyboard_field(self) -> str | None:
        """The key of the field the soft keyboard is up for, or None (`mobile: isKeyboardShown`)."""

    def hide_keyboard(self) -> bool:
        """`mobile: hideKeyboard`: False when no keyboard was up."""

    def web_view_state(self) -> WebViewState | None:
        """The web view on screen (a hybrid app's), None when there is none."""

    def web_browser(self, generation: int | None = None) -> WebEngine:
        """The started browser behind the web view on screen; `WebViewGone` (a `SimError`) when
        there is none, or when `generation` names a web view since replaced."""

    def set_faults(self, faults: dict[str, Any]) -> None:
        """Change fault injection at run time (same keys as the `guistate:faults` capability)."""

    def action_log(self) -> list[dict[str, Any]]:
        """Ground truth: every *effective* action (what really happened, e.g. which post was deleted)."""

    def ground_truth(self) -> dict[str, Any]:
        """Ground truth of the last transition: semantic changed regions and noise-only regions."""

    def close(self) -> None: ...
