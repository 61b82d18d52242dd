"""`ArtifactRecorder`: the session listener (and artifact sink) that journals one test to disk.

The step loop hands bytes to an `ArtifactSink` (`put(name, data, media_type)`) and records to
its listeners (`on_step`, `on_anchor`, `on_state`, `on_finish`). The recorder is both: bytes
wait in memory until the step that names them is recorded (then the crop's place on the screen
is known, so redaction can fill the password boxes that overlap it), are redacted, written, and
the step's journal line goes out with the file names. Bytes never named by a step or anchor are
written at finish under `extra/` (e.g. the final frame of a failed light-tier test).
Whole frames and before-crops go through `FrameStore`, which takes pixels from the observed
`Frame` instead of decoding its PNG again (issue 6).

With `background=True` (what the plugin uses) the listener methods only take a snapshot of what
they are given (dicts, PNG bytes or an encoder) and a `SerialWriter` thread does the encoding,
redaction and writing in event order, off the step loop; `drain()` waits for it (the finish
does), and a job that failed is reported as a `GuistateWarning` then, as a synchronous failure
would have been. Readers of `steps`, `state`, `step_files`... drain first or accept lag.
"""

from __future__ import annotations

import json
import re
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import TreeExpired
from pytest_guistate.report.background import SerialWriter
from pytest_guistate.report.frame_store import FrameStore
from pytest_guistate.report.images import FrameFormat, image_size
from pytest_guistate.report.journal import JOURNAL_NAME, JOURNAL_SCHEMA, JournalWriter
from pytest_guistate.report.placement import (
    Pending,
    RecordingScreen,
    crop_boxes,
    digest,
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
        background: bool = False,
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
        self._last_observed: tuple[bytes, list[Box]] | None = None  # PNG and password boxes of the last screen
        self.defer_redaction = self.tier in ("light", "off")  # no page source per step for redaction (issue 12)
        self._deferred: list[Any] = []  # observations whose tree is not read yet (light)
        self._unknown: dict[str, None] = {}  # digests (oldest first) of screens that moved on before their tree was read
        self._writer = SerialWriter(inline=not background)
        self.journal.write("meta", {
            "schema": JOURNAL_SCHEMA, "nodeid": self.redactor.text(nodeid), "tier": self.tier,
            "worker": worker, "folder": folder.name, "started": round(time.time(), 3),
            **(extra_meta or {}),
        })

    # -- the writer ----------------------------------------------------------------------------
    @property
    def background(self) -> bool:
        return not self._writer.inline

    def drain(self) -> None:
        """Wait until everything handed to the recorder is written; warn about what failed."""
        self._warn(self._writer.drain())

    def close_writer(self) -> None:
        """Drain and stop the writer thread (the finish calls this once the journal is closed)."""
        self._warn(self._writer.close())

    def write_event(self, kind: str, data: dict[str, Any]) -> None:
        """A journal line of the caller's own (e.g. the LLM report), in order with the steps."""
        self._submit(f"write_event({kind})", self.journal.write, kind, data)

    def _submit(self, what: str, fn: Callable[..., Any], *args: Any, step: bool = False) -> None:
        self._warn(self._writer.take_errors())  # what failed since the last event, reported now
        self._writer.submit(what, fn, *args, step=step)

    def _warn(self, errors: list[tuple[str, BaseException]]) -> None:
        for what, exc in errors:
            warnings.warn(GuistateWarning(
                f"guistate listener {type(self).__name__}.{what} raised {type(exc).__name__}: {exc}; "
                "its report will miss this event"), stacklevel=3)

    # -- ArtifactSink ------------------------------------------------------------------------
    def put(self, name: str, data: bytes | Callable[[], bytes], media_type: str = "image/png") -> str:
        """Take bytes (or a callable producing them, run on the writer) to be written when a
        step or anchor names them; returns `name` at once."""
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data)
        elif not callable(data):
            raise TypeError(f"artifact {name!r} must be bytes or a callable producing them, got {type(data).__name__}")
        self._settle_deferred(resolve=True)  # password boxes of the screens it may show, known first
        self._submit(f"put({name})", self._put, name, data, media_type)
        return name

    def _put(self, name: str, data: bytes | Callable[[], bytes], media_type: str) -> None:
        if callable(data):
            data = data()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"the encoder of artifact {name!r} returned {type(data).__name__}, not bytes")
            data = bytes(data)
        frame, key = self.frames.find(data)
        boxes = self._screen_boxes.get(key)
        if boxes is None and key in self._unknown:  # a screen whose tree nobody can read any more
            boxes = [Box(0, 0, *image_size(data))]
        if boxes is None:  # not a frame we saw: a crop of the latest screens (after-frame, probe)
            boxes = [b for recent in list(self._screen_boxes.values())[-3:] for b in recent]
        self._pending[name] = Pending(data, media_type, [*self.redactor.regions, *boxes], frame, key)

    # -- SessionListener ---------------------------------------------------------------------
    def on_observation(self, observation: Any) -> None:
        """Remember the password boxes of an observed screen, keyed by its PNG bytes.

        The session does not call this itself: wrap its screen in `RecordingScreen` so every
        `observe()` passes through here before any frame of that screen can be put. At light
        (`defer_redaction`) a screen whose tree is not read yet and can still be read later waits:
        its boxes are taken when something is put (the tree is fetched then, while current), or
        once its tree was read; a screen that moved on unread is remembered as unknown, and its
        bytes, if ever put, are filled whole (never an unredacted frame)."""
        frame = getattr(observation, "frame", None)
        if frame is None:
            return
        self._settle_deferred(resolve=False)
        last = self._last_observed
        if not getattr(observation, "tree_fetched", True) and last is not None and last[0] == frame.png:
            boxes = list(last[1])  # the same pixels as the screen before: its password boxes (no page source)
        elif (self.defer_redaction and not getattr(observation, "tree_fetched", True)
              and getattr(observation, "tree_available", None) is not None):
            self._deferred.append(observation)
            if self.screen_size is None:
                self.screen_size = image_size(frame.png)
            return
        else:
            tree = getattr(observation, "tree", None)  # fetched now if on demand: never write unredacted
            boxes = list(tree.password_boxes()) if tree is not None else []
        self._note_observed(frame, boxes)

    def _note_observed(self, frame: Any, boxes: list[Box]) -> None:
        self._last_observed = (frame.png, boxes)
        if self.screen_size is None:
            self.screen_size = image_size(frame.png)
        self._submit("on_observation", self._observed, frame, boxes)

    def _settle_deferred(self, *, resolve: bool) -> None:
        """Deferred screens (light): boxes from a tree already read, or (`resolve`, before a put)
        fetched now while still current; a screen that moved on unread becomes unknown."""
        waiting, self._deferred = self._deferred, []
        for observation in waiting:
            if not observation.tree_fetched and observation.tree_available and not resolve:
                self._deferred.append(observation)
                continue
            try:
                tree = observation.tree if observation.tree_fetched or observation.tree_available else None
            except TreeExpired:
                tree = None
            if tree is None and not observation.tree_fetched:
                self._unknown[digest(observation.frame.png)] = None
                while len(self._unknown) > 64:
                    self._unknown.pop(next(iter(self._unknown)))
                continue
            self._note_observed(observation.frame, list(tree.password_boxes()) if tree is not None else [])

    def _observed(self, frame: Any, boxes: list[Box]) -> None:
        key = self.frames.remember(frame, boxes)
        self._screen_boxes.pop(key, None)
        self._screen_boxes[key] = boxes
        while len(self._screen_boxes) > 64:
            self._screen_boxes.pop(next(iter(self._screen_boxes)))

    def bind(self, session: Any) -> None:
        """Optional: let the recorder stream links of the session's anchor graph per step."""
        self._graph = getattr(session, "anchors", None) or getattr(session, "graph", None)

    def on_step(self, record: Any) -> None:
        links = len(getattr(self._graph, "links", None) or [])  # the graph as it is now, not when written
        self._submit("on_step", self._on_step, _as_dict(record), self.before_crops, links, step=True)

    def _on_step(self, step: dict[str, Any], before_crops: bool, links: int) -> None:
        try:
            self._record_step(step, before_crops, links)
        finally:
            self.frames.pixels.release()  # a frame the session released is decoded for one step at most

    def _record_step(self, step: dict[str, Any], before_crops: bool, links: int) -> None:
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
        if before_crops and files["crops"]:
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
        self._stream_links(links)
        if self.screen_size is not None:
            files["screen"] = list(self.screen_size)
        clean = self.redactor.scrub(step)
        self.steps.append(clean)
        self.journal.write("step", {"record": clean, "files": files, "bytes": written})

    def on_anchor(self, anchor: Any) -> None:
        self._submit("on_anchor", self._on_anchor, _as_dict(anchor))

    def _on_anchor(self, data: dict[str, Any]) -> None:
        # the step loop adds a step's anchors before the step is recorded: its crops are still
        # pending here and are written (placed and redacted) with the step; the report maps
        # an anchor's crop names to files through the step events' `names`
        files = [self._written[name] for name in data.get("crops") or [] if name in self._written]
        clean = self.redactor.scrub(data)
        self.anchor_list.append(clean)
        self.journal.write("anchor", {"anchor": clean, "files": files})

    def on_state(self, state: Any) -> None:
        self._submit("on_state", self._on_state, _as_dict(state))

    def _on_state(self, raw: dict[str, Any]) -> None:
        data = self.redactor.scrub(raw)
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
        graph = self._graph or getattr(session, "anchors", None) or getattr(session, "graph", None)
        self._submit("on_finish", self._on_finish, None if state is None else _as_dict(state),
                     None if graph is None else _as_dict(graph))

    def _on_finish(self, state: dict[str, Any] | None, graph: dict[str, Any] | None) -> None:
        if state is not None:
            self.state = self.redactor.scrub(state)
        if graph is not None:
            self.anchors = self.redactor.scrub(graph)

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
        """Write bytes no step or anchor named (e.g. a final frame) under `extra/` (drains first)."""
        self.drain()
        names = []
        for name in list(self._pending):
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "artifact"
            rel, _ = self._write_image(name, f"extra/{safe}.png", [], crop=True)
            if rel:
                names.append(rel)
        return names

    def _stream_links(self, upto: int) -> None:
        if self._graph is None:
            return
        links = list(getattr(self._graph, "links", []))[:upto]
        for link in links[self._links_seen:]:
            self.journal.write("link", {"link": _as_dict(link)})
        self._links_seen = max(self._links_seen, len(links))
