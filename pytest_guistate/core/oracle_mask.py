"""The pixel half of the oracle: two frames in, changed boxes out (AGMem §3.2).

Steps, all at 1/`scale_divisor` scale (the INTER_AREA downscale in `Frame.grey` is itself a
box filter and serves as the denoising "open" for isolated pixels, which is why no opening
kernel is applied at reduced scale: at 1/2 scale it would erase a 4-px text cursor or a thin
checkbox tick, see MEASURED.md; at full scale a 2x2 opening is applied):

1. ``d = max over B,G,R of |before - after|`` per pixel (colour, not grey: a blue and a green
   button can share a grey level);
2. local background ``bg = box_blur(d)`` (a large box filter, ~0.4 ms; a Gaussian costs ~30 ms);
   the loose mask is taken on ``d - w*bg`` so diffuse low-contrast change (a gradient shifting,
   a fading scrim edge) loses its extent while a compact change keeps its full strength;
3. loose mask (extent) and strict mask (existence) -- hysteresis as in Canny;
4. ignore regions zeroed, morphological close joins the parts of one change (text of a row);
5. external contours -> bounding boxes; a box counts only with strict pixels inside and a large
   enough area; nearby boxes merged; boxes mapped back to full scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_types import OracleConfig
from pytest_guistate.core.uitree import UINode, UITree

__all__ = [
    "ChangeMasks", "Differences", "RawRegion", "StatusBars", "change_masks", "colour_difference", "differences",
    "find_regions", "masked", "merge_boxes", "status_bar_boxes", "steady_keyboard", "to_small",
]

_STATUS_BAR_FRACTION = 0.03  # top 3% when neither the tree nor its app nodes say where the bar is
_IOS_STATUS_BAR_FRACTION = 0.065  # iOS: top 6.5% (see status_bar_boxes)
# ids of system bars: systemui's own, and the backgrounds an app window draws under them (what
# an Espresso or single-window UiAutomator2 source lists in place of the bars themselves)
_BAR_IDS = ("status_bar", "statusBarBackground", "navigationBarBackground")
_SYSTEM_UI_MAX_FRACTION = 0.1  # a systemui node taller than this is the notification shade, not a bar
_NAV_BAR_MAX = 0.1  # of the window's height: a navigation bar (48 dp) under a window of 560-900 dp
_NAV_BAR_MIN = 0.02  # of the frame's height: a thinner gap under a window is no bar
_NAV_BAR_WINDOW = 0.7  # of the frame's height: a window ending higher was resized (a keyboard under it)
_FULL_WIDTH = 0.98  # of the screen's width: an app's window (a dialog's window keeps a margin at each side)
_KEYBOARD_SLACK_PX = 8  # how far a keyboard's edges may move between two trees and still be "the same place"


@dataclass
class ChangeMasks:
    """Masks of one frame pair at reduced scale (uint8, 0/255)."""

    loose: np.ndarray  # after closing: the extent of each change
    strict: np.ndarray  # strictly changed pixels, ignore regions removed
    scale: int
    full_size: tuple[int, int]  # (width, height) of the full-scale frame
    counted_pixels: int  # reduced-scale pixels outside the ignore regions

    @property
    def strict_count(self) -> int:
        return int(cv2.countNonZero(self.strict))


@dataclass(frozen=True)
class RawRegion:
    """A changed box at full scale, with its strict-pixel statistics."""

    box: Box
    small: tuple[int, int, int, int]  # (x0, y0, x1, y1) at reduced scale
    strict_pixels: int
    changed_fraction: float


def to_small(box: Box, scale: int, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Full-scale box -> reduced-scale (x0, y0, x1, y1), rounded outward and clipped."""
    height, width = shape[:2]
    x0 = min(max(box.left // scale, 0), width)
    y0 = min(max(box.top // scale, 0), height)
    x1 = min(max(-(-box.right // scale), 0), width)
    y1 = min(max(-(-box.bottom // scale), 0), height)
    return x0, y0, max(x0, x1), max(y0, y1)


def _kernel_px(full_px: int, scale: int) -> int:
    """A kernel size given in full-scale pixels, at reduced scale: odd (centred, so a close
    does not shift boxes by half a kernel) and at least 1."""
    return max(1, round(full_px / scale)) | 1


def colour_difference(small_before: np.ndarray, small_after: np.ndarray) -> np.ndarray:
    """Per-pixel max over channels of the absolute difference (uint8, one channel)."""
    diff = cv2.absdiff(small_before, small_after)
    if diff.ndim == 2:
        return diff
    # on the channels' views: `cv2.split` copied each channel out first (~0.7 ms of a phone frame's ~2.5 ms masks)
    return np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])


@dataclass(frozen=True)
class Differences:
    """Steps 1-3 of one frame pair: what does not depend on the ignore regions, so one pair's masks
    for several ignore lists (`PixelWork`) share it. Read only: `masked` copies what it zeroes."""

    loose: np.ndarray  # before closing and before any ignore region
    strict: np.ndarray
    scale: int


def differences(small_before: np.ndarray, small_after: np.ndarray, config: OracleConfig) -> Differences:
    """Steps 1-3 of the module docstring."""
    scale = config.scale_divisor
    diff = colour_difference(small_before, small_after)
    if config.background_weight > 0:
        k = _kernel_px(config.background_kernel, scale)
        background = cv2.blur(diff, (k, k))
        # saturating uint8 arithmetic: diff - w * background, clipped at 0
        foreground = cv2.addWeighted(diff, 1.0, background, -config.background_weight, 0.0)
    else:
        foreground = diff
    _, loose = cv2.threshold(foreground, config.loose_threshold, 255, cv2.THRESH_BINARY)
    _, strict = cv2.threshold(diff, config.strict_threshold, 255, cv2.THRESH_BINARY)
    if scale == 1:  # at full scale nothing has averaged single stray pixels away yet
        loose = cv2.morphologyEx(loose, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    return Differences(loose, strict, scale)


def masked(found: Differences, config: OracleConfig, full_size: tuple[int, int],
           ignore: Sequence[Box] = ()) -> ChangeMasks:
    """Step 4 of the module docstring on `found` (left as it was)."""
    scale = found.scale
    loose, strict = (found.loose.copy(), found.strict.copy()) if ignore else (found.loose, found.strict)
    ignored_pixels = np.zeros(strict.shape, dtype=np.uint8) if ignore else None
    for box in ignore:
        x0, y0, x1, y1 = to_small(box, scale, strict.shape)
        loose[y0:y1, x0:x1] = 0
        strict[y0:y1, x0:x1] = 0
        if ignored_pixels is not None:
            ignored_pixels[y0:y1, x0:x1] = 1
    counted = strict.size - (int(cv2.countNonZero(ignored_pixels)) if ignored_pixels is not None else 0)
    join = _kernel_px(config.join_distance, scale)
    if join > 1:
        kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (join, join))
        loose = cv2.morphologyEx(loose, cv2.MORPH_CLOSE, kernel)
        for box in ignore:  # closing must not leak a change back into an ignore region
            x0, y0, x1, y1 = to_small(box, scale, strict.shape)
            loose[y0:y1, x0:x1] = 0
    return ChangeMasks(loose=loose, strict=strict, scale=scale, full_size=full_size, counted_pixels=counted)


def change_masks(
    small_before: np.ndarray,
    small_after: np.ndarray,
    config: OracleConfig,
    full_size: tuple[int, int],
    ignore: Sequence[Box] = (),
) -> ChangeMasks:
    """Steps 1-4 of the module docstring."""
    return masked(differences(small_before, small_after, config), config, full_size, ignore)


def find_regions(masks: ChangeMasks, config: OracleConfig) -> list[RawRegion]:
    """Step 5: boxes of the changed regions, biggest change first."""
    scale = masks.scale
    width, height = masks.full_size
    contours, _ = cv2.findContours(masks.loose, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    small_boxes: list[Box] = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        if cv2.countNonZero(masks.strict[y : y + h, x : x + w]) == 0:
            continue  # loose-only: below the strict threshold everywhere
        small_boxes.append(Box.from_xywh(x, y, w, h))
    gap = _kernel_px(config.merge_gap, scale) if config.merge_gap > 0 else 0
    regions: list[RawRegion] = []
    for small in merge_boxes(small_boxes, gap):
        roi = masks.strict[small.top : small.bottom, small.left : small.right]
        strict_pixels = int(cv2.countNonZero(roi))
        if strict_pixels == 0:
            continue
        full = Box(small.left * scale, small.top * scale, small.right * scale, small.bottom * scale)
        full = full.clamp(width, height)
        if full.area < config.min_region_area or full.is_empty:
            continue
        regions.append(
            RawRegion(
                box=full,
                small=(small.left, small.top, small.right, small.bottom),
                strict_pixels=strict_pixels,
                changed_fraction=strict_pixels / float(max(1, small.area)),
            )
        )
    regions.sort(key=lambda r: (-r.strict_pixels, r.box.top, r.box.left))
    return regions


def merge_boxes(boxes: Sequence[Box], gap: int) -> list[Box]:
    """Merge boxes that overlap or lie within `gap` pixels of each other, until none do. On plain
    (left, top, right, bottom) tuples: a repaint's hundreds of contours made this pairwise loop's
    `Box` objects a good part of a compare; the same test (`expand(gap).intersects`) and order."""
    pending = [(b.left, b.top, b.right, b.bottom) for b in boxes]
    merged = True
    while merged:
        merged = False
        result: list[tuple[int, int, int, int]] = []
        for box in pending:
            left, top, right, bottom = box[0] - gap, box[1] - gap, box[2] + gap, box[3] + gap
            for i, (ol, ot, orr, ob) in enumerate(result):
                if min(right, orr) > max(left, ol) and min(bottom, ob) > max(top, ot):
                    result[i] = (min(ol, box[0]), min(ot, box[1]), max(orr, box[2]), max(ob, box[3]))
                    merged = True
                    break
            else:
                result.append(box)
        pending = result
    return [Box(*box) for box in pending]


def status_bar_boxes(tree: UITree | None, width: int, height: int, platform: str = "") -> list[Box]:
    """System bars from the tree (status_bar ids, com.android.systemui's band at the top, an iOS
    StatusBar); when none of them is at the top of the screen (a tree naming only the navigation
    bar), the status bar is measured: the band above the app's first full-width node (Android), the
    band above the navigation bar (iOS), else the platform's top band (`_top_band`). `platform`
    names the phone when there is no tree to say it. With no bar named in the lower half, the
    navigation bar is measured below the app's window (`_measured_navigation_bar`). Other systemui
    nodes are no bar: in the notification shade a notification row is a screen's content like any
    other (issue 33)."""
    boxes: list[Box] = []
    if tree is not None:
        for node in tree.nodes():
            if node.bounds is None or node.bounds.is_empty:
                continue
            if _is_bar(node, height):
                boxes.append(node.bounds.clamp(width, height))
    if not any(box.top <= 0 for box in boxes):
        boxes.append(Box(0, 0, width, max(1, _top_band(tree, width, height, platform))))
    if not any(box.top >= height // 2 and box.width >= 0.9 * width for box in boxes):
        boxes += _measured_navigation_bar(tree, width, height)
    return merge_boxes(boxes, 0)


def _measured_navigation_bar(tree: UITree | None, width: int, height: int) -> list[Box]:
    """The navigation bar a dump does not name (issue 33: many name neither bar), measured like the
    status bar: Android lays an app's window out above the navigation bar, so below a full-width
    window that starts at the top and ends in the screen's lower part, with nothing of the tree
    under it, lies the bar. Its buttons are redrawn when a dialog takes focus: the system's change,
    not the app's. The band is at most `_NAV_BAR_MAX` of the window's height (the frame may be taller
    than the screen: a recorder's black rows). A window reaching the frame's bottom (drawn under the
    bar, a launcher), ending higher (resized above a keyboard) or a floating window alone tells nothing."""
    if tree is None or tree.platform == "ios":
        return []
    windows = [c.bounds for c in tree.root.children if c.bounds is not None and not c.bounds.is_empty]
    full = [b for b in windows if b.width >= _FULL_WIDTH * width and b.top <= _SYSTEM_UI_MAX_FRACTION * height]
    if not full:
        return []
    top = max(b.bottom for b in full)
    if not _NAV_BAR_WINDOW * height <= top <= height - _NAV_BAR_MIN * height:
        return []
    if any(n.bounds is not None and not n.bounds.is_empty and n.bounds.bottom > top for n in tree.nodes()):
        return []  # something of the tree is drawn there: not a bar's band
    return [Box(0, top, width, min(height, top + round(_NAV_BAR_MAX * top)))]


def _is_bar(node: UINode, height: int) -> bool:
    assert node.bounds is not None
    if node.bounds.height > _SYSTEM_UI_MAX_FRACTION * height:
        return False  # taller than a bar: the notification shade, a systemui dialog
    if node.resource_id.endswith(_BAR_IDS) or (node.platform == "ios" and node.kind == "StatusBar"):
        return True
    return node.package == "com.android.systemui" and node.bounds.top <= 0  # the status bar's band itself


def steady_keyboard(before: UITree | None, after: UITree | None) -> list[Box]:
    """The soft keyboard's box when it is up at the same place before and after the action. A key's
    pop-up or the suggestion strip changing inside it is the keyboard's doing, not the app's. A
    keyboard that came up, went away or moved is left in, since that change is the action's (a
    tap on a field). Only trees already read count: nothing is fetched for this."""
    if before is None or after is None:
        return []
    old, new = before.keyboard_box, after.keyboard_box
    if old is None or new is None:
        return []
    edges = zip((old.left, old.top, old.right, old.bottom), (new.left, new.top, new.right, new.bottom), strict=True)
    return [new] if all(abs(a - b) <= _KEYBOARD_SLACK_PX for a, b in edges) else []


def _top_band(tree: UITree | None, width: int, height: int, platform: str = "") -> int:
    if (tree.platform if tree is not None else platform) != "ios":
        measured = _first_app_row(tree, width, height)
        return measured if measured is not None else round(height * _STATUS_BAR_FRACTION)
    if tree is None:
        return round(height * _IOS_STATUS_BAR_FRACTION)
    bars = [n.bounds.top for n in tree.nodes() if n.kind == "NavigationBar" and n.displayed and n.bounds is not None
            and 0 <= n.bounds.top <= _SYSTEM_UI_MAX_FRACTION * height]
    # a bar at the very top: no status bar above it (an iPhone in landscape, a hidden status bar)
    return min(bars) if bars else round(height * _IOS_STATUS_BAR_FRACTION)


def _first_app_row(tree: UITree | None, width: int, height: int) -> int | None:
    """The top of the app's first full-width node below the screen's top edge, when it lies within
    the status bar's possible band: what is above it is the system's (Android draws the app's
    window, its action bar or its content view, right under the status bar)."""
    if tree is None:
        return None
    tops = [n.bounds.top for n in tree.nodes() if n.bounds is not None and not n.bounds.is_empty
            and 0 < n.bounds.top <= _SYSTEM_UI_MAX_FRACTION * height and n.bounds.width >= 0.9 * width
            and n.package != "com.android.systemui"]
    return min(tops) if tops else None


class StatusBars:
    """The status-bar mask per screen size, learnt from the last tree read at that size (light
    tier, issue 12): the bar does not move between steps, so no page source is fetched per step
    for it. A size never seen with a tree gets the platform's top band; a new size (rotation)
    learns anew."""

    def __init__(self, platform: str = "") -> None:
        self.platform = platform  # "ios": the taller band of a notch / Dynamic Island before any tree
        self._known: dict[tuple[int, int], list[Box]] = {}

    def boxes(self, tree: UITree | None, width: int, height: int) -> list[Box]:
        """From `tree` when given (and remembered for this size), else what this size last had."""
        if tree is not None:
            self._known[(width, height)] = status_bar_boxes(tree, width, height)
        known = self._known.get((width, height))
        return list(known) if known is not None else status_bar_boxes(None, width, height, self.platform)
