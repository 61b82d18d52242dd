"""One place for the cross-process file locks (`flock`): device leases, the summary file, memory recovery.

POSIX only; without `fcntl` (Windows) `LOCKS_AVAILABLE` is False and callers decide what that means
(a warning, no lock, a per-process lock)."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCKS_AVAILABLE", "hold", "open_lock_file", "try_lock"]

LOCKS_AVAILABLE = fcntl is not None


def open_lock_file(path: Path) -> int:
    """Open (creating) a lock file; the descriptor is what holds the lock, closing it drops the lock."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)


def try_lock(fd: int) -> bool:
    """Take the exclusive lock without waiting; False when another process holds it.

    Without `fcntl` there is no lock to take and this says True (the caller checks `LOCKS_AVAILABLE`)."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def hold(path: Path) -> Iterator[None]:
    """Hold the exclusive lock on `path` for the block, waiting for it (for short critical sections)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = open_lock_file(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
