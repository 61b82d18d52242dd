"""Hybrid apps (issue 37): a native session whose current context may be a web view.

Appium lists a session's contexts (`NATIVE_APP`, `WEBVIEW_<package>`, `CHROMIUM`) and proxies the
commands of a web view context to a chromedriver (UiAutomator2) or to the Safari remote debugger
(XCUITest). There the page source is HTML, the locators are the web ones, and every rectangle is in
CSS pixels of the web view's own viewport, while the plugin's screenshot is the whole phone screen
(`appium:nativeWebScreenshot` on UiAutomator2; XCUITest's screenshots are native by default).

This module holds what `Device` needs to keep one screen and one coordinate system:

* `WebViewport`: where the web view sits on the phone (its native bounds, in screenshot pixels) and
  what the page says of the part of it shown (visual viewport size in CSS px, devicePixelRatio, where
  it starts in the document).
* `to_screen`: the one mapping of a DOM box into phone pixels. The web view shows the visual
  viewport's CSS pixels across its native width, so the ratio is measured from those two (on a real
  device it is the devicePixelRatio; measuring it also holds where a page zooms, has no meta
  viewport or a sim sizes its browser differently). A box relative to the document (the W3C element
  rect) has the scroll and pinch offset taken off first; the tree walk's boxes are already relative
  to the visible viewport (unmapped by the zoom the walk used, `web.PageZoom`, then mapped here).
* `graft`: the step's tree in a web view context, i.e. the native tree with the web view's DOM
  nodes (mapped) as the web view node's children, so the toolbar around the page stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, UITree

__all__ = [
    "NATIVE_CONTEXT",
    "VIEWPORT_JS",
    "WEBVIEW_CLASSES",
    "WebViewport",
    "graft",
    "is_web_context",
    "to_screen",
    "viewport_from_script",
    "webview_node",
]

NATIVE_CONTEXT = "NATIVE_APP"
# the names the real drivers give web contexts: UiAutomator2 `WEBVIEW_<package>` (or `WEBVIEW_chrome`)
# and `CHROMIUM` (a Chrome-based browser session), XCUITest `WEBVIEW_<id>`
_WEB_PREFIXES = ("WEBVIEW", "CHROMIUM")
WEBVIEW_CLASSES = ("android.webkit.WebView", "XCUIElementTypeWebView")

# what the page says of the part of it the web view shows (the visual viewport): its size in CSS px,
# devicePixelRatio, and where it starts in the document (scroll plus pinch offset); innerWidth and the
# scroll offset where a browser has no visualViewport. Pinch-zoomed, Chromium's innerWidth stays the
# layout viewport's (412 CSS px at 2x, where 206 are shown), so the visual viewport's width is the one
# the web view's native width spans.
VIEWPORT_JS = ("const v = window.visualViewport; return v ? [v.width, v.height, window.devicePixelRatio || 1, "
               "v.pageLeft, v.pageTop] : [window.innerWidth, window.innerHeight, window.devicePixelRatio || 1, "
               "window.scrollX || window.pageXOffset || 0, window.scrollY || window.pageYOffset || 0];")


def is_web_context(name: str | None) -> bool:
    """Whether a context name is a web one (its commands go to a browser engine)."""
    return bool(name) and str(name).upper().startswith(_WEB_PREFIXES)


@dataclass(frozen=True)
class WebViewport:
    """The web view on the phone: `bounds` in screenshot pixels; the page's visible viewport `css_width` x
    `css_height` CSS px at devicePixelRatio `dpr`, starting (`scroll_x`, `scroll_y`) CSS px into the document."""

    bounds: Box
    css_width: float
    css_height: float
    dpr: float = 1.0
    scroll_x: float = 0.0
    scroll_y: float = 0.0

    def __post_init__(self) -> None:
        if self.bounds.is_empty:
            raise ValueError(f"the web view has no area on screen (bounds {self.bounds.as_list()})")
        if not (self.css_width > 0 and self.css_height > 0 and self.dpr > 0):
            raise ValueError(f"the page reports a viewport of {self.css_width}x{self.css_height} CSS px at "
                             f"devicePixelRatio {self.dpr}: nothing to map")

    @property
    def ratio(self) -> float:
        """Screenshot pixels per CSS pixel: the web view's native width over the page's viewport width."""
        return self.bounds.width / self.css_width


def to_screen(viewport: WebViewport, left: float, top: float, right: float, bottom: float, *,
              document: bool = False) -> Box:
    """A DOM box in CSS px (relative to the viewport, or to the document with `document=True`) as a
    box in phone screenshot pixels, clipped to the web view: what the phone shows of it (empty when
    it is scrolled out of the web view)."""
    dx, dy = (viewport.scroll_x, viewport.scroll_y) if document else (0.0, 0.0)
    ratio, origin = viewport.ratio, viewport.bounds
    mapped = Box(round(origin.left + (left - dx) * ratio), round(origin.top + (top - dy) * ratio),
                 round(origin.left + (right - dx) * ratio), round(origin.top + (bottom - dy) * ratio))
    return mapped.intersection(origin)


def viewport_from_script(bounds: Box, result: object) -> WebViewport:
    """`VIEWPORT_JS`'s answer with the web view's native bounds; a clear error for anything else."""
    if not isinstance(result, Sequence) or isinstance(result, str) or len(result) != 5:
        raise ValueError(f"the viewport script returned {str(result)[:80]!r}, not [width, height, dpr, scrollX, scrollY]")
    try:
        width, height, dpr, scroll_x, scroll_y = (float(v) for v in result)
    except (TypeError, ValueError):
        raise ValueError(f"the viewport script returned {str(result)[:80]!r}: not numbers") from None
    return WebViewport(bounds, width, height, dpr, scroll_x, scroll_y)


def webview_node(tree: UITree) -> UINode | None:
    """The web view on the native screen: the largest drawn `WebView` node, or None when none is."""
    views = [n for n in tree.nodes() if n.cls in WEBVIEW_CLASSES and n.bounds is not None and not n.bounds.is_empty]
    return max(views, key=lambda n: n.bounds.area if n.bounds is not None else 0, default=None)


def graft(native: UITree, page: UITree, viewport: WebViewport, host: UINode, page_zoom: float | None = None) -> UITree:
    """The native tree with `page`'s nodes (a web tree walk, bounds in CSS px x `page_zoom` relative
    to the visible viewport; devicePixelRatio when None) mapped into phone pixels as `host`'s
    children, in place of what the native driver exposed of the page. Nodes scrolled out of the web
    view keep no box. Returns `native`."""
    grafted = list(page.root.children)
    d = viewport.dpr if page_zoom is None else page_zoom
    for node in (n for top in grafted for n in top.walk()):
        if node.bounds is not None:
            b = node.bounds
            box = to_screen(viewport, b.left / d, b.top / d, b.right / d, b.bottom / d)
            node.bounds = None if box.is_empty else box
    host.children = grafted
    stack = [(host, child, i) for i, child in enumerate(grafted)]
    while stack:  # depth and index path continue the host's: the actor names elements by them
        parent, node, i = stack.pop()
        node.depth = parent.depth + 1
        node.index_path = f"{parent.index_path}/{i}" if parent.index_path else str(i)
        stack.extend((node, child, j) for j, child in enumerate(node.children))
    return native
