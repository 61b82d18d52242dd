"""Image helpers for reports: sizes without decoding, frame compression, thumbnails, data URIs.

Frames are what make the full tier heavy: a 1080x2400 sim screen is ~60-400 KB as PNG. The
report keeps them as JPEG q80 at half resolution by default (text stays readable at 540 px
wide, the file is ~5-10x smaller); crops stay lossless because they are the evidence: lossless
WebP (issue 44), the same pixels as PNG in a third of the bytes on the sim's screens.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

__all__ = [
    "CROP_SUFFIX", "FrameFormat", "as_png", "data_uri", "decode", "encode_crop", "encode_frame", "encode_pixels",
    "frame_divisor", "image_size", "media_type_of", "scaled_size", "thumbnail",
]


CROP_SUFFIX = ".webp"
# lossless; method 1: measured on 1080x2400 sim crops 59 KB in ~40 ms against 148 KB in ~50 ms for
# the PNG the crops were (OpenCV level 6); on a 936x460 dialog crop 7.5 against 19 KB, 5 against 8 ms
_CROP_WEBP = {"lossless": True, "quality": 0, "method": 1}


@dataclass(frozen=True)
class FrameFormat:
    """How full-tier frames are stored: `kind` png|jpeg, `scale` 0<s<=1, `quality` for JPEG."""

    kind: str = "jpeg"
    scale: float = 0.5
    quality: int = 80

    def __post_init__(self) -> None:
        if self.kind not in ("png", "jpeg"):
            raise ValueError(f"frame format must be 'png' or 'jpeg', got {self.kind!r}")
        if not 0.0 < self.scale <= 1.0:
            raise ValueError(f"frame scale must be in (0, 1], got {self.scale}")
        if not 1 <= self.quality <= 100:
            raise ValueError(f"JPEG quality must be in [1, 100], got {self.quality}")

    @property
    def extension(self) -> str:
        return ".jpg" if self.kind == "jpeg" else ".png"


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the header only; ValueError for bytes that are no image."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except Image.DecompressionBombError as exc:  # Pillow refuses > 2x MAX_IMAGE_PIXELS at open (issue 22)
        raise ValueError(f"{len(data)} bytes are an image too large to read: {exc}") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"{len(data)} bytes are not an image Pillow can read ({exc})") from None


def media_type_of(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("image bytes are neither PNG, JPEG nor WebP")


def decode(data: bytes) -> np.ndarray:
    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if pixels is None:
        raise ValueError(f"{len(data)} bytes are not an image OpenCV can decode")
    return pixels


def scaled_size(size: tuple[int, int], fmt: FrameFormat) -> tuple[int, int]:
    """(width, height) a `size` frame is stored at."""
    width, height = size
    return max(1, round(width * fmt.scale)), max(1, round(height * fmt.scale))


def frame_divisor(size: tuple[int, int], fmt: FrameFormat) -> int | None:
    """The divisor `d` for which `Frame.small(d)` (INTER_AREA to `size // d`) is pixel for pixel
    what `encode_frame` would resize to, so the oracle's cached half-scale copy can be stored
    as is; None when no such divisor exists (scale 1, or sizes that round differently)."""
    divisor = round(1 / fmt.scale)
    if divisor <= 1:
        return None
    width, height = size
    if scaled_size(size, fmt) != (max(1, width // divisor), max(1, height // divisor)):
        return None
    return divisor


def encode_pixels(pixels: np.ndarray, fmt: FrameFormat, *, prescaled: bool = False) -> bytes:
    """Encode decoded BGR pixels as a stored frame; `prescaled` pixels are already at the
    stored size (e.g. `Frame.small(frame_divisor(...))`) and are not resized again."""
    if not prescaled and fmt.scale != 1.0:
        height, width = pixels.shape[:2]
        pixels = cv2.resize(pixels, scaled_size((width, height), fmt), interpolation=cv2.INTER_AREA)
    if fmt.kind == "jpeg":  # progressive: the same decoded pixels in ~14% fewer bytes (issue 38), ~20 ms more
        ok, encoded = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, fmt.quality, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    else:
        ok, encoded = cv2.imencode(".png", pixels)
    if not ok:
        raise ValueError(f"OpenCV could not encode a frame as {fmt.kind}")
    return encoded.tobytes()


def encode_frame(data: bytes, fmt: FrameFormat) -> bytes:
    """Re-encode a (redacted) frame for storage; PNG at scale 1 is kept byte for byte."""
    if fmt.kind == "png" and fmt.scale == 1.0:
        return data
    return encode_pixels(decode(data), fmt)


def thumbnail(data: bytes, max_side: int = 160) -> bytes:
    """A small JPEG for the timeline (the inline report must stay light)."""
    pixels = decode(data)
    height, width = pixels.shape[:2]
    factor = min(1.0, max_side / max(width, height))
    if factor < 1.0:
        pixels = cv2.resize(pixels, (max(1, round(width * factor)), max(1, round(height * factor))),
                            interpolation=cv2.INTER_AREA)
    ok, encoded = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, 75])
    if not ok:
        raise ValueError("OpenCV could not encode a thumbnail")
    return encoded.tobytes()


def data_uri(data: bytes) -> str:
    return f"data:{media_type_of(data)};base64,{base64.b64encode(data).decode('ascii')}"


def encode_crop(pixels: np.ndarray) -> bytes:
    """BGR pixels as a stored crop: lossless WebP, decoded back pixel for pixel (issue 44)."""
    out = io.BytesIO()
    Image.fromarray(cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB)).save(out, "WEBP", **_CROP_WEBP)
    return out.getvalue()


def as_png(data: bytes) -> bytes:
    """The same image as PNG, for a copy that must be PNG (an Allure attachment); PNG stays as is."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return data
    ok, encoded = cv2.imencode(".png", decode(data))
    if not ok:
        raise ValueError("OpenCV could not encode an image as PNG")
    return encoded.tobytes()
