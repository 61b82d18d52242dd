"""Image side of healing: find a remembered patch in the current frame (issue 7, MAGNET §2.2).

A restyle changes colours, sizes, corner radii and positions, but rarely the glyph that names a
function (the word on a button, the drawing of an icon). So a patch is first reduced to its
*content* (pixels that differ from the element's own background, away from its border), and both
content and frame are compared as blurred gradient-magnitude maps: edges survive a colour change
and even an inverted one (white-on-red to red-on-white), and the blur tolerates a pixel of drift.
The search is multi-scale (normalised cross-correlation, `cv2.TM_CCOEFF_NORMED`) at half
resolution and only inside regions the caller passes (the actionable elements of the UI tree), which
keeps a heal in the tens of milliseconds and never lands on something that cannot be tapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box

__all__ = ["DEFAULT_SCALES", "Hit", "content_box", "edge_map", "patch_similarity", "search"]

# Relative sizes tried for a patch: 0.7x to 1.4x in ~10% steps (v2 restyles resize by 0.8-1.2).
DEFAULT_SCALES: tuple[float, ...] = (0.7, 0.77, 0.85, 0.93, 1.0, 1.08, 1.17, 1.27, 1.4)
_MIN_SIDE = 6  # a template smaller than this (work pixels) correlates with noise


@dataclass(frozen=True)
class Hit:
    """Best placement of one template inside one region, in full-resolution frame pixels."""

    score: float
    box: Box
    scale: float
    region: int  # index into the regions passed to `search`


def edge_map(grey: np.ndarray) -> np.ndarray:
    """Blurred gradient magnitude (float32): colour- and polarity-blind shape of the pixels."""
    g = grey.astype(np.float32)
    dx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    dy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.GaussianBlur(cv2.magnitude(dx, dy), (3, 3), 0)


def content_box(bgr: np.ndarray, *, min_diff: int = 40) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of what is drawn *on* an element: its label or glyph, not its fill.

    The background is the median colour of the border ring; an inset of ~12% of the short side
    is ignored so outlines and rounded corners (which a restyle changes first) do not count.
    Returns the whole patch when nothing stands out (a photo, a flat area).
    """
    h, w = bgr.shape[:2]
    inset = max(2, round(0.12 * min(h, w)))
    ring = np.concatenate([bgr[:inset].reshape(-1, 3), bgr[-inset:].reshape(-1, 3),
                           bgr[:, :inset].reshape(-1, 3), bgr[:, -inset:].reshape(-1, 3)])
    background = np.median(ring, axis=0)
    diff = np.abs(bgr.astype(np.int16) - background.astype(np.int16)).max(axis=2)
    mask = diff > min_diff
    mask[:inset] = mask[-inset:] = False
    mask[:, :inset] = mask[:, -inset:] = False
    ys, xs = np.nonzero(mask)
    if len(xs) < 8:
        return 0, 0, w, h
    pad = max(2, inset // 3)
    x0, x1 = max(0, int(xs.min()) - pad), min(w, int(xs.max()) + 1 + pad)
    y0, y1 = max(0, int(ys.min()) - pad), min(h, int(ys.max()) + 1 + pad)
    return x0, y0, x1, y1


def search(
    frame_edges: np.ndarray,
    divisor: int,
    template_grey: np.ndarray,
    regions: Sequence[Box],
    scales: Sequence[float],
    base_scale: float = 1.0,
    margin: int = 8,
) -> list[Hit]:
    """Best hit of the template per region (regions in full-resolution pixels).

    `frame_edges` is `edge_map` of the frame's grey image at 1/`divisor`; `base_scale` maps patch
    pixels to frame pixels (screen width ratio between where it was learned and here).
    """
    height, width = frame_edges.shape[:2]
    templates: list[tuple[float, np.ndarray]] = []
    th0, tw0 = template_grey.shape[:2]
    for scale in scales:
        factor = base_scale * scale / divisor
        tw, th = round(tw0 * factor), round(th0 * factor)
        if min(tw, th) < _MIN_SIDE:
            continue
        resized = cv2.resize(template_grey, (tw, th), interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR)
        edges = edge_map(resized)
        if float(edges.std()) < 1e-3:
            continue  # a flat template matches everything equally: it identifies nothing
        templates.append((scale, edges))
    hits: list[Hit] = []
    for index, region in enumerate(regions):
        left, top = max(0, (region.left - margin) // divisor), max(0, (region.top - margin) // divisor)
        right, bottom = min(width, (region.right + margin) // divisor), min(height, (region.bottom + margin) // divisor)
        window = frame_edges[top:bottom, left:right]
        best: Hit | None = None
        for scale, edges in templates:
            th, tw = edges.shape[:2]
            if th > window.shape[0] or tw > window.shape[1]:
                continue
            result = cv2.matchTemplate(window, edges, cv2.TM_CCOEFF_NORMED)
            result[_flat(window, th, tw, float(edges.std()))] = -1.0
            _, value, _, loc = cv2.minMaxLoc(result)
            if not np.isfinite(value):
                continue
            if best is None or value > best.score:
                x, y = (left + loc[0]) * divisor, (top + loc[1]) * divisor
                best = Hit(float(value), Box(x, y, x + tw * divisor, y + th * divisor), scale, index)
        if best is not None:
            hits.append(best)
    return hits


def _flat(window: np.ndarray, th: int, tw: int, template_std: float) -> np.ndarray:
    """Placements where the frame is (nearly) flat: normalised correlation is undefined there and
    OpenCV reports 1.0, which would make any blank area a perfect match."""
    summed, squared = cv2.integral2(window.astype(np.float64))[:2]
    n = float(th * tw)

    def boxes(integral: np.ndarray) -> np.ndarray:
        return integral[th:, tw:] - integral[:-th, tw:] - integral[th:, :-tw] + integral[:-th, :-tw]

    mean = boxes(summed) / n
    variance = boxes(squared) / n - mean * mean
    return variance < (0.2 * template_std) ** 2


def patch_similarity(a_bgr: np.ndarray, b_bgr: np.ndarray) -> float:
    """How alike two patches look (edge correlation after resizing b to a), in [-1, 1].

    Used when learning: a patch close to a kept variant only refreshes that variant.
    """
    ha, wa = a_bgr.shape[:2]
    hb, wb = b_bgr.shape[:2]
    if ha < 4 or wa < 4 or hb < 4 or wb < 4:
        return 0.0
    if abs(wa / ha - wb / hb) > 0.15 * (wa / ha):
        return 0.0  # a different aspect ratio is a different look
    grey_a = cv2.cvtColor(a_bgr, cv2.COLOR_BGR2GRAY)
    grey_b = cv2.resize(cv2.cvtColor(b_bgr, cv2.COLOR_BGR2GRAY), (wa, ha), interpolation=cv2.INTER_AREA)
    ea, eb = edge_map(grey_a), edge_map(grey_b)
    colour = float(np.abs(cv2.resize(b_bgr, (wa, ha)).astype(np.int16) - a_bgr.astype(np.int16)).mean()) / 255.0
    if float(ea.std()) < 1e-3 or float(eb.std()) < 1e-3:
        return 1.0 - colour
    shape = float(cv2.matchTemplate(ea, eb, cv2.TM_CCOEFF_NORMED)[0, 0])
    return min(shape, 1.0 - colour * 2)
