"""Snapping to containers, crops from the after frame, and bad input (AGMem §3.2)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame, FrameError, png_size
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.uitree import parse_page_source

W, H = 540, 960
oracle = VisualOracle()


def screen() -> np.ndarray:
    img = np.full((H, W, 3), 245, np.uint8)
    for y in range(100, 900, 100):
        cv2.putText(img, f"item {y}", (40, y + 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (30, 30, 30), 2)
    return img


def changed_square(img: np.ndarray, box: Box, colour: tuple[int, int, int] = (0, 0, 220)) -> np.ndarray:
    out = img.copy()
    cv2.rectangle(out, (box.left, box.top), (box.right - 1, box.bottom - 1), colour, -1)
    return out


def nested_tree() -> str:
    """root (full screen) > panel [0,100][540,700] > card [20,200][520,500] > row [20,300][520,400]."""
    return (
        f'<hierarchy width="{W}" height="{H}">'
        f'<android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
        '<android.widget.LinearLayout resource-id="app:id/panel" bounds="[0,100][540,700]">'
        '<androidx.cardview.widget.CardView resource-id="app:id/card" bounds="[20,200][520,500]">'
        '<android.widget.LinearLayout resource-id="app:id/row" bounds="[20,300][520,400]">'
        '<android.widget.TextView text="item" bounds="[40,320][300,380]"/>'
        "</android.widget.LinearLayout></androidx.cardview.widget.CardView>"
        "</android.widget.LinearLayout></android.widget.FrameLayout></hierarchy>"
    )


def test_smallest_enclosing_container_is_chosen() -> None:
    before = screen()
    after = changed_square(before, Box(100, 320, 200, 380))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after), parse_page_source(nested_tree()))
    assert [(r.container, r.box) for r in result.regions] == [("row", Box(20, 300, 520, 400))]
    wider = changed_square(before, Box(60, 230, 480, 470))  # leaves the row, fills most of the card
    result = oracle.compare(Frame.from_array(before), Frame.from_array(wider), parse_page_source(nested_tree()))
    assert [(r.container, r.box) for r in result.regions] == [("card", Box(20, 200, 520, 500))]


def test_a_container_many_times_the_change_is_not_its_item() -> None:
    """Issue 33: the card is 7.5 times a 100x200 change that left its row; a crop of the card would
    be mostly what did not change, so the raw box grown by the margin is the region."""
    before = screen()
    thin = changed_square(before, Box(100, 250, 200, 450))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(thin), parse_page_source(nested_tree()))
    (region,) = result.regions
    assert region.container is None and region.box == region.raw.expand(oracle.config.raw_margin)
    assert region.raw.iou(Box(100, 250, 200, 450)) >= 0.8


def test_raw_box_kept_when_no_container_fits_and_root_never_chosen() -> None:
    before = screen()
    outside = Box(100, 780, 200, 860)  # below the panel: only the full-screen root encloses it
    after = changed_square(before, outside)
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after), parse_page_source(nested_tree()))
    (region,) = result.regions
    # no container is the item: the raw box grown by the margin, not the screen
    assert region.container is None and region.box == region.raw.expand(oracle.config.raw_margin)
    assert region.raw.iou(outside) >= 0.9


def test_near_full_screen_content_view_is_not_a_container() -> None:
    xml = (
        f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,30][{W},{H}]">'
        '<android.widget.TextView text="x" bounds="[10,40][50,60]"/></android.widget.FrameLayout></hierarchy>'
    )
    before = screen()
    after = changed_square(before, Box(100, 780, 200, 860))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after), parse_page_source(xml))
    assert result.regions[0].container is None


def test_crops_come_from_the_after_frame() -> None:
    before = screen()
    changed = Box(200, 500, 300, 600)
    after = changed_square(before, changed, (10, 200, 10))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after))
    (crop,) = result.crops
    assert crop.region_index == 0
    assert crop.box == result.regions[0].box.expand(8).clamp(W, H)
    decoded = cv2.imdecode(np.frombuffer(crop.png, np.uint8), cv2.IMREAD_COLOR)
    expected = after[crop.box.top : crop.box.bottom, crop.box.left : crop.box.right]
    assert np.array_equal(decoded, expected)
    inner = changed.to_xywh()
    assert tuple(decoded[inner[1] - crop.box.top + 10, inner[0] - crop.box.left + 10]) == (10, 200, 10)


def test_max_crops_and_one_region_per_container() -> None:
    before = screen()
    after = before.copy()
    for i in range(6):
        after = changed_square(after, Box(40 + i * 80, 20, 80 + i * 80, 60))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after))
    # six changes in a row are fragments of fewer (issue 43): at most three regions, holding all six
    assert len(result.regions) <= 3 and len(result.crops) <= 4
    squares = [Box(40 + i * 80, 20, 80 + i * 80, 60) for i in range(6)]
    assert all(any(r.box.intersection(sq).area >= 0.5 * sq.area for r in result.regions) for sq in squares)
    snapped = oracle.compare(
        Frame.from_array(before),
        Frame.from_array(changed_square(changed_square(before, Box(60, 310, 90, 330)), Box(400, 350, 440, 390))),
        parse_page_source(nested_tree()),
    )
    # two changes in one row are one change of the row: one region, one crop
    assert [(r.container, r.raw) for r in snapped.regions] == [("row", Box(60, 310, 440, 390))]
    assert len(snapped.crops) == 1


def test_crop_helper_clips_and_rejects_outside_boxes() -> None:
    img = screen()
    png = oracle.crop(Frame.from_array(img), Box(500, 900, 600, 1000))
    assert png_size(png) == (40, 60)
    with pytest.raises(ValueError, match="outside the 540x960 frame"):
        oracle.crop(Frame.from_array(img, source="step 4 after"), Box(600, 0, 700, 10))


def test_corrupt_png_raises_frame_error_naming_the_frame() -> None:
    good = Frame.from_array(screen(), source="step 2 before")
    bad = Frame(png=b"\x89PNG\r\n\x1a\nthis is not a png at all", source="step 2 after")
    with pytest.raises(FrameError, match="step 2 after"):
        oracle.compare(good, bad)


def test_frames_of_different_sizes_raise_naming_both_sizes() -> None:
    small = Frame.from_array(np.zeros((200, 100, 3), np.uint8), source="before rotate")
    large = Frame.from_array(np.zeros((100, 200, 3), np.uint8), source="after rotate")
    with pytest.raises(ValueError, match=r"100x200.*before rotate.*|.*100x200.*200x100") as info:
        oracle.compare(small, large)
    assert "100x200" in str(info.value) and "200x100" in str(info.value)
    with pytest.raises(ValueError, match="200x100"):
        oracle.unstable_regions(small, large)


# -- a dimmed modal (issue 15): closing it changes every pixel; the crop must not be the frame --

DIALOG = Box(40, 300, 500, 600)


def feed(rows: list[str]) -> np.ndarray:
    img = np.full((H, W, 3), 250, np.uint8)
    for i, text in enumerate(rows):
        top = 100 + i * 100
        cv2.rectangle(img, (10, top + 5), (W - 11, top + 95), (235, 225, 215), -1)
        cv2.putText(img, text, (40, top + 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (30, 30, 30), 2)
    return img


def dimmed_with_dialog(img: np.ndarray) -> np.ndarray:
    out = (img.astype(np.float32) * 0.55).astype(np.uint8)  # a 45 % black scrim
    cv2.rectangle(out, (DIALOG.left, DIALOG.top), (DIALOG.right - 1, DIALOG.bottom - 1), (255, 255, 255), -1)
    cv2.putText(out, "Delete post?", (70, 380), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2)
    return out


def feed_tree(rows: list[str], dialog: bool) -> str:
    items = "".join(
        f'<android.widget.LinearLayout resource-id="app:id/row" bounds="[10,{100 + i * 100}][{W - 10},{200 + i * 100}]">'
        f'<android.widget.TextView text="{t}" bounds="[40,{120 + i * 100}][400,{180 + i * 100}]"/>'
        "</android.widget.LinearLayout>" for i, t in enumerate(rows))
    modal = ('<android.widget.FrameLayout resource-id="android:id/parentPanel" bounds="[40,300][500,600]">'
             '<android.widget.TextView text="Delete post?" bounds="[70,340][400,400]"/>'
             "</android.widget.FrameLayout>") if dialog else ""
    return (f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
            f'<androidx.recyclerview.widget.RecyclerView resource-id="app:id/posts" scrollable="true" '
            f'bounds="[0,100][{W},900]">{items}</androidx.recyclerview.widget.RecyclerView>{modal}'
            "</android.widget.FrameLayout></hierarchy>")


ROWS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"]


def test_closing_a_dimmed_dialog_snaps_to_the_dialog_not_the_whole_frame() -> None:
    before, after = dimmed_with_dialog(feed(ROWS)), feed(ROWS)  # Cancel: only the dialog and the scrim go
    before_tree = parse_page_source(feed_tree(ROWS, dialog=True))
    plain = oracle.compare(Frame.from_array(before), Frame.from_array(after), parse_page_source(feed_tree(ROWS, False)))
    # without the before-tree's dialog the dialog is found from the pixels (issue 34): the box that did
    # not follow the scrim's gain, not the whole list
    found = plain.regions[0]
    assert found.container == "dialog (from the pixels) vanished", plain.regions
    assert found.box.intersection(DIALOG).area >= 0.9 * DIALOG.area and found.box.area <= 1.2 * DIALOG.area
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after),
                            parse_page_source(feed_tree(ROWS, dialog=False)), before_tree=lambda: before_tree)
    assert result.verdict == "changed"
    assert [(r.container, r.box) for r in result.regions if r.kind == "change"] == [
        ("dialog 'Delete post?' vanished", DIALOG)]
    # the dialog was a node of the app's own window: no screen-level region (a dialog window of its
    # own names the scrim: test_oracle_real_shapes.py)
    assert all(r.kind == "change" for r in result.regions)
    assert all(c.box.area < 0.3 * W * H for c in result.crops)
    assert any("global undim" in note for note in result.notes)


def test_a_white_dialog_closing_over_a_white_page_is_found_from_the_pixels_with_no_tree() -> None:
    """Light on the web reads no tree: the closed dialog is the box that did not follow the scrim.
    Brightening the dimmed frame would clip the white dialog to the page's white behind it and leave
    only its words as change (the region became the whole screen); dimming the bright frame keeps it."""
    rows = ROWS[:2]  # nothing but the page's background under the dialog
    before, after = dimmed_with_dialog(feed(rows)), feed(rows)
    for tree in (None, parse_page_source(feed_tree(rows, dialog=False))):
        result = oracle.compare(Frame.from_array(before), Frame.from_array(after), tree)
        found = result.regions[0]
        assert found.container == "dialog (from the pixels) vanished", result.notes
        assert found.box.intersection(DIALOG).area >= 0.9 * DIALOG.area and found.box.area <= 1.2 * DIALOG.area
        assert all(r.box.area < 0.5 * W * H for r in result.regions if r.kind != "scrim"), result.regions
        # with no tree nothing says the dialog was not a window of its own: the page behind it, visibly
        # brightened, is the last region (kind `scrim`, never cropped; issue 43)
        assert [r.kind for r in result.regions][-1] == ("scrim" if tree is None else "change")
        assert all(c.box.area < 0.5 * W * H for c in result.crops)


def test_a_dialog_no_tree_names_is_found_from_the_pixels_and_named_a_dialog() -> None:
    """Issue 34: a div dialog over a scrim (no role="dialog", no dialog node in either tree) is the
    box that kept its brightness: that box is the region, named a dialog, and the crop is it."""
    tree = parse_page_source(feed_tree(ROWS, dialog=False))
    result = oracle.compare(Frame.from_array(feed(ROWS)), Frame.from_array(dimmed_with_dialog(feed(ROWS))), tree,
                            before_tree=lambda: tree)
    [region] = result.regions
    assert region.container == "dialog (from the pixels) appeared"
    assert region.box.intersection(DIALOG).area >= 0.9 * DIALOG.area and region.box.area <= 1.2 * DIALOG.area
    assert result.crops and all(c.box.area <= 1.2 * DIALOG.area for c in result.crops)


def test_a_whole_screen_that_only_darkens_is_no_dialog() -> None:
    """A theme switch dims every pixel and nothing keeps its brightness: no dialog is made up."""
    tree = parse_page_source(feed_tree(ROWS, dialog=False))
    darker = (feed(ROWS).astype(np.float32) * 0.55).astype(np.uint8)
    result = oracle.compare(Frame.from_array(feed(ROWS)), Frame.from_array(darker), tree, before_tree=lambda: tree)
    assert result.regions and not any("dialog" in (r.container or "") for r in result.regions), result.regions
    assert result.regions[0].box.area > 0.5 * W * H


def test_a_row_removed_under_the_scrim_is_found_beside_the_dialog() -> None:
    after_rows = [r for r in ROWS if r != "Alice"]
    before, after = dimmed_with_dialog(feed(ROWS)), feed(after_rows)  # Delete: the dialog goes, the list shifts
    before_tree = parse_page_source(feed_tree(ROWS, dialog=True))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after),
                            parse_page_source(feed_tree(after_rows, dialog=False)), before_tree=lambda: before_tree)
    assert result.regions[0].container == "dialog 'Delete post?' vanished"
    rest = result.regions[1:]
    assert rest and all(r.box.area < W * H * 0.9 for r in rest)
    assert any(r.raw.top < DIALOG.top for r in rest)  # the removed first row, outside the dialog


def test_opening_a_dimmed_dialog_snaps_to_the_dialog_in_the_after_tree() -> None:
    before, after = feed(ROWS), dimmed_with_dialog(feed(ROWS))
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after),
                            parse_page_source(feed_tree(ROWS, dialog=True)),
                            before_tree=lambda: parse_page_source(feed_tree(ROWS, dialog=False)))
    assert [(r.container, r.box) for r in result.regions if r.kind == "change"] == [
        ("dialog 'Delete post?' appeared", DIALOG)]
    assert [r.kind for r in result.regions] == ["change"]  # in the app's window: no scrim region


def test_an_unnamed_part_the_size_of_a_named_control_gives_the_control_its_name() -> None:
    """A component's inner parts are drawn its size (Material's md-switch holds a plain div of its
    box): a change in them is named after the switch, not 'android.view.ViewGroup'. An unnamed part
    smaller than its parent keeps its place (the region's box is the same either way)."""
    switch = ('<android.widget.Switch content-desc="Notifications" resource-id="notifications" bounds="[400,300][520,380]">'
              '<android.view.ViewGroup bounds="[400,300][520,380]"><android.view.View bounds="{knob}"/>'
              "</android.view.ViewGroup></android.widget.Switch>")
    before = screen()
    after = changed_square(before, Box(420, 310, 470, 370))
    tree = parse_page_source(f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
                             f'{switch.format(knob="[420,310][470,370]")}</android.widget.FrameLayout></hierarchy>')
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after), tree)
    assert [(r.container, r.box) for r in result.regions] == [("Notifications", Box(400, 300, 520, 380))]
    inner = parse_page_source(  # the unnamed part is smaller than the switch: it is the container
        f'<hierarchy width="{W}" height="{H}"><android.widget.FrameLayout bounds="[0,0][{W},{H}]">'
        '<android.widget.Switch content-desc="Notifications" bounds="[380,290][530,390]">'
        '<android.view.ViewGroup bounds="[400,300][520,380]"><android.view.View bounds="[420,310][470,370]"/>'
        "</android.view.ViewGroup></android.widget.Switch></android.widget.FrameLayout></hierarchy>")
    result = oracle.compare(Frame.from_array(before), Frame.from_array(after), inner)
    assert [(r.container, r.box) for r in result.regions] == [("android.view.ViewGroup", Box(400, 300, 520, 380))]
