"""Opening the memory for a run: a damaged file is set aside and a new one started, with a warning.

The memory is a cache of looks and flows (it makes healing possible, never a verdict), so a file
that is truncated, overwritten with garbage, or an SQLite database of something else must not
stop the run — but it must not be silently deleted either: it may be someone's file, or worth a
look. It is renamed to `<name>.corrupt-<UTC time>` (its `-wal`/`-shm` beside it) and a new, empty
store takes its place (issue 14). A store written by a newer plugin is not damaged: it is still
refused (`MemorySchemaError`), untouched. The check and the rename run under a file lock, so two
xdist workers opening one damaged file set it aside once and share the new one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pytest_guistate.memory.store import MemoryCorrupt, MemoryStore
from pytest_guistate.support.filelock import hold

__all__ = ["open_store", "set_aside"]


def open_store(path: Path) -> tuple[MemoryStore, str | None]:
    """The store at `path` (checked with SQLite's quick_check), and a warning when a damaged one was replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with hold(path.with_name(path.name + ".lock")):
        try:
            return MemoryStore(path, check=True), None
        except MemoryCorrupt as exc:
            aside = set_aside(path)
            return MemoryStore(path), (f"guistate: the memory store was unreadable ({exc}); it was moved to "
                                       f"{aside} and a new, empty store started (healing starts from nothing)")


def set_aside(path: Path) -> Path:
    """Rename `path` (and its WAL and shared-memory files) to `<name>.corrupt-<UTC time>`; returns the new path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, aside.with_name(aside.name + suffix))
    return aside


