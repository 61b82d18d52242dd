"""Redaction before anything is written: password fields and named regions filled, secrets scrubbed.

Issue 4: "Frames and crops pass through redaction before anything is written". Redaction
happens at write time, never on the observation itself: the oracle must still see a password
field change when a character is typed, or typing a password would look like "no effect".

Three sources of what to hide:
- the password-marked nodes of the screen the image was taken from (`UITree.password_boxes()`),
  given to the redactor with `observe(tree)` (or per call);
- fixed regions named by an option or the `pytest_guistate_redact_regions` hook (screen pixels);
- secret strings (passwords a test typed): every string written to the journal, JSON or HTML is
  scrubbed of them, so "type 'hunter2' into password" becomes "type '[redacted]' into password".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box

__all__ = ["MIN_SECRET_LEN", "REDACTED", "Redactor", "fill_boxes", "fill_pixels", "local_boxes"]

REDACTED = "[redacted]"
MIN_SECRET_LEN = 3  # shorter strings would scrub ordinary words ("a", "ok"); refused loudly
_FILL_BGR = (40, 40, 40)  # solid dark grey: clearly a redaction, not a rendering glitch


def fill_boxes(image: bytes, boxes: Iterable[Box], *, origin: tuple[int, int] = (0, 0)) -> bytes:
    """Fill `boxes` (screen pixels) solid in an encoded image whose top-left sits at `origin`.

    Returns the input bytes untouched when no box touches the image (no decode/encode cost);
    otherwise a PNG. Raises ValueError for bytes OpenCV cannot decode: an image we cannot redact
    must not be written.
    """
    boxes = [b for b in boxes if not b.is_empty]
    if not boxes:
        return image
    pixels = cv2.imdecode(np.frombuffer(image, np.uint8), cv2.IMREAD_COLOR)
    if pixels is None:
        raise ValueError(f"cannot redact: {len(image)} bytes are not an image OpenCV can decode")
    if not fill_pixels(pixels, boxes, origin=origin):
        return image
    ok, encoded = cv2.imencode(".png", pixels)
    if not ok:
        raise ValueError("OpenCV could not encode the redacted image")
    return encoded.tobytes()


def local_boxes(boxes: Iterable[Box], size: tuple[int, int], *, origin: tuple[int, int] = (0, 0)) -> list[Box]:
    """`boxes` (screen pixels) in the coordinates of a `size` (width, height) image at `origin`,
    clipped to it; boxes that miss the image are dropped. Needs no pixels, only the size."""
    width, height = size
    ox, oy = origin
    local = (Box(b.left - ox, b.top - oy, b.right - ox, b.bottom - oy).clamp(width, height) for b in boxes)
    return [b for b in local if not b.is_empty]


def fill_pixels(pixels: np.ndarray, boxes: Iterable[Box], *, origin: tuple[int, int] = (0, 0)) -> bool:
    """Fill `boxes` in decoded BGR pixels in place (the pixel half of `fill_boxes`, for callers
    that already hold pixels); True when any box touched the image."""
    height, width = pixels.shape[:2]
    touched = local_boxes(boxes, (width, height), origin=origin)
    for local in touched:
        pixels[local.top : local.bottom, local.left : local.right] = _FILL_BGR
    return bool(touched)


@dataclass
class Redactor:
    """What must not reach disk for one test: fixed regions, the current screen's password
    boxes and secret strings."""

    regions: list[Box] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    password_boxes: list[Box] = field(default_factory=list)

    def __post_init__(self) -> None:
        for secret in list(self.secrets):
            self.add_secret(secret)

    def add_secret(self, secret: str) -> None:
        if not isinstance(secret, str):
            raise TypeError(f"a secret must be a str, got {type(secret).__name__}")
        if len(secret) < MIN_SECRET_LEN:
            raise ValueError(
                f"secret of {len(secret)} characters is too short to scrub safely (min {MIN_SECRET_LEN})"
            )
        self.secrets.add(secret)

    def observe(self, tree: Any) -> None:
        """Remember the password boxes of the screen the next images come from."""
        boxes = tree.password_boxes() if tree is not None else []
        self.password_boxes = list(boxes)

    def boxes(self, extra: Iterable[Box] = ()) -> list[Box]:
        return [*self.regions, *self.password_boxes, *extra]

    def image(self, data: bytes, *, origin: tuple[int, int] = (0, 0), extra: Iterable[Box] = ()) -> bytes:
        return fill_boxes(data, self.boxes(extra), origin=origin)

    def text(self, value: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def scrub(self, value: Any) -> Any:
        """Deep copy of JSON-like data with every secret replaced in keys and string values."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return value
