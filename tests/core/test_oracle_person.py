"""The oracle judged by what a person sees (issue 43), on synthetic phone screens.

Real apps showed three shapes a reader of a report meets: a redrawn grid or a fading overlay
coming out as a pile of slivers (one region per key or word), a small window that came or went
given a region of the whole screen, and a borderless control's tap halo, which reaches past the
control's bounds, taken for the app's change. Frames are 1080x1920 like the phones measured.
"""

from __future__ import annotations

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UITree
from tests.core.test_oracle_real_shapes import LIST, H, W, _node, _tree, compare, list_tree, popup_opened, rows_screen

KEYS = [Box(60 + c * 160, 1000 + r * 150, 180 + c * 160, 1120 + r * 150) for r in range(2) for c in range(6)]
ICON = Box(940, 110, 1040, 210)  # a borderless icon button in the action bar


def keyboard_tree() -> UITree:
    """A puzzle's letter grid: twelve keys laid out straight in the page (no container of the grid)."""
    keys = "".join(
        _node("android.widget.Button", k, "app:id/key", chr(65 + i), extra='clickable="true"')
        for i, k in enumerate(KEYS)
    )
    return _tree(
        _node(
            "android.widget.FrameLayout",
            Box(0, 0, W, 1920),
            children=_node("android.widget.FrameLayout", Box(0, 72, W, 1776), "android:id/content", children=keys)
            + _node("android.view.View", Box(0, 1776, W, 1920), "android:id/navigationBarBackground"),
        )
    )


def grid_screen(letters: str) -> np.ndarray:
    img = rows_screen()
    img[960:1320] = 250
    for key, letter in zip(KEYS, letters, strict=True):
        cv2.rectangle(img, (key.left, key.top), (key.right - 1, key.bottom - 1), (200, 160, 90), -1)
        cv2.putText(img, letter, (key.left + 30, key.top + 90), cv2.FONT_HERSHEY_SIMPLEX, 2.4, (20, 20, 20), 5)
    return img


def test_a_redrawn_grid_of_keys_is_few_regions_holding_every_key() -> None:
    """Twelve keys relabelled (a new puzzle) are one visual change, not twelve crops: at most three
    regions, every key inside one of them, none much larger than the grid."""
    result = compare(grid_screen("EAXDOEGNKEZQ"), grid_screen("QKXEJSNEMUAB"), keyboard_tree(), keyboard_tree())
    assert result.verdict == "changed"
    assert len(result.regions) <= 3
    for key in KEYS[:2] + KEYS[3:]:  # the third key kept its letter in both
        letter = Box(key.left + 30, key.top + 30, key.left + 90, key.top + 90)
        assert any(r.box.intersection(letter).area >= 0.8 * letter.area for r in result.regions), key
    grid = Box(0, 960, W, 1320)
    assert all(r.box.intersection(grid).area >= 0.5 * r.box.area for r in result.regions)


def test_a_popup_that_came_is_a_new_window_no_larger_than_what_changed() -> None:
    """A popup menu's window in front is a new window (its note and a screen-level region), but the
    region stands for what a person sees change: the popup, not the whole screen behind it."""
    before, after, tree = popup_opened()
    result = compare(before, after, tree, list_tree())
    assert any("floating window came" in note for note in result.notes)
    last = result.regions[-1]
    assert last.kind == "screen" and last.box.area < 0.3 * W * H


def halo(img: np.ndarray, centre: tuple[int, int], radius: int, alpha: float) -> np.ndarray:
    """A borderless ripple's last frame: a disc of black at `alpha` over the screen, past the control."""
    out = img.astype(np.float32)
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.circle(mask, centre, radius, 255, -1)
    out[mask > 0] *= 1.0 - alpha
    return out.astype(np.uint8)


def icon_tree() -> UITree:
    return list_tree(extra_nodes=_node("android.widget.ImageButton", ICON, "app:id/search", extra='clickable="true"'))


def test_a_faint_tap_halo_around_an_unchanged_icon_button_is_not_a_change() -> None:
    """The tap did nothing: the icon button's halo (12% black, a disc reaching past the button's bounds)
    fades, the tree holds the button unchanged. It is named a ripple and the step is not "changed":
    a tap that did nothing must not pass."""
    before = rows_screen()
    cv2.circle(before, ICON.center, 36, (255, 255, 255), 4)
    after = halo(before, ICON.center, 80, 0.12)
    result = compare(before, after, icon_tree(), icon_tree())
    assert result.verdict != "changed"
    assert [t.kind for t in result.transients] == ["ripple"]


def test_a_change_around_an_icon_button_that_is_not_a_layer_is_a_change() -> None:
    """New content drawn about a button (a badge, a new icon) is no halo, whatever its shape."""
    before = rows_screen()
    after = before.copy()
    cv2.circle(after, ICON.center, 80, (40, 40, 220), -1)
    result = compare(before, after, icon_tree(), icon_tree())
    assert result.verdict == "changed"


# -- web views: the page's own nodes, the web view only for a change covering much of it ------------

PAGE = Box(0, 240, W, 1776)  # the web view and the page's root node in it (the DOM mapped to nodes)
LINES = [Box(40, 300 + i * 110, 1040, 380 + i * 110) for i in range(12)]  # paragraphs of the page
WORD = Box(300, 1000, 520, 1060)  # a word of the seventh paragraph, selected
HANDLES = [Box(250, 1060, 310, 1130), Box(510, 1060, 570, 1130)]  # the selection's two handles


def page_screen(ink: tuple[int, int, int] = (30, 30, 30), link: tuple[int, int, int] = (90, 90, 90)) -> np.ndarray:
    """A browser: the toolbar, then a page of text in a web view; the page's last line is a link."""
    img = rows_screen()
    img[PAGE.top : PAGE.bottom] = 250
    for i, line in enumerate(LINES):
        last = i == len(LINES) - 1
        text = "A link across the page, to read more of it" if last else f"Paragraph {i} of the page, a line"
        cv2.putText(img, text, (line.left, line.top + 55), cv2.FONT_HERSHEY_SIMPLEX, 1.5, link if last else ink, 3)
    return img


def page_tree() -> UITree:
    """The web view's page as a tree: the page's root node and one node per paragraph (Chromium's
    accessibility nodes, android.view.View with the text as content-desc)."""
    lines = "".join(
        f'<node class="android.view.View" resource-id="" text="" package="app" content-desc="Paragraph {i}" '
        f'bounds="{line.to_bounds()}"/>'
        for i, line in enumerate(LINES)
    )
    page = _node("android.view.View", PAGE, extra='scrollable="true"', children=lines)
    webview = _node("android.webkit.WebView", PAGE, children=page)
    content = _node(
        "android.widget.FrameLayout",
        Box(0, 72, W, 1776),
        "android:id/content",
        children=_node("android.view.ViewGroup", Box(0, 72, W, 240), "app:id/toolbar") + webview,
    )
    return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1920), children=content))


def test_a_text_selection_in_a_web_view_is_tight_not_the_whole_web_view() -> None:
    """Issue 43: a word selected (highlighted, two handles under it) while a link further down the page
    turned blue. Their joint box is a third of the page's height: the page (the web view) is not the
    item either change is, however close its area; each change keeps a tight region of its own."""
    before = page_screen()
    after = page_screen(link=(200, 90, 20))
    cv2.rectangle(after, (WORD.left, WORD.top), (WORD.right - 1, WORD.bottom - 1), (240, 200, 150), -1)
    cv2.putText(after, "Paragraph", (WORD.left, WORD.top + 45), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (30, 30, 30), 3)
    for handle in HANDLES:
        cv2.rectangle(after, (handle.left, handle.top), (handle.right - 1, handle.bottom - 1), (200, 120, 30), -1)
    result = compare(before, after, page_tree(), page_tree())
    assert result.verdict == "changed"
    assert all(r.box.area < 0.25 * PAGE.area for r in result.regions), result.regions
    selection = Box.union_all([WORD, *HANDLES])
    assert selection is not None
    held = [r for r in result.regions if r.box.intersection(selection).area >= 0.9 * selection.area]
    assert held and held[0].box.area <= 3 * selection.area, result.regions
    assert any(r.box.intersects(LINES[-1]) for r in result.regions)  # the link's change has its own region


def test_a_change_covering_most_of_a_web_view_is_the_web_view() -> None:
    """The web view is a container like any other: a change spanning most of its page (the page's
    text redrawn over two thirds of it) is the page, one region, not a pile of lines."""
    before = page_screen()
    after = before.copy()
    after[300:1320, 40:1040] = 250
    for i, line in enumerate(LINES[:9]):
        cv2.putText(
            after,
            f"Another text {i} here, longer",
            (line.left, line.top + 55),
            cv2.FONT_HERSHEY_SIMPLEX,
            1.5,
            (30, 30, 30),
            3,
        )
    result = compare(before, after, page_tree(), page_tree())
    assert result.verdict == "changed"
    assert result.regions[0].box == PAGE and len([r for r in result.regions if r.kind == "change"]) == 1


def test_a_popup_on_a_tall_scrolling_path_is_not_the_whole_path() -> None:
    """Duolingo's lesson path: a popup (908 x 420) and a tooltip above it came on a path the screen's
    width and 1536 px tall. Their joint box is over a quarter of the path's area, but it spans under
    half its height: the path is not their item; the popup keeps its own box."""
    path = LIST
    popup = Box(86, 980, 994, 1400)
    tooltip = Box(440, 690, 644, 800)
    nodes = _node(
        "android.widget.FrameLayout",
        popup,
        "app:id/popupAction",
        children=_node("android.widget.TextView", Box(120, 1010, 900, 1080), text="Use basic phrases"),
    )
    tree = _tree(
        _node(
            "android.widget.FrameLayout",
            Box(0, 0, W, 1920),
            children=_node(
                "android.widget.FrameLayout",
                Box(0, 72, W, 1776),
                "android:id/content",
                children=_node(
                    "androidx.recyclerview.widget.RecyclerView",
                    path,
                    "app:id/path",
                    extra='scrollable="true"',
                    children=nodes,
                ),
            ),
        )
    )
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (popup.left, popup.top), (popup.right - 1, popup.bottom - 1), (190, 60, 200), -1)
    cv2.putText(after, "Use basic phrases", (120, 1060), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (255, 255, 255), 3)
    cv2.rectangle(after, (tooltip.left, tooltip.top), (tooltip.right - 1, tooltip.bottom - 1), (250, 250, 250), -1)
    cv2.putText(after, "START", (470, 770), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (60, 200, 60), 3)
    result = compare(before, after, tree, tree)
    assert result.verdict == "changed"
    assert all(r.box != path and r.box.area < 0.5 * path.area for r in result.regions), result.regions
    assert any(r.box == popup for r in result.regions), result.regions


def test_a_page_area_turning_from_black_to_white_is_a_repaint_not_an_undim() -> None:
    """Issue 43: a web view whose black page turned white (75% of the screen) got only the toolbar and
    two handles: black to white read as a scrim's undim of gain 256, and the page was divided out.
    A scrim lets at least an eighth of the light through: this is the page repainted."""
    before = page_screen()
    before[PAGE.top : PAGE.bottom] = 0
    cv2.rectangle(before, (300, 1000), (360, 1070), (200, 120, 30), -1)  # a handle over the black page
    after = page_screen()
    cv2.rectangle(after, (0, 72), (W - 1, 239), (60, 140, 200), -1)  # the toolbar's colour changed too
    result = compare(before, after, page_tree(), page_tree())
    assert result.verdict == "changed"
    assert not any("undim" in note for note in result.notes), result.notes
    covered = Box.union_all(r.box for r in result.regions)
    assert covered is not None and covered.intersection(PAGE).area >= 0.9 * PAGE.area, result.regions
