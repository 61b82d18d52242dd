"""The simulated phone: apps, pixels, UI tree, noise, faults and ground truth (implements `PhoneModel`).

One `Phone` per WebDriver session. Time comes from an injectable monotonic clock so delayed
redraws, spinners, toasts, the blinking cursor and transitions are testable without sleeping.
Capabilities (`Phone.from_capabilities`): `appium:appPackage`, `guistate:seed`, `guistate:screen`,
`guistate:appVersion`, `guistate:faults`, `guistate:clock` ("realtime" or "frozen": frozen fixes
the status-bar clock at 12:00:00, the cursor on and spinners still, while app timers keep running).

Screenshots are cached as PNG bytes keyed by (state version, overlays, transition step), so an
unchanged screen costs nothing. Every input (tap, long press, swipe, typing, back, app switches) is
bracketed by `_begin`/`_end`, which snapshot the screen for ground truth, count effective actions
(for the `popup_at_action` fault) and start transition animations.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps import (
    INSTALLED,
    LAUNCHER,
    App,
    AppContext,
    LauncherApp,
)
from pytest_guistate.devices.sim.apps.base import TEXT, Metrics, View
from pytest_guistate.devices.sim.apps.drift import DRIFTS, is_app_version
from pytest_guistate.devices.sim.apps.hybrid import WEBVIEW_CLASS, WEBVIEW_PLACEHOLDER
from pytest_guistate.devices.sim.apps.system import (
    STATUS_BG,
    alert,
    status_bar,
    toast_window,
)
from pytest_guistate.devices.sim.faults import Faults
from pytest_guistate.devices.sim.keyboard import KeyHandlers, keyboard_window
from pytest_guistate.devices.sim.model import AppState, SimError, SimNode, WebViewState
from pytest_guistate.devices.sim.phone_views import find_view, hit, scroll_target, to_simnodes
from pytest_guistate.devices.sim.render import Overlay, Renderer, cursor_box
from pytest_guistate.devices.sim.truth import Snapshot, changed_regions, snapshot
from pytest_guistate.devices.sim.webview import BrowserPool, WebViewBrowser, WebViewGone
from pytest_guistate.devices.sim.xml import PageSource

__all__ = ["ManualClock", "Phone"]

TOAST_S = 1.5
CURSOR_HALF_PERIOD_S = 0.53
ANIM_STEPS = 20
PULL_TO_REFRESH_PX = 200  # reference px a downward drag must cover to trigger a refresh


class ManualClock:
    """A monotonic clock tests advance by hand (`Phone(clock=ManualClock())`)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Phone:
    """A deterministic Android-like phone; see the module docstring for capabilities."""

    def __init__(self, *, width: int = 1080, height: int = 2400, seed: int = 0, app_package: str | None = None,
                 faults: dict[str, Any] | None = None, clock: Callable[[], float] | None = None, frozen: bool = False,
                 app_version: int | str = 1, wall_start: float | None = None, platform: str = "android",
                 browsers: BrowserPool | None = None) -> None:
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, int) or not 240 <= value <= 8000:
                raise SimError("invalid argument", f"screen {name} must be an integer in 240..8000, got {value!r}")
        self.width, self.height, self.seed, self.frozen = width, height, seed, frozen
        self.app_version = app_version
        self.platform = platform  # "ios": apps draw navigation bars (the iOS persona wraps this phone)
        self._owns_browsers = browsers is None  # a server's pool outlives the phone; its own does not
        self.browsers = browsers if browsers is not None else BrowserPool(keep=0)
        self.m = Metrics(width, height)
        self._clock = clock or time.monotonic
        self._t0 = self._clock()
        self._wall0 = time.time() if wall_start is None else wall_start
        self._faults = Faults().updated(faults or {})
        self._drop_rng = random.Random(self._faults.seed if self._faults.seed is not None else seed)
        self._renderer = Renderer(self.m)
        self._apps: dict[str, App] = {}
        # apps not on this phone: `remove_app` took them off, or never installed (opened below if asked)
        self._removed: set[str] = {package for package, app in INSTALLED.items() if not app.preinstalled}
        self._apps[LAUNCHER] = LauncherApp(self._context(LAUNCHER),
                                           [(a.package, a.label, a.color) for a in INSTALLED.values()],
                                           lambda package: package not in self._removed)
        self._foreground = LAUNCHER
        self._toast: tuple[str, str, float] | None = None  # text, package, end time
        self._popup_for: str | None = None  # package whose "isn't responding" dialog is up
        self._actions = 0
        self._popup_at: int | None = self._faults.popup_at_action
        self._log: list[dict[str, Any]] = []
        self._dropped: list[dict[str, Any]] = []
        self._version = 0
        self._windows_cache: tuple[int, list[View]] | None = None
        self._root_cache: tuple[tuple[int, str], View, SimNode] | None = None
        self._source_cache: tuple[tuple[int, str], PageSource] | None = None
        self._png_cache: dict[tuple[Any, ...], bytes] = {}
        self._before: tuple[Snapshot, list[Box], tuple[str, str], View] | None = None
        self._transition: tuple[float, View] | None = None
        self._closed = False
        self._keyboard_hidden: str | None = None  # the field whose keyboard was hidden (it keeps the focus)
        self._keyboard_shift = False
        self.point_px = 1.0  # pixels per point: the iOS persona sets its scale (the keyboard's size)
        self._keyboard_field: str | None = None  # set by `_windows()`: the field the keyboard types into
        if app_package is not None:
            if app_package in INSTALLED and not INSTALLED[app_package].preinstalled:
                self._removed.discard(app_package)  # the session's app under test is installed for it
            self._check_installed(app_package)
            self._open(app_package)

    @classmethod
    def from_capabilities(cls, caps: dict[str, Any], clock: Callable[[], float] | None = None,
                          browsers: BrowserPool | None = None) -> Phone:
        options = cls.options_from_capabilities(caps)
        screen = caps.get("guistate:screen", {"width": 1080, "height": 2400})
        if not isinstance(screen, dict) or set(screen) - {"width", "height"}:
            raise SimError("invalid argument", f"guistate:screen must be {{'width': int, 'height': int}}, got {screen!r}")
        package = caps.get("appium:appPackage")
        if package is not None and not isinstance(package, str):
            raise SimError("invalid argument", f"appium:appPackage must be a string, got {package!r}")
        return cls(width=screen.get("width", 1080), height=screen.get("height", 2400), app_package=package,
                   clock=clock, browsers=browsers, **options)

    @staticmethod
    def options_from_capabilities(caps: dict[str, Any]) -> dict[str, Any]:
        """The capabilities every persona shares: seed, faults, clock mode, app version."""
        if not isinstance(caps, dict):
            raise SimError("invalid argument", f"capabilities must be an object, got {type(caps).__name__}")
        seed = caps.get("guistate:seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SimError("invalid argument", f"guistate:seed must be an integer, got {seed!r}")
        mode = caps.get("guistate:clock", "realtime")
        if mode not in ("realtime", "frozen"):
            raise SimError("invalid argument", f"guistate:clock must be 'realtime' or 'frozen', got {mode!r}")
        version = caps.get("guistate:appVersion", 1)
        if isinstance(version, str) and version.strip() in ("1", "2"):
            version = int(version)  # a caps.json written "2" means the version, as Appium's own appVersion strings do
        if not is_app_version(version):
            raise SimError("invalid argument", f"guistate:appVersion must be 1, 2 or a drift "
                                               f"({', '.join(DRIFTS)}), got {version!r}")
        return {"seed": seed, "faults": caps.get("guistate:faults") or {}, "frozen": mode == "frozen",
                "app_version": version}

    # -- time and state ------------------------------------------------------------------
    def now(self) -> float:
        return self._clock()

    def _context(self, package: str) -> AppContext:
        return AppContext(metrics=self.m, seed=self.seed, now=self.now,
                          log=lambda action, **fields: self._record(package, action, **fields),
                          toast=lambda text, start=None: self._show_toast(package, text, start),
                          faults=lambda: self._faults, launch=self._open, app_version=self.app_version,
                          platform=self.platform, density=lambda: self.density, browsers=self.browsers)

    def _record(self, package: str, action: str, **fields: Any) -> None:
        self._log.append({"t": round(self.now() - self._t0, 3), "app": package, "action": action, **fields})

    def _show_toast(self, package: str, text: str, start: float | None) -> None:
        lasts = TOAST_S if self._faults.toast_s is None else self._faults.toast_s
        end = (self.now() if start is None else start) + lasts
        if end > self.now():
            self._toast = (text, package, end)
            self._version += 1

    def _sync(self) -> None:
        """Apply everything time has done since the last call (delayed redraws, toasts ending)."""
        if self._closed:
            raise SimError("invalid session id", "this simulated phone has been closed")
        now, changed = self.now(), False
        for app in list(self._apps.values()):
            changed = app.advance(now) or changed
        if self._toast is not None and now >= self._toast[2]:
            self._toast, changed = None, True
        if self._transition is not None and now >= self._transition[0] + self._faults.animation_ms / 1000:
            self._transition = None
        if changed:
            self._version += 1

    @property
    def density(self) -> float:
        """Device pixels per CSS pixel of a web view: the iOS persona's points scale, on Android 3 at
        the 1080-wide reference screen (a 360 CSS px wide web view, as on most 1080p phones)."""
        return self.point_px if self.platform == "ios" else 3.0 * self.m.scale

    def clock_text(self) -> str:
        if self.frozen:
            return "12:00:00"
        return time.strftime("%H:%M:%S", time.localtime(self._wall0 + self.now() - self._t0))

    def _windows(self) -> list[View]:
        if self._windows_cache is None or self._windows_cache[0] != self._version:
            app = self._apps[self._foreground]
            windows = [app.build()]
            dialog = app.dialog()
            if dialog is not None:
                windows.append(dialog)
            field = self._focused_field(windows[0]) if dialog is None and self._popup_for is None else None
            self._keyboard_field = field
            if field is not None and self.platform == "ios":
                windows.append(keyboard_window(self.m, KeyHandlers(self._key_typed, self._key_delete,
                                                                   self._key_shift, self.hide_keyboard_now),
                                               self.point_px, self._keyboard_shift))
            if self._toast is not None:
                windows.append(toast_window(self.m, self._toast[1], self._toast[0]))
            if self._popup_for is not None:
                label = INSTALLED[self._popup_for].label if self._popup_for in INSTALLED else "Launcher"
                windows.append(alert(self.m, "system/anr", "android", f"{label} isn't responding", "",
                                     [("system/anr/close", "android:id/aerr_close", "Close app", self._popup_close),
                                      ("system/anr/wait", "android:id/aerr_wait", "Wait", self._popup_wait)],
                                     (26, 115, 232)))
            self._windows_cache = (self._version, windows)
        return self._windows_cache[1]

    def _focused_field(self, window: View) -> str | None:
        """The app's focused, enabled text field, unless its keyboard was hidden."""
        app = self._apps[self._foreground]
        key = app.focused
        if key is None or key == self._keyboard_hidden:
            return None
        view = find_view(window, key)
        return key if view is not None and view.cls == "android.widget.EditText" and view.enabled else None

    # -- the soft keyboard (drawn on the iOS persona, see keyboard.py) -------------------
    def keyboard_field(self) -> str | None:
        """The field the soft keyboard is up for, or None: `mobile: isKeyboardShown`."""
        self._sync()
        self._windows()
        return self._keyboard_field

    def hide_keyboard(self) -> bool:
        """`mobile: hideKeyboard`: the field keeps its focus and text; False when no keyboard was up."""
        if self.keyboard_field() is None:
            return False
        self._begin()
        self.hide_keyboard_now()
        self._end()
        return True

    def hide_keyboard_now(self) -> None:
        self._keyboard_hidden, self._keyboard_shift = self._keyboard_field, False
        self._record(self._foreground, "hide_keyboard")
        self._version += 1

    def _key_typed(self, char: str) -> None:
        """A key of the drawn keyboard (inside the tap's bracketing): the character goes to the field."""
        field = self._keyboard_field
        if field is None:
            return
        app = self._apps[self._foreground]
        app.on_text(field, app.texts.get(field, "") + char)
        app.focus_since = self.now()
        self._keyboard_shift = False
        self._record(app.package, "key", target=field)

    def _key_delete(self) -> None:
        field = self._keyboard_field
        if field is not None:
            app = self._apps[self._foreground]
            app.on_text(field, app.texts.get(field, "")[:-1])
            self._record(app.package, "key", target=field)

    def _key_shift(self) -> None:
        self._keyboard_shift = not self._keyboard_shift

    def _root_view(self) -> tuple[View, SimNode]:
        key = (self._version, self.clock_text())
        if self._root_cache is None or self._root_cache[0] != key:
            root = View("hierarchy", "hierarchy", self.m.screen)
            root.children = [status_bar(self.m, key[1]), *self._windows()]
            node = to_simnodes(root, "")
            assert node is not None
            self._root_cache = (key, root, node)
        return self._root_cache[1], self._root_cache[2]

    def _screen_id(self) -> tuple[str, str]:
        return self._foreground, self._apps[self._foreground].screen_id()

    # -- PhoneModel: observation ---------------------------------------------------------
    def root(self) -> SimNode:
        self._sync()
        return self._root_view()[1]

    def find_key(self, key: str) -> SimNode | None:
        """The node with `key` on the current screen, or None (the element is stale)."""
        return next((n for n in self.root().walk() if n.key == key), None)

    def _page(self) -> PageSource:
        self._sync()
        key = (self._version, self.clock_text())
        if self._source_cache is None or self._source_cache[0] != key:
            self._source_cache = (key, PageSource(self._root_view()[1], self.width, self.height))
        return self._source_cache[1]

    def page_source(self) -> str:
        return self._page().xml

    def find_xpath(self, expression: str) -> list[SimNode]:
        """XPath over the current page source; hits as `SimNode`s (SimError "invalid selector")."""
        return self._page().find_xpath(expression)

    # -- PhoneModel: pixels and ground truth ---------------------------------------------
    def _overlays(self, root: View, now: float, for_truth: bool = False) -> list[Overlay]:
        app = self._apps[self._foreground]
        cursor_on = self.frozen or int((now - app.focus_since) / CURSOR_HALF_PERIOD_S) % 2 == 0
        phase = 0 if self.frozen else int((now - self._t0) * Renderer.SPINNER_STEPS) % Renderer.SPINNER_STEPS
        out: list[Overlay] = []
        for view in root.walk():
            kind = view.style.kind
            if kind == "clock":
                out.append(Overlay("clock", view.box, view.text, bg=STATUS_BG, fg=view.style.fg, size=view.style.size))
            elif kind == "spinner":
                out.append(Overlay("spinner", view.box, phase=phase, fg=view.style.fg))
            elif kind == "edit" and view.focused and (cursor_on or for_truth):
                out.append(Overlay("cursor", cursor_box(view, self.m.scale), fg=TEXT))
        return out

    def screenshot_png(self) -> bytes:
        self._sync()
        now = self.now()
        root, _ = self._root_view()
        overlays = self._overlays(root, now)
        step = None
        if self._transition is not None:
            progress = (now - self._transition[0]) / max(1e-9, self._faults.animation_ms / 1000)
            step = min(ANIM_STEPS - 1, int(progress * ANIM_STEPS))
        key = (self._version, tuple(overlays), step)
        web_box = self._apps[self._foreground].web_view_box() if step is None else None
        cached = self._png_cache.get(key) if web_box is None else None  # a page changes on its own
        if cached is not None:
            return cached
        base = self._renderer.base(root)
        if step is not None and self._transition is not None:
            base = self._slide(self._renderer.base(self._transition[1]), base, step / ANIM_STEPS)
            overlays = [o for o in overlays if o.kind == "clock"]
        frame = self._renderer.compose(base, overlays)
        if web_box is not None:
            self._composite_web_view(frame, web_box)
            return self._renderer.encode(frame)
        png = self._renderer.encode(frame)
        if len(self._png_cache) >= 4:
            self._png_cache.pop(next(iter(self._png_cache)))
        self._png_cache[key] = png
        return png

    def _composite_web_view(self, frame: np.ndarray, box: Box) -> None:
        """The web view's current pixels (Chromium's viewport) into its bounds, wherever no window
        above it (a toast, a dialog) covers it: the base layer still shows the placeholder there."""
        png = self._apps[self._foreground].web_browser().frame_png()
        page = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        if page is None:
            raise SimError("unable to capture screen", "the web view's screenshot is not a decodable image")
        area = box.clamp(self.width, self.height)
        if page.shape[:2] != (area.height, area.width):  # a fractional pixel ratio may round one px off
            page = cv2.resize(page, (area.width, area.height), interpolation=cv2.INTER_AREA)
        region = frame[area.top:area.bottom, area.left:area.right]
        colour = np.array(WEBVIEW_PLACEHOLDER[::-1], np.uint8)
        uncovered = cv2.inRange(region, colour, colour)
        if cv2.countNonZero(uncovered) == uncovered.size:
            region[...] = page  # nothing above the web view: the common case, one copy
        else:
            np.copyto(region, page, where=uncovered.astype(bool)[:, :, None])

    def _slide(self, old: np.ndarray, new: np.ndarray, progress: float) -> np.ndarray:
        """An intermediate transition frame: the new screen slides in from the right."""
        eased = 1.0 - (1.0 - progress) ** 2
        dx = int(self.width * (1.0 - eased))
        top = self.m.status_h
        frame = old.copy()
        frame[top:, dx:] = new[top:, : self.width - dx]
        return frame

    def ground_truth(self) -> dict[str, Any]:
        """Semantic change between the screen before the most recent action and now (tree-based)."""
        self._sync()
        root, node = self._root_view()
        after = snapshot(node)
        noise = self._noise(root)
        if self._before is None:
            return {"changed": False, "regions": [], "noise": [b.as_list() for b in noise],
                    "animating": self._transition is not None}
        before, before_noise, _, _ = self._before
        regions = changed_regions(before, after, gap=self.m.px(16))
        unique = list(dict.fromkeys([*before_noise, *noise]))
        return {"changed": bool(regions), "regions": [b.as_list() for b in regions],
                "noise": [b.as_list() for b in unique], "animating": self._transition is not None}

    def _noise(self, root: View) -> list[Box]:
        return [o.box for o in self._overlays(root, self.now(), for_truth=True)]

    # -- PhoneModel: input (each bracketed by `_begin`/`_end`) ---------------------------
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
        elif target is not None and target.cls == WEBVIEW_CLASS:
            self._apps[self._foreground].web_tap(x - target.box.left, y - target.box.top)
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
        web = self._apps[self._foreground].web_view_box()
        if target is not None and abs(y2 - y1) > abs(x2 - x1):
            self._scroll(target, y1 - y2)
        elif target is None and web is not None and web.contains_point(x1, y1):  # the page scrolls itself
            self._apps[self._foreground].web_swipe((x1 - web.left, y1 - web.top), (x2 - web.left, y2 - web.top),
                                                   duration_ms)
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

    # -- the web view (hybrid apps) ---------------------------------------------------------
    def web_view_state(self) -> WebViewState | None:
        """The web view on screen, None when the foreground app shows none."""
        self._sync()
        app = self._apps[self._foreground]
        box = app.web_view_box()
        return None if box is None else WebViewState(app.package, getattr(app, "generation", 1), box)

    def web_browser(self, generation: int | None = None) -> WebViewBrowser:
        """The started browser of the web view on screen (`WebViewGone` without one, or when
        `generation` names a web view that has since been replaced)."""
        state = self.web_view_state()
        if state is None:
            raise WebViewGone(f"no web view on screen (foreground: {self._foreground})")
        if generation is not None and generation != state.generation:
            raise WebViewGone(f"the web view was replaced by a new one ({state.package} showed it anew)")
        return self._apps[self._foreground].web_browser()

    # -- PhoneModel: apps, faults, logs --------------------------------------------------
    def _check_installed(self, package: str) -> None:
        if package != LAUNCHER and (package not in INSTALLED or package in self._removed):
            installed = sorted(set(INSTALLED) - self._removed)
            raise SimError("invalid argument", f"app {package!r} is not installed; installed: {installed}")

    def remove_app(self, package: str) -> bool:
        """`mobile: removeApp`: the app stops and is gone until `install_app`; False if it was not installed."""
        if package not in INSTALLED or package in self._removed:
            return False
        self.terminate_app(package)
        self._removed.add(package)
        self._version += 1
        return True

    def install_app(self, package: str) -> None:
        """`mobile: installApp` of one of the sim's own apps (named by its package / bundle id)."""
        if package not in INSTALLED:
            raise SimError("invalid argument", f"the simulated phone installs only its own apps; "
                                               f"{package!r} is not one of {sorted(INSTALLED)}")
        self._removed.discard(package)
        self._version += 1  # its icon is back on the home screen

    def current_activity(self) -> str:
        """`getCurrentActivity`: the sim's apps are one activity each (`.MainActivity`; the launcher's
        `.Launcher`), named relative to the package as UiAutomator2 reports an app's own activity."""
        return ".Launcher" if self.current_package() == LAUNCHER else ".MainActivity"

    def _open(self, package: str) -> None:
        self._check_installed(package)
        if package not in self._apps:
            self._apps[package] = INSTALLED[package].factory(self._context(package))
        self._foreground = package
        self._record(package, "open_app")
        self._version += 1

    def activate_app(self, package: str) -> None:
        self._sync()
        self._check_installed(package)
        self._begin()
        self._open(package)
        self._end()

    def press_home(self) -> None:
        """The HOME key (KEYCODE_HOME; the iOS persona's home button): the launcher comes to the front
        and the app it leaves keeps its screen, as an Android launcher (and SpringBoard) do."""
        self.activate_app(LAUNCHER)

    def terminate_app(self, package: str) -> bool:
        self._sync()
        if package == LAUNCHER or package not in self._apps:
            return False
        self._begin()
        self._apps.pop(package).close()
        if self._foreground == package:
            self._foreground = LAUNCHER
        self._record(package, "terminate_app")
        self._end()
        return True

    def app_state(self, package: str) -> int:
        self._sync()
        if package != LAUNCHER and (package not in INSTALLED or package in self._removed):
            return AppState.NOT_INSTALLED
        if package not in self._apps:
            return AppState.NOT_RUNNING
        return AppState.RUNNING_IN_FOREGROUND if package == self._foreground else AppState.RUNNING_IN_BACKGROUND

    def current_package(self) -> str:
        self._sync()
        return self._foreground

    def set_faults(self, faults: dict[str, Any]) -> None:
        self._sync()
        self._faults = self._faults.updated(faults)
        if "seed" in faults:
            self._drop_rng = random.Random(self._faults.seed if self._faults.seed is not None else self.seed)
        if "popup_at_action" in faults:
            n = self._faults.popup_at_action
            self._popup_at = None if n is None else self._actions + n

    @property
    def faults(self) -> Faults:
        return self._faults

    def action_log(self) -> list[dict[str, Any]]:
        return [dict(entry) for entry in self._log]

    def dropped(self) -> list[dict[str, Any]]:
        """Taps the `drop_tap_rate` fault swallowed (never in `action_log`)."""
        return [dict(entry) for entry in self._dropped]

    def close(self) -> None:
        self._closed = True
        errors = []
        for app in self._apps.values():
            try:
                app.close()
            except Exception as exc:  # noqa: BLE001 - close the other apps too, then report it
                errors.append(f"{app.package}: {exc!r}")
        if self._owns_browsers:
            self.browsers.close()
        self._png_cache.clear()
        self._windows_cache = self._root_cache = self._source_cache = None
        if errors:
            raise SimError("unknown error", f"closing the phone's apps failed: {'; '.join(errors)}")

    # -- action bracketing ---------------------------------------------------------------
    def _begin(self) -> None:
        """Remember the screen before an action: the 'before' of ground truth and transitions."""
        root, node = self._root_view()
        self._before = (snapshot(node), self._noise(root), self._screen_id(), root)

    def _end(self) -> None:
        self._actions += 1
        if self._popup_at is not None and self._actions >= self._popup_at and self._popup_for is None:
            self._popup_for, self._popup_at = self._foreground, None
        if self._before is not None and self._screen_id() != self._before[2] and self._faults.animation_ms > 0:
            self._transition = (self.now(), self._before[3])
        self._version += 1

    def _popup_wait(self) -> None:
        self._record(self._popup_for or "android", "anr_wait")
        self._popup_for = None

    def _popup_close(self) -> None:
        package, self._popup_for = self._popup_for, None
        self._record(package or "android", "anr_close_app")
        if package is not None and package != LAUNCHER and package in self._apps:
            self._apps.pop(package).close()
            if self._foreground == package:
                self._foreground = LAUNCHER
