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

__all__ = ["DEFAULT_SCALES", "Hit", "content_box", "edge_map", "patch_similarity", "refine", "scaled_templates", "search"]

# Relative sizes tried for a patch in the coarse pass: 0.7x to 1.4x in ~12% steps (v2 restyles
# resize by 0.8-1.2); `refine` then tries +-6% around the best one at full resolution.
DEFAULT_SCALES: tuple[float, ...] = (0.7, 0.79, 0.89, 1.0, 1.12, 1.25, 1.4)
REFINE_STEPS: tuple[float, ...] = (0.94, 0.97, 1.0, 1.03, 1.06)
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


Template = tuple[float, np.ndarray, float]  # scale, edge map, its standard deviation


def scaled_templates(template_grey: np.ndarray, scales: Sequence[float], factor: float) -> list[Template]:
    """Edge maps of the template at each scale (times `factor`: screen ratio / divisor); callers
    cache them per remembered variant, they do not change between heals."""
    out: list[Template] = []
    th0, tw0 = template_grey.shape[:2]
    for scale in scales:
        tw, th = round(tw0 * factor * scale), round(th0 * factor * scale)
        if min(tw, th) < _MIN_SIDE:
            continue
        shrink = factor * scale < 1
        resized = cv2.resize(template_grey, (tw, th), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        edges = edge_map(resized)
        std = float(edges.std())
        if std < 1e-3:
            continue  # a flat template matches everything equally: it identifies nothing
        out.append((scale, edges, std))
    return out


def search(
    frame_grey: np.ndarray,
    divisor: int,
    templates: Sequence[Template],
    regions: Sequence[Box],
    margin: int = 8,
) -> list[Hit]:
    """Best hit of the scaled templates per region (regions and hits in full-resolution pixels).

    `frame_grey` is the frame's grey image at 1/`divisor`; edges are computed per region window
    only, so a screen with a few buttons costs a few small windows, not the whole frame.
    """
    height, width = frame_grey.shape[:2]
    hits: list[Hit] = []
    for index, region in enumerate(regions):
        left, top = max(0, (region.left - margin) // divisor), max(0, (region.top - margin) // divisor)
        right, bottom = min(width, (region.right + margin) // divisor), min(height, (region.bottom + margin) // divisor)
        if right - left < _MIN_SIDE or bottom - top < _MIN_SIDE:
            continue
        window = edge_map(frame_grey[top:bottom, left:right])
        best = _best(window, templates, index)
        if best is not None:
            box = best.box
            hits.append(Hit(best.score, Box((left + box.left) * divisor, (top + box.top) * divisor,
                                            (left + box.right) * divisor, (top + box.bottom) * divisor),
                            best.scale, index))
    return hits


def _best(window: np.ndarray, templates: Sequence[Template], region: int) -> Hit | None:
    """Best placement over all templates in one edge window (box in window pixels)."""
    integrals = cv2.integral2(window.astype(np.float64))[:2]
    best: Hit | None = None
    for scale, edges, std in templates:
        th, tw = edges.shape[:2]
        if th > window.shape[0] or tw > window.shape[1]:
            continue
        result = cv2.matchTemplate(window, edges, cv2.TM_CCOEFF_NORMED)
        result[_flat(integrals, th, tw, std)] = -1.0
        _, value, _, loc = cv2.minMaxLoc(result)
        if np.isfinite(value) and (best is None or value > best.score):
            best = Hit(float(value), Box(loc[0], loc[1], loc[0] + tw, loc[1] + th), scale, region)
    return best


def refine(frame_bgr: np.ndarray, template_grey: np.ndarray, hit: Hit, base_scale: float,
           steps: Sequence[float] = REFINE_STEPS) -> Hit:
    """Re-score a coarse hit at full resolution in a window around it.

    At half resolution a 13-px-high word is a blur in which "Notify me" and "Add to cart" look
    alike (0.80 correlation on the sim); at full resolution the glyphs tell them apart.
    """
    height, width = frame_bgr.shape[:2]
    pad = max(6, round(0.15 * max(hit.box.width, hit.box.height)))
    area = hit.box.expand(pad).clamp(width, height)
    grey = cv2.cvtColor(frame_bgr[area.top:area.bottom, area.left:area.right], cv2.COLOR_BGR2GRAY)
    templates = scaled_templates(template_grey, [hit.scale * step for step in steps], base_scale)
    best = _best(edge_map(grey), templates, hit.region)
    if best is None:
        return Hit(-1.0, hit.box, hit.scale, hit.region)
    b = best.box
    return Hit(best.score, Box(area.left + b.left, area.top + b.top, area.left + b.right, area.top + b.bottom),
               best.scale, hit.region)


def _flat(integrals: tuple[np.ndarray, np.ndarray], th: int, tw: int, template_std: float) -> np.ndarray:
    """Placements where the frame is (nearly) flat: normalised correlation is undefined there and
    OpenCV reports 1.0, which would make any blank area a perfect match."""
    summed, squared = integrals
    n = float(th * tw)

    def boxes(integral: np.ndarray) -> np.ndarray:
        return np.asarray(integral[th:, tw:] - integral[:-th, tw:] - integral[th:, :-tw] + integral[:-th, :-tw])

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
