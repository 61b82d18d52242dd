"""An empty overlay over a list (issue 25): a change in a row snaps to the row, not to the overlay.

Large apps put a childless, non-clickable layer over their content (a FrameLayout at drawing-order
2 for tooltips and snackbars; an empty `Other` on iOS). It is the last node in document order that
encloses a change in a row, so "the topmost enclosing node" was that layer: nearly the whole screen.
It only stayed out while it covered more than `max_container_fraction` of the screen; since the
screen reaches past `Display.getSize()` (commit 9b95b36) a 1080 x 2050 layer on a 1080 x 2340 screen
(display size 2214 high) is under it. Now an empty layer drawn over other nodes is no snap candidate
at all (`UINode.is_empty_layer`, `oracle_snap._Snapper.is_transparent_layer`). The fixtures are our
own, in the shape of those sources (tests/core/pagesources/android_overlay.xml, ios_overlay.xml)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.uitree import UITree, parse_page_source

SOURCES = Path(__file__).parent / "pagesources"


def load(name: str, scale: float = 1.0) -> UITree:
    return parse_page_source((SOURCES / f"{name}.xml").read_text(encoding="utf-8"), scale=scale)


def frames(size: tuple[int, int], changes: list[tuple[Box, str, str]]) -> tuple[Frame, Frame]:
    """A plain screen and the same screen with each box's text replaced (a like count going up)."""
    width, height = size
    before = np.full((height, width, 3), 245, np.uint8)
    after = before.copy()
    for box, old, new in changes:
        origin = (box.left + 4, box.bottom - 8)
        cv2.putText(before, old, origin, cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
        cv2.putText(after, new, origin, cv2.FONT_HERSHEY_SIMPLEX, 1.4, (30, 30, 30), 3)
    return Frame.from_array(before), Frame.from_array(after)


def test_the_overlay_is_an_empty_layer_and_the_rows_are_not() -> None:
    tree = load("android_overlay")
    overlay = list(tree.nodes())[-1]
    assert overlay.bounds == Box(0, 164, 1080, 2214) and overlay.attrs.get("drawing-order") == "2"
    assert overlay.is_empty_layer and overlay.is_container
    assert not any(n.is_empty_layer for n in tree.nodes() if n is not overlay)


@pytest.mark.parametrize("size", [(1080, 2340), (1080, 2214)], ids=["screen-reach", "display-size"])
def test_a_change_in_a_row_under_an_empty_overlay_snaps_to_the_row(size: tuple[int, int]) -> None:
    tree = load("android_overlay")
    (count,) = tree.find_text("4 likes")
    row = next(n for n in tree.by_id("feed_row") if n.bounds is not None and n.bounds.contains(count.bounds))
    result = VisualOracle().compare(*frames(size, [(count.bounds, "4 likes", "5 likes")]), tree)
    (region,) = result.regions
    assert (region.container, region.box) == ("feed_row", row.bounds)
    assert region.element is not None and count.bounds.contains(region.element)


def test_changes_in_two_rows_under_the_overlay_keep_their_rows() -> None:
    """Two counters in two rows of a 2050 px list: each row is its change, not the list (issue 33)."""
    tree = load("android_overlay")
    (bob,) = tree.find_text("4 likes")
    (dan,) = tree.find_text("7 likes")
    result = VisualOracle().compare(
        *frames((1080, 2340), [(bob.bounds, "4 likes", "5 likes"), (dan.bounds, "7 likes", "9 likes")]), tree)
    rows = [n.bounds for n in tree.by_id("feed_row") if n.bounds is not None
            and (n.bounds.contains(bob.bounds) or n.bounds.contains(dan.bounds))]
    assert sorted((r.container, r.box.top) for r in result.regions) == sorted(("feed_row", b.top) for b in rows)


def test_every_row_from_one_down_changing_is_one_change_of_the_list_under_the_overlay() -> None:
    """A removed row shifts every row below it: the changes fill the list, which is then the change."""
    tree = load("android_overlay")
    rows = [n.bounds for n in tree.by_id("feed_row") if n.bounds is not None]
    before, after = (np.full((2340, 1080, 3), 245, np.uint8) for _ in range(2))
    for i, row in enumerate(rows):  # every row's content moves up by one row: its picture and text change
        for image, shade in ((before, 40 * i), (after, 40 * (i + 1))):
            cv2.rectangle(image, (row.left + 20, row.top + 20), (row.right - 20, row.bottom - 20), (shade, 90, 200), -1)
    result = VisualOracle().compare(Frame.from_array(before), Frame.from_array(after), tree)
    assert [(r.container, r.box) for r in result.regions] == [("feed_list", Box(0, 164, 1080, 2214))]


def test_a_change_in_the_list_below_its_rows_keeps_its_own_box_not_the_list_nor_the_overlay() -> None:
    """The list (2050 px tall) is not the item that changed: the raw box grown by the margin is (issue 33)."""
    tree = load("android_overlay")
    oracle = VisualOracle()
    result = oracle.compare(*frames((1080, 2340), [(Box(100, 1800, 700, 1900), "", "Loading more")]), tree)
    (region,) = result.regions
    assert region.container is None
    assert region.box == region.raw.expand(oracle.config.raw_margin)
    assert Box(100, 1800, 700, 1900).intersection(region.box).area > 0.5 * region.box.area


def test_an_empty_box_inside_its_own_row_is_still_where_the_change_is() -> None:
    """A placeholder FrameLayout in a row (an image still loading) is no layer over anything."""
    xml = ('<hierarchy width="540" height="960"><android.widget.FrameLayout bounds="[0,0][540,960]">'
           '<androidx.recyclerview.widget.RecyclerView resource-id="app:id/list" scrollable="true" bounds="[0,0][540,960]">'
           '<android.widget.LinearLayout resource-id="app:id/row" bounds="[0,100][540,400]">'
           '<android.widget.FrameLayout resource-id="app:id/thumb" bounds="[20,120][220,380]"/>'
           '<android.widget.TextView text="Photo" bounds="[240,200][520,260]"/>'
           "</android.widget.LinearLayout></androidx.recyclerview.widget.RecyclerView>"
           "</android.widget.FrameLayout></hierarchy>")
    tree = parse_page_source(xml)
    before = np.full((960, 540, 3), 245, np.uint8)
    after = before.copy()
    cv2.rectangle(after, (40, 140), (200, 360), (0, 0, 200), -1)
    result = VisualOracle().compare(Frame.from_array(before), Frame.from_array(after), tree)
    (region,) = result.regions
    assert (region.container, region.element) == ("thumb", Box(20, 120, 220, 380))


def test_ios_an_empty_other_over_a_table_lets_a_cell_change_snap_to_the_cell() -> None:
    tree = load("ios_overlay", scale=3)
    assert list(tree.nodes())[-1].is_empty_layer
    (cell,) = tree.by_id("post_carol")
    (text,) = tree.find_text("New recipe up")
    result = VisualOracle().compare(*frames((1170, 2532), [(text.bounds, "New recipe up", "New recipe: soup")]),
                                    tree)
    (region,) = result.regions
    assert region.box == cell.bounds and region.container == cell.label
