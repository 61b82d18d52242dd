"""`pixels_place`: when a transition judged without a tree already places its change (a new screen),
and `covered_area`, the exact union it measures with. Synthetic frames only."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle, covered_area, pixels_place
from pytest_guistate.core.oracle_mask import StatusBars
from pytest_guistate.core.oracle_types import Region, Transition, Verdict
from tests.core.test_oracle import BUTTON, H, W, base_screen, draw_button, draw_rows, frame


def tree_less(before: np.ndarray, after: np.ndarray) -> Transition:
    """The oracle as the light tier calls it when no tree was read: the status bar is the top band."""
    return VisualOracle().compare(frame(before, "before"), frame(after, "after"), None,
                                  before_tree=lambda: None, status_bars=StatusBars().boxes(None, W, H))


def other_page() -> np.ndarray:
    """Another activity: a dark page with its own header, cards and text everywhere below the bar."""
    img = base_screen()
    img[72:] = (30, 30, 35)
    for i in range(9):
        top = 150 + i * 240
        cv2.rectangle(img, (40, top), (W - 40, top + 200), (70 + 15 * i, 90, 160), -1)
        cv2.putText(img, f"Setting {i}", (80, top + 120), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (240, 240, 240), 3)
    return img


def transition(verdict: Verdict, *boxes: Box) -> Transition:
    regions = [Region(b, b, None, 1.0) for b in boxes]
    return Transition(verdict, regions, [], [], [], False, 0.5, 1.0)


def test_a_new_page_is_placed_by_the_pixels() -> None:
    result = tree_less(base_screen(), other_page())
    assert result.verdict == "changed"
    assert pixels_place(result, W, H)


@pytest.mark.parametrize("change", ["button", "row text"])
def test_a_local_change_needs_the_tree(change: str) -> None:
    before = base_screen()
    after = before.copy()
    if change == "button":
        draw_button(after, (20, 160, 60))
    else:
        draw_rows(after, [f"Message number {i}" if i != 3 else "Message read" for i in range(8)])
    result = tree_less(before, after)
    assert result.verdict == "changed" and result.regions
    assert not pixels_place(result, W, H)  # the ink of the change, not its item: the tree gives that


def test_no_change_places_nothing() -> None:
    before = base_screen()
    result = tree_less(before, before.copy())
    assert result.verdict == "no_change"
    assert not pixels_place(result, W, H)


def test_overlapping_regions_count_once_against_the_fraction() -> None:
    # two regions of 40% of the frame each, overlapping in all but 5%: 45% covered, not 80%
    first = Box(0, 0, W, int(H * 0.40))
    second = Box(0, int(H * 0.05), W, int(H * 0.45))
    both = transition("changed", first, second)
    assert not pixels_place(both, W, H, 0.5)
    assert pixels_place(both, W, H, 0.4)


def test_regions_outside_the_frame_are_clipped() -> None:
    beyond = transition("changed", Box(-500, -500, W + 500, H // 4))  # a quarter of the frame inside it
    assert not pixels_place(beyond, W, H, 0.3)
    assert pixels_place(beyond, W, H, 0.2)


def test_only_a_changed_verdict_is_placed() -> None:
    whole = Box(0, 0, W, H)
    assert pixels_place(transition("changed", whole), W, H)
    assert not pixels_place(transition("uncertain", whole), W, H)  # mid-animation: let the tree say
    assert not pixels_place(transition("changed"), W, H)


def test_a_frame_without_size_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="0x2400"):
        pixels_place(transition("changed", BUTTON), 0, H)


def test_covered_area_matches_a_pixel_mask() -> None:
    rng = random.Random(7)
    for _ in range(50):
        boxes = []
        for _ in range(rng.randint(0, 6)):
            left, top = rng.randint(0, 90), rng.randint(0, 90)
            boxes.append(Box(left, top, left + rng.randint(0, 40), top + rng.randint(0, 40)))
        mask = np.zeros((140, 140), bool)
        for b in boxes:
            mask[b.top:b.bottom, b.left:b.right] = True
        assert covered_area(boxes) == int(mask.sum())
