"""The observing part of `Device`: screenshots, page sources, trees and observations.

`observe()` is the core's `Screen.observe`: a screenshot, decoded ahead on a background thread,
and (tree on demand, issue 12) a tree fetched only when something reads it while the screen is
still current. A web context's tree comes from `devices/web.py`; XCUITest points are scaled.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable

from pytest_guistate.core.finding import Finder
from pytest_guistate.core.frame import Frame, FrameError, check_png
from pytest_guistate.core.observation import Observation, TreeExpired
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.devices import check_finding, ios, web
from pytest_guistate.devices.devtools_capture import DevtoolsScreenshots, wants_devtools
from pytest_guistate.devices.errors import screenshot_payload_text
from pytest_guistate.devices.protocols import CanObserve

__all__ = ["ObservingMixin"]


class ObservingMixin(CanObserve):
    """Screenshots and trees of one session (set up by `Device.__init__`)."""

    decode_ahead: bool
    tree_on_demand: bool
    find_checks: bool  # answer locator checks with a find when that gives the tree's verdict (issue 24)
    page_source_calls: int
    devtools_screenshots: bool | None
    _devtools: DevtoolsScreenshots | None
    _web: bool | None
    _shots: int  # declared again where they are assigned: the protocol only says they exist
    _newest: tuple[Observation, int, int] | None
    _size: tuple[int, int] | None
    _first_frame_size: tuple[int, int] | None  # the session's screen until `size` is read

    def screenshot(self, *, source: str = "") -> Frame:
        """A screenshot as a `Frame` (PNG bytes, decoded lazily)."""
        devtools = self._devtools_route()
        if devtools is not None and devtools.state == "on":
            frame = self._frame(devtools.capture(), source)
            if self.decode_ahead:
                frame.prefetch()  # the decode overlaps the dialog check
            devtools.check_dialog()
            return frame
        encoded = devtools.take() if devtools is not None else None
        if encoded is None:
            encoded = self._call("screenshot", self.driver.get_screenshot_as_base64)
        return self._frame(encoded, source)

    def _frame(self, encoded: object, source: str) -> Frame:
        try:
            png = base64.b64decode(encoded, validate=True)  # type: ignore[arg-type]  # checked here
        except (binascii.Error, ValueError, TypeError) as exc:
            raise FrameError(screenshot_payload_text(self.url, encoded, exc)) from None
        # names an HTML page, a truncated PNG, a 1x1, an all-black or an oversized frame (issue 22: from
        # its header, before any decode; the limit is relative to the session's screen once it is known)
        screen = self._size or getattr(self, "_first_frame_size", None)
        check_png(png, self.url, screen)
        frame = Frame(png=png, timestamp=time.time(), source=source)
        if screen is None:
            self._first_frame_size = frame.size
        return frame

    @property
    def screenshot_route(self) -> str:
        """How screenshots are taken: "w3c", "devtools", or "devtools (untried)" before the first."""
        devtools = self._devtools_route()
        if devtools is None or devtools.state == "off":
            return "w3c"
        return "devtools" if devtools.state == "on" else "devtools (untried)"

    def _devtools_route(self) -> DevtoolsScreenshots | None:
        wanted = self.devtools_screenshots
        if wanted is None:
            wanted = not self.is_sim and wants_devtools(getattr(self.driver, "capabilities", None) or {})
        if not wanted:
            return None
        if self._devtools is None:
            self._devtools = DevtoolsScreenshots(self.driver, self.url)
        return self._devtools

    def page_source(self) -> str:
        self.page_source_calls += 1
        return str(self._call("page source", lambda: self.driver.page_source))

    def ui_tree(self) -> UITree:
        """The accessibility tree with bounds in screenshot pixels (`UITreeError` on bad XML).

        A web context's page source is HTML without geometry, so there the tree comes from a
        script that walks the rendered DOM (`devices/web.py`); XCUITest points are scaled.
        """
        if self.is_web:
            return self._web_tree()
        source = self.page_source()
        if web.looks_like_html(source):
            self._web = True  # e.g. an Android webview context: switch to the DOM route for good
            return self._web_tree()
        scale = self.scale
        return parse_page_source(source, scale=scale if scale != 1.0 else None)

    def _web_tree(self) -> UITree:
        self.page_source_calls += 1
        return web.script_tree(self.driver, self.url)

    def observe(self) -> Observation:
        frame = self.screenshot()
        if self.decode_ahead:
            frame.prefetch()  # overlaps the page-source request (or the caller's next steps)
        self._shots += 1
        if self.tree_on_demand:
            shot, inputs = self._shots, self.action_count
            observation = Observation(frame=frame, fetch_tree=self._tree_while_current(), package_of=_package_of,
                                      tree_current=lambda: (self._shots, self.action_count) == (shot, inputs),
                                      finder=self._check_finder())
        else:
            tree = self.ui_tree()
            observation = Observation(frame=frame, tree=tree, package=_package_of(tree))
        self._newest = (observation, self._shots, self.action_count)
        return observation

    def _check_finder(self) -> Finder | None:
        """Locator checks answered by a find (issue 24) unless `find_checks` is off."""
        if not self.find_checks:
            return None
        return lambda query: check_finding.answer(self, query)

    def _tree_while_current(self) -> Callable[[], UITree]:
        """The fetch of one observation's tree: allowed only while it is the newest observation
        and no input was sent since, so the tree is the one of the screen in its frame."""
        shot, inputs = self._shots, self.action_count

        def fetch() -> UITree:
            if self._shots != shot or self.action_count != inputs:
                why = "an input was sent" if self.action_count != inputs else "a newer screenshot was taken"
                raise TreeExpired(
                    f"the UI tree of an observation on {self.url} was first read after {why}: it can no longer "
                    "be fetched for that frame. Read observation.tree before acting, or call device.ui_tree() "
                    "for the current screen"
                )
            return self.ui_tree()

        return fetch

    def _current_tree(self) -> UITree:
        """On demand: the newest observation's tree when already fetched and still current (no
        input, no newer screenshot since), else a fresh page source (always, when eager)."""
        if self._newest is not None and self.tree_on_demand:
            observation, shot, inputs = self._newest
            if observation.tree_fetched and (shot, inputs) == (self._shots, self.action_count) and observation.tree is not None:
                return observation.tree
        return self.ui_tree()


def _package_of(tree: UITree | None) -> str:
    """The foreground app: iOS names it by the application's bundle id; Android by the first
    package in the tree that is not the system UI."""
    if tree is None:
        return ""
    if tree.platform == "ios":
        return ios.ios_package(tree)
    packages = [n.package for n in tree.nodes() if n.package and n.package != "com.android.systemui"]
    return packages[0] if packages else ""
