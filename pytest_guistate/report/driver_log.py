"""The driver's log of one test, for the viewer (issue 23: Playwright shows the browser's log beside
each trace). On the embedded sim it is the server's own request log (method, path, status, time);
against Appium it is the part of the server log the user names (`--guistate-driver-log`,
e.g. the file of `appium --log FILE`) written while the test ran. Lines pass through the
redactor with every other journal event (`ArtifactRecorder.write_event`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MAX_LINES", "DriverLogTail", "sim_request_lines"]

MAX_LINES = 4000  # the newest lines kept per test: a chatty server must not make the report huge
_MAX_BYTES = 4 * 1024 * 1024


@dataclass
class DriverLogTail:
    """What a log file gains between `start()` (the test's start) and `lines()` (its finish)."""

    path: Path
    offset: int = 0
    started: float = field(default_factory=time.time)

    def start(self) -> DriverLogTail:
        try:
            self.offset = self.path.stat().st_size
        except OSError:
            self.offset = 0  # not written yet: everything it gets belongs to this test
        return self

    def lines(self) -> tuple[list[str], str]:
        """(the new lines, newest `MAX_LINES`; a note when the file could not be read or was cut)."""
        try:
            with self.path.open("rb") as handle:
                size = handle.seek(0, 2)
                if size < self.offset:
                    self.offset = 0  # rotated or truncated since the start
                start = max(self.offset, size - _MAX_BYTES)
                handle.seek(start)
                raw = handle.read(size - start)
        except OSError as exc:
            return [], f"{self.path}: {exc.strerror or exc}"
        lines = raw.decode("utf-8", errors="replace").splitlines()
        note = ""
        if len(lines) > MAX_LINES or start > self.offset:
            note = f"only the newest {min(len(lines), MAX_LINES)} lines are kept"
        return lines[-MAX_LINES:], note


def sim_request_lines(records: list[Any], since: float) -> list[str]:
    """The embedded sim's `RequestRecord`s served since `since` (wall time), one line each."""
    out = []
    for record in records:
        at = float(getattr(record, "at", 0.0))
        if at < since:
            continue
        stamp = time.strftime("%H:%M:%S", time.gmtime(at)) + f".{int((at % 1) * 1000):03d}"
        line = f"{stamp} {record.method} {record.path} {record.status} {record.ms:.1f} ms"
        if getattr(record, "delay_ms", 0.0):
            line += f" (latency profile +{record.delay_ms:.0f} ms)"
        if getattr(record, "error", ""):
            line += f" {record.error}"
        out.append(line)
    return out[-MAX_LINES:]
