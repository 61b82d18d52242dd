"""The images of one report.html, each named by its file; display-sized copies for a page that travels alone.

Issue 23: the viewer inlined every crop at full resolution (4.5 MB for 9 steps). Issue 44: the page
now names each crop's file instead (crops are stored once by content under `crops/`, so one file
is one image) and the browser loads it when the step that shows it is shown. A copy of the page
that leaves its folder (Allure's attachment) carries display-sized copies (`display_copy`: crops
480 px wide as WebP, frames 240 px as JPEG; on 1080x2400 sim screens a copy is 3-25 KB, against
20-280 KB for the PNG).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
from PIL import Image

from pytest_guistate.report.images import decode, image_size

__all__ = ["DISPLAY_WIDTH", "PageImages", "display_copy"]

DISPLAY_WIDTH = {"crop": 480, "frame": 240}  # CSS shows crops <= 240 px and frames 230 px wide
_MAX_HEIGHT = 720  # a tall crop (a whole list) is shown at most this high (its file is the detail)
_WEBP_QUALITY = 75  # lossy: text of a display copy stays legible, the file is the evidence
_WEBP_METHOD = 0  # measured on a 358x720 list crop: 23 KB in 10 ms, against 18 KB in 35 ms at method 2
_JPEG_QUALITY = 65  # frames: a 240x533 copy is ~13 KB in under 1 ms (WebP: ~10 KB in ~20 ms)


def display_copy(data: bytes, width: int, *, kind: str = "webp") -> bytes:
    """A copy at most `width` wide (and `_MAX_HEIGHT` high) of an encoded image, never upscaled:
    WebP for crops (text on flat colours: half the bytes of JPEG), JPEG for frames (a hundred of
    them are encoded when a long test finishes: JPEG is 20x faster there)."""
    pixels = decode(data)
    height, current = pixels.shape[:2]
    factor = min(1.0, width / current, _MAX_HEIGHT / height)
    if factor < 1.0:
        size = (max(1, round(current * factor)), max(1, round(height * factor)))
        pixels = cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)
    if kind == "jpeg":
        ok, encoded = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, _JPEG_QUALITY])
        if not ok:
            raise ValueError("OpenCV could not encode a display copy as JPEG")
        return encoded.tobytes()
    image = Image.fromarray(cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB))
    out = io.BytesIO()
    image.save(out, "WEBP", quality=_WEBP_QUALITY, method=_WEBP_METHOD)
    return out.getvalue()


@dataclass
class PageImages:
    """The files of one test folder a page shows, one id per file (files are stored by content)."""

    folder: Path
    defs: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {src, full, width, height}
    missing: list[str] = field(default_factory=list)
    _by_file: dict[tuple[str, str], str] = field(default_factory=dict)  # (rel, use) -> id

    def read(self, rel: str) -> bytes | None:
        path = self.folder / rel
        if not rel or not path.is_file():
            if rel:
                self.missing.append(rel)
            return None
        return path.read_bytes()

    def add(self, rel: str, use: str) -> str | None:
        """The id of `rel` for `use` ("crop" | "frame"); None for a missing file. Its size is read
        from the header: nothing is decoded or encoded to build the page."""
        known = self._by_file.get((rel, use))
        if known is not None:
            return known
        data = self.read(rel)
        if data is None:
            return None
        try:
            width, height = image_size(data)
        except ValueError:
            self.missing.append(rel)  # not an image (a torn write): drawn as missing
            return None
        image_id = f"img-{len(self.defs)}"
        self.defs[image_id] = {"src": rel, "full": rel, "width": width, "height": height}
        self._by_file[(rel, use)] = image_id
        return image_id
