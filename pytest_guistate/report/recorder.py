"""`ArtifactRecorder`: the session listener (and artifact sink) that journals one test to disk.

The step loop hands bytes to an `ArtifactSink` (`put(name, data, media_type)`) and records to
its listeners (`on_step`, `on_anchor`, `on_state`, `on_finish`). The recorder is both: bytes
wait in memory until the step that names them is recorded (then the crop's place on the screen
is known, so redaction can fill the password boxes that overlap it), are redacted, written, and
the step's journal line goes out with the file names. Bytes never named by a step or anchor are
written at finish under `extra/` (e.g. the final frame of a failed light-tier test).
Whole frames go through `FrameStore` (content-addressed under `frames/`, its pixels taken from the
observed `Frame` instead of decoding the PNG again, issue 6), as do before-crops; crops are written
under `crops/`.

With `background=True` (what the plugin uses) the listener methods only take a snapshot of what
they are given (dicts, PNG bytes or an encoder) and a `SerialWriter` thread does the encoding,
redaction and writing in event order, off the step loop; `drain()` waits for it (the finish
does), and a job that failed is reported as a `GuistateWarning` then, as a synchronous failure
would have been. Readers of `steps`, `state`, `step_files`... drain first or accept lag.

Which password boxes apply to which bytes is the recorder's `ObservedScreens` (observed_screens.py):
every observed screen passes through `on_observation` (wrap the session's screen in
`RecordingScreen`), and each put asks it for the boxes of the screen the bytes show.
"""

from __future__ import annotations

import contextlib
import functools
import json
import mimetypes
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_guistate.core.artifact_names import CROPS_DIR, crop_region
from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_types import Crop
from pytest_guistate.report.background import SerialWriter
from pytest_guistate.report.diskio import ArtifactWriteError, describe_os_error
from pytest_guistate.report.frame_store import FrameStore
from pytest_guistate.report.images import CROP_SUFFIX, FrameFormat, encode_crop, image_size
from pytest_guistate.report.journal import JOURNAL_NAME, JOURNAL_SCHEMA, JournalWriter
from pytest_guistate.report.observed_screens import ObservedScreens
from pytest_guistate.report.placement import (
    Pending,
    RecordingScreen,
    crop_boxes,
    find_origin,
    frame_role,
)
from pytest_guistate.report.redact import Redactor, fill_pixels, local_boxes
from pytest_guistate.report.source_line import test_source_line
from pytest_guistate.report.viewer_tree import compact_tree, tree_key

__all__ = ["ArtifactRecorder", "Pending", "RecordingScreen"]

DEFAULT_FRAME_FORMAT = FrameFormat()
DEFER_BUDGET = 64 * 1024 * 1024  # screenshots deferred steps may keep alive (~160 sim PNGs of 400 KB)


@dataclass
class _Deferred:
    """A step journaled without its images: what writing them later needs."""

    index: int
    step: dict[str, Any]  # the step as the session recorded it (crop and frame handles)
    before_crops: bool
    before: tuple[Any, list[Box]] | None  # its before-frame and that screen's boxes, remembered now
    held: int = 0  # bytes of screenshots it keeps alive


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
        defer: bool = False,
    ) -> None:
        self.folder = folder
        self.tier = str(getattr(tier, "value", tier))
        self.redactor = redactor or Redactor()
        self.raw_nodeid = nodeid  # kept in memory only: `relabel` re-derives the name at finish
        self.nodeid = self.redactor.ident(nodeid)  # what the journal, summary and report call the test
        if before_crops is None:  # issue 4: before and after crops in the standard and full tiers
            before_crops = self.tier in ("standard", "full")
        self.frame_format = frame_format
        self.screen_size = screen_size
        self._pending: dict[str, Pending] = {}
        self.frames = FrameStore(folder, frame_format)  # recent observations and the frame files
        self.before_crops = before_crops
        self.step_files: dict[int, dict[str, Any]] = {}  # step index -> files written (for Allure)
        self._written: dict[str, str] = {}  # artifact name -> relative path
        self._links_seen = 0
        self._held: list[dict[str, Any]] = []  # anchors waiting for their step's files
        self._graph: Any = None
        self._last_state = ""
        self._last_goal = ""
        self._tree_key = ""  # content hash of the last tree journaled (repeats are referenced, not copied)
        self.bytes_by_step: dict[int, int] = {}
        self.steps: list[dict[str, Any]] = []  # scrubbed step records, for triage at finish
        self.anchor_list: list[dict[str, Any]] = []
        self.conflicts: list[dict[str, Any]] = []  # every state-vs-screen conflict seen (focus resets per step)
        self.state: dict[str, Any] | None = None
        self.anchors: dict[str, Any] | None = None
        self.write_error: ArtifactWriteError | None = None  # the first write the disk refused
        # issue 42: a step that passed keeps its images unencoded until the test's outcome says the
        # folder is kept (`write_deferred`) or not (`drop_deferred`); a failed step writes them at once
        self.defer = defer
        self._deferred: list[_Deferred] = []
        self._deferred_bytes = 0  # screenshots (PNG as the device sent them) the deferred steps keep alive
        self.journal = JournalWriter(folder / JOURNAL_NAME)
        self._writer = SerialWriter(inline=not background)
        # light and off read no page source per step for redaction (issue 12): screens wait for a put
        self.screens = ObservedScreens(self.redactor, self.frames, self._submit, defer=self.tier in ("light", "off"),
                                       step_trees=self.tier in ("standard", "full"))
        # the device commands sent since the last step (`CommandLog.take`), for the viewer's action log
        self.command_source: Callable[[], list[dict[str, Any]]] | None = None
        self._ended: dict[int, dict[str, Any]] = {}  # step index -> its trace, taken at its end (`on_step_end`)
        self.driver_log: Any = None  # where the finish reads this test's driver log from (runtime.py)
        self.journal.write("meta", {
            "schema": JOURNAL_SCHEMA, "nodeid": self.nodeid, "tier": self.tier,
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
        self._submit(f"write_event({kind})", self._write_event, kind, data)

    def _write_event(self, kind: str, data: dict[str, Any]) -> None:
        self.journal.write(kind, self.redactor.scrub(data))  # e.g. an LLM claim quoting the screen

    def _submit(self, what: str, fn: Callable[..., Any], *args: Any, step: bool = False) -> None:
        self._warn(self._writer.take_errors())  # what failed since the last event, reported now
        self._writer.submit(what, fn, *args, step=step)

    def _warn(self, errors: list[tuple[str, BaseException]]) -> None:
        """Warn about what a job lost; a write the disk refused is raised instead, once (issue 14):
        the test stops at its next event rather than run on with nothing recorded."""
        first: ArtifactWriteError | None = None
        for what, exc in errors:
            if isinstance(exc, ArtifactWriteError) and self.write_error is None and first is None:
                first = exc
                continue
            if exc is self.write_error or exc is first:
                continue  # the journal refusing again what it already refused: said once
            warnings.warn(GuistateWarning(
                f"guistate listener {type(self).__name__}.{what} raised {type(exc).__name__}: {exc}; "
                "its report will miss this event"), stacklevel=3)
        if first is not None:
            self.write_error = first
            raise first

    # -- the screens and the files (ArtifactSink) ------------------------------------------------
    def on_observation(self, observation: Any, *, poll: bool = False) -> None:
        """Remember the password boxes of an observed screen (`ObservedScreens.observe`) before any
        of its bytes can be put. The session does not call this itself: wrap its screen in
        `RecordingScreen` so every `observe()` passes through here (`poll`: a settle poll's)."""
        frame = getattr(observation, "frame", None)
        if frame is None:
            return
        if self.screen_size is None:
            self.screen_size = image_size(frame.png)  # the first screen's: what whole frames are
        self.screens.observe(observation, poll=poll)

    def put(self, name: str, data: bytes | Callable[[], bytes], media_type: str = "image/png", *,
            cut_from: Any = None) -> str:
        """Take bytes (or a callable producing them, run on the writer) to be written when a
        step or anchor names them; returns `name` at once. `cut_from`: the observed frame a crop
        was cut from (its screen's boxes are the ones to fill)."""
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data)
        elif not callable(data):
            raise TypeError(f"artifact {name!r} must be bytes or a callable producing them, got {type(data).__name__}")
        self.screens.settle(resolve=True)  # password boxes of the screens it may show, known first
        self._submit(f"put({name})", self._put, name, data, media_type, cut_from)
        return name

    def _put(self, name: str, data: bytes | Callable[[], bytes], media_type: str, cut_from: Any = None) -> None:
        lender = getattr(data, "__self__", None)  # a bound `Crop.encode` (the step loop's) lends its pixels
        # by its type: asking the crop for `pixels` would cut them, decoding its whole frame for a test
        # whose folder may be deleted (issue 42)
        crop = lender if callable(data) and isinstance(lender, Crop) else None
        if crop is not None or (callable(data) and self.defer):  # encoded when its step's files are written
            boxes = self.screens.boxes_for(b"", "", name, cut_from)  # the screen's boxes: known now, not later
            self._pending[name] = Pending(b"", media_type, [*self.redactor.regions, *boxes], encode=data,
                                          source=cut_from, crop=crop)
            return
        if callable(data):
            data = data()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"the encoder of artifact {name!r} returned {type(data).__name__}, not bytes")
            data = bytes(data)
        frame, key = self.frames.find(data)
        boxes = self.screens.boxes_for(data, key, name, cut_from)
        self._pending[name] = Pending(data, media_type, [*self.redactor.regions, *boxes], frame, key)

    def _write_image(self, name: str, crop_boxes: list[Box], *, crop: bool, directory: str = CROPS_DIR) -> tuple[str, int]:
        """Write what `name` was put as: a whole frame under frames/, else a crop under `directory`;
        both stored once by content (issue 44), so the returned path may be an earlier file's."""
        if name in self._written:
            return self._written[name], 0
        pending = self._pending.pop(name, None)
        if pending is None:
            return "", 0  # named but never put (e.g. the session keeps it elsewhere)
        if pending.encode is not None and pending.crop is None:  # a deferred encoder: it runs now
            data = pending.encode()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"the encoder of artifact {name!r} returned {type(data).__name__}, not bytes")
            pending = Pending(bytes(data), pending.media_type, pending.boxes)
        if not crop:  # content-addressed under frames/: reuse is free
            target, size = self.frames.write(pending, self.screen_size)
            self._written[name] = target
            return target, size
        stored, size = self.frames.store_once(directory, *self._crop_bytes(pending, crop_boxes))
        self._written[name] = stored
        return stored, size

    def _crop_bytes(self, pending: Pending, crop_boxes: list[Box]) -> tuple[bytes, str]:
        """A crop as stored (lossless WebP, redacted) and its suffix, encoded once from its pixels:
        a `Crop`'s own (cut from the frame the session decoded), a whole frame's, else decoded."""
        pixels = self.frames.crop_pixels(pending)
        if pixels is None:  # bytes no decoder knows: kept as they came
            return pending.data, mimetypes.guess_extension(pending.media_type) or ".bin"
        height, width = pixels.shape[:2]
        boxes, origin = self._crop_fill(pending, (width, height), crop_boxes)
        if local_boxes(boxes, (width, height), origin=origin):
            pixels = pixels.copy()  # never draw on the session's pixels
            fill_pixels(pixels, boxes, origin=origin)
        return encode_crop(pixels), CROP_SUFFIX

    def _crop_fill(self, pending: Pending, size: tuple[int, int], crop_boxes: list[Box]) -> tuple[list[Box], tuple[int, int]]:
        """The screen boxes to fill in a crop of `size`, and where its top-left sits on the screen."""
        if not pending.boxes:
            return [], (0, 0)
        if self.screen_size is not None and size == self.screen_size:
            return pending.boxes, (0, 0)  # a whole frame: boxes are already in its coordinates
        origin = find_origin(size, crop_boxes)
        if origin is None:
            if self.screen_size is None and not crop_boxes:
                return pending.boxes, (0, 0)  # a whole frame of unknown size: screen coordinates
            return [Box(0, 0, *size)], (0, 0)  # a crop we cannot place while secrets are on it: hide all of it
        return pending.boxes, origin

    def _before_crops(self, index: int, numbers: list[int], boxes: list[Box],
                      before: tuple[Any, list[Box]] | None = None) -> tuple[list[str], int]:
        """The same boxes cut from the before-frame, so a person sees what changed."""
        targets = [boxes[number] if 0 <= number < len(boxes) else None for number in numbers]
        return self.frames.before_crops(index, targets, list(self.redactor.regions), before)

    def put_crop(self, name: str, data: bytes, box: Box, *, cut_from: Any = None) -> str:
        """A crop no step names (a query's cited element, issue 46), written now: its secrets' boxes
        filled where `box` places it on the screen `cut_from`, stored once by content (issue 44).
        Returns its path in the folder ("" when it could not be written: the warning says why)."""
        self.put(name, data, cut_from=cut_from)
        self._submit(f"put_crop({name})", functools.partial(self._write_image, crop=True), name, [box])
        self.drain()
        return self._written.get(name, "")

    def flush_extra(self) -> list[str]:
        """Write bytes no step or anchor named (e.g. a final frame) under `extra/` (drains first)."""
        self.drain()
        names = []
        for name in list(self._pending):
            rel, _ = self._write_image(name, [], crop=True, directory="extra")
            if rel:
                names.append(rel)
        if names and self.anchors is not None:  # anchors.json names the files, these included
            anchors = [{**a, "crops": self._paths(a.get("crops") or [])} for a in self.anchors.get("anchors") or []]
            self.anchors = {**self.anchors, "anchors": anchors}
        return names

    def stored_paths(self, names: list[str]) -> list[str]:
        """The files these artifact names were stored as, once everything handed over is written
        (the failure section names files, not the session's handles). A job's error stays for the
        next `drain`, which reports it."""
        self._writer.wait()
        if self._deferred and any(n in self._pending for n in names):  # a failure names them: written now
            with contextlib.suppress(ArtifactWriteError):  # kept on `write_error`'s path: the finish says it
                self._write_deferred()
        return self._paths(names)

    def _paths(self, names: list[str]) -> list[str]:
        """The files artifact names went to (a name never written stays as it is)."""
        return [self._written.get(name, name) for name in names]

    # -- SessionListener ---------------------------------------------------------------------
    def bind(self, session: Any) -> None:
        """Optional: let the recorder stream links of the session's anchor graph per step."""
        self._graph = getattr(session, "anchors", None) or getattr(session, "graph", None)

    def on_step_end(self, record: Any) -> None:
        """A step ended whose record comes later (its look judged beside the test, `Journal.close_later`):
        its commands and the test's line are taken now, before the next step sends its own."""
        self._ended[int(record["index"] if isinstance(record, dict) else record.index)] = self._trace()

    def _trace(self) -> dict[str, Any]:
        return {"commands": self.command_source() if self.command_source is not None else [],
                "source": test_source_line(self.raw_nodeid)}  # on the test's thread: its stack is here

    def on_step(self, record: Any) -> None:
        links = len(getattr(self._graph, "links", None) or [])  # the graph as it is now, not when written
        step = _as_dict(record)
        # a failed step keeps its before-crops at every tier (README: the failed step's before/after crops)
        before_crops = self.before_crops or step.get("outcome") == "failed"
        trace = self._ended.pop(int(step.get("index", 0)), None) or self._trace()
        self.screens.step_closed()
        self._submit("on_step", self._on_step, step, before_crops, links, trace, step=True)

    def _on_step(self, step: dict[str, Any], before_crops: bool, links: int,
                 trace: dict[str, Any] | None = None) -> None:
        try:
            self._record_step(step, before_crops, links, trace or {})
        finally:
            self.frames.pixels.release()  # a frame the session released is decoded for one step at most

    def _record_step(self, step: dict[str, Any], before_crops: bool, links: int,
                     trace: dict[str, Any] | None = None) -> None:
        index = int(step.get("index", len(self.bytes_by_step)))
        frame_names = list(step.get("frames") or [])
        names = [*(step.get("crops") or []), *frame_names]
        refused: ArtifactWriteError | None = None
        if self.defer and step.get("outcome") != "failed" and any(n in self._pending for n in names):
            # its own copy of the names: the journal's record (scrubbed, maybe the same dict) names files
            names_only = {**step, "crops": list(step.get("crops") or []), "frames": frame_names}
            self._defer(_Deferred(index, names_only, before_crops, self.frames.before_frame(index)))
            files: dict[str, Any] = {"crops": [], "frames": {}, "names": {}, "deferred": True}
            written = 0
        else:
            files, written, refused = self._write_step_files(index, step, before_crops)
        self.bytes_by_step[index] = written
        self.step_files[index] = files
        self._stream_links(links)
        if self.screen_size is not None:
            files["screen"] = list(self.screen_size)
        clean = self.redactor.scrub(step)
        # the journal names files that exist: a crop never written is dropped, frames by their path
        clean["crops"] = [self._written[n] for n in step.get("crops") or [] if n in self._written]
        clean["frames"] = [self._written[n] for n in frame_names if n in self._written]
        self.steps.append(clean)
        event: dict[str, Any] = {"record": clean, "files": files, "bytes": written}
        for key, value in (trace or {}).items():
            if value:
                event[key] = self.redactor.scrub(value)  # a source line may hold a literal password
        if refused is None:
            event.update(self._tree_fields(clean))
        else:  # the line stays small (no tree) and says which file the disk refused and why
            event["unwritten"] = {"file": self._relative(refused.path), "error": describe_os_error(refused.cause)}
        self.journal.write("step", event)
        self._release_held()
        if refused is not None:
            raise refused  # the test fails at its next step, naming the file (RecordingFailed)

    def _write_step_files(self, index: int, step: dict[str, Any], before_crops: bool,
                          before: tuple[Any, list[Box]] | None = None,
                          ) -> tuple[dict[str, Any], int, ArtifactWriteError | None]:
        """Encode and write one step's crops, before-crops and frames: (files, bytes, refused)."""
        placed = crop_boxes(step)
        files: dict[str, Any] = {"crops": [], "frames": {}}
        written = 0
        numbers: list[int] = []
        frame_names = list(step.get("frames") or [])
        refused: ArtifactWriteError | None = None
        try:
            for name in step.get("crops") or []:
                number = crop_region(name)
                place = [placed[number]] if number is not None and number < len(placed) else placed
                rel, size = self._write_image(name, place, crop=True)
                if rel:
                    numbers.append(-1 if number is None else number)
                    files["crops"].append(rel)
                    written += size
            if before_crops and files["crops"]:
                files["crops_before"], size = self._before_crops(index, numbers, placed, before)
                written += size
            for position, name in enumerate(frame_names):
                role = frame_role(name, position, len(frame_names))
                rel, size = self._write_image(name, [], crop=False)
                if rel:
                    files["frames"][role] = rel
                    written += size
        except ArtifactWriteError as exc:  # issue 22: the step is still journaled (a small line) naming the file
            refused = exc
            for name in [*(step.get("crops") or []), *frame_names]:
                self._pending.pop(name, None)  # what was not written is not kept in memory either
        files["names"] = {name: rel for name, rel in self._written.items()
                          if name in (step.get("crops") or []) or name in frame_names}
        return files, written, refused

    # -- deferred steps (issue 42) ---------------------------------------------------------------
    def _defer(self, deferred: _Deferred) -> None:
        """Keep a passed step's images unencoded; beyond `DEFER_BUDGET` of screenshots kept alive,
        the oldest deferred steps are written now (memory stays bounded on a long test)."""
        held: dict[int, int] = {}
        for name in [*(deferred.step.get("crops") or []), *(deferred.step.get("frames") or [])]:
            pending = self._pending.get(name)
            if pending is None:
                continue
            source = pending.source if pending.source is not None else pending.frame
            png = getattr(source, "png", None)
            held[id(source) if source is not None else id(pending)] = len(png if isinstance(png, bytes) else pending.data)
        deferred.held = sum(held.values())
        self._deferred.append(deferred)
        self._deferred_bytes += deferred.held
        while self._deferred_bytes > DEFER_BUDGET and len(self._deferred) > 1:
            self._write_deferred(upto=1)

    @property
    def deferred_steps(self) -> list[int]:
        """Indices of steps journaled whose images are not written yet."""
        return [d.index for d in self._deferred]

    def write_deferred(self) -> None:
        """The test's folder is kept: encode and write every deferred step's images, each followed
        by a `files` journal line that completes its step (drains first)."""
        self.drain()
        self._write_deferred()

    def drop_deferred(self) -> None:
        """The test's folder is not kept: its deferred images are never encoded (issue 42)."""
        self.drain()
        for deferred in self._deferred:
            for name in [*(deferred.step.get("crops") or []), *(deferred.step.get("frames") or [])]:
                self._pending.pop(name, None)
        self._deferred, self._deferred_bytes = [], 0

    def _write_deferred(self, upto: int | None = None) -> None:
        count = len(self._deferred) if upto is None else min(upto, len(self._deferred))
        for _ in range(count):
            deferred = self._deferred.pop(0)
            self._deferred_bytes -= deferred.held
            try:
                files, written, refused = self._write_step_files(deferred.index, deferred.step,
                                                                 deferred.before_crops, deferred.before)
            finally:
                self.frames.pixels.release()
            if self.screen_size is not None:
                files["screen"] = list(self.screen_size)
            self.bytes_by_step[deferred.index] = written
            self.step_files[deferred.index] = files
            crops = [self._written[n] for n in deferred.step.get("crops") or [] if n in self._written]
            frames = [self._written[n] for n in deferred.step.get("frames") or [] if n in self._written]
            for clean in self.steps:
                if clean.get("index") == deferred.index:
                    clean["crops"], clean["frames"] = crops, frames
            self.anchor_list = [{**a, "crops": self._paths(a.get("crops") or [])} for a in self.anchor_list]
            if self.anchors is not None:
                self.anchors = {**self.anchors, "anchors": [
                    {**a, "crops": self._paths(a.get("crops") or [])} if isinstance(a, dict) else a
                    for a in self.anchors.get("anchors") or []]}
            event: dict[str, Any] = {"step": deferred.index, "files": files, "crops": crops, "frames": frames,
                                     "bytes": written}
            if refused is not None:
                event["unwritten"] = {"file": self._relative(refused.path), "error": describe_os_error(refused.cause)}
            self.journal.write("files", event)
            if refused is not None:
                raise refused

    def _relative(self, path: Path) -> str:
        try:
            return Path(path).relative_to(self.folder).as_posix()
        except ValueError:
            return str(path)

    def _tree_fields(self, step: dict[str, Any]) -> dict[str, Any]:
        """The compact UI tree after a step (standard/full every step, light only when it failed);
        a tree equal to the previous one journaled is referenced by its key instead of repeated."""
        tree = self.screens.last_tree
        if tree is None or (self.tier == "light" and step.get("outcome") != "failed"):
            return {}
        compact = compact_tree(tree)
        if compact is None:
            return {}
        compact = self.redactor.scrub(compact)
        key = tree_key(compact)
        if key == self._tree_key:
            return {"tree_key": key}
        self._tree_key = key
        return {"tree_key": key, "tree": compact}

    def on_anchor(self, anchor: Any) -> None:
        self._submit("on_anchor", self._on_anchor, _as_dict(anchor))

    def _on_anchor(self, data: dict[str, Any]) -> None:
        # the step loop adds a step's anchors before the step is recorded: while a crop of theirs is
        # still pending, anchors are held (in order) and written right after that step, naming the
        # files the step wrote, so the journal never names a handle instead of a file (issue 15)
        if self._held or any(name in self._pending for name in data.get("crops") or []):
            self._held.append(data)
            return
        self._write_anchor(data)

    def _write_anchor(self, data: dict[str, Any]) -> None:
        clean = self.redactor.scrub({**data, "crops": self._paths(data.get("crops") or [])})
        self.anchor_list.append(clean)
        self.journal.write("anchor", {"anchor": clean, "files": list(clean["crops"])})

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for data in held:
            self._write_anchor(data)

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
        """Take the final state and anchor graph from the session (names per core/task_session.py)."""
        state = getattr(session, "state", None)
        graph = self._graph or getattr(session, "anchors", None) or getattr(session, "graph", None)
        self._submit("on_finish", self._on_finish, None if state is None else _as_dict(state),
                     None if graph is None else _as_dict(graph))

    def _on_finish(self, state: dict[str, Any] | None, graph: dict[str, Any] | None) -> None:
        self._release_held()
        if state is not None:
            self.state = self.redactor.scrub(state)
        if graph is not None:
            anchors = [{**a, "crops": self._paths(a.get("crops") or [])} if isinstance(a, dict) else a
                       for a in graph.get("anchors") or []]
            self.anchors = self.redactor.scrub({**graph, "anchors": anchors})

    def _stream_links(self, upto: int) -> None:
        if self._graph is None:
            return
        links = list(getattr(self._graph, "links", []))[:upto]
        for link in links[self._links_seen:]:
            self.journal.write("link", {"link": _as_dict(link)})
        self._links_seen = max(self._links_seen, len(links))
