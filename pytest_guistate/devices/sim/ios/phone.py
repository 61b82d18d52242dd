"""`IosPhone`: the simulated phone as an XCUITest session sees it (a `PhoneModel` in points).

It wraps the one `Phone` model (apps, pixels, faults, ground truth) built at `scale` pixels
per point, so both personas run the same apps with the same faults: the tree is translated
(`translate.py`), coordinates go in and out in points, screenshots stay in pixels, and ground
truth stays in screenshot pixels. iOS has no back key: `back()` does what the XCUITest driver's
native back does (tap the navigation bar's back button; nothing when there is none), and a
swipe from the left edge pops a pushed screen as UINavigationController's gesture does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_guistate.devices.sim.apps import INSTALLED, LAUNCHER
from pytest_guistate.devices.sim.faults import Faults
from pytest_guistate.devices.sim.ios.persona import IosScreen
from pytest_guistate.devices.sim.ios.query import class_chain, compile_predicate
from pytest_guistate.devices.sim.ios.source import IosSource
from pytest_guistate.devices.sim.ios.translate import AUT, SPRINGBOARD, IosNode, kids, nodes_of, translate
from pytest_guistate.devices.sim.model import AppState, SimError, WebViewState
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.devices.sim.webview import BrowserPool, WebViewBrowser

__all__ = ["EDGE_PT", "STRATEGIES", "IosPhone"]

STRATEGIES = ("accessibility id", "id", "name", "class name", "xpath", "-ios predicate string", "-ios class chain")
EDGE_PT = 20  # a swipe starting this close to the left edge is the interactive pop gesture


class IosPhone:
    """A `PhoneModel` in points over an inner pixel `Phone` (see the module docstring)."""

    platform = "ios"

    def __init__(self, inner: Phone, screen: IosScreen) -> None:
        self.inner = inner
        inner.point_px = screen.scale
        self.screen = screen
        self.scale = screen.scale
        self.width, self.height = screen.width_pt, screen.height_pt
        self._cache: tuple[tuple[Any, ...], IosNode, IosSource | None] | None = None

    @classmethod
    def from_capabilities(cls, caps: dict[str, Any], clock: Callable[[], float] | None = None,
                          browsers: BrowserPool | None = None) -> IosPhone:
        options = Phone.options_from_capabilities(caps)
        screen = IosScreen.from_capabilities(caps)
        bundle = caps.get("appium:bundleId")
        if bundle is not None and not isinstance(bundle, str):
            raise SimError("invalid argument", f"appium:bundleId must be a string, got {bundle!r}")
        if bundle == SPRINGBOARD:
            bundle = None
        inner = Phone(width=screen.width_px, height=screen.height_px, app_package=bundle, clock=clock,
                      platform="ios", browsers=browsers, **options)
        return cls(inner, screen)

    # -- observation ---------------------------------------------------------------------
    def now(self) -> float:
        return self.inner.now()

    def _state(self) -> tuple[IosNode, IosSource | None, tuple[Any, ...]]:
        view_root, node = self.inner._root_view()  # syncs time first via root()
        key = (self.inner._version, self.inner.clock_text(), self.inner.current_package())
        if self._cache is None or self._cache[0] != key:
            views = {view.key: view for view in view_root.walk()}
            package = self.inner.current_package()
            bundle = SPRINGBOARD if package == LAUNCHER else package
            name = INSTALLED[package].label if package in INSTALLED else "SpringBoard"
            tree = translate(node, views, scale=self.scale, width_pt=self.width, height_pt=self.height,
                             bundle_id=bundle, app_name=name)
            self._cache = (key, tree, None)
        return self._cache[1], self._cache[2], key

    def root(self) -> IosNode:
        self.inner.root()
        return self._state()[0]

    def _source(self) -> IosSource:
        self.inner.root()
        tree, source, key = self._state()
        if source is None:
            source = IosSource(tree)
            self._cache = (key, tree, source)
        return source

    def page_source(self) -> str:
        return self._source().xml

    def screenshot_png(self) -> bytes:
        return self.inner.screenshot_png()

    def find_xpath(self, expression: str) -> list[IosNode]:
        return self._source().find_xpath(expression)

    def find_nodes(self, using: str, value: str, scope: IosNode | None = None) -> list[IosNode]:
        """XCUITest's locator strategies (`id` and `name` are synonyms of `accessibility id`)."""
        root = self.root()
        candidates = [n for n in nodes_of(scope or root) if n.cls != AUT and n is not scope]
        if using in ("accessibility id", "id", "name"):
            return [n for n in candidates if n.name == value]
        if using == "class name":
            return [n for n in candidates if n.cls == value]
        if using == "xpath":
            return self._source().find_xpath(value, scope)
        if using == "-ios predicate string":
            predicate = compile_predicate(value)
            return [n for n in candidates if predicate(n)]
        if using == "-ios class chain":
            start = scope or kids(root)[0]
            return class_chain(start, value)
        raise SimError("invalid selector",
                       f"Locator Strategy '{using}' is not supported for this session; use one of {list(STRATEGIES)}")

    # -- input (points in, pixels to the model) ------------------------------------------
    def _px(self, x: float, y: float) -> tuple[int, int]:
        for name, value, limit in (("x", x, self.width), ("y", y, self.height)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < limit:
                raise SimError("move target out of bounds",
                               f"{name}={value!r} is outside the {self.width}x{self.height} pt screen")
        s = self.scale
        return min(int(x * s + s / 2), self.inner.width - 1), min(int(y * s + s / 2), self.inner.height - 1)

    def tap(self, x: int, y: int) -> None:
        self.inner.tap(*self._px(x, y))

    def long_press(self, x: int, y: int, duration_ms: int) -> None:
        self.inner.long_press(*self._px(x, y), duration_ms)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        start, end = self._px(x1, y1), self._px(x2, y2)
        if x1 <= EDGE_PT and x2 - x1 > self.width / 4 and abs(x2 - x1) > abs(y2 - y1) and self._back_button():
            self.back()  # UINavigationController's interactive pop: same effect as its back button
            return
        self.inner.swipe(*start, *end, duration_ms)

    def type_text(self, key: str, text: str) -> None:
        self.inner.type_text(key, text)

    def clear_text(self, key: str) -> None:
        self.inner.clear_text(key)

    def _back_button(self) -> IosNode | None:
        for node in nodes_of(self.root()):
            if node.cls == "XCUIElementTypeNavigationBar":
                return next((b for b in kids(node) if b.key.endswith("/nav_back")), None)
        return None

    def back(self) -> None:
        """XCUITest's native back: tap the navigation bar's back button; without one, nothing."""
        button = self._back_button()
        if button is not None:
            self.tap(*button.bounds.center)

    def press_home(self) -> None:
        self.inner.press_home()

    # -- apps ------------------------------------------------------------------------------
    @staticmethod
    def _package(bundle_id: str) -> str:
        return LAUNCHER if bundle_id == SPRINGBOARD else bundle_id

    def activate_app(self, package: str) -> None:
        self.inner.activate_app(self._package(package))

    def terminate_app(self, package: str) -> bool:
        return self.inner.terminate_app(self._package(package))

    def app_state(self, package: str) -> int:
        if package == SPRINGBOARD:
            return AppState.RUNNING_IN_FOREGROUND if self.inner.current_package() == LAUNCHER else \
                AppState.RUNNING_IN_BACKGROUND
        if package == LAUNCHER:
            return AppState.NOT_INSTALLED  # no Android launcher on an iPhone
        return self.inner.app_state(package)

    def current_package(self) -> str:
        package = self.inner.current_package()
        return SPRINGBOARD if package == LAUNCHER else package

    def current_activity(self) -> str:
        raise SimError("unsupported operation", "an iOS session has no activities (getCurrentActivity is Android's)")

    def remove_app(self, package: str) -> bool:
        return self.inner.remove_app(package)

    def install_app(self, package: str) -> None:
        self.inner.install_app(package)

    # -- the web view (a hybrid app's; its CSS pixels are points at the screen's scale) ----
    @property
    def browsers(self) -> BrowserPool:
        return self.inner.browsers

    def web_view_state(self) -> WebViewState | None:
        return self.inner.web_view_state()

    def web_browser(self, generation: int | None = None) -> WebViewBrowser:
        return self.inner.web_browser(generation)

    # -- the keyboard (drawn by the inner phone, keys in its tree) ------------------------
    def keyboard_field(self) -> str | None:
        return self.inner.keyboard_field()

    def hide_keyboard(self) -> bool:
        return self.inner.hide_keyboard()

    # -- faults and ground truth (shared with the Android persona; truth in screenshot pixels) ---
    def set_faults(self, faults: dict[str, Any]) -> None:
        self.inner.set_faults(faults)

    @property
    def faults(self) -> Faults:
        return self.inner.faults

    def action_log(self) -> list[dict[str, Any]]:
        return self.inner.action_log()

    def ground_truth(self) -> dict[str, Any]:
        return self.inner.ground_truth()

    def close(self) -> None:
        self.inner.close()
        self._cache = None
