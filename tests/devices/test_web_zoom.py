"""A browser page's CSS px -> screenshot px follows the page (`web.PageZoom`): devicePixelRatio x
visualViewport.scale, less the pinch-zoom offset. A page with no <meta name="viewport"> is laid out
~980 CSS px wide and shown at scale 0.42, so devicePixelRatio alone put its boxes 2.4 times too far.
Boxes (tree walk, locator, rect) and taps by point use the factor the last measuring script brought,
re-measured after an input. Real Chromium: tests/appium/test_page_zoom_real.py."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.remote.command import Command

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, parse_page_source
from pytest_guistate.devices import hybrid, web
from pytest_guistate.devices.device import Device

DPR = 2.625  # a Pixel 7
NO_META = DPR * 0.42  # the Pixel 7 preset showing a page laid out 981 CSS px wide: 1.1025


def _tree(zoom: float) -> str:
    """What TREE_JS returns for one button, its bounds mapped with `zoom`."""
    return (f'<hierarchy width="1082" height="2402" zoom="{zoom}" zoom-left="0" zoom-top="0" moving="false">'
            '<node class="android.widget.Button" text="Go" clickable="true" bounds="[110,1103][441,1323]"/>'
            '</hierarchy>')


class ScriptedBrowser:
    """A browser session answering scripts from a table (a deque: one answer per call, in turn) and
    keeping every pointer action it was sent."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.capabilities = {"browserName": "chrome"}
        self.answers = answers
        self.ran: list[str] = []
        self.taps: list[tuple[int, int]] = []

    def execute_script(self, script: str, *args: Any) -> Any:
        self.ran.append("tree" if "XMLSerializer" in script else "geometry" if script == web.GEOMETRY_JS else script)
        answer = self.answers["tree" if "XMLSerializer" in script else script]
        return answer.popleft() if isinstance(answer, deque) else answer

    def execute(self, command: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert command == Command.W3C_ACTIONS, command
        for source in (params or {})["actions"]:
            moves = [a for a in source["actions"] if a["type"] == "pointerMove"]
            self.taps.extend((int(m["x"]), int(m["y"])) for m in moves)
        return {"value": None}


def _device(answers: dict[str, Any]) -> tuple[Device, ScriptedBrowser]:
    browser = ScriptedBrowser(answers)
    return Device(browser, url="http://127.0.0.1:1/fake"), browser  # type: ignore[arg-type]  # duck-typed


@pytest.mark.parametrize(("zoom", "rect", "box"), [
    (web.PageZoom(DPR), (100, 1000, 300, 200), Box(262, 2625, 1050, 3150)),  # a meta viewport page: dpr alone
    (web.PageZoom(NO_META), (100, 1000, 300, 200), Box(110, 1102, 441, 1323)),  # no meta: 1.1025 px per CSS px
    # pinch-zoomed 2x on a meta page, the visual viewport 40 CSS px right and 300 down in the layout one
    (web.PageZoom(DPR * 2, 40, 300), (60, 320, 10, 10), Box(105, 105, 158, 158)),
])
def test_a_css_rect_maps_to_where_the_screenshot_shows_it(zoom: web.PageZoom, rect: tuple[float, float, float, float],
                                                          box: Box) -> None:
    assert zoom.box(rect) == box
    x, y = box.center
    left, top = zoom.to_page(x, y)  # a tap at the box's centre, as the pointer takes it (visual viewport CSS px)
    left, top = left + zoom.left, top + zoom.top  # the browser adds the pinch offset: the element's middle
    assert abs(left - (rect[0] + rect[2] / 2)) <= 1 and abs(top - (rect[1] + rect[3] / 2)) <= 1


def test_a_tap_point_leaves_the_pinch_offset_to_the_browser() -> None:
    """Chromium's pointer takes CSS px from the visual viewport's corner (a tap sent at (200, 450) on a
    page pinched 2x with the visual viewport at (150, 250) arrived at clientX/Y (350, 700)): the offset
    is not added, or a tap would land 150 CSS px right of its aim."""
    assert web.PageZoom(5.25, 150, 250).to_page(1050, 2362.5) == (200, 450)


@pytest.mark.parametrize("answer", [None, [2.625, 0], ["2", 0, 0], [True, 0, 0], [0, 0, 0], [-1.0, 0, 0], "x"])
def test_a_zoom_answer_that_is_not_three_numbers_with_a_positive_factor_is_an_error(answer: object) -> None:
    with pytest.raises(WebDriverException, match="zoom script returned|screenshot px per CSS px"):
        web.zoom_from_script(answer)


def test_the_tree_walk_says_its_zoom_on_its_root() -> None:
    assert web.tree_zoom(parse_page_source(_tree(NO_META))) == web.PageZoom(NO_META)
    assert web.tree_zoom(parse_page_source('<hierarchy width="1" height="1"/>')) is None  # an older walk: unsaid
    for attribute in ('["zoom", String(zoom)]', '["zoom-left", String(zoomLeft)]', '["zoom-top", String(zoomTop)]'):
        assert attribute in web.TREE_JS
    assert "best.zoom = zoomOf();" in web.LOCATE_JS and "zoomOf()" in web.RECT_JS and "zoomOf()" in web.GEOMETRY_JS


def test_a_tap_by_point_uses_the_zoom_of_the_tree_it_aims_at_with_no_request_of_its_own() -> None:
    device, browser = _device({"tree": _tree(NO_META)})
    node = next(n for n in device.ui_tree().nodes() if n.text == "Go")
    assert node.bounds is not None and device.scale == pytest.approx(NO_META)
    device.tap(x=node.bounds.center[0], y=node.bounds.center[1])
    assert browser.taps == [(249, 1100)]  # the button's middle in CSS px (100 + 150, 1000 + 100), rounded
    assert browser.ran == ["tree"]  # the walk's zoom: no geometry script


def test_after_an_input_the_zoom_is_measured_again_so_a_page_change_cannot_keep_the_old_one() -> None:
    """A meta page (dpr alone), then a page without one, then back: each tap maps by the page it lands on."""
    device, browser = _device({"tree": deque([_tree(DPR), _tree(DPR)]), web.GEOMETRY_JS: deque([[NO_META, 0, 0]])})
    device.ui_tree()
    device.tap(x=656, y=2887)
    assert browser.taps == [(250, 1100)]
    device.action_count += 1  # an input (a link opened another page): the zoom is asked before the next tap
    device.tap(x=276, y=1213)
    assert browser.taps[-1] == (250, 1100) and browser.ran == ["tree", "geometry"]
    device.ui_tree()  # back on a meta page, read by the tree walk
    device.tap(x=656, y=2887)
    assert browser.taps[-1] == (250, 1100) and browser.ran == ["tree", "geometry", "tree"]


def test_a_locator_and_an_elements_rect_bring_their_zoom() -> None:
    found = {"el": "E", "rank": 2, "why": "", "rect": [100, 1000, 300, 200], "zoom": [NO_META, 0, 0]}
    device, browser = _device({web.LOCATE_JS: found, web.RECT_JS: [[100, 1000, 300, 200], [NO_META, 0, 0]]})
    located = web.locate(device.driver, "id", "go")
    assert located is not None and located.box == Box(110, 1102, 441, 1323)
    assert device.box_of("E") == Box(110, 1102, 441, 1323)  # type: ignore[arg-type]  # the scripted element
    device.tap(x=276, y=1213)
    assert browser.taps == [(250, 1100)] and "geometry" not in browser.ran  # the rect's zoom, not asked again
    without = dict(found)
    del without["zoom"]
    device, _ = _device({web.LOCATE_JS: without})
    located = web.locate(device.driver, "id", "go")
    assert located is not None and located.rect is not None and located.box is None  # no zoom said: no box guessed


def test_a_hybrid_page_walk_is_unmapped_by_its_own_zoom_before_the_web_view_maps_it() -> None:
    """In a native app's web view the walk's bounds go back to CSS px by the zoom the walk used, then
    through `hybrid.to_screen` (the web view's native width over the page's viewport width)."""
    native = parse_page_source('<hierarchy width="1080" height="2400"><node class="android.webkit.WebView" '
                               'bounds="[0,200][1080,2200]"/></hierarchy>')
    page = parse_page_source(_tree(NO_META))
    host = hybrid.webview_node(native)
    assert isinstance(host, UINode)
    viewport = hybrid.WebViewport(Box(0, 200, 1080, 2200), 980, 1815, DPR)  # a page with no meta tag
    hybrid.graft(native, page, viewport, host, NO_META)
    [button] = host.children
    css = (110 / NO_META, 1103 / NO_META, 441 / NO_META, 1323 / NO_META)
    assert button.bounds == hybrid.to_screen(viewport, *css)
    assert button.bounds == Box(110, 1303, 441, 1522)  # 1080 / 980 screenshot px per CSS px, 200 px down
