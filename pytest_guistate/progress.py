"""A live progress display per test, for people watching a long run in a terminal.

Shown only when pytest writes to a TTY and is not an xdist worker (workers have no terminal);
quiet otherwise, so CI logs and JUnit output never carry it. The status is written after
pytest's own text on the current line and erased with backspaces before pytest prints the
test's result, so the usual output is left exactly as pytest wrote it.
"""

from __future__ import annotations

import shutil
import sys
import threading
from typing import Any

import pytest

__all__ = ["TerminalProgress", "WaitLine", "terminal_progress", "wait_line"]


class TerminalProgress:
    """A session listener that rewrites a short status after every step."""

    def __init__(self, reporter: Any, capture: Any, nodeid: str, session: Any) -> None:
        self._reporter = reporter
        self._capture = capture
        self._name = nodeid.rpartition("::")[2]
        self._session = session
        self._length = 0  # characters of status currently on screen

    def show(self, status: str) -> None:
        """Any short status (a test waiting for a device slot, before it has steps)."""
        self._show(f" [guistate {self._name}: {status}]")

    def on_step(self, record: Any) -> None:
        progress = self._session.progress
        done = f"{len(progress.completed)}/{progress.total}" if progress.total else "-"
        cache = f" (cache {record.cache})" if getattr(record, "cache", "") else ""
        status = f" [guistate {self._name}: step {record.index} {record.outcome}{cache}, milestones {done}, " \
                 f"now: {progress.current or 'goal'}]"
        self._show(status)

    def on_finish(self, session: Any) -> None:
        self.clear()

    def clear(self) -> None:
        """Erase the status; called before pytest prints the test's result (and at finish)."""
        self._show("")

    def _room(self) -> int:
        """Columns left on pytest's current line (measured while capture is off: the real terminal)."""
        writer = getattr(self._reporter, "_tw", None)
        used = int(getattr(writer, "width_of_current_line", 40))
        columns = int(getattr(writer, "fullwidth", 0)) or shutil.get_terminal_size().columns
        return max(0, columns - used - 2)

    def _show(self, status: str) -> None:
        if not status and not self._length:
            return
        erase = "\b" * self._length + " " * self._length + "\b" * self._length
        with self._capture.global_and_fixture_disabled():
            status = status[: self._room()]
            # written past the terminal writer on purpose: its idea of the line width stays pytest's own
            sys.stdout.write(erase + status)
            sys.stdout.flush()
        self._length = len(status)


def terminal_progress(config: pytest.Config, nodeid: str, session: Any) -> TerminalProgress | None:
    """The display for one test, or None when output is not an interactive terminal."""
    if hasattr(config, "workerinput") or config.option.verbose < 0:
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not getattr(reporter, "isatty", False):
        return None
    return TerminalProgress(reporter, capture, nodeid, session)


class WaitLine:
    """The live line while a test waits for its device (issue 35: a slot of a Grid hub); shows nothing
    where there is no live line (xdist workers, CI logs): the caller warns with the time waited."""

    def __init__(self, live: TerminalProgress | None) -> None:
        self._live = live
        self._lock = threading.Lock()  # shown from the waiting test and from its ticker thread

    def show(self, status: str) -> None:
        if self._live is not None:
            with self._lock:
                self._live.show(status)

    def clear(self) -> None:
        if self._live is not None:
            with self._lock:
                self._live.clear()


def wait_line(config: pytest.Config, nodeid: str) -> WaitLine:
    return WaitLine(terminal_progress(config, nodeid, None))
