"""`ArtifactRecorder`: the session listener (and artifact sink) that journals one test to disk.

The step loop hands bytes to an `ArtifactSink` (`put(name, data, media_type)`) and records to
its listeners (`on_step`, `on_anchor`, `on_state`, `on_finish`). The recorder is both: bytes
wait in memory until the step that names them is recorded (then the crop's place on the screen
is known, so redaction can fill the password boxes that overlap it), are redacted, written, and
the step's journal line goes out with the file names. Bytes never named by a step or anchor are
written at finish under `extra/` (e.g. the final frame of a failed light-tier test).
Whole frames and before-crops go through `FrameStore`, which takes pixels from the observed
`Frame` instead of decoding its PNG again (issue 6).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from pytest_guistate.core.geometry import Box
from pytest_guistate.report.frame_store import FrameStore
from pytest_guistate.report.images import FrameFormat, image_size
from pytest_guistate.report.journal import JOURNAL_NAME, JOURNAL_SCHEMA, JournalWriter
from pytest_guistate.report.placement import (
    Pending,
    RecordingScreen,
    crop_boxes,
    fill_pending,
    find_origin,
    frame_role,
)
from pytest_guistate.report.redact import Redactor

__all__ = ["ArtifactRecorder", "Pending", "RecordingScreen"]

DEFAULT_FRAME_FORMAT = FrameFormat()
_CROP_NO = re.compile(r"crop(\d+)")


def _as_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        if isinstance(result, dict):
            return result
    raise TypeError(f"expected an object with to_dict() or a dict, got {type(value).__name__}")


class ArtifactRecorder:
    """Journals one test into `folder` (created by `create_test_folder`)."""

    def __init__(
        self,
        folder: Path,
        *,
        nodeid: str,
        tier: str,
        redactor: Redactor | None = None,
        frame_format: FrameFormat = DEFAULT_FRAME_FORMAT,
        worker: str | None = None,
        screen_size: tuple[int, int] | None = None,
        extra_meta: dict[str, Any] | None = None,
        before_crops: bool | None = None,
    ) -> None:
        self.folder = folder
        self.tier = str(getattr(tier, "value", tier))
        self.redactor = redactor or Redactor()
        if before_crops is None:  # issue 4: before and after crops in the standard and full tiers
            before_crops = self.tier in ("standard", "full")
        self.frame_format = frame_format
        self.screen_size = screen_size
        self._pending: dict[str, Pending] = {}
        self._screen_boxes: dict[str, list[Box]] = {}  # frame digest -> password boxes (insertion = time)
        self.frames = FrameStore(folder, frame_format)  # recent observations and the frame files
        self.before_crops = before_crops
        self.step_files: dict[int, dict[str, Any]] = {}  # step index -> files written (for Allure)
        self._written: dict[str, str] = {}  # artifact name -> relative path
        self._links_seen = 0
        self._graph: Any = None
        self._last_state = ""
        self._last_goal = ""
        self.bytes_by_step: dict[int, int] = {}
        self.steps: list[dict[str, Any]] = []  # scrubbed step records, for triage at finish
        self.anchor_list: list[dict[str, Any]] = []
        self.conflicts: list[dict[str, Any]] = []  # every state-vs-screen conflict seen (focus resets per step)
        self.state: dict[str, Any] | None = None
        self.anchors: dict[str, Any] | None = None
        self.journal = JournalWriter(folder / JOURNAL_NAME)
        self.journal.write("meta", {
            "schema": JOURNAL_SCHEMA, "nodeid": self.redactor.text(nodeid), "tier": self.tier,
            "worker": worker, "folder": folder.name, "started": round(time.time(), 3),
            **(extra_meta or {}),
        })

    # -- ArtifactSink ------------------------------------------------------------------------
    def put(self, name: str, data: bytes, media_type: str = "image/png") -> str:
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"artifact {name!r} must be bytes, got {type(data).__name__}")
        data = bytes(data)
        frame, key = self.frames.find(data)
        boxes = self._screen_boxes.get(key)
        if boxes is None:  # not a frame we saw: a crop of the latest screens (after-frame, probe)
            boxes = [b for recent in list(self._screen_boxes.values())[-3:] for b in recent]
        self._pending[name] = Pending(data, media_type, [*self.redactor.regions, *boxes], frame, key)
        return name

    # -- SessionListener ---------------------------------------------------------------------
    def on_observation(self, observation: Any) -> None:
        """Remember the password boxes of an observed screen, keyed by its PNG bytes.

        The session does not call this itself: wrap its screen in `RecordingScreen` so every
        `observe()` passes through here before any frame of that screen can be put."""
        tree = getattr(observation, "tree", None)
        boxes = list(tree.password_boxes()) if tree is not None else []
        frame = getattr(observation, "frame", None)
        if frame is None:
            return
        key = self.frames.remember(frame, boxes)
        self._screen_boxes.pop(key, None)
        self._screen_boxes[key] = boxes
        while len(self._screen_boxes) > 64:
            self._screen_boxes.pop(next(iter(self._screen_boxes)))
        if self.screen_size is None:
            self.screen_size = image_size(frame.png)

    def bind(self, session: Any) -> None:
        """Optional: let the recorder stream links of the session's anchor graph per step."""
        self._graph = getattr(session, "anchors", None) or getattr(session, "graph", None)

    def on_step(self, record: Any) -> None:
        try:
            self._record_step(_as_dict(record))
        finally:
            self.frames.pixels.release()  # a frame the session released is decoded for one step at most

    def _record_step(self, step: dict[str, Any]) -> None:
        index = int(step.get("index", len(self.bytes_by_step)))
        placed = crop_boxes(step)
        files: dict[str, Any] = {"crops": [], "frames": {}}
        written = 0
        for position, name in enumerate(step.get("crops") or []):
            match = _CROP_NO.search(name)
            number = int(match.group(1)) if match else position
            place = [placed[number]] if match and number < len(placed) else placed
            rel, size = self._write_image(name, f"crops/step-{index:04d}-r{number}.png", place, crop=True)
            if rel:
                files["crops"].append(rel)
                written += size
        if self.before_crops and files["crops"]:
            files["crops_before"], size = self._before_crops(index, files["crops"], placed, step)
            written += size
        frame_names = list(step.get("frames") or [])
        for position, name in enumerate(frame_names):
            role = frame_role(name, position, len(frame_names))
            rel, size = self._write_image(name, None, [], crop=False)
            if rel:
                files["frames"][role] = rel
                written += size
        files["names"] = {name: rel for name, rel in self._written.items()
                          if name in (step.get("crops") or []) or name in frame_names}
        self.bytes_by_step[index] = written
        self.step_files[index] = files
        self._stream_links()
        if self.screen_size is not None:
            files["screen"] = list(self.screen_size)
        clean = self.redactor.scrub(step)
        self.steps.append(clean)
        self.journal.write("step", {"record": clean, "files": files, "bytes": written})

    def on_anchor(self, anchor: Any) -> None:
        # the step loop adds a step's anchors before the step is recorded: its crops are still
        # pending here and are written (placed and redacted) with the step; the report maps
        # an anchor's crop names to files through the step events' `names`
        data = _as_dict(anchor)
        files = [self._written[name] for name in data.get("crops") or [] if name in self._written]
        clean = self.redactor.scrub(data)
        self.anchor_list.append(clean)
        self.journal.write("anchor", {"anchor": clean, "files": files})

    def on_state(self, state: Any) -> None:
        data = self.redactor.scrub(_as_dict(state))
        summary = data.get("summary") or {}
        tracker = data.get("tracker") or {}
        goal = {"goal": summary.get("goal", ""), "plan": tracker.get("decomposition", [])}
        goal_text = json.dumps(goal, sort_keys=True)
        if goal_text != self._last_goal:
            self._last_goal = goal_text
            self.journal.write("goal", goal)
        text = json.dumps(data, sort_keys=True, default=repr)
        if text != self._last_state:
            self._last_state = text
            self.journal.write("state", {"step": data.get("step"), "state": data})
        for conflict in (data.get("focus") or {}).get("conflicts") or []:
            if conflict not in self.conflicts:
                self.conflicts.append(conflict)
        self.state = data

    def on_finish(self, session: Any) -> None:
        """Take the final state and anchor graph from the session (names per core/session.py)."""
        state = getattr(session, "state", None)
        if state is not None:
            self.state = self.redactor.scrub(_as_dict(state))
        graph = self._graph or getattr(session, "anchors", None) or getattr(session, "graph", None)
        if graph is not None:
            self.anchors = self.redactor.scrub(_as_dict(graph))

    # -- files -------------------------------------------------------------------------------
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
        path = self.folder / target
        if path.exists():
            self._written[name] = target
            return target, 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self._written[name] = target
        return target, len(data)

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

    def _before_crops(self, index: int, crops: list[str], boxes: list[Box], step: dict[str, Any]) -> tuple[list[str], int]:
        """The same boxes cut from the before-frame, so a person sees what changed."""
        targets: list[tuple[str, Box]] = []
        for rel in crops:
            match = _CROP_NO.search(rel.rsplit("/", 1)[-1].replace("-r", "crop"))
            number = int(match.group(1)) if match else -1
            if 0 <= number < len(boxes):
                targets.append((rel.replace(".png", "-before.png"), boxes[number]))
            else:
                targets.append(("", Box(0, 0, 0, 0)))
        return self.frames.before_crops(index, targets, list(self.redactor.regions))

    def flush_extra(self) -> list[str]:
        """Write bytes no step or anchor named (e.g. a final frame) under `extra/`."""
        names = []
        for name in list(self._pending):
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "artifact"
            rel, _ = self._write_image(name, f"extra/{safe}.png", [], crop=True)
            if rel:
                names.append(rel)
        return names

    def _stream_links(self) -> None:
        if self._graph is None:
            return
        links = list(getattr(self._graph, "links", []))
        for link in links[self._links_seen:]:
            self.journal.write("link", {"link": _as_dict(link)})
        self._links_seen = len(links)
