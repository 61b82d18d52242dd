"""Helpers shared by the simulated-phone tests (a fake clock, tapping by key, decoding frames)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.model import SimNode
from pytest_guistate.devices.sim.phone import ManualClock, Phone


def make_phone(package: str | None = "com.guistate.feed", **kwargs: Any) -> tuple[Phone, ManualClock]:
    clock = ManualClock()
    kwargs.setdefault("wall_start", 1_700_000_000.0)
    return Phone(app_package=package, clock=clock, **kwargs), clock


def node(phone: Phone, key: str) -> SimNode:
    found = phone.find_key(key)
    assert found is not None, f"{key} not on screen"
    return found


def tap_key(phone: Phone, key: str) -> None:
    phone.tap(*node(phone, key).bounds.center)


def frame(phone: Phone) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(phone.screenshot_png(), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == (phone.height, phone.width, 3)
    return image


def rgb_at(image: np.ndarray, x: int, y: int) -> tuple[int, int, int]:
    b, g, r = (int(v) for v in image[y, x])
    return r, g, b


def diff_box(a: np.ndarray, b: np.ndarray) -> Box | None:
    """Bounding box of all pixels that differ between two frames (None if identical)."""
    mask = np.any(a != b, axis=2)
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)


def changed_outside(a: np.ndarray, b: np.ndarray, allowed: list[Box]) -> int:
    """How many differing pixels lie outside every `allowed` box."""
    mask = np.any(a != b, axis=2)
    for box in allowed:
        mask[max(0, box.top):box.bottom, max(0, box.left):box.right] = False
    return int(mask.sum())


def truth_boxes(truth: dict[str, Any], margin: int = 0) -> list[Box]:
    return [Box(*r).expand(margin) for r in truth["regions"]] + [Box(*r) for r in truth["noise"]]
