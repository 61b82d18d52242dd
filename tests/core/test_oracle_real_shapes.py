"""The shapes real Android apps showed the oracle (issue 33), as synthetic frames and trees.

Each scene is one pattern measured on real recorded transitions (benchmarks/real_transitions.py,
docs/oracle.md): a scrollbar fading in at a list's edge, a switch's knob in a bottom sheet, a
change in the notification shade, a status bar the tree does not name, a dialog window over a
scrim, a theme switch and a new window. Frames are 1080x1920 like the phone they were measured on.
"""

from __future__ import annotations

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_mask import status_bar_boxes
from pytest_guistate.core.uitree import UITree, parse_page_source

W, H = 1080, 1920
LIST = Box(0, 240, W, 1776)
oracle = VisualOracle()


def _node(cls: str, box: Box, rid: str = "", text: str = "", package: str = "app", extra: str = "",
          children: str = "") -> str:
    return (f'<node class="{cls}" resource-id="{rid}" text="{text}" package="{package}" content-desc="" '
            f'bounds="{box.to_bounds()}" {extra}>{children}</node>')


def _tree(body: str) -> UITree:
    return parse_page_source(f'<hierarchy rotation="0" width="{W}" height="{H}">{body}</hierarchy>')


def rows_screen(dark: bool = False) -> np.ndarray:
    """A list app: status bar, action bar, eight rows of text, navigation bar."""
    paper, ink = ((33, 33, 33), (235, 235, 235)) if dark else ((250, 250, 250), (30, 30, 30))
    img = np.full((H, W, 3), paper, np.uint8)
    cv2.rectangle(img, (0, 0), (W, 72), (40, 40, 40), -1)
    cv2.putText(img, "9:59", (20, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 2)
    cv2.rectangle(img, (0, 72), (W, 240), (60, 60, 60) if dark else (120, 80, 20), -1)
    cv2.putText(img, "Launcher", (40, 180), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 3)
    for i in range(8):
        top = 240 + i * 192
        cv2.circle(img, (100, top + 96), 50, (200, 120, 40), -1)
        cv2.putText(img, f"Activity {i} name", (190, top + 90), cv2.FONT_HERSHEY_SIMPLEX, 1.4, ink, 3)
        cv2.putText(img, f"com.example.app{i}", (190, top + 150), cv2.FONT_HERSHEY_SIMPLEX, 1.0, ink, 2)
        cv2.line(img, (0, top + 190), (W, top + 190), (128, 128, 128), 2)
    cv2.rectangle(img, (0, 1776), (W, 1920), (0, 0, 0), -1)
    return img


def list_tree(package: str = "app", extra_nodes: str = "", row_extra: str = 'clickable="true"',
              names: dict[int, str] | None = None) -> UITree:
    """The tree of `rows_screen`: clickable rows in a scrollable list; `names` renames rows."""
    names = names or {}
    rows = "".join(_node("android.widget.LinearLayout", Box(0, 240 + i * 192, W, 432 + i * 192), "app:id/row",
                         package=package, extra=row_extra, children=_node("android.widget.TextView", Box(190, 280 + i * 192, 900,
                                                                                            400 + i * 192),
                                                         "app:id/name", names.get(i, f"Activity {i} name"), package))
                   for i in range(8))
    content = _node("android.widget.FrameLayout", Box(0, 72, W, 1776), "android:id/content", package=package,
                    children=_node("android.view.ViewGroup", Box(0, 72, W, 240), "app:id/action_bar", package=package,
                                   children=_node("android.widget.TextView", Box(40, 120, 500, 200), "", "Launcher",
                                                  package))
                    + _node("android.widget.ExpandableListView", LIST, "app:id/list", package=package,
                            extra='scrollable="true"', children=rows))
    window = _node("android.widget.FrameLayout", Box(0, 0, W, 1920), package=package,
                   children=content + _node("android.view.View", Box(0, 1776, W, 1920), "android:id/navigationBarBackground",
                                            package=package) + extra_nodes)
    return _tree(window)


def compare(before: np.ndarray, after: np.ndarray, tree: UITree, before_tree: UITree | None = None):
    return oracle.compare(Frame.from_array(before), Frame.from_array(after), tree,
                          before_tree=(lambda: before_tree) if before_tree is not None else None)


# -- transient shapes -------------------------------------------------------------------------------


def test_a_scrollbar_fading_in_at_the_lists_edge_is_no_change_and_is_named() -> None:
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (1068, 260), (1079, 700), (120, 120, 120), -1)  # a 12 px scroll thumb
    result = compare(before, after, list_tree())
    assert result.verdict == "no_change" and result.regions == []
    (transient,) = result.transients
    assert transient.kind == "scrollbar" and transient.where == "list"
    assert transient.box.intersection(Box(1068, 260, 1080, 701)).area >= 0.8 * transient.box.area
    assert result.to_dict()["transients"][0]["kind"] == "scrollbar"
    assert any("scrollbar" in note for note in result.notes)


def test_a_scrollbar_beside_a_real_change_leaves_the_change_its_own_row() -> None:
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (1068, 260), (1079, 700), (120, 120, 120), -1)
    cv2.rectangle(after, (190, 640), (900, 700), (250, 250, 250), -1)  # row 2's name changes
    cv2.putText(after, "Renamed", (190, 690), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    result = compare(before, after, list_tree())
    assert result.verdict == "changed"
    assert [(r.container, r.box) for r in result.regions] == [("row", Box(0, 624, W, 816))]
    assert [t.kind for t in result.transients] == ["scrollbar"]


def test_a_thin_strip_away_from_the_lists_edge_is_a_change() -> None:
    """The shape alone is not enough: a bar in the middle of a row (a progress line) is the app's."""
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (540, 260), (551, 700), (0, 0, 200), -1)
    result = compare(before, after, list_tree())
    assert result.verdict == "changed" and result.transients == []


def layer(img: np.ndarray, box: Box, color: tuple[int, int, int], alpha: float | np.ndarray) -> np.ndarray:
    """`img` with a translucent layer of `color` over `box` (alpha a number or a per-pixel map)."""
    out = img.copy()
    part = out[box.top:box.bottom, box.left:box.right].astype(np.float32)
    a = alpha if isinstance(alpha, float) else alpha[..., None]
    out[box.top:box.bottom, box.left:box.right] = (part * (1 - a) + np.array(color, np.float32) * a).astype(np.uint8)
    return out


ROW2 = Box(0, 624, W, 816)


def test_a_ripple_fading_on_the_tapped_row_is_named_and_the_verdict_waits() -> None:
    """A tap's ripple still fading (12% black over the row, the tree unchanged): not a region, named
    `ripple`; alone it makes the verdict `uncertain` (look again), never `no_change` (a retry)."""
    before = rows_screen()
    result = compare(before, layer(before, ROW2, (0, 0, 0), 0.12), list_tree(), list_tree())
    assert result.verdict == "uncertain" and result.regions == []
    assert [(t.kind, t.where) for t in result.transients] == [("ripple", "row")]
    assert any("fade" in note for note in result.notes)


def test_a_layer_that_stood_still_between_two_polls_is_the_apps_change() -> None:
    """Given the poll just before the after-frame (`previous`): a layer that moved is a ripple
    fading, one that did not move is a highlight the app drew, a change."""
    before = rows_screen()
    after = layer(before, ROW2, (0, 0, 0), 0.12)
    fading = oracle.compare(Frame.from_array(before), Frame.from_array(after), list_tree(),
                            before_tree=list_tree, previous=Frame.from_array(layer(before, ROW2, (0, 0, 0), 0.2)))
    assert fading.verdict == "uncertain" and [t.kind for t in fading.transients] == ["ripple"]
    still = oracle.compare(Frame.from_array(before), Frame.from_array(after), list_tree(),
                           before_tree=list_tree, previous=Frame.from_array(after.copy()))
    assert still.verdict == "changed" and still.transients == [] and [r.box for r in still.regions] == [ROW2]


def test_a_ripple_still_expanding_is_a_change_as_before() -> None:
    """The expanding circle's sharp edge is no smooth layer: not set aside, so no rule guesses at a
    shape that is still moving (the step loop's stability probe sees it move)."""
    before = rows_screen()
    alpha = np.zeros((ROW2.height, ROW2.width), np.float32)
    cv2.circle(alpha, (700, ROW2.height // 2), 420, 0.12, -1)
    result = compare(before, layer(before, ROW2, (0, 0, 0), alpha), list_tree(), list_tree())
    assert result.verdict == "changed" and result.transients == []


def test_a_ripple_over_a_real_change_of_that_row_leaves_the_change() -> None:
    """The row's text changed under the ripple: the app's change, never hidden as a ripple."""
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (190, 640), (900, 700), (250, 250, 250), -1)
    cv2.putText(after, "Renamed", (190, 690), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    after = layer(after, ROW2, (0, 0, 0), 0.12)
    result = compare(before, after, list_tree(names={2: "Renamed"}), list_tree())
    assert result.verdict == "changed" and result.transients == []
    assert [r.box for r in result.regions] == [ROW2]


def test_a_mark_the_tree_does_not_report_under_a_ripple_is_a_change() -> None:
    """A check mark drawn in the row (the tree unchanged: an app that reports no state) under the
    ripple's layer: the mark is content no layer makes, so the row is a change."""
    before = rows_screen()
    after = before.copy()
    cv2.polylines(after, [np.array([[960, 720], [985, 750], [1030, 690]], np.int32)], False, (0, 140, 0), 8)
    result = compare(before, layer(after, ROW2, (0, 0, 0), 0.12), list_tree(), list_tree())
    assert result.verdict == "changed" and result.transients == []
    assert [r.box for r in result.regions] == [ROW2]


def test_a_tint_where_the_tree_says_the_row_changed_is_a_change() -> None:
    """Pixels like a ripple's, but the tree shows the row's state changed (selected): the app's change."""
    before = rows_screen()
    result = compare(before, layer(before, ROW2, (0, 0, 0), 0.12), list_tree(names={2: "Activity 2 name (on)"}),
                     list_tree())
    assert result.verdict == "changed" and result.transients == []


def test_an_opaque_highlight_is_not_a_ripple() -> None:
    """A row painted over at 60% (a selection colour) is more than a ripple's layer: a change."""
    before = rows_screen()
    result = compare(before, layer(before, ROW2, (200, 120, 0), 0.6), list_tree(), list_tree())
    assert result.verdict == "changed" and result.transients == []


def glow_alpha(height: int, width: int, peak: float, from_bottom: bool) -> np.ndarray:
    """An edge glow's alpha: strongest at the list's edge and its middle, an arc fading inwards."""
    y = np.linspace(1.0, 0.0, height, dtype=np.float32)[:, None]
    x = np.linspace(-1.0, 1.0, width, dtype=np.float32)[None, :]
    alpha = np.clip(y - 0.6 * x * x, 0.0, 1.0) * peak
    return alpha[::-1] if not from_bottom else alpha


def test_an_overscroll_glow_at_the_lists_bottom_is_named_and_the_verdict_waits() -> None:
    before = rows_screen()
    band = Box(0, 1776 - 160, W, 1776)
    after = layer(before, band, (200, 120, 40), glow_alpha(band.height, band.width, 0.3, from_bottom=False))
    result = compare(before, after, list_tree(), list_tree())
    assert result.verdict == "uncertain" and result.regions == []
    assert [(t.kind, t.where) for t in result.transients] == [("overscroll", "list")]


def test_a_row_appearing_at_the_lists_bottom_edge_is_not_a_glow() -> None:
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (0, 1640), (W, 1760), (250, 250, 250), -1)
    cv2.putText(after, "Loading more", (190, 1720), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    result = compare(before, after, list_tree(), list_tree())
    assert result.verdict == "changed" and result.transients == []
    assert any(r.box.contains(Box(190, 1680, 500, 1720)) for r in result.regions)


# -- snapping keeps the item --------------------------------------------------------------------------


def sheet_tree() -> UITree:
    """A bottom sheet (43% of the screen) over the list, holding two rows; the second has a switch."""
    switch = _node("android.widget.Switch", Box(900, 1544, 1020, 1606), "app:id/toggle",
                   extra='checkable="true" clickable="true"')
    rows = (_node("android.widget.LinearLayout", Box(0, 1300, W, 1480), "app:id/first",
                  children=_node("android.widget.TextView", Box(40, 1360, 700, 1420), text="Sound"))
            + _node("android.widget.LinearLayout", Box(0, 1500, W, 1650), "app:id/second",
                    children=_node("android.widget.TextView", Box(40, 1550, 700, 1600), text="Vibrate") + switch))
    sheet = _node("android.widget.FrameLayout", Box(0, 1100, W, 1920), "app:id/design_bottom_sheet", children=rows)
    return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1920), children=sheet))


def test_a_switch_knob_in_a_bottom_sheet_snaps_to_its_row_not_the_sheet() -> None:
    before = rows_screen()
    cv2.rectangle(before, (0, 1100), (W, 1920), (255, 255, 255), -1)
    cv2.ellipse(before, (960, 1575), (50, 20), 0, 0, 360, (180, 180, 180), -1)
    after = before.copy()
    cv2.circle(before, (925, 1575), 28, (120, 120, 120), -1)  # the knob moves from left to right
    cv2.circle(after, (995, 1575), 28, (200, 120, 0), -1)
    result = compare(before, after, sheet_tree())
    assert [(r.container, r.box) for r in result.regions] == [("second", Box(0, 1500, W, 1650))]
    assert all(c.box.area < 0.1 * W * H for c in result.crops)


def test_a_container_many_times_the_change_is_not_taken() -> None:
    """A small mark in the sheet below its rows (no row holds it): the raw box grown by the margin."""
    before = rows_screen()
    after = before.copy()
    cv2.circle(after, (540, 1760), 14, (0, 0, 200), -1)
    result = compare(before, after, sheet_tree())
    (region,) = result.regions
    assert region.container is None
    assert region.box == region.raw.expand(oracle.config.raw_margin)
    assert region.box.area < 0.01 * W * H


# -- system UI ---------------------------------------------------------------------------------------


def shade_tree(text: str) -> UITree:
    ui = "com.android.systemui"
    bar = _node("android.widget.FrameLayout", Box(0, 0, W, 72), "com.android.systemui:id/status_bar", package=ui)
    rows = "".join(_node("android.widget.FrameLayout", Box(24, top, 1056, top + 160), "com.android.systemui:id/expanded",
                         package=ui, children=_node("android.widget.TextView", Box(60, top + 40, 1000, top + 120),
                                                    "android:id/text", words, ui))
                   for top, words in ((400, text), (580, "USB debugging connected")))
    stack = _node("android.view.ViewGroup", Box(0, 380, W, 1700), "com.android.systemui:id/notification_stack_scroller",
                  package=ui, children=rows)
    return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1920), package=ui, children=bar + stack))


def test_a_change_in_a_notification_row_of_the_shade_is_a_change() -> None:
    """Issue 33: every systemui node under 10% of the screen's height was taken for the status bar,
    so a changed notification row was ignored and the step judged `no_change`."""
    before = np.full((H, W, 3), 30, np.uint8)
    for top, words in ((400, "Ad Silence is running"), (580, "USB debugging connected")):
        cv2.rectangle(before, (24, top), (1056, top + 160), (60, 60, 60), -1)
        cv2.putText(before, words, (60, top + 100), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (230, 230, 230), 2)
    after = before.copy()
    cv2.rectangle(after, (60, 440), (1000, 520), (60, 60, 60), -1)
    cv2.putText(after, "Ad muted: 3 ads", (60, 500), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (230, 230, 230), 2)
    tree = shade_tree("Ad muted: 3 ads")
    assert status_bar_boxes(tree, W, H) == [Box(0, 0, W, 72)]  # the bar only, not the rows
    result = compare(before, after, tree)
    assert result.verdict == "changed"
    (region,) = result.regions
    assert region.box == Box(24, 400, 1056, 560)


def test_an_unnamed_status_bar_is_measured_above_the_apps_first_node() -> None:
    """A tree naming only navigationBarBackground: the status bar is the band above the app's content
    (72 px here), so the clock's tick is no change of the app, and the app's own bar right under it is."""
    tree = list_tree()
    bars = status_bar_boxes(tree, W, H)
    assert Box(0, 0, W, 72) in bars and Box(0, 1776, W, 1920) in bars
    before = rows_screen()
    tick = before.copy()
    cv2.rectangle(tick, (20, 10), (200, 70), (40, 40, 40), -1)
    cv2.putText(tick, "10:00", (20, 62), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (255, 255, 255), 2)  # lower than 3% (58 px)
    assert compare(before, tick, tree).verdict == "no_change"
    title = before.copy()
    cv2.putText(title, "Launcher", (40, 230), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2)
    assert compare(before, title, tree).verdict == "changed"


# -- new screens and dialogs ---------------------------------------------------------------------------


DIALOG = Box(75, 620, 1005, 1227)


def dialog_window_tree() -> UITree:
    """What a real dump of a dialog holds: its window alone (no app behind it)."""
    body = _node("android.widget.LinearLayout", Box(75, 620, 1005, 1227), "android:id/content",
                 children=_node("android.widget.TextView", Box(140, 680, 940, 760), "android:id/alertTitle",
                                "Planetary hours indicator style")
                 + _node("android.widget.Button", Box(700, 1100, 960, 1200), "android:id/button1", "OK",
                         extra='clickable="true"'))
    return _tree(_node("android.widget.FrameLayout", DIALOG, children=body))


def test_a_dialog_window_over_a_scrim_is_its_box_and_the_scrim_is_named_last() -> None:
    before = rows_screen()
    after = (before.astype(np.float32) * 0.4).astype(np.uint8)  # the scrim
    cv2.rectangle(after, (DIALOG.left, DIALOG.top), (DIALOG.right, DIALOG.bottom), (255, 255, 255), -1)
    cv2.putText(after, "Planetary hours", (140, 740), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3)
    result = compare(before, after, dialog_window_tree(), list_tree())
    assert result.verdict == "changed"
    first, *rest = result.regions
    assert first.box == DIALOG and first.container is not None and "appeared" in first.container
    assert rest[-1].kind == "scrim" and rest[-1].box.area > 0.6 * W * H
    assert all(c.box.area < 0.3 * W * H for c in result.crops)  # the scrim is never a crop


def test_the_navigation_bar_under_a_dialog_only_dump_is_still_system_ui() -> None:
    """A real dump of a dialog names no navigation bar, but its buttons are redrawn as the dialog
    takes focus: the before-screen's bar is kept out, so no crop is spent on Back/Home/Recents."""
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (DIALOG.left, DIALOG.top), (DIALOG.right, DIALOG.bottom), (255, 255, 255), -1)
    cv2.putText(after, "Planetary hours", (140, 740), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3)
    for x in (270, 540, 810):  # the three buttons, brighter under the dialog's focus
        cv2.circle(after, (x, 1848), 30, (200, 200, 200), -1)
    result = compare(before, after, dialog_window_tree(), list_tree())
    assert result.verdict == "changed"
    assert Box(0, 1776, W, 1920) in result.ignored
    assert not any(r.box.intersects(Box(0, 1776, W, 1920)) for r in result.regions)


def test_a_theme_switch_is_one_repainted_area() -> None:
    before, after = rows_screen(), rows_screen(dark=True)
    result = compare(before, after, list_tree(), list_tree())
    assert result.verdict == "changed"
    kinds = [r.kind for r in result.regions]
    assert kinds[-1] == "repaint" and "screen" not in kinds and "scrim" not in kinds
    assert result.regions[-1].box.area > 0.6 * W * H
    assert any("repaint" in note for note in result.notes)


def test_a_new_app_window_is_the_whole_screen() -> None:
    before = rows_screen()
    after = np.full((H, W, 3), (90, 160, 30), np.uint8)  # another app's screen
    cv2.putText(after, "Settings", (60, 200), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 3)
    for i in range(6):
        cv2.putText(after, f"Option {i}", (60, 400 + 200 * i), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (255, 255, 255), 3)
    result = compare(before, after, list_tree("com.android.settings"), list_tree("app"))
    assert result.verdict == "changed"
    last = result.regions[-1]
    assert last.kind == "screen" and last.box.area > 0.9 * W * (H - 72)
    assert any("new window" in note for note in result.notes)


# -- on the simulated phone ------------------------------------------------------------------------------


def test_sim_settings_a_switch_toggled_is_its_row_not_the_settings_panel() -> None:
    """The sim's Settings app: tapping Wi-Fi's switch changes its knob and the row's summary; the
    region is that row (180 px of 2400), never the panel of toggles or the screen."""
    from pytest_guistate.devices.sim.phone import ManualClock, Phone
    from tests.helpers.direct_screen import DirectScreen

    phone = Phone(app_package="com.guistate.settings", clock=ManualClock(), seed=3)
    screen = DirectScreen(phone)
    phone.type_text("settings/username", "qa@example.com")  # the sim's documented credentials
    phone.type_text("settings/password", "correct-horse")
    screen.tap_text("Log in")
    before = screen.observe()
    switch = next(n for n in before.tree.nodes() if n.cls.endswith("Switch") and n.checked)  # Wi-Fi, on
    row = next(n for n in before.tree.nodes() if n.bounds is not None and n.resource_id.endswith(":id/row")
               and n.bounds.contains(switch.bounds))
    screen.tap(*switch.bounds.center)
    after = screen.observe()
    result = oracle.compare(before.frame, after.frame, after.tree, before_tree=lambda: before.tree)
    assert result.verdict == "changed"
    assert [(r.container, r.box) for r in result.regions] == [("row", row.bounds)]
    width, height = after.frame.size
    assert all(c.box.area < 0.1 * width * height for c in result.crops)


def drawer_tree(open_: bool) -> UITree:
    drawer = _node("android.widget.LinearLayout", Box(0, 72, 840, 1776), "app:id/drawer_roots",
                   children=_node("android.widget.TextView", Box(48, 100, 600, 190), text="Open from")
                   + _node("android.widget.ListView", Box(0, 216, 840, 1776), "app:id/roots_list",
                           children=_node("android.widget.TextView", Box(48, 260, 800, 360), text="Downloads")))
    content = _node("android.widget.ExpandableListView", LIST, "app:id/list", extra='scrollable="true"')
    layout = _node("androidx.drawerlayout.widget.DrawerLayout", Box(0, 72, W, 1776), "app:id/drawer_layout",
                   children=content + (drawer if open_ else ""))
    return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1920), children=layout))


def test_a_navigation_drawer_opening_over_its_scrim_is_the_drawers_box() -> None:
    """The drawer is drawn over the dimmed content in the same window: its box, then the dimmed
    content beside it as a `scrim` region (visible change: the drawer's box alone held a sixth of it
    on real apps, issue 43), never cropped; no new-window region (the window did not change)."""
    before = rows_screen()
    after = before.copy()
    after[72:1776] = (after[72:1776].astype(np.float32) * 0.45).astype(np.uint8)  # the drawer's scrim
    cv2.rectangle(after, (0, 72), (839, 1775), (255, 255, 255), -1)
    cv2.putText(after, "Open from", (48, 170), cv2.FONT_HERSHEY_SIMPLEX, 1.8, (30, 30, 30), 3)
    cv2.putText(after, "Downloads", (48, 330), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    result = compare(before, after, drawer_tree(True), drawer_tree(False))
    assert result.verdict == "changed"
    assert result.regions[0].box == Box(0, 72, 840, 1776)
    assert [r.kind for r in result.regions] == ["change", "scrim"]
    union = Box.union_all(r.box for r in result.regions if r.kind == "change")
    assert union is not None and union.area < 0.85 * W * H
    assert all(c.box.area < 0.85 * W * H for c in result.crops)  # the scrim is never cropped


# -- the minority apps' shapes (apps other than the launcher that dominates the real set) ---------------


def app_window_tree(bottom: int = 1776, package: str = "app") -> UITree:
    """A dump naming neither bar (as many real ones): the app's window ends above the navigation bar."""
    return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, bottom), package=package,
                       children=_node("android.widget.FrameLayout", Box(0, 72, W, bottom), "android:id/content",
                                      package=package,
                                      children=_node("android.widget.TextView", Box(40, 300, 900, 400), "app:id/title",
                                                     "Change Log", package))))


def nav_buttons(img: np.ndarray, grey: int) -> np.ndarray:
    out = img.copy()
    for x in (270, 540, 810):
        cv2.circle(out, (x, 1848), 30, (grey, grey, grey), -1)
    return out


def test_an_unnamed_navigation_bar_is_measured_below_the_apps_window() -> None:
    """Real dumps often name no bar at all; the app's window ends where the navigation bar starts.
    The band below it is the system's: its buttons redrawn are no region (they were three crops)."""
    boxes = status_bar_boxes(app_window_tree(), W, H)
    assert Box(0, 1776, W, 1920) in boxes or any(b.contains(Box(0, 1776, W, 1920)) for b in boxes)
    before = nav_buttons(rows_screen(), 120)
    after = nav_buttons(before, 230)
    cv2.rectangle(after, (40, 300), (900, 400), (250, 250, 250), -1)
    cv2.putText(after, "What is new", (40, 380), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (30, 30, 30), 3)
    result = compare(before, after, app_window_tree(), app_window_tree())
    assert result.verdict == "changed" and result.regions
    assert not any(r.box.intersects(Box(0, 1776, W, 1920)) for r in result.regions)


def test_no_navigation_bar_is_measured_where_the_window_says_nothing_of_it() -> None:
    """A window drawn to the screen's bottom (a launcher), one resized above a keyboard, a dialog's
    window alone and a node drawn below the window leave the band to the pixels."""
    for tree in (app_window_tree(bottom=H), app_window_tree(bottom=1100), dialog_window_tree(),
                 _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1776), children=_node(
                     "android.widget.FrameLayout", Box(0, 72, W, 1776)) + _node("android.view.View", Box(0, 1800, W, 1900))))):
        assert not any(b.top >= H // 2 for b in status_bar_boxes(tree, W, H))


def dialog_dump(package: str, title: str) -> UITree:
    body = _node("android.widget.LinearLayout", Box(75, 620, 1005, 1227), "android:id/content", package=package,
                 children=_node("android.widget.TextView", Box(140, 680, 940, 760), "android:id/alertTitle", title,
                                package))
    return _tree(_node("android.widget.FrameLayout", DIALOG, package=package, children=body))


def dialog_frame(title: str) -> np.ndarray:
    img = (rows_screen().astype(np.float32) * 0.4).astype(np.uint8)  # the app under a scrim
    cv2.rectangle(img, (DIALOG.left, DIALOG.top), (DIALOG.right, DIALOG.bottom), (255, 255, 255), -1)
    cv2.putText(img, title, (140, 740), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3)
    return img


def test_another_apps_dialog_in_the_same_place_is_a_new_window() -> None:
    """An app's dialog replaced by the system's permission dialog where it was: little of the screen
    changed, yet another app is in front (the step left the app): the dialog's region, then the
    screen-level `screen` region, no larger than what visibly changed (issue 43: the whole screen for
    a dialog's change was a crop far larger than the change); the note names the new window."""
    result = compare(dialog_frame("Choose wordlist"), dialog_frame("Allow access to photos?"),
                     dialog_dump("com.android.permissioncontroller", "Allow access to photos?"),
                     dialog_dump("app", "Choose wordlist"))
    assert result.verdict == "changed"
    assert result.regions[0].kind == "change" and result.regions[0].box.area < 0.3 * W * H
    last = result.regions[-1]
    assert last.kind == "screen" and last.box.contains(result.regions[0].box) and last.box.area < 0.3 * W * H
    assert any("another app" in note for note in result.notes)


def test_the_same_apps_dialog_changing_or_a_keyboard_coming_up_is_no_new_window() -> None:
    same = compare(dialog_frame("Choose wordlist"), dialog_frame("Choose characters"),
                   dialog_dump("app", "Choose characters"), dialog_dump("app", "Choose wordlist"))
    assert same.verdict == "changed" and [r.kind for r in same.regions] == ["change"]
    keyboard = _node("android.widget.FrameLayout", Box(0, 1100, W, 1776), package="com.android.inputmethod.latin",
                     children=_node("android.view.View", Box(0, 1100, W, 1776), package="com.android.inputmethod.latin"))
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (0, 1100), (W, 1776), (60, 60, 60), -1)
    cv2.putText(after, "q w e r t y", (60, 1300), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 3)
    typed = compare(before, after, list_tree(extra_nodes=keyboard), list_tree())
    assert typed.verdict == "changed" and "screen" not in [r.kind for r in typed.regions]


def test_a_scrollbar_fading_under_the_scrim_of_a_closed_dialog_is_set_aside() -> None:
    """The dialog closed and the screen undimmed; the list behind it still shows its scrollbar:
    set aside like one outside a scrim, not a region of its own (or of the list)."""
    after = rows_screen()
    cv2.rectangle(after, (1068, 260), (1079, 700), (120, 120, 120), -1)
    result = compare(dialog_frame("Planetary hours"), after, list_tree(), dialog_window_tree())
    assert result.verdict == "changed"
    assert [t.kind for t in result.transients] == ["scrollbar"]
    assert not any(r.kind == "change" and r.raw.intersects(Box(1068, 260, 1080, 700)) for r in result.regions)


POPUP = Box(480, 84, 1068, 372)


def popup_opened() -> tuple[np.ndarray, np.ndarray, UITree]:
    """An overflow menu opened over the list, no scrim; its dump holds the popup's window alone."""
    tree = _tree(_node("android.widget.FrameLayout", POPUP, children=_node(
        "android.widget.ListView", POPUP, "", "", extra='scrollable="true"', children=_node(
            "android.widget.TextView", Box(480, 84, 1068, 228), "android:id/title", "Settings"))))
    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (POPUP.left, POPUP.top), (POPUP.right, POPUP.bottom), (255, 255, 255), -1)
    cv2.putText(after, "Settings", (520, 170), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3)
    return before, after, tree


def test_a_scrollbar_behind_a_popup_dump_is_set_aside() -> None:
    """A popup menu's dump holds the popup alone; the list behind it, which the touch showed a
    scrollbar on, is in the before-tree: the strip at its edge is a scrollbar, not the app's."""
    before, after, tree = popup_opened()
    cv2.rectangle(after, (1068, 960), (1079, 1360), (120, 120, 120), -1)
    result = compare(before, after, tree, list_tree())
    assert [t.kind for t in result.transients] == ["scrollbar"]
    assert not any(r.kind == "change" and r.raw.intersects(Box(1068, 960, 1080, 1360)) for r in result.regions)


def test_a_popup_window_opening_without_a_scrim_is_a_new_window() -> None:
    """The popup is the item (first region); its window in front of the screen, whose dump it now
    holds alone, is a new window however small the popup (the screen-level region after it)."""
    before, after, tree = popup_opened()
    result = compare(before, after, tree, list_tree())
    first, *_, last = result.regions
    assert first.kind == "change" and first.raw.intersection(POPUP).area >= 0.8 * POPUP.area
    assert first.box.area < 0.1 * W * H
    assert last.kind == "screen" and any("floating window came" in note for note in result.notes)


def test_a_row_that_is_one_text_view_is_the_region() -> None:
    """A ListView of TextViews (Android's simple_list_item_1): the row is a leaf, not a container;
    a change of its text is that row, not the changed ink grown by a margin."""
    def tree(renamed: bool) -> UITree:
        items = "".join(_node("android.widget.TextView", Box(0, 240 + i * 192, W, 432 + i * 192), "android:id/text1",
                              "Renamed" if i == 2 and renamed else f"Activity {i} name", extra='clickable="true"')
                        for i in range(8))
        return _tree(_node("android.widget.FrameLayout", Box(0, 0, W, 1920), children=_node(
            "android.widget.ListView", LIST, "app:id/list", extra='scrollable="true"', children=items)))

    before = rows_screen()
    after = before.copy()
    cv2.rectangle(after, (190, 640), (900, 700), (250, 250, 250), -1)
    cv2.putText(after, "Renamed", (190, 690), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    result = compare(before, after, tree(True), tree(False))
    assert result.verdict == "changed"
    assert [(r.container, r.box) for r in result.regions] == [("Renamed", ROW2)]
