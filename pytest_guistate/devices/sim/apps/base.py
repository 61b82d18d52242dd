"""Building blocks every simulated app uses: screen metrics, views with style and handlers, the app base.

An app rebuilds its whole view tree from its state on demand (like a declarative UI). A `View`
carries three things at once: what UiAutomator2 would report (class, ids, flags), where it is
(`box`, before clipping) and how it is painted (`Style`). Because the renderer and the
accessibility tree are both derived from the same `View`s, pixels and tree cannot disagree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.webview import BrowserPool, WebViewBrowser, WebViewGone

if TYPE_CHECKING:
    from pytest_guistate.devices.sim.faults import Faults

__all__ = ["DIVIDER", "RGB", "TEXT", "TEXT2", "WHITE", "App", "AppContext", "Metrics", "Style", "View"]

RGB = tuple[int, int, int]
TEXT: RGB = (33, 33, 33)
TEXT2: RGB = (110, 110, 110)
WHITE: RGB = (255, 255, 255)
DIVIDER: RGB = (224, 224, 224)


@dataclass(frozen=True)
class Metrics:
    """Screen size and the scale from the 1080x2400 reference layout every app is designed in."""

    width: int
    height: int

    @property
    def scale(self) -> float:
        return min(self.width / 1080.0, self.height / 2400.0)

    def px(self, value: float) -> int:
        """Reference pixels (1080-wide design) to screen pixels."""
        return round(value * self.scale)

    @property
    def status_h(self) -> int:
        return self.px(72)

    @property
    def appbar(self) -> Box:
        return Box(0, self.status_h, self.width, self.status_h + self.px(168))

    @property
    def content(self) -> Box:
        """Everything below the app bar."""
        return Box(0, self.appbar.bottom, self.width, self.height)

    @property
    def screen(self) -> Box:
        return Box(0, 0, self.width, self.height)


@dataclass(frozen=True)
class Style:
    """How a view is painted. `kind` picks the painter; the rest are its parameters."""

    kind: str = "box"  # box|text|button|edit|switch|checkbox|image|spinner|clock|avatar|battery|cart|check
    bg: RGB | None = None
    fg: RGB = TEXT
    size: int = 40  # font size in screen pixels
    bold: bool = False
    align: str = "left"  # left|center|right
    radius: int = 0
    border: RGB | None = None
    max_lines: int = 1
    hint: str = ""  # EditText placeholder drawn when empty (not part of the node's text)
    glyph: str = ""  # a letter drawn inside icons/avatars (pixels only; the node says it in content-desc)
    shadow: bool = False


@dataclass
class View:
    """One widget: its accessibility attributes, its layout box and its paint and input handlers."""

    key: str
    cls: str
    box: Box
    text: str = ""
    desc: str = ""
    rid: str = ""
    style: Style = field(default_factory=Style)
    package: str | None = None  # None: inherit from the parent window
    on_tap: Callable[[], None] | None = None
    on_long: Callable[[], None] | None = None
    on_refresh: Callable[[], None] | None = None  # pull-to-refresh on a scrollable
    clickable: bool | None = None  # None: clickable iff on_tap is set
    focusable: bool = False
    focused: bool = False
    password: bool = False
    scrollable: bool = False
    scroll_extent: int = 0  # content height of a scrollable (for clamping its offset)
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    selected: bool = False
    clip: bool = False  # children are clipped to `box` (scroll viewports)
    modal: bool = False  # a dialog window: taps outside it are swallowed
    children: list[View] = field(default_factory=list)

    def add(self, *views: View) -> View:
        self.children.extend(views)
        return self

    @property
    def is_clickable(self) -> bool:
        return self.on_tap is not None if self.clickable is None else self.clickable

    def walk(self) -> Iterator[View]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class AppContext:
    """What an app may ask of the phone: time, logging, toasts, faults, seeded randomness."""

    metrics: Metrics
    seed: int
    now: Callable[[], float]
    log: Callable[..., None]  # log(action, **fields): the phone adds "t" and "app"
    toast: Callable[..., None]  # toast(text, start=None): shown for ~1.5 s from `start` (default now)
    faults: Callable[[], Faults]
    launch: Callable[[str], None]  # bring another app to the foreground (the launcher uses it)
    app_version: int | str = 1  # guistate:appVersion: 1, 2 (restyle) or a drift name (`drift.py`)
    platform: str = "android"  # "ios": the app bar is drawn as a navigation bar with a back button (issue 11)
    density: Callable[[], float] = lambda: 3.0  # device pixels per CSS px / point (a web view's pixel ratio)
    browsers: BrowserPool = field(default_factory=lambda: BrowserPool(keep=0))  # web views' browsers (the phone's)

    @property
    def drift(self) -> str:
        """The drift of version 1 this app shows ('' for versions 1 and 2)."""
        return self.app_version if isinstance(self.app_version, str) else ""

    def rng(self, salt: str) -> random.Random:
        """A generator seeded by the phone seed and `salt`, so content is stable per seed."""
        return random.Random(f"{self.seed}:{salt}")


class App:
    """Base class: per-app state lives in the subclass; the phone asks for views and forwards input.

    Subclasses implement `build_content` and may override `dialog`, `back`, `advance`, `on_text`.
    """

    package = "com.guistate.base"
    label = "App"
    primary: RGB = (63, 81, 181)

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.m = ctx.metrics
        self.scroll: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.focused: str | None = None
        self.focus_since = 0.0

    # -- what the phone asks -------------------------------------------------------------
    def screen_id(self) -> str:
        """Names the current screen; a change starts a transition animation."""
        return "main"

    def title(self) -> str:
        return self.label

    def build_content(self, area: Box) -> list[View]:
        raise NotImplementedError

    def appbar_actions(self, bar: Box) -> list[View]:
        return []

    def dialog(self) -> View | None:
        return None

    def advance(self, now: float) -> bool:
        """Apply time-based state (delayed redraws, finished loading); True if anything changed."""
        return False

    def back(self) -> bool:
        """Handle the back key; False means "at the root": the phone goes to the launcher."""
        return False

    def back_title(self) -> str | None:
        """On iOS: the title of the screen a navigation-bar back button returns to, None when this
        screen is the root of its navigation stack (iOS has no system back key)."""
        return None

    def on_text(self, key: str, text: str) -> None:
        self.texts[key] = text

    def on_enter(self, key: str) -> None:
        """The IME action key ("\\n" at the end of send_keys) in EditText `key`."""

    def web_view_box(self) -> Box | None:
        """The bounds of the web view on this app's screen (screen pixels), None without one."""
        return None

    def web_browser(self) -> WebViewBrowser:
        """The started browser behind the web view on screen (only apps with a web view have one)."""
        raise WebViewGone(f"the {self.label} app has no web view")

    def web_tap(self, x: int, y: int) -> None:
        """A native touch at (x, y) px relative to the web view's bounds (apps with a web view)."""

    def web_swipe(self, start: tuple[int, int], end: tuple[int, int], duration_ms: int) -> None:
        """A native drag from `start` to `end`, px relative to the web view's bounds (apps with one)."""

    def close(self) -> None:
        """The app is stopped (terminated, or its phone closed): release what it started."""

    # -- helpers for subclasses ----------------------------------------------------------
    def build(self) -> View:
        """The app window: app bar (title + actions) above the content."""
        m = self.m
        window = View(f"{self.package}/window", "android.widget.FrameLayout", Box(0, m.status_h, m.width, m.height),
                      rid="android:id/content", package=self.package, style=Style(bg=WHITE))
        bar = m.appbar
        if self.ctx.platform == "ios":
            appbar = self._navigation_bar(bar)
        else:
            appbar = View(f"{self.package}/appbar", "android.view.ViewGroup", bar, rid=f"{self.package}:id/toolbar",
                          style=Style(bg=self.primary))
            appbar.add(View(f"{self.package}/title", "android.widget.TextView",
                            Box(bar.left + m.px(48), bar.top + m.px(44), bar.right - m.px(360),
                                bar.bottom - m.px(44)),
                            text=self.title(), rid=f"{self.package}:id/title",
                            style=Style(kind="text", fg=WHITE, size=m.px(58), bold=True)))
        appbar.add(*self.appbar_actions(bar))
        window.add(appbar, *self.build_content(m.content))
        return window

    def _navigation_bar(self, bar: Box) -> View:
        """iOS look: a light bar, the title centred, a tinted "< Previous" back button on the left."""
        m = self.m
        nav = View(f"{self.package}/appbar", "android.view.ViewGroup", bar, rid=f"{self.package}:id/toolbar",
                   style=Style(bg=self.primary))
        nav.add(View(f"{self.package}/title", "android.widget.TextView",
                     Box(bar.left + m.px(300), bar.top + m.px(44), bar.right - m.px(300), bar.bottom - m.px(44)),
                     text=self.title(), rid=f"{self.package}:id/title",
                     style=Style(kind="text", fg=WHITE, size=m.px(52), bold=True, align="center")))
        previous = self.back_title()
        if previous is not None:
            nav.add(View(f"{self.package}/nav_back", "android.widget.Button",
                         Box(bar.left + m.px(16), bar.top + m.px(36), bar.left + m.px(290), bar.bottom - m.px(36)),
                         text=f"\u2039 {previous}", desc=previous, rid="android:id/nav_back", on_tap=self._nav_back,
                         clickable=True, style=Style(kind="text", fg=WHITE, size=m.px(44))))
        return nav

    def _nav_back(self) -> None:
        self.ctx.log("back")
        self.back()

    def focus(self, key: str) -> None:
        if self.focused != key:
            self.focused = key
            self.focus_since = self.ctx.now()

    def edit(self, key: str, box: Box, hint: str, password: bool = False) -> View:
        """An EditText bound to `self.texts[key]`; tapping it focuses it (the cursor appears)."""
        value = self.texts.get(key, "")
        shown = "\u2022" * len(value) if password else value  # Android reports password text as bullets
        return View(key, "android.widget.EditText", box, text=shown, rid=f"{self.package}:id/{key.rsplit('/', 1)[-1]}",
                    on_tap=lambda: self.focus(key), focusable=True, focused=self.focused == key, password=password,
                    style=Style(kind="edit", size=self.m.px(44), hint=hint,
                                border=self.primary if self.focused == key else (150, 150, 150)))

    def button(self, key: str, box: Box, text: str, on_tap: Callable[[], None] | None, rid: str = "",
               enabled: bool = True, color: RGB | None = None) -> View:
        fill = color or self.primary
        return View(key, "android.widget.Button", box, text=text, rid=rid or f"{self.package}:id/{key.rsplit('/', 1)[-1]}",
                    on_tap=on_tap if enabled else None, clickable=True, focusable=True, enabled=enabled,
                    style=Style(kind="button", bg=fill if enabled else (200, 200, 200), fg=WHITE,
                                size=self.m.px(40), bold=True, align="center", radius=self.m.px(24)))

    def label_view(self, key: str, box: Box, text: str, size: int = 40, color: RGB = TEXT, bold: bool = False,
                   align: str = "left", max_lines: int = 1, rid: str = "") -> View:
        return View(key, "android.widget.TextView", box, text=text, rid=rid,
                    style=Style(kind="text", fg=color, size=self.m.px(size), bold=bold, align=align,
                                max_lines=max_lines))

    def scroller(self, key: str, box: Box, extent: int, rid: str, on_refresh: Callable[[], None] | None = None) -> View:
        """A RecyclerView viewport; children are laid out at `box.top - offset` by the caller."""
        return View(key, "androidx.recyclerview.widget.RecyclerView", box, rid=rid, scrollable=extent > box.height,
                    scroll_extent=extent, clip=True, on_refresh=on_refresh, focusable=True, style=Style(bg=WHITE))

    def offset(self, key: str, extent: int, viewport: int) -> int:
        """The clamped scroll offset of scrollable `key` (content may have shrunk since)."""
        value = max(0, min(self.scroll.get(key, 0), max(0, extent - viewport)))
        self.scroll[key] = value
        return value
