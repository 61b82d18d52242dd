"""Axis-aligned boxes in screen pixels: the one geometry type every layer shares.

The oracle, the UI tree, the simulated phone and the reports all speak of rectangles on the
screen; keeping one immutable `Box` means a region found by the oracle can be snapped to a UI
node, drawn in a report and compared with the sim's ground truth without conversions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Box"]

_BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle `[left, top) x [right, bottom)` in pixels (right/bottom exclusive)."""

    left: int
    top: int
    right: int
    bottom: int

    @classmethod
    def from_xywh(cls, x: int, y: int, width: int, height: int) -> Box:
        return cls(int(x), int(y), int(x) + int(width), int(y) + int(height))

    @classmethod
    def from_bounds(cls, bounds: str) -> Box:
        """Parse UiAutomator2's `bounds="[l,t][r,b]"` attribute."""
        match = _BOUNDS_RE.match(bounds.strip())
        if match is None:
            raise ValueError(f"malformed bounds attribute {bounds!r}: expected '[l,t][r,b]'")
        left, top, right, bottom = (int(v) for v in match.groups())
        return cls(left, top, right, bottom)

    @classmethod
    def union_all(cls, boxes: Iterable[Box]) -> Box | None:
        result: Box | None = None
        for box in boxes:
            result = box if result is None else result.union(box)
        return result

    @property
    def width(self) -> int:
        return max(0, self.right - self.left)

    @property
    def height(self) -> int:
        return max(0, self.bottom - self.top)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    @property
    def is_empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top  # width or height 0, without the properties

    def to_bounds(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"

    def to_xywh(self) -> tuple[int, int, int, int]:
        return self.left, self.top, self.width, self.height

    def as_list(self) -> list[int]:
        """JSON form: `[left, top, right, bottom]`."""
        return [self.left, self.top, self.right, self.bottom]

    def contains(self, other: Box) -> bool:
        return (
            self.left <= other.left
            and self.top <= other.top
            and self.right >= other.right
            and self.bottom >= other.bottom
        )

    def contains_point(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def intersection(self, other: Box) -> Box:
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        if right <= left or bottom <= top:
            return Box(left, top, left, top)
        return Box(left, top, right, bottom)

    def intersects(self, other: Box) -> bool:
        # `not self.intersection(other).is_empty` without building the box (called ~100k times a compare's snapping)
        return (min(self.right, other.right) > max(self.left, other.left)
                and min(self.bottom, other.bottom) > max(self.top, other.top))

    def union(self, other: Box) -> Box:
        return Box(
            min(self.left, other.left),
            min(self.top, other.top),
            max(self.right, other.right),
            max(self.bottom, other.bottom),
        )

    def iou(self, other: Box) -> float:
        inter = self.intersection(other).area
        if inter == 0:
            return 0.0
        return inter / float(self.area + other.area - inter)

    def clamp(self, width: int, height: int) -> Box:
        """Clip to a `width x height` screen."""
        return Box(
            min(max(self.left, 0), width),
            min(max(self.top, 0), height),
            min(max(self.right, 0), width),
            min(max(self.bottom, 0), height),
        )

    def expand(self, margin: int) -> Box:
        return Box(self.left - margin, self.top - margin, self.right + margin, self.bottom + margin)

    def scale(self, factor: float) -> Box:
        """Map between image scales (e.g. a box found at 1/2 scale back to full scale)."""
        return Box(
            round(self.left * factor),
            round(self.top * factor),
            round(self.right * factor),
            round(self.bottom * factor),
        )
