"""What the visual oracle is tuned by and what it returns (AGMem §3.2).

Kept apart from the pixel work so the step loop, reports and memory can import the result types
without pulling in the algorithm. `Crop` encodes its PNG lazily: encoding a large crop costs more
than the whole diff, and a light tier may never look at it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box

__all__ = ["Crop", "OracleConfig", "PixelSource", "Region", "Transient", "Transition", "Verdict"]

# zlib level 6 for the PNGs that outlive a run (crops): measured on a 1080x2168 sim crop, 134 KB in
# 57 ms against OpenCV's default 271 KB in 31 ms (issue 23: report sizes)
CROP_PNG_PARAMS = [cv2.IMWRITE_PNG_COMPRESSION, 6]

Verdict = Literal["changed", "no_change", "uncertain"]


@dataclass(frozen=True)
class OracleConfig:
    """Tuning of the oracle. Pixel sizes are full-scale screen pixels unless named otherwise.

    Defaults were chosen for lossless phone screenshots (PNG): noise there is not sensor noise but
    small real changes, so the thresholds separate "state changed" from transient feedback such as
    a pressed-state ripple (#F5F5F5 on white, 10 grey levels) rather than from compression noise.
    """

    scale_divisor: int = 2  # work at 1/2 scale: boxes stay within ~2 px of full scale (MEASURED.md)
    loose_threshold: int = 10  # on the background-subtracted difference: gives a region its extent
    strict_threshold: int = 24  # on the raw difference: a region must contain such pixels to count
    min_region_area: int = 16  # px^2 of the raw box; a checkbox tick (~20x16) or a 4x50 cursor pass
    ignore_status_bar: bool = True
    crop_margin: int = 8
    max_crops: int = 4
    full_screen_fallback_crop: bool = True  # "no change at all -> the whole screen" (AGMem §3.2)
    background_kernel: int = 64  # box-filter size of the local background of the difference
    background_weight: float = 0.5  # how much of that background is subtracted (1.0 would erase fills)
    join_distance: int = 12  # morphological close: changes closer than this become one region
    merge_gap: int = 4  # boxes closer than this after contouring are merged
    snap_tolerance: int = 3  # a raw box may poke this far out of the container it snaps to
    max_container_fraction: float = 0.9  # containers covering more of the screen say nothing
    # a box snaps to a container only while the container is about the size of the change (a row
    # for a changed row): at most this many times the changed box's area; else the raw box grown
    # by `raw_margin` is the region (measured on real apps, docs/oracle.md)
    snap_growth: float = 4.0
    raw_margin: int = 12
    # a row (a list item, a toolbar, a switch's line) keeps a change whatever its size: a container
    # no taller than this share of the screen's long side
    row_max_fraction: float = 0.15
    cursor_max_width: int = 8  # a text cursor is a thin vertical bar inside a focused field
    unstable_margin: int = 4  # grow probe regions so a spinner's next frame stays inside
    uncertain_fraction: float = 0.2  # strict pixels outside unstable regions, relative, still "uncertain"
    max_unstable_fraction: float = 0.25  # bigger unstable boxes are not trusted to hide changes

    def __post_init__(self) -> None:
        if self.scale_divisor < 1:
            raise ValueError(f"scale_divisor must be >= 1, got {self.scale_divisor}")
        if not 0 <= self.loose_threshold <= self.strict_threshold <= 255:
            raise ValueError(
                "thresholds must satisfy 0 <= loose_threshold <= strict_threshold <= 255, got "
                f"loose={self.loose_threshold} strict={self.strict_threshold}"
            )
        if not 0.0 <= self.background_weight <= 1.0:
            raise ValueError(f"background_weight must be in [0, 1], got {self.background_weight}")
        if self.max_crops < 0 or self.crop_margin < 0 or self.min_region_area < 0:
            raise ValueError("max_crops, crop_margin and min_region_area must be >= 0")
        if self.snap_growth < 1.0 or self.raw_margin < 0:
            raise ValueError(f"snap_growth must be >= 1 and raw_margin >= 0, got {self.snap_growth}, {self.raw_margin}")
        for name in ("uncertain_fraction", "max_unstable_fraction", "max_container_fraction", "row_max_fraction"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")


@dataclass
class Region:
    """One changed area of the screen."""

    raw: Box  # changed box at full scale
    box: Box  # after snapping to the smallest enclosing container (== raw if none fits)
    container: str | None  # label/class of the container snapped to, for reports
    changed_fraction: float  # fraction of `raw` whose pixels changed strictly
    # The UI element the change is in: the topmost tree node enclosing `raw` -- a leaf (a TextView
    # whose text changed, a ProgressBar) or a container at most 4x bigger -- else `raw`; None without a tree.
    # Comparable with node-level truth, where `raw` is pixel-level and `box` is the container.
    element: Box | None = None
    # "change": a changed item (the default); the screen-level regions that follow the items
    # (docs/oracle.md): "scrim" (the screen dimmed behind a dialog that came or went: no crop of
    # its own), "screen" (a new window or activity: the whole screen), "repaint" (most of one
    # screen redrawn, a theme switch: the repainted area)
    kind: str = "change"

    def to_dict(self) -> dict[str, object]:
        return {
            "raw": self.raw.as_list(),
            "box": self.box.as_list(),
            "container": self.container,
            "changed_fraction": round(self.changed_fraction, 4),
            "element": self.element.as_list() if self.element is not None else None,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Transient:
    """A change set aside as the platform's own drawing (core/oracle_transient.py), not the app's."""

    kind: str  # "scrollbar" | "cursor" | "ripple" | "overscroll" (core/oracle_transient.py)
    box: Box
    where: str = ""  # the node it was drawn on (a list's id), for reports

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "box": self.box.as_list(), "where": self.where}


class PixelSource(Protocol):
    """What a crop is cut from: the after `Frame` (its PNG bytes, and its pixels while decoded)."""

    png: bytes
    released: bool  # its pixels were dropped by the session: decode for yourself, keep nothing on it

    @property
    def bgr(self) -> np.ndarray: ...

    def decoded(self) -> np.ndarray | None: ...


class Crop:
    """A region of the AFTER frame, cut and PNG-encoded on first use (`pixels`, `png`, `encode()`).

    Cut lazily from the frame: a crop of a dialog's dimmed screen is a copy of most of a 1080x2400
    frame (~6 ms, more than the rest of the comparison), and a light tier that passes never looks
    at it. Frames are immutable (their pixels are read-only by contract), so cutting later gives
    the same pixels; a frame the session released is decoded here, never through `Frame.bgr`
    (that would keep pixels alive outside the session's frame window).
    A report writer may encode it on its own thread while the step loop reads it: the lock makes
    the encode happen once and `pixels` never sees a half-done swap."""

    __slots__ = ("_lock", "_pixels", "_png", "_source", "box", "region_index")

    def __init__(
        self,
        box: Box,
        png: bytes | None = None,
        region_index: int = -1,
        *,
        pixels: np.ndarray | None = None,
        source: PixelSource | None = None,
    ) -> None:
        if png is None and pixels is None and source is None:
            raise ValueError("a Crop needs PNG bytes, pixels or a frame to cut them from")
        self.box = box
        self.region_index = region_index  # -1: the full-screen fallback, not tied to a region
        self._png = png
        self._pixels = pixels
        self._source = source if png is None and pixels is None else None
        self._lock = threading.Lock()

    @property
    def png(self) -> bytes:
        return self.encode()

    def encode(self) -> bytes:
        """The PNG bytes (encoded once; the pixels and the frame are dropped then: crops are what
        outlives a run). A bound `crop.encode` is what the step loop hands an artifact sink to
        encode later."""
        with self._lock:
            if self._png is None:
                pixels = self._pixels if self._pixels is not None else self._cut(self._source)
                ok, encoded = cv2.imencode(".png", pixels, CROP_PNG_PARAMS)
                if not ok:
                    raise ValueError(f"OpenCV could not encode the crop {self.box.as_list()} as PNG")
                self._png = encoded.tobytes()
                self._pixels = None
                self._source = None
            return self._png

    @property
    def pixels(self) -> np.ndarray:
        """BGR pixels of the crop (read-only: they may be a view of the frame's)."""
        pixels = self._pixels  # one read: an encode on another thread may drop it
        if pixels is not None:
            return pixels
        source = self._source
        if source is not None:
            return self._cut(source)
        image = cv2.imdecode(np.frombuffer(self.png, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"crop {self.box.as_list()} holds bytes OpenCV cannot decode")
        return image

    def _cut(self, source: PixelSource | None) -> np.ndarray:
        assert source is not None, "a crop without bytes or pixels has a source"
        frame = source.decoded()
        if frame is None and not source.released:
            frame = source.bgr  # still in the session's frame window: decoded once for all its crops
        elif frame is None:
            frame = cv2.imdecode(np.frombuffer(source.png, np.uint8), cv2.IMREAD_COLOR)
            if frame is None:
                raise ValueError(f"crop {self.box.as_list()}: its frame holds bytes OpenCV cannot decode")
        box = self.box
        return frame[box.top:box.bottom, box.left:box.right]

    def to_dict(self) -> dict[str, object]:
        return {"box": self.box.as_list(), "region_index": self.region_index}

    def __repr__(self) -> str:
        state = "encoded" if self._png is not None else "pending"
        return f"Crop(box={self.box.as_list()}, region_index={self.region_index}, png={state})"


@dataclass
class Transition:
    """The oracle's judgement of one before/after pair."""

    verdict: Verdict
    regions: list[Region]
    crops: list[Crop]
    ignored: list[Box]  # ignore regions applied (status bar, user/hook regions)
    unstable: list[Box]  # regions that flicker on their own (cursor, spinner, animation)
    identical_bytes: bool  # PNG bytes equal -> nothing decoded
    diff_ratio: float  # strictly changed pixels / screen pixels outside the ignore regions
    elapsed_ms: float
    notes: list[str] = field(default_factory=list)  # why the verdict is what it is, for reports
    transients: list[Transient] = field(default_factory=list)  # changes set aside as known transient shapes

    @property
    def changed(self) -> bool:
        return self.verdict == "changed"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe summary without PNG bytes (boxes as `[l, t, r, b]`)."""
        return {
            "verdict": self.verdict,
            "changed": self.changed,
            "regions": [region.to_dict() for region in self.regions],
            "crops": [crop.to_dict() for crop in self.crops],
            "ignored": [box.as_list() for box in self.ignored],
            "unstable": [box.as_list() for box in self.unstable],
            "identical_bytes": self.identical_bytes,
            "diff_ratio": round(self.diff_ratio, 6),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "notes": list(self.notes),
            "transients": [t.to_dict() for t in self.transients],
        }
