"""Input for the simulated phone: taps, long presses, swipes, typing and the back key.

A mixin of `Phone` (split out to keep each module readable). Every input is bracketed by
`_begin`/`_end`, which snapshot the screen for ground truth, count effective actions (for the
`popup_at_action` fault) and start transition animations.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from pytest_guistate.devices.sim.apps import LAUNCHER
from pytest_guistate.devices.sim.apps.base import View
from pytest_guistate.devices.sim.model import SimError
from pytest_guistate.devices.sim.phone_views import find_view, hit, scroll_target

if TYPE_CHECKING:
    from pytest_guistate.devices.sim.apps.base import App, Metrics
    from pytest_guistate.devices.sim.faults import Faults
    from pytest_guistate.devices.sim.model import SimNode

__all__ = ["PhoneInput"]

PULL_TO_REFRESH_PX = 200  # reference px a downward drag must cover to trigger a refresh


class PhoneInput:
    """Input semantics shared by all apps; see `Phone` for state."""

    width: int
    height: int
    m: Metrics
    _apps: dict[str, App]
    _foreground: str
    _faults: Faults
    _drop_rng: random.Random
    _t0: float
    _dropped: list[dict[str, Any]]
    _popup_for: str | None
    _keyboard_hidden: str | None

    if TYPE_CHECKING:
        def _sync(self) -> None: ...
        def _begin(self) -> None: ...
        def _end(self) -> None: ...
        def _root_view(self) -> tuple[View, SimNode]: ...
        def _record(self, package: str, action: str, **fields: Any) -> None: ...
        def _popup_wait(self) -> None: ...
        def now(self) -> float: ...

    def _point(self, x: int, y: int) -> tuple[int, int]:
        for name, value, limit in (("x", x, self.width), ("y", y, self.height)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < limit:
                raise SimError("move target out of bounds", f"{name}={value!r} is outside the {self.width}x{self.height} screen")
        return int(x), int(y)

    def _windows_now(self) -> list[View]:
        root, _ = self._root_view()
        return root.children

    def tap(self, x: int, y: int) -> None:
        x, y = self._point(x, y)
        self._sync()
        self._begin()
        rate = self._faults.drop_tap_rate
        if rate > 0 and self._drop_rng.random() < rate:
            self._dropped.append({"t": round(self.now() - self._t0, 3), "app": self._foreground, "x": x, "y": y})
            return  # lost by the touchscreen: no effect, no action counted
        target, _ = hit(self._windows_now(), x, y)
        self._record(self._foreground, "tap", x=x, y=y, target=target.key if target else None)
        if target is not None and target.cls == "android.widget.EditText":
            self._keyboard_hidden = None  # a tap on a field brings its keyboard (back) up
        if target is not None and target.enabled and target.on_tap is not None:
            target.on_tap()
        self._end()

    def long_press(self, x: int, y: int, duration_ms: int) -> None:
        """Long-click listener if the view has one; otherwise the release clicks it, as on Android."""
        x, y = self._point(x, y)
        self._sync()
        self._begin()
        target, _ = hit(self._windows_now(), x, y, want_long=True)
        self._record(self._foreground, "long_press", x=x, y=y, target=target.key if target else None,
                     duration_ms=duration_ms)
        if target is not None and target.enabled:
            if target.on_long is not None:
                target.on_long()
            elif target.on_tap is not None:
                target.on_tap()
        self._end()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        x1, y1 = self._point(x1, y1)
        x2, y2 = self._point(x2, y2)
        self._sync()
        self._begin()
        target = scroll_target(self._windows_now(), x1, y1)
        self._record(self._foreground, "swipe", x1=x1, y1=y1, x2=x2, y2=y2,
                     target=target.key if target else None, duration_ms=duration_ms)
        if target is not None and abs(y2 - y1) > abs(x2 - x1):
            self._scroll(target, y1 - y2)
        self._end()

    def _scroll(self, target: View, delta: int) -> None:
        app = self._apps[target.package or self._foreground] if target.package in self._apps else self._apps[self._foreground]
        old = app.scroll.get(target.key, 0)
        if delta < 0 and old == 0 and target.on_refresh is not None:
            if -delta >= self.m.px(PULL_TO_REFRESH_PX):
                target.on_refresh()
            return
        if not target.scrollable:
            return
        new = max(0, min(old + delta, max(0, target.scroll_extent - target.box.height)))
        if new != old:
            app.scroll[target.key] = new
            self._record(app.package, "scroll", target=target.key, offset_from=old, offset_to=new)

    def _editable(self, key: str) -> tuple[App, View]:
        self._sync()
        root, _ = self._root_view()
        view = find_view(root, key)
        if view is None:
            raise SimError("stale element reference", f"element {key!r} is not on the current screen")
        if view.cls != "android.widget.EditText" or not view.enabled:
            raise SimError("invalid element state", f"element {key!r} ({view.cls}) does not accept text input")
        window = next(w for w in root.children if find_view(w, key) is not None)
        app = self._apps.get(window.package or self._foreground, self._apps[self._foreground])
        return app, view

    def type_text(self, key: str, text: str) -> None:
        """Append `text` (send_keys); a trailing newline presses the IME action key."""
        if not isinstance(text, str):
            raise SimError("invalid argument", f"text must be a string, got {type(text).__name__}")
        app, view = self._editable(key)
        self._begin()
        enter = text.endswith("\n")
        typed = text.rstrip("\n")
        app.focus(key)
        self._keyboard_hidden = None  # XCUITest taps the field first; UiAutomator2's focus shows the IME
        app.on_text(key, app.texts.get(key, "") + typed)
        app.focus_since = self.now()  # Android restarts the cursor blink on every edit
        fields: dict[str, Any] = {"target": key, "length": len(typed)}
        if not view.password:
            fields["text"] = typed  # never log a password
        self._record(app.package, "type", **fields)
        if enter:
            app.on_enter(key)
        self._end()

    def clear_text(self, key: str) -> None:
        app, _ = self._editable(key)
        self._begin()
        app.focus(key)
        app.on_text(key, "")
        app.focus_since = self.now()
        self._record(app.package, "clear", target=key)
        self._end()

    def back(self) -> None:
        self._sync()
        self._begin()
        self._record(self._foreground, "back")
        if self._popup_for is not None:
            self._popup_wait()
        elif not self._apps[self._foreground].back() and self._foreground != LAUNCHER:
            self._foreground = LAUNCHER
        self._end()
