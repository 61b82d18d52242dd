"""One image of a step: the before-frame and the after-frame side by side, the changed regions
drawn on both (red) and where the expected element was found (blue). Issue 15: a failing step
in Allure must be understood at one click, without opening two crops and the HTML report.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from pytest_guistate.core.oracle_types import CROP_PNG_PARAMS
from pytest_guistate.report.images import decode

__all__ = ["side_by_side"]

REGION_BGR = (40, 40, 230)
EXPECT_BGR = (230, 120, 30)
MAX_HEIGHT = 1200  # the pair stays readable in a browser and small as a PNG


def _scaled(pixels: np.ndarray, height: int) -> tuple[np.ndarray, float]:
    factor = height / pixels.shape[0]
    if abs(factor - 1.0) < 1e-6:
        return pixels.copy(), 1.0
    width = max(1, round(pixels.shape[1] * factor))
    return cv2.resize(pixels, (width, height), interpolation=cv2.INTER_AREA), factor


def _draw(pixels: np.ndarray, boxes: Sequence[Sequence[int]], scale: float, colour: tuple[int, int, int]) -> None:
    thickness = max(2, round(pixels.shape[0] / 300))
    for left, top, right, bottom in boxes:
        cv2.rectangle(pixels, (round(left * scale), round(top * scale)),
                      (round(right * scale) - 1, round(bottom * scale) - 1), colour, thickness)


def _label(pixels: np.ndarray, text: str) -> np.ndarray:
    band = np.full((max(28, pixels.shape[0] // 30), pixels.shape[1], 3), 255, np.uint8)
    size = band.shape[0] / 36
    cv2.putText(band, text, (8, band.shape[0] - 8), cv2.FONT_HERSHEY_SIMPLEX, size, (0, 0, 0), max(1, round(size * 2)))
    return np.vstack([band, pixels])


def side_by_side(before: bytes, after: bytes, regions: Sequence[Sequence[int]], *, screen_width: int | None = None,
                 expect_box: Sequence[int] | None = None, titles: tuple[str, str] = ("before", "after")) -> bytes:
    """A PNG: `before` | `after` (PNG or JPEG bytes, any stored scale). Boxes are in screen pixels
    (`screen_width` wide; default: the after-image's own width)."""
    first, second = decode(before), decode(after)
    height = min(MAX_HEIGHT, first.shape[0], second.shape[0])
    left, _ = _scaled(first, height)
    right, _ = _scaled(second, height)
    for image, source in ((left, first), (right, second)):
        scale = image.shape[1] / (screen_width or source.shape[1])
        _draw(image, regions, scale, REGION_BGR)
        if expect_box is not None:
            _draw(image, [expect_box], scale, EXPECT_BGR)
    gap = np.full((height, max(8, height // 80), 3), 255, np.uint8)
    pair = np.hstack([left, gap, right])
    legend = "red: changed regions" if regions else "no changed region"
    if expect_box is not None:
        legend += ", blue: expected element"
    pair = _label(pair, f"{titles[0]}  |  {titles[1]}   ({legend})")
    ok, png = cv2.imencode(".png", pair, CROP_PNG_PARAMS)
    if not ok:
        raise ValueError("OpenCV could not encode the side-by-side image")
    return png.tobytes()
