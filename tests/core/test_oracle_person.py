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
from tests.core.test_oracle_real_shapes import H, W, _node, _tree, compare, list_tree, popup_opened, rows_screen

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
