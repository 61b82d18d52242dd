"""The oracle's tree-less call (the light tier's, no page source either side; issue 43), on synthetic
phone screens.

On real phones that call took the system's own redraws for the app's change: the navigation bar's
three buttons redrawn as a dialog takes focus or the keyboard goes, the notification shade's clock
(its header is taller than the status bar), a blinking text cursor. Each made a step that did
nothing `changed`. It also gave a new page as a pile of slivers, and left the screen dimmed behind a
dialog out of the regions. Frames are 1080x1920 like the phones measured, and 1080x2340 with the
recorder's black rows under the screen.
"""

from __future__ import annotations

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import Transition, VisualOracle
from pytest_guistate.core.oracle_mask import StatusBars
from tests.core.test_oracle_person import ICON, halo
from tests.core.test_oracle_real_shapes import DIALOG, H, W, rows_screen

oracle = VisualOracle()
NAV = Box(0, 1776, W, 1920)
FIELD = Box(60, 400, 1020, 520)


def treeless(before: np.ndarray, after: np.ndarray, previous: np.ndarray | None = None) -> Transition:
    """As the light tier calls the oracle when no check read a tree: the bars `StatusBars` knows
    with nothing learnt (the platform's top band), no tree either side."""
    height, width = after.shape[:2]
    return oracle.compare(
        Frame.from_array(before),
        Frame.from_array(after),
        None,
        before_tree=lambda: None,
        status_bars=StatusBars().boxes(None, width, height),
        previous=Frame.from_array(previous) if previous is not None else None,
    )


def buttons(img: np.ndarray, ink: tuple[int, int, int], keyboard: bool = False, bar: int = 140) -> np.ndarray:
    """Android's three-button navigation bar over `NAV`: Back (a chevron pointing down while a keyboard
    is up), Home and Recents at a quarter of the width either side of the centre."""
    out = img.copy()
    cv2.rectangle(out, (NAV.left, NAV.top), (NAV.right, NAV.bottom), (bar, bar, bar), -1)
    y = NAV.top + 72
    back = [(250, y - 20), (292, y - 20), (271, y + 20)] if keyboard else [(292, y - 22), (292, y + 22), (252, y)]
    cv2.fillPoly(out, [np.array(back, np.int32)], ink)
    cv2.circle(out, (540, y), 22, ink, -1)
    cv2.rectangle(out, (788, y - 21), (832, y + 21), ink, -1)
    return out


def padded(img: np.ndarray, rows: int = 420) -> np.ndarray:
    """The frame a recorder (minicap) gives on a phone whose screenshot is taller than its content."""
    return np.vstack([img, np.zeros((rows, img.shape[1], 3), np.uint8)])


def test_the_navigation_bars_buttons_redrawn_are_no_change_without_a_tree() -> None:
    """The keyboard went (Back turned from a down chevron back into a triangle) and the buttons took
    the app's dark icons: the system's redraw, not the app's change, with or without the recorder's
    black rows under the screen."""
    before = buttons(rows_screen(), (230, 230, 230), keyboard=True)
    after = buttons(rows_screen(), (90, 90, 90))
    for b, a in ((before, after), (padded(before), padded(after))):
        result = treeless(b, a)
        assert result.verdict == "no_change" and result.regions == []
        assert any(box.top <= NAV.top + 4 and box.bottom == a.shape[0] for box in result.ignored)


def test_a_change_above_the_navigation_bar_is_the_only_region() -> None:
    before = buttons(rows_screen(), (230, 230, 230), keyboard=True)
    after = buttons(rows_screen(), (90, 90, 90))
    cv2.rectangle(after, (190, 1680), (900, 1740), (250, 250, 250), -1)  # the last row's name changes
    cv2.putText(after, "Renamed", (190, 1730), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    result = treeless(before, after)
    assert result.verdict == "changed"
    assert result.regions and all(r.box.bottom <= NAV.top and r.box.top >= 1600 for r in result.regions)


def tabs(selected: int) -> np.ndarray:
    """An app's own bottom bar at the screen's bottom (gesture navigation: no system buttons): three
    tabs, each an icon over a label, the selected one blue."""
    img = rows_screen()
    cv2.rectangle(img, (0, 1776), (W, H), (245, 245, 245), -1)
    for i, x in enumerate((180, 540, 900)):
        colour = (200, 120, 20) if i == selected else (120, 120, 120)
        cv2.circle(img, (x, 1830), 24, colour, -1)
        cv2.putText(img, ("Home", "Search", "Me")[i], (x - 50, 1895), cv2.FONT_HERSHEY_SIMPLEX, 1.0, colour, 2)
    return img


def test_an_apps_bottom_tabs_are_not_taken_for_the_navigation_bar() -> None:
    """Three marks on a line at the screen's bottom are not enough: an app's tabs lie at a third of
    the width and carry labels; the selected tab changing is the app's change."""
    result = treeless(tabs(0), tabs(1))
    assert result.verdict == "changed"
    assert any(r.box.intersects(Box(100, 1776, 620, H)) for r in result.regions)
    assert not any(box.top >= 1700 for box in result.ignored)


def shade(minute: str) -> np.ndarray:
    """The notification shade: a black header twice the status bar's height holding the clock, then
    the quick settings' white panel."""
    img = np.zeros((H, W, 3), np.uint8)
    cv2.putText(img, f"8:0{minute}", (24, 100), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (255, 255, 255), 3)
    cv2.rectangle(img, (12, 144), (W - 12, 520), (255, 255, 255), -1)
    cv2.putText(img, "Thu, Oct 19", (24, 230), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (90, 90, 90), 2)
    return buttons(img, (255, 255, 255), bar=0)


def test_the_notification_shades_clock_ticking_is_no_change_without_a_tree() -> None:
    """The shade's header clock sits below the platform's top band (3%), in the band the status bar's
    colour keeps down to the panel: its tick is the system's."""
    result = treeless(shade("0"), shade("1"))
    assert result.verdict == "no_change" and result.regions == []


def test_a_title_in_a_toolbar_of_the_status_bars_colour_is_a_change() -> None:
    """The band is the status bar's only while no taller than the shade's header: an app whose
    toolbar has the status bar's colour (24 + 56 dp) keeps its title's change."""

    def screen(title: str) -> np.ndarray:
        img = rows_screen()
        cv2.rectangle(img, (0, 0), (W, 240), (120, 80, 20), -1)
        cv2.putText(img, "9:59", (20, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2)
        cv2.putText(img, title, (40, 180), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 3)
        return img

    result = treeless(screen("Inbox"), screen("Sent"))
    assert result.verdict == "changed"
    assert any(r.box.intersects(Box(40, 120, 400, 200)) for r in result.regions)


def field(cursor_at: int | None, second: int | None = None) -> np.ndarray:
    """Two text fields; a 4 px cursor after the text of the first (`cursor_at`) or in the second."""
    img = rows_screen()
    for box in (FIELD, Box(60, 600, 1020, 720)):
        cv2.rectangle(img, (box.left, box.top), (box.right, box.bottom), (235, 235, 235), -1)
    cv2.putText(img, "Hello World", (90, 480), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (40, 30, 30), 3)
    for x, y in ((cursor_at, FIELD.top), (second, 600)):
        if x is not None:
            cv2.rectangle(img, (x, y + 25), (x + 3, y + 95), (80, 30, 30), -1)
    return img


def test_a_blinking_cursor_is_no_change_without_a_tree() -> None:
    """No tree names the focused field, but a solid upright bar a text line tall on a plain place is a
    cursor: its blink is set aside (named), and a tap that did nothing does not pass."""
    for before, after in ((field(None), field(420)), (field(420), field(None))):
        result = treeless(before, after)
        assert result.verdict == "no_change" and result.regions == []
        assert [t.kind for t in result.transients] == ["cursor"]


def test_a_cursor_that_moved_to_another_field_is_a_change() -> None:
    """One bar gone and another come is the focus moving (the tap's effect), not a blink."""
    result = treeless(field(420), field(None, second=100))
    assert result.verdict == "changed"


def test_a_thick_bar_or_a_glyph_is_no_cursor() -> None:
    before = field(None)
    thick = before.copy()
    cv2.rectangle(thick, (420, 425), (440, 495), (80, 30, 30), -1)  # 21 px wide: a mark, not a cursor
    letter = before.copy()
    cv2.putText(letter, "l!", (420, 480), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (40, 30, 30), 3)
    for after in (thick, letter):
        assert treeless(before, after).verdict == "changed"


def test_a_dialog_over_a_scrim_has_the_dimmed_screen_as_a_region_without_a_tree() -> None:
    """No tree says whether the dialog is a window of its own; the screen behind it visibly dimmed,
    so it is a region (kind `scrim`, never cropped) after the dialog's."""
    before = rows_screen()
    after = (before.astype(np.float32) * 0.4).astype(np.uint8)
    cv2.rectangle(after, (DIALOG.left, DIALOG.top), (DIALOG.right, DIALOG.bottom), (255, 255, 255), -1)
    cv2.putText(after, "Planetary hours", (140, 740), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3)
    result = treeless(before, after)
    assert result.verdict == "changed"
    assert result.regions[0].box.intersection(DIALOG).area >= 0.9 * DIALOG.area
    assert result.regions[-1].kind == "scrim" and result.regions[-1].box.area > 0.6 * W * H
    assert all(c.box.area < 0.3 * W * H for c in result.crops)


def page() -> np.ndarray:
    """Another activity: a gallery of six pictures, each with a caption under it."""
    img = np.full((H, W, 3), 250, np.uint8)
    cv2.rectangle(img, (0, 0), (W, 72), (40, 40, 40), -1)
    cv2.rectangle(img, (0, 72), (W, 240), (120, 80, 20), -1)
    for i in range(6):
        x, y = 40 + (i % 2) * 520, 280 + (i // 2) * 490
        cv2.rectangle(img, (x, y), (x + 480, y + 380), (60 + 30 * i, 140, 200 - 20 * i), -1)
        cv2.putText(img, f"Photo {i}", (x, y + 440), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (30, 30, 30), 3)
    return buttons(img, (230, 230, 230))


def test_a_new_page_without_a_tree_is_one_region() -> None:
    """A new page (another activity): the ink of its words is no item a reader compares; the step's
    region is the repainted screen, one crop."""
    before = buttons(rows_screen(), (230, 230, 230))
    after = page()
    result = treeless(before, after)
    assert result.verdict == "changed"
    assert [r.kind for r in result.regions] == ["repaint"]
    assert result.regions[0].box.area > 0.6 * W * H


def test_a_faint_tap_halo_is_not_a_change_without_a_tree() -> None:
    """The tap did nothing: the icon button's halo (12% black, past the button's bounds) fades. With
    no tree to name the control, the pixels still say a translucent layer over what was there: a
    ripple, the verdict never `changed` (`uncertain`: the step loop looks again once it faded)."""
    before = rows_screen()
    cv2.circle(before, ICON.center, 36, (255, 255, 255), 4)
    after = halo(before, ICON.center, 80, 0.12)
    result = treeless(before, after)
    assert result.verdict == "uncertain"
    assert [t.kind for t in result.transients] == ["ripple"]


def test_a_layer_that_stood_still_or_new_content_is_a_change_without_a_tree() -> None:
    """A highlight that stays (the same layer in the poll before) is the app's change, and so is new
    content drawn about a button (a badge), whatever its shape."""
    before = rows_screen()
    cv2.circle(before, ICON.center, 36, (255, 255, 255), 4)
    after = halo(before, ICON.center, 80, 0.12)
    assert treeless(before, after, previous=after.copy()).verdict == "changed"
    badge = before.copy()
    cv2.circle(badge, ICON.center, 80, (40, 40, 220), -1)
    assert treeless(before, badge).verdict == "changed"


def test_a_navigation_bar_that_went_is_a_change() -> None:
    """The bar is set aside only where both frames show it: an app going full screen (the bar gone,
    its page drawn there) changed what a person sees."""
    before = buttons(rows_screen(), (230, 230, 230))
    after = rows_screen()
    cv2.rectangle(after, (0, 1776), (W, H), (250, 250, 250), -1)
    cv2.putText(after, "Exit", (460, 1870), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (30, 30, 30), 4)
    result = treeless(before, after)
    assert result.verdict == "changed"
    assert any(r.box.intersects(NAV) for r in result.regions)


def test_a_picture_drawn_under_the_status_bar_keeps_the_platforms_band_only() -> None:
    """An app drawing a picture under a translucent status bar (a map, a photo) has no band of one
    colour at the top: nothing is set aside beyond the platform's band, and a change just under it
    is the app's."""
    before = rows_screen()
    stripes = np.indices((240, W))[1] // 30 % 2 == 0
    before[:240][stripes] = (40, 160, 60)
    before[:240][~stripes] = (200, 90, 30)
    after = before.copy()
    cv2.circle(after, (540, 150), 40, (255, 255, 255), -1)  # a marker dropped on the map
    result = treeless(before, after)
    assert result.verdict == "changed"
    assert all(box.bottom <= 72 or box.top >= 1700 for box in result.ignored)


def text_page(words: str) -> np.ndarray:
    img = np.full((H, W, 3), 250, np.uint8)
    cv2.rectangle(img, (0, 0), (W, 72), (40, 40, 40), -1)
    cv2.putText(img, "9:59", (20, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2)
    for i in range(12):
        cv2.putText(img, f"{words} {i}", (30, 330 + i * 120), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (30, 30, 30), 4)
    return buttons(img, (230, 230, 230))


def test_a_new_page_of_text_rows_without_a_tree_is_one_region() -> None:
    """Another page of text rows in the same places on the same plain background: its changed boxes
    (the words) fill less than half of the screen, yet more than three regions spread over most of
    it are the page, one `repaint` region, not a crop per line."""
    result = treeless(text_page("Settings of the application"), text_page("Accounts and their sync"))
    assert result.verdict == "changed"
    assert [r.kind for r in result.regions] == ["repaint"]
    assert result.regions[0].box.area > 0.5 * W * H
