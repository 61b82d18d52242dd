"""Helpers of `ArtifactRecorder`: where a crop sits on the screen, frame roles, and the
`RecordingScreen` wrapper that lets the recorder see every observation (for redaction)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pytest_guistate.core.geometry import Box

__all__ = ["Pending", "RecordingScreen", "crop_boxes", "digest", "find_origin", "frame_role"]


@dataclass
class Pending:
    data: bytes
    media_type: str
    boxes: list[Box]  # redaction boxes of the screen current when the bytes arrived
    frame: Any = None  # the observed `Frame` these bytes are the PNG of (None: not a frame we saw)
    key: str = ""  # digest of `data` ("" when not computed)
    encode: Any = None  # bytes not produced yet (a callable put): run when its step's files are written
    source: Any = None  # the observed frame such a crop is cut from (what it holds in memory)
    crop: Any = None  # the `Crop` whose bound `encode` was put: its pixels are stored, never its PNG


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def crop_boxes(step: dict[str, Any]) -> list[Box]:
    """Screen boxes of this step's crops, in crop order (from the transition, else the regions)."""
    boxes: list[Box] = []
    transition = step.get("transition") or {}
    for crop in transition.get("crops") or []:
        box = crop.get("box") if isinstance(crop, dict) else None
        if isinstance(box, list) and len(box) == 4:
            boxes.append(Box(*map(int, box)))
    if boxes:
        return boxes
    for region in step.get("regions") or []:
        box = region.get("box") if isinstance(region, dict) else region
        if isinstance(box, list) and len(box) == 4:
            boxes.append(Box(*map(int, box)))
    return boxes


def find_origin(size: tuple[int, int], boxes: list[Box]) -> tuple[int, int] | None:
    for box in boxes:
        if (box.width, box.height) == size:
            return box.left, box.top
    return None


def frame_role(name: str, position: int, count: int) -> str:
    lowered = name.lower()
    for role in ("before", "after", "final"):
        if role in lowered:
            return role
    if count == 2:
        return ("before", "after")[position]
    return f"frame{position}"


class RecordingScreen:
    """Wraps the session's `Screen` so the recorder sees every observation (password boxes)
    before any of its frames or crops can reach `put`. Everything else passes through."""

    def __init__(self, screen: Any, recorder: Any) -> None:
        self._screen = screen
        self._recorder = recorder

    def observe(self) -> Any:
        observation = self._screen.observe()
        self._recorder.on_observation(observation)
        return observation

    def observe_poll(self) -> Any:
        """A settle poll (`TaskSession._observe_poll`) or a step's after-screen: at standard and full
        its tree is read only when something reads it (`ObservedScreens.observe`), not at once as
        every other screen's. The step loop reads an after-screen's next, once the oracle's pixel
        work has started (`StepLoop._pixels_ahead`)."""
        observation = self._screen.observe()
        self._recorder.on_observation(observation, poll=True)
        return observation

    def pull_to_refresh(self) -> bool:
        return bool(self._screen.pull_to_refresh())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._screen, name)
