"""The system bars found from the pixels, for the oracle's tree-less call (the light tier, issue 43).

With no tree the oracle knows only the platform's top band (`StatusBars` before any tree is read),
and on real phones the system's own redraws were taken for the app's change: the navigation bar's
three buttons redrawn as a dialog takes focus or the keyboard goes (a tap that did nothing judged
`changed`), and in the notification shade the clock of its header, which sits lower than the
status bar's. Both bars have a shape no app draws there, so they are found in the frames:

- the navigation bar (Android's three buttons): the lowest thing the screen shows (below it only the
  frame's bottom or a recorder's black rows), a band holding nothing but three small marks on one
  line, the middle one at the screen's centre and the other two at the same distance either side
  (`_SPACING` of the width: Back and Recents; an app's three bottom tabs lie at a third of the width,
  and carry labels). The band is from the bar's top edge (the row where its colour starts) to the
  frame's bottom.
- the status bar's band, taller in the notification shade (its header, 48 dp, holds the clock):
  the band from the top edge whose rows keep the top row's colour, until the first row mostly of
  another colour, in both frames alike, holding only small marks (the clock, the status icons), and at
  most `_HEADER_MAX` of the screen's width tall (48 dp on the narrowest phones, 320 dp wide). An
  app's toolbar the colour of the status bar is taller than that (24 + 56 dp).

Each is taken only when both frames show it: a bar that came or went (an app going full screen)
or an app's page drawn behind a translucent bar is a change a person sees. A screen that shows
neither keeps only the platform's band. Found on the 1/`scale` frames the oracle already has (no
full-size decode), and looked for only where the two frames differ (an unchanged band needs none).
"""

from __future__ import annotations

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box

__all__ = ["pixel_bars"]

_PAD_LEVEL = 16  # a recorder's rows under the screen are black: every pixel's grey below this
_NAV_SEARCH = 0.12  # of the frame's height: the lowest band searched for the navigation bar's buttons
_NAV_REACH = 0.35  # of the frame's height: the bar and a recorder's black rows under the screen lie this low
_SAME = 16  # a channel's difference no larger: the two frames show a band alike (JPEG noise)
_INK = 20  # grey levels from a row's colour: a button drawn on the bar (dark icons on a grey bar: 30)
_MARK_MAX = 0.1  # of the width: a button's mark is no wider or taller (an icon of 24 dp on 320-480 dp)
_MARK_MIN_PX = 6  # small-scale pixels: a mark smaller than this is JPEG noise
_CENTRE = 0.02  # of the width: how far the Home button may sit from the centre (and Back / Recents' midpoint)
_SPACING = (0.18, 0.31)  # of the width: Back's and Recents' distance from Home (bottom tabs: a third)
_EDGE = 12  # grey levels: a row of another colour than the bar's is its top edge
_TOP_EDGE = 30  # |dB| + |dG| + |dR|: the two frames' top bands of colours further apart are not one bar
_TOP_NEAR = 20  # per channel: a pixel this close to the top row's colour is the band's, not a mark
_BAR_REACH = 1.3  # button heights above the marks the bar's edge is looked for (48 dp bar, 16-18 dp marks)
_HEADER_MAX = 0.15  # of the narrow side: the tallest top band taken as the status bar's (48 dp at 320 dp)
_HEADER_MARK = 0.25  # of the width: a mark in the top band no wider (the clock, an icon; not a title row)


def pixel_bars(small_before: np.ndarray, small_after: np.ndarray, scale: int, size: tuple[int, int]) -> list[Box]:
    """Boxes of the system bars the two 1/`scale` frames of a `size` (width, height) screen show."""
    full_w, full_h = size
    height, width = small_after.shape[:2]
    boxes: list[Box] = []
    lowest = slice(round((1 - _NAV_REACH) * height), height)
    if _differ(small_before[lowest], small_after[lowest]):  # an unchanged bar needs no looking for
        after = _navigation_bar(small_after)
        before = _navigation_bar(small_before) if after is not None else None
        if after is not None and before is not None:
            boxes.append(Box(0, min(min(before, after) * scale, full_h), full_w, full_h))
    highest = slice(0, round(_HEADER_MAX * min(width, height)) + 1)
    if _differ(small_before[highest], small_after[highest]):
        header = _top_band(small_before, small_after)
        if header is not None:
            boxes.append(Box(0, 0, full_w, min(header * scale, full_h)))
    return boxes


def _differ(before: np.ndarray, after: np.ndarray) -> bool:
    """Whether two bands differ anywhere by more than `_SAME` (a bar they show alike changes nothing)."""
    return bool(before.size) and int(cv2.absdiff(before, after).max()) > _SAME


def _row_colours(image: np.ndarray) -> np.ndarray:
    """Each row's colour, the median of its pixels (int32; rows, or rows x 3)."""
    colours: np.ndarray = np.median(image, axis=1).astype(np.int32)
    return colours


def _navigation_bar(image: np.ndarray) -> int | None:
    """The top row (small scale) of Android's three-button navigation bar, or None (module docstring)."""
    height, width = image.shape[:2]
    if height <= width:
        return None  # landscape: the bar is at the side
    lower = image[height // 2 :]  # the bar and a recorder's black rows under the screen are in the lower half
    grey = lower if lower.ndim == 2 else cv2.cvtColor(lower, cv2.COLOR_BGR2GRAY)
    lit = np.flatnonzero(grey.max(axis=1) >= _PAD_LEVEL)
    if lit.size == 0:
        return None
    bottom = int(lit[-1]) + 1  # the black rows end here (a black bar's own marks stop it)
    top = max(0, bottom - round(_NAV_SEARCH * height))
    band = grey[top:bottom].astype(np.int32)
    if band.shape[0] < 4:
        return None
    colours = _row_colours(band[:, : max(1, width // 10)])  # the bar's colour, beside its buttons
    mask = (np.abs(band - colours[:, None]) > _INK).astype(np.uint8)
    _, _, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
    stats, centroids = stats[1:], centroids[1:]  # the background's row left out
    solid = stats[:, cv2.CC_STAT_AREA] >= _MARK_MIN_PX
    most = _MARK_MAX * width
    marks = np.flatnonzero(solid & (stats[:, cv2.CC_STAT_WIDTH] <= most) & (stats[:, cv2.CC_STAT_HEIGHT] <= most))
    bottoms = stats[:, cv2.CC_STAT_TOP] + stats[:, cv2.CC_STAT_HEIGHT]
    centre, slack = width / 2, _CENTRE * width
    xs, ys = centroids[marks, 0], centroids[marks, 1]
    for home in marks[np.abs(xs - centre) <= slack]:
        size = int(stats[home, cv2.CC_STAT_HEIGHT])
        line = marks[(np.abs(ys - centroids[home, 1]) <= max(2.0, 0.35 * size)) & (marks != home)]
        for left in line[centroids[line, 0] < centre]:
            reach = centre - centroids[left, 0]
            if not _SPACING[0] * width <= reach <= _SPACING[1] * width:
                continue
            mirrored = line[np.abs(centroids[line, 0] - (centre + reach)) <= 2 * slack]
            for right in mirrored:
                trio = [int(home), int(left), int(right)]
                marks_top = int(stats[trio, cv2.CC_STAT_TOP].min())
                tallest = int(stats[trio, cv2.CC_STAT_HEIGHT].max())
                edge = _bar_edge(colours, marks_top, max(0, marks_top - round(_BAR_REACH * tallest)), tallest)
                others = solid & (bottoms > edge)
                others[trio] = False
                if others.any():
                    continue  # more than the three buttons in the band: an app's bar (tabs with labels)
                return int(height // 2 + top + edge)
    return None


def _bar_edge(colours: np.ndarray, marks_top: int, reach_top: int, tallest: int) -> int:
    """The bar's top edge above its buttons: the lowest row of another colour than the bar's, within
    reach; a bar of the app's colour shows none, and its band starts a button's height above them
    (a 48 dp bar holds 16-18 dp marks in its middle)."""
    bar = colours[max(0, marks_top - 1)]
    other = np.flatnonzero(np.abs(colours[reach_top:marks_top] - bar) > _EDGE)
    return reach_top + int(other[-1]) + 1 if other.size else max(0, marks_top - tallest)


def _top_band(small_before: np.ndarray, small_after: np.ndarray) -> int | None:
    """The rows (small scale) of the status bar's band as both frames show it, when it is taller than
    the platform's band and no taller than `_HEADER_MAX` (the notification shade's header), else None."""
    height, width = small_after.shape[:2]
    limit = round(_HEADER_MAX * min(width, height))
    after = _band_end(small_after[: limit + 1])
    before = _band_end(small_before[: limit + 1]) if after is not None else None
    if before is None or after is None:
        return None
    (end_before, colour_before), (end_after, colour_after) = before, after
    if abs(end_before - end_after) > 1 or float(np.abs(colour_before - colour_after).sum()) > _TOP_EDGE:
        return None  # not the same band in both frames
    return min(end_before, end_after)


def _band_end(top: np.ndarray) -> tuple[int, np.ndarray] | None:
    """The first row mostly of another colour than the top row's, and that colour, when every mark
    above it is small."""
    width = top.shape[1]
    colour = np.median(top[0].reshape(width, -1), axis=0)
    near = cv2.inRange(top, np.clip(colour - _TOP_NEAR, 0, 255), np.clip(colour + _TOP_NEAR, 0, 255))
    rows = np.flatnonzero(cv2.reduce(near, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).ravel() < 127.5)
    if rows.size == 0:
        return None  # the top row's colour runs past the limit: an app's own header
    end = int(rows[0])
    if end == 0:
        return None  # no colour holds the top row (a picture drawn under a translucent status bar)
    count, _, stats, _ = cv2.connectedComponentsWithStats(cv2.bitwise_not(near[:end]), connectivity=8)
    if count > 1 and int(stats[1:, cv2.CC_STAT_WIDTH].max()) > _HEADER_MARK * width:
        return None  # a wide mark: a title row or a picture, not the clock and the status icons
    return end, colour
