"""Hybrid (`com.guistate.hybrid`): a native shell whose web view shows a real page in real Chromium.

The native screen is a toolbar (the title "Notes", a "Help" and a "Close" button) above an
`android.webkit.WebView` filling the rest (`XCUIElementTypeWebView` on the iOS persona). The
page (`hybrid_web/`, served by `hybrid_page.py`) holds a sign-in form, notes whose Delete
redraws late, a toggle and a link to a native screen. The web view goes away when the page
follows that link (screen "settings", a native screen with a way back) or when "Close" closes
it (screen "closed", with "Reopen"); the back key on either brings a fresh web view back.

The web view's size is whole CSS pixels at the phone's device pixel ratio (its height is cut
to a multiple of it), so chromedriver's screenshot fills its bounds pixel for pixel.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.apps.base import TEXT2, App, AppContext, Style, View
from pytest_guistate.devices.sim.apps.hybrid_page import HybridPageServer
from pytest_guistate.devices.sim.webview import WebViewBrowser, WebViewGone

__all__ = ["WEBVIEW_CLASS", "WEBVIEW_PLACEHOLDER", "HybridApp"]

WEBVIEW_CLASS = "android.webkit.WebView"
WEBVIEW_PLACEHOLDER = (1, 2, 3)  # the base layer's colour where the web view's own pixels go


class HybridApp(App):
    package = "com.guistate.hybrid"
    label = "Hybrid"
    primary = (0, 121, 107)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        self.screen = "web"  # web | settings (the page linked out) | closed (the toolbar's Close)
        self.generation = 1  # counts web views: each new one is a new page (iOS names its context by it)
        self._page: HybridPageServer | None = None
        self._browser: WebViewBrowser | None = None
        self._loaded = 0  # the generation the browser's page was loaded for

    # -- native screens -------------------------------------------------------------------
    def screen_id(self) -> str:
        return self.screen

    def title(self) -> str:
        return {"web": "Notes", "settings": "App settings", "closed": "Notes"}[self.screen]

    def back_title(self) -> str | None:
        return None if self.screen == "web" else "Notes"

    def appbar_actions(self, bar: Box) -> list[View]:
        if self.screen != "web":
            return []
        px = self.m.px
        top, bottom = bar.top + px(40), bar.bottom - px(40)
        return [self._action("hybrid/help", Box(bar.right - px(340), top, bar.right - px(180), bottom), "Help",
                             self._help),
                self._action("hybrid/close", Box(bar.right - px(168), top, bar.right - px(24), bottom), "Close",
                             self._close_web_view)]

    def _action(self, key: str, box: Box, text: str, on_tap: Callable[[], None]) -> View:
        view = self.button(key, box, text, on_tap, rid=f"{self.package}:id/{key.rsplit('/', 1)[-1]}")
        view.style = Style(kind="text", fg=(255, 255, 255), size=self.m.px(40), bold=True, align="center")
        return view

    def build_content(self, area: Box) -> list[View]:
        if self.screen == "web":
            return [View("hybrid/webview", WEBVIEW_CLASS, self.web_view_area(area), rid=f"{self.package}:id/webview",
                         focusable=True, clickable=True, style=Style(kind="webview", bg=WEBVIEW_PLACEHOLDER))]
        px, top = self.m.px, area.top
        if self.screen == "settings":
            text, button = "App settings are native. Back returns to your notes.", "Back to notes"
        else:
            text, button = "The web view is closed.", "Reopen"
        return [self.label_view("hybrid/native_text", Box(px(48), top + px(60), px(1032), top + px(200)), text,
                                size=42, color=TEXT2, max_lines=2, rid=f"{self.package}:id/native_text"),
                self.button("hybrid/reopen", Box(px(48), top + px(260), px(1032), top + px(396)), button,
                            self._reopen, rid=f"{self.package}:id/reopen")]

    def web_view_area(self, area: Box | None = None) -> Box:
        """The web view's bounds: the content area, cut to whole CSS pixels at the pixel ratio."""
        area = area or self.m.content
        ratio = self.ctx.density()
        css_w, css_h = int(area.width / ratio), int(area.height / ratio)
        return Box(area.left, area.top, area.left + round(css_w * ratio), area.top + round(css_h * ratio))

    def _help(self) -> None:
        self.ctx.log("help")
        self.ctx.toast("Sign in with qa@example.com to see your notes")

    def _close_web_view(self) -> None:
        self.ctx.log("close_web_view")
        self.screen = "closed"

    def _reopen(self) -> None:
        self.ctx.log("open_web_view")
        self.screen, self.generation = "web", self.generation + 1

    def back(self) -> bool:
        if self.screen == "web":
            return False
        self._reopen()
        return True

    def advance(self, now: float) -> bool:
        """A link the page followed to a native screen takes the web view away."""
        page = self._page
        if page is None or not page.navigations:
            return False
        screen = page.navigations.popleft()
        if self.screen == "web":
            self.screen = screen
        return True

    # -- the web view ---------------------------------------------------------------------
    def web_view_box(self) -> Box | None:
        return self.web_view_area() if self.screen == "web" else None

    def web_browser(self) -> WebViewBrowser:
        """The browser behind the web view on screen, started on first use; a web view shown anew
        (after "Reopen" or back) loads the page afresh, as a new WebView does."""
        box = self.web_view_box()
        if box is None:
            raise WebViewGone(f"the {self.label} app shows its native {self.screen!r} screen")
        if self._page is None:
            self._page = HybridPageServer(self.ctx.log, lambda: self.ctx.faults().refresh_delay).start()
        ratio = self.ctx.density()
        if self._browser is None:
            self._browser = self.ctx.browsers.acquire(round(box.width / ratio), round(box.height / ratio), ratio)
            self._loaded = 0
        if self._loaded != self.generation:
            self._browser.start(self._page.url)  # a pooled browser is started already: it loads the page
            self._loaded = self.generation
        return self._browser

    def web_tap(self, x: int, y: int) -> None:
        """A native touch at (x, y) px inside the web view goes to the page at CSS pixels."""
        ratio = self.ctx.density()
        self.web_browser().tap(x / ratio, y / ratio)

    def web_swipe(self, start: tuple[int, int], end: tuple[int, int], duration_ms: int) -> None:
        """A native drag inside the web view scrolls the page as a finger does."""
        ratio = self.ctx.density()
        self.web_browser().swipe((start[0] / ratio, start[1] / ratio), (end[0] / ratio, end[1] / ratio),
                                 duration_ms)

    def close(self) -> None:
        browser, page, self._browser, self._page = self._browser, self._page, None, None
        if browser is not None:
            self.ctx.browsers.release(browser)
        if page is not None:
            page.stop()
