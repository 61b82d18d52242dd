"""The files part of `ArtifactRecorder` (its `ArtifactSink`): bytes held until a step or anchor
names them, then redacted and written; whole frames go through `FrameStore` (content-addressed
under `frames/`), crops under `crops/`, bytes never named under `extra/` at finish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_guistate.core.artifact_names import CROPS_DIR, before_crop_name
from pytest_guistate.core.geometry import Box
from pytest_guistate.report.images import image_size
from pytest_guistate.report.placement import Pending, fill_pending, find_origin
from pytest_guistate.report.recorder_protocols import CanTrackScreens

__all__ = ["FilesMixin", "crop_path"]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "artifact"


def crop_path(name: str) -> str:
    """Where a crop named `name` is written: the name itself when it is a `crop_name` path (the
    session's and the healer's always are), else `crops/<name>` made safe."""
    if name.startswith(f"{CROPS_DIR}/") and _safe(name[len(CROPS_DIR) + 1:]) == name[len(CROPS_DIR) + 1:]:
        return name
    return f"{CROPS_DIR}/{_safe(name)}"


class FilesMixin(CanTrackScreens):
    """Pending bytes and the files they went to (set up by `ArtifactRecorder.__init__`)."""

    anchors: dict[str, Any] | None
    _pending: dict[str, Pending]
    _written: dict[str, str]  # artifact name -> relative path

    def put(self, name: str, data: bytes | Callable[[], bytes], media_type: str = "image/png", *,
            cut_from: Any = None) -> str:
        """Take bytes (or a callable producing them, run on the writer) to be written when a
        step or anchor names them; returns `name` at once. `cut_from`: the observed frame a crop
        was cut from (its screen's boxes are the ones to fill)."""
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data)
        elif not callable(data):
            raise TypeError(f"artifact {name!r} must be bytes or a callable producing them, got {type(data).__name__}")
        self._settle_deferred(resolve=True)  # password boxes of the screens it may show, known first
        self._submit(f"put({name})", self._put, name, data, media_type, cut_from)
        return name

    def _put(self, name: str, data: bytes | Callable[[], bytes], media_type: str, cut_from: Any = None) -> None:
        if callable(data):
            data = data()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"the encoder of artifact {name!r} returned {type(data).__name__}, not bytes")
            data = bytes(data)
        frame, key = self.frames.find(data)
        boxes = self._boxes_for(data, key, name, cut_from)
        self._pending[name] = Pending(data, media_type, [*self.redactor.regions, *boxes], frame, key)

    def _write_image(self, name: str, target: str | None, crop_boxes: list[Box], *, crop: bool) -> tuple[str, int]:
        if name in self._written:
            return self._written[name], 0
        pending = self._pending.pop(name, None)
        if pending is None:
            return "", 0  # named but never put (e.g. the session keeps it elsewhere)
        if not crop:  # content-addressed under frames/: reuse is free
            target, size = self.frames.write(pending, self.screen_size)
            self._written[name] = target
            return target, size
        data = self._redact(pending, crop_boxes)
        assert target is not None
        if (self.folder / target).exists():
            self._written[name] = target
            return target, 0
        stored, size = self.frames.store_once(target, data)  # the same bytes as an earlier crop: linked
        self._written[name] = stored
        return stored, size

    def _redact(self, pending: Pending, crop_boxes: list[Box]) -> bytes:
        if not pending.boxes:
            return pending.data
        width, height = image_size(pending.data)
        if self.screen_size is not None and (width, height) == self.screen_size:
            return fill_pending(pending)  # a whole frame: boxes are already in its coordinates
        origin = find_origin((width, height), crop_boxes)
        if origin is None:
            if self.screen_size is None and not crop_boxes:
                return fill_pending(pending)  # a whole frame of unknown size: screen coordinates
            # a crop we cannot place on the screen while secrets are on it: hide all of it
            return fill_pending(Pending(pending.data, pending.media_type, [Box(0, 0, width, height)]))
        return fill_pending(pending, origin)

    def _before_crops(self, index: int, crops: list[str], numbers: list[int], boxes: list[Box]) -> tuple[list[str], int]:
        """The same boxes cut from the before-frame, so a person sees what changed."""
        targets: list[tuple[str, Box]] = []
        for rel, number in zip(crops, numbers, strict=True):
            if 0 <= number < len(boxes):
                targets.append((before_crop_name(rel), boxes[number]))
            else:
                targets.append(("", Box(0, 0, 0, 0)))
        return self.frames.before_crops(index, targets, list(self.redactor.regions))

    def flush_extra(self) -> list[str]:
        """Write bytes no step or anchor named (e.g. a final frame) under `extra/` (drains first)."""
        self.drain()
        names = []
        for name in list(self._pending):
            rel, _ = self._write_image(name, f"extra/{_safe(name)}.png", [], crop=True)
            if rel:
                names.append(rel)
        if names and self.anchors is not None:  # anchors.json names the files, these included
            anchors = [{**a, "crops": self._paths(a.get("crops") or [])} for a in self.anchors.get("anchors") or []]
            self.anchors = {**self.anchors, "anchors": anchors}
        return names

    def _paths(self, names: list[str]) -> list[str]:
        """The files artifact names went to (a name never written stays as it is)."""
        return [self._written.get(name, name) for name in names]

