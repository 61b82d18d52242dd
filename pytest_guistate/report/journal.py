"""The per-test journal: append-only JSON lines, flushed per event, readable after a SIGKILL.

Schema `guistate.journal/1` (docs/schema.md). One JSON object per line, `type` one of
meta | goal | step | anchor | link | state | llm | driver_log | files | finish. Each line is written with a single
`os.write` (no user-space buffer), so a process killed mid-test leaves every
finished line on disk (the OS owns the bytes once `os.write` returns; `fsync` would only matter for
a power cut, and costs ~ms per step on CI disks, so it is done once, at finish). A reader
tolerates a torn last line (a kill during the write) and says so instead of failing.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.report.diskio import ArtifactWriteError

__all__ = ["EVENT_TYPES", "JOURNAL_NAME", "JOURNAL_SCHEMA", "Journal", "JournalError", "JournalWriter", "read_journal"]

JOURNAL_SCHEMA = "guistate.journal/1"
JOURNAL_NAME = "journal.jsonl"
EVENT_TYPES = ("meta", "goal", "step", "anchor", "link", "state", "llm", "driver_log", "files", "finish")


class JournalError(ValueError):
    """A journal that cannot be read: missing, not ours, or a newer schema."""


class JournalWriter:
    """Appends events to `folder/journal.jsonl`; one line per event, one `os.write`, no user-space buffer.

    A write the disk refuses (full, quota, `ulimit -f`) truncates the file back to its last whole
    line and raises `ArtifactWriteError` naming the path: the lines before stay readable, no torn
    half-line is left, and later events are refused too, so the journal has no hole (issue 14).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ArtifactWriteError(path, exc) from exc
        self._size = os.fstat(self._fd).st_size
        self.lines = 0
        self.refused: ArtifactWriteError | None = None

    def write(self, event_type: str, payload: dict[str, Any]) -> None:
        if event_type not in EVENT_TYPES:
            raise ValueError(f"unknown journal event type {event_type!r}; known: {EVENT_TYPES}")
        if self._fd is None:
            raise JournalError(f"journal {self.path} is closed; cannot write a {event_type!r} event")
        if self.refused is not None:
            raise self.refused  # no later line after a hole: the journal ends where the disk stopped it
        event = {"type": event_type, **payload}
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=_fallback) + "\n"
        data = memoryview(line.encode("utf-8"))
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as exc:
            with contextlib.suppress(OSError):  # a device file (/dev/full) cannot be truncated
                os.ftruncate(self._fd, self._size)
            self.refused = ArtifactWriteError(self.path, exc, f"its {self.lines} complete line(s) before this "
                                              f"{event_type!r} event are kept, and it takes no more")
            raise self.refused from exc
        self._size += len(line.encode("utf-8"))
        self.lines += 1

    def close(self, *, sync: bool = True) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if sync:
                with contextlib.suppress(OSError):  # fsync guards a power cut only; never a reason to fail
                    os.fsync(fd)
        finally:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None


def _fallback(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, Path):
        return value.as_posix()
    return repr(value)


@dataclass
class Journal:
    """A journal read back: the latest view of each kind of event."""

    folder: Path
    meta: dict[str, Any] = field(default_factory=dict)
    goal: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)  # step events, in order
    anchors: list[dict[str, Any]] = field(default_factory=list)  # anchor events
    links: list[dict[str, Any]] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)  # state events
    llm: dict[str, Any] | None = None  # the llm event (tokens, cost, exchanges), when the test used LLM steps
    driver_log: dict[str, Any] | None = None  # the driver_log event: the sim's requests or an Appium log's lines
    finish: dict[str, Any] | None = None
    torn_lines: int = 0  # lines that were not valid JSON (a kill mid-write)

    @property
    def finished(self) -> bool:
        return self.finish is not None

    @property
    def last_state(self) -> dict[str, Any] | None:
        state = self.finish.get("state") if self.finish else None
        if isinstance(state, dict):
            return state
        return self.states[-1]["state"] if self.states else None

    def anchor_dicts(self) -> list[dict[str, Any]]:
        """Anchors as `Anchor.to_dict()`: the finish event's graph wins over the streamed ones."""
        graph = (self.finish or {}).get("anchors")
        if isinstance(graph, dict) and graph.get("anchors") is not None:
            return list(graph["anchors"])
        return [event["anchor"] for event in self.anchors]

    def link_dicts(self) -> list[dict[str, Any]]:
        graph = (self.finish or {}).get("anchors")
        if isinstance(graph, dict) and graph.get("links") is not None:
            return list(graph["links"])
        return [event["link"] for event in self.links]


def read_journal(folder: Path) -> Journal:
    """Read `folder/journal.jsonl`. Raises JournalError when it is missing or of another schema."""
    path = folder / JOURNAL_NAME
    if not path.is_file():
        raise JournalError(f"no {JOURNAL_NAME} in {folder}: is this a guistate artifacts folder?")
    journal = Journal(folder=folder)
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                journal.torn_lines += 1
                continue
            if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
                raise JournalError(f"{path}:{number}: not a guistate journal event: {raw[:80]!r}")
            _apply(journal, event, path, number)
    if not journal.meta:
        raise JournalError(f"{path} has no meta event; the first line must be the journal header")
    return journal


def _apply(journal: Journal, event: dict[str, Any], path: Path, number: int) -> None:
    kind = event["type"]
    if kind == "meta":
        schema = str(event.get("schema", ""))
        if not schema.startswith("guistate.journal/"):
            raise JournalError(f"{path}:{number}: schema {schema!r} is not a guistate journal")
        if schema != JOURNAL_SCHEMA:
            raise JournalError(f"{path}: schema {schema!r} is newer than this reader ({JOURNAL_SCHEMA})")
        journal.meta = event
    elif kind == "goal":
        journal.goal = event
    elif kind == "step":
        journal.steps.append(event)
    elif kind == "anchor":
        journal.anchors.append(event)
    elif kind == "link":
        journal.links.append(event)
    elif kind == "state":
        journal.states.append(event)
    elif kind == "llm":
        journal.llm = event
    elif kind == "driver_log":
        journal.driver_log = event
    elif kind == "files":
        _complete_step(journal, event)
    else:
        journal.finish = event


def _complete_step(journal: Journal, event: dict[str, Any]) -> None:
    """A `files` event: the crops and frames of a step written after its line (issue 42: under
    `--guistate-retain=failure` a step that passed is journaled at once, its images encoded only
    once the test's outcome keeps the folder). The step reads as if they came with it; anchors
    that named the step's crops by handle name the files."""
    for step in reversed(journal.steps):
        record = step.get("record")
        if isinstance(record, dict) and record.get("index") == event.get("step"):
            step["files"] = event.get("files") or {}
            step["bytes"] = event.get("bytes", 0)
            record["crops"] = list(event.get("crops") or [])
            record["frames"] = list(event.get("frames") or [])
            break
    names = (event.get("files") or {}).get("names") or {}
    for anchor_event in journal.anchors:
        anchor_event["files"] = [names.get(n, n) for n in anchor_event.get("files") or []]
        anchor = anchor_event.get("anchor")
        if isinstance(anchor, dict):
            anchor["crops"] = [names.get(n, n) for n in anchor.get("crops") or []]
