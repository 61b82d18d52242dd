"""`FrameStore`: the recorder's whole frames and before-crops, cut from pixels already decoded.

Issue 6 (per-step overhead): the recorder decoded every PNG the oracle had already decoded, up
to 3 decodes of ~25 ms per full-tier step. Here frames are stored from the observed `Frame`'s
pixels instead: the oracle's cached half-scale copy when it is exactly the stored size, else its
full-resolution pixels; a PNG stored once with the same redaction is not encoded again (a step's
before-frame is usually the previous step's after-frame). The result is byte for byte what
decoding the PNG would give: PNG is lossless and every resize is the same INTER_AREA call.
"""

from __future__ import annotations

import hashlib
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from pytest_guistate.core.artifact_names import CROPS_DIR
from pytest_guistate.core.geometry import Box
from pytest_guistate.report.diskio import write_file
from pytest_guistate.report.images import (
    CROP_SUFFIX,
    FrameFormat,
    decode,
    encode_crop,
    encode_frame,
    encode_pixels,
    frame_divisor,
    image_size,
)
from pytest_guistate.report.placement import Pending, digest
from pytest_guistate.report.redact import fill_boxes, fill_pixels, local_boxes

__all__ = ["FramePixels", "FrameStore", "frame_digest"]

OBSERVED_KEPT = 16  # recent observations remembered (PNG bytes and password boxes; pixels stay the session's)


def frame_digest(frame: Any) -> str:
    """`Frame.digest` (cached on the frame; the same blake2b as `placement.digest`)."""
    known = getattr(frame, "digest", None)
    return known if isinstance(known, str) else digest(frame.png)


class FramePixels:
    """Decoded pixels of observed frames, each PNG decoded at most once per step.

    Callers pass the observed frames that carry the same PNG ("twins": a stability probe whose
    bytes equal the after-frame's is never decoded by the oracle, the after-frame is). A twin the
    session still holds decoded lends its pixels; when all were released, the PNG is decoded
    here, never through `Frame.bgr` (that would keep pixels alive outside the session's frame
    window), and `release()` drops those copies once the step is written. Frames are read only
    through `Frame.decoded()`/`decoded_small()`, single reads that are safe while the session
    releases pixels on the test's thread and the recorder writes on its own. Returned arrays are
    shared: callers copy before drawing on them."""

    def __init__(self) -> None:
        self._local: dict[int, tuple[Any, np.ndarray]] = {}  # id(frame) -> (frame, pixels)

    def full(self, twins: list[Any]) -> np.ndarray:
        """Full-resolution BGR pixels of frames with identical PNG bytes (read-only by contract)."""
        if not twins:
            raise ValueError("no frame to take pixels from")
        for frame in twins:
            pixels = _decoded(frame)
            if pixels is not None:
                return pixels
        frame = twins[0]
        held = self._local.get(id(frame))
        if held is None or held[0] is not frame:
            held = (frame, decode(frame.png))
            self._local[id(frame)] = held
        return held[1]

    def scaled(self, twins: list[Any], divisor: int) -> np.ndarray | None:
        """A twin's cached `Frame.small(divisor)` (free once the oracle ran), else None: the
        caller resizes from `full`, which costs the same as resizing here."""
        if divisor <= 1:
            return None
        for frame in twins:
            small = getattr(frame, "decoded_small", None)
            pixels = small(divisor) if callable(small) else None
            if pixels is not None:
                return pixels  # type: ignore[no-any-return]
        return None

    def release(self) -> None:
        self._local.clear()


def _decoded(frame: Any) -> np.ndarray | None:
    decoded = getattr(frame, "decoded", None)
    return decoded() if callable(decoded) else None


class FrameStore:
    """Recent observations and the frame files of one test folder."""

    def __init__(self, folder: Path, frame_format: FrameFormat) -> None:
        self.folder = folder
        self.frame_format = frame_format
        # (Frame, password boxes, digest): pixels are read only through `pixels`, so holding a
        # frame here never forces a decode of one the session released
        self._observed: deque[tuple[Any, list[Box], str]] = deque(maxlen=OBSERVED_KEPT)
        self.pixels = FramePixels()
        self._files: dict[tuple[str, tuple[Box, ...]], str] = {}  # (PNG digest, fill) -> stored file
        self._stored: dict[str, str] = {}  # sha1 of the bytes -> the file holding them (crops and frames)

    def store_once(self, directory: str, data: bytes, suffix: str = ".png") -> tuple[str, int]:
        """Store `data` once per test folder under a content-addressed name (issue 44: the same crop
        bytes were saved under seven names, a step's before-crop being the previous step's crop):
        `<directory>/<sha1[:16]><suffix>`, or the file of this folder that already holds these very
        bytes (a crop, a frame). Returns (path relative to the folder, new bytes on disk: 0 when
        already stored)."""
        key = hashlib.sha1(data).hexdigest()
        known = self._stored.get(key)
        if known is not None and (self.folder / known).exists():
            return known, 0
        target = f"{directory}/{key[:16]}{suffix}"
        path = self.folder / target
        self._stored[key] = target
        if path.exists():
            return target, 0
        write_file(path, data)
        return target, len(data)

    def __len__(self) -> int:
        """Observations remembered (at most `OBSERVED_KEPT`)."""
        return len(self._observed)

    # -- observations ----------------------------------------------------------------------
    def remember(self, frame: Any, boxes: list[Box]) -> str:
        """Keep an observed frame with its password boxes; returns its PNG digest."""
        key = frame_digest(frame)
        self._observed.append((frame, boxes, key))
        return key

    def resolve(self, key: str, boxes: list[Box]) -> None:
        """Give every remembered frame with the PNG digest `key` these boxes: a screen remembered as
        unknown (it moved on unread, so filled whole) whose very pixels were later read has the boxes
        of the tree read then (the same pixels show the same fields)."""
        self._observed = deque(((frame, list(boxes) if seen == key else kept, seen)
                                for frame, kept, seen in self._observed), maxlen=self._observed.maxlen)

    def find(self, data: bytes) -> tuple[Any, str]:
        """The observed frame whose PNG `data` is (None if none), and the digest of `data`. The
        session puts `frame.png` itself, so identity usually answers without hashing 0.4 MB."""
        for frame, _, key in reversed(self._observed):
            if frame.png is data:
                return frame, key
        key = digest(data)
        for frame, _, seen in reversed(self._observed):
            if seen == key:
                return frame, key
        return None, key

    def twins(self, frame: Any, key: str) -> list[Any]:
        """`frame` and the recent observations with the same PNG digest, newest first."""
        return [frame, *(f for f, _, seen in reversed(self._observed) if seen == key and f is not frame)]

    def before_frame(self, index: int) -> tuple[Any, list[Box]] | None:
        """The observation just before step `index`'s first after-frame (its before-frame,
        fresh or reused): the session labels frames `step N after` when it takes them."""
        observed = list(self._observed)
        for position, (frame, _, _) in enumerate(observed):
            if getattr(frame, "source", "") == f"step {index} after":
                return observed[position - 1][:2] if position > 0 else None
        return None

    def boxes_of(self, frame: Any) -> list[Box] | None:
        """The boxes remembered with this very frame (the newest observation of it), or None."""
        boxes: list[Box]
        for seen, boxes, _ in reversed(self._observed):
            if seen is frame:
                return boxes
        return None

    def after_boxes(self, index: int) -> list[Box] | None:
        """The redaction boxes of the screens step `index` observed after its action (its after-
        frame, a stability probe, the after-refresh frame): a crop of that step is cut from one of
        them, so these and no other screen's boxes apply. None when no such screen is remembered."""
        prefix = f"step {index} "
        found: list[Box] | None = None
        for frame, boxes, _ in self._observed:
            source = getattr(frame, "source", "")
            if isinstance(source, str) and source.startswith(prefix) and ("after" in source or "probe" in source):
                found = [*(found or []), *boxes]
        return found

    # -- whole frames ----------------------------------------------------------------------
    def write(self, pending: Pending, screen_size: tuple[int, int] | None) -> tuple[str, int]:
        """Store a whole frame (redacted, rescaled, re-encoded) under a content-addressed name;
        returns (path relative to the folder, bytes written: 0 when already there)."""
        size = image_size(pending.data) if pending.boxes or pending.frame is not None else (0, 0)
        fill = _frame_fill(pending.boxes, size, screen_size)
        key = (pending.key or digest(pending.data), tuple(fill))
        known = self._files.get(key)
        if known is not None and (self.folder / known).exists():
            return known, 0
        data = self._encode(pending, size, fill)
        target, written = self.store_once("frames", data, self.frame_format.extension)
        self._files[key] = target
        return target, written

    def _encode(self, pending: Pending, size: tuple[int, int], fill: list[Box]) -> bytes:
        fmt, frame = self.frame_format, pending.frame
        if not fill and fmt.kind == "png" and fmt.scale == 1.0:
            return pending.data
        if frame is None:  # bytes no observation carried: decode them
            return encode_frame(fill_boxes(pending.data, fill), fmt)
        twins = self.twins(frame, pending.key or frame_digest(frame))
        divisor = frame_divisor(size, fmt)
        if not fill and divisor is not None:
            small = self.pixels.scaled(twins, divisor)
            if small is not None:
                return encode_pixels(small, fmt, prescaled=True)
        pixels = self.pixels.full(twins)
        if fill:
            pixels = pixels.copy()  # the session's pixels: the oracle must still see the password field
            fill_pixels(pixels, fill)
        return encode_pixels(pixels, fmt)

    def crop_pixels(self, pending: Pending) -> np.ndarray | None:
        """The pixels of a crop to store (read-only, shared): a `Crop`'s own (issue 44: never
        PNG-encoded and decoded again), a whole screenshot's from its observed frame, else the put
        bytes decoded; None for bytes that are no image a decoder knows."""
        if pending.crop is not None:
            return pending.crop.pixels  # type: ignore[no-any-return]
        if pending.frame is not None and pending.data is pending.frame.png:
            return self.pixels.full(self.twins(pending.frame, pending.key or frame_digest(pending.frame)))
        try:
            return decode(pending.data)
        except ValueError:
            return None

    # -- before-crops ----------------------------------------------------------------------
    def before_crops(self, index: int, targets: list[Box | None], hide: list[Box],
                     found: tuple[Any, list[Box]] | None = None) -> tuple[list[str], int]:
        """Cut each screen box from step `index`'s before-frame (`found`: the one remembered when
        the step was recorded, else looked up now), with `hide` and that screen's password boxes
        filled, stored once by content under crops/; "" for a box that cuts nothing (None). Returns
        the files and the new bytes written."""
        found = found if found is not None else self.before_frame(index)
        if found is None:
            return [], 0
        frame, secret_boxes = found
        try:
            pixels = self.pixels.full(self.twins(frame, frame_digest(frame)))
        except ValueError as exc:
            raise ValueError(f"before-frame of step {index} cannot be decoded for its crops: {exc}") from None
        height, width = pixels.shape[:2]
        out: list[str] = []
        total = 0
        for screen_box in targets:
            box = screen_box.clamp(width, height) if screen_box is not None else None
            if box is None or box.is_empty:
                out.append("")
                continue
            piece = pixels[box.top:box.bottom, box.left:box.right]
            fill = local_boxes([*hide, *secret_boxes], (box.width, box.height), origin=(box.left, box.top))
            if fill:
                piece = piece.copy()  # never draw on the session's pixels
                fill_pixels(piece, fill)
            stored, size = self.store_once(CROPS_DIR, encode_crop(piece), CROP_SUFFIX)
            out.append(stored)
            total += size
        return out, total


def _frame_fill(boxes: list[Box], size: tuple[int, int], screen_size: tuple[int, int] | None) -> list[Box]:
    """Boxes to fill in a whole frame, in its pixels: the screen's boxes when the frame is the
    screen's size (or the screen size is unknown), else all of it (it cannot be placed)."""
    if not boxes:
        return []
    if screen_size is not None and size != screen_size:
        return local_boxes([Box(0, 0, *size)], size)
    return local_boxes(boxes, size)
