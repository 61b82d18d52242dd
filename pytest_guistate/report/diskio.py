"""Writing artifacts when the disk says no (issue 14): a clear error naming the file and the cause.

A full disk, a quota, a file-size limit (`ulimit -f`) or a read-only mount turn every later
record into a loss, so a failed write is not a reporter's hiccup to warn about: it becomes an
`ArtifactWriteError` (a `RecordingFailed`) that fails the test at its next step, naming the path
and the OS error in words. Whatever was written before stays (the journal drops only the torn
tail of the line that failed). `probe_dir` checks a directory option once at session start, so a
path that can never be written is a usage error, not one failure per test.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from pytest_guistate.core.errors import RecordingFailed

__all__ = ["ArtifactWriteError", "describe_os_error", "probe_dir", "replace_file", "write_file"]

_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file-size limit (ulimit -f) was reached",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.ENOTDIR: "a parent of it is a file, not a directory",
    errno.EEXIST: "it exists and is not a directory",
}


def describe_os_error(exc: OSError) -> str:
    """`No space left on device [ENOSPC]: the disk is full` — the OS's words, the code, what it means."""
    code = exc.errno
    if code is None:
        return str(exc)
    name = errno.errorcode.get(code, str(code))
    hint = _HINTS.get(code)
    return f"{os.strerror(code)} [{name}]" + (f": {hint}" if hint else "")


class ArtifactWriteError(RecordingFailed):
    """A file of the test's record could not be written; `path` and `errno` say which and why."""

    def __init__(self, path: Path, exc: OSError, kept: str = "") -> None:
        self.path, self.errno, self.cause = path, exc.errno, exc
        super().__init__(f"cannot write {path}: {describe_os_error(exc)}" + (f"; {kept}" if kept else ""))


def write_file(path: Path, data: bytes | str) -> int:
    """Write a whole file (creating its folder); an OSError becomes an `ArtifactWriteError` naming it."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
    except OSError as exc:
        with contextlib.suppress(OSError):
            if path.is_file() and path.stat().st_size != len(raw):
                path.unlink()  # no half file that looks whole to a reader
        raise ArtifactWriteError(path, exc) from exc
    return len(raw)


def replace_file(path: Path, data: bytes | str) -> int:
    """Write a whole file through a temporary file in its folder and an atomic rename (issue 22): a
    reader sees the old file or the new one, never a torn one, and a full disk leaves the old file as
    it was (and no temporary behind). An OSError becomes an `ArtifactWriteError` naming `path`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(raw)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        kept = "the previous file is unchanged" if path.exists() else ""
        raise ArtifactWriteError(path, exc, kept) from exc
    return len(raw)


def probe_dir(path: Path) -> str | None:
    """None when files can be created under `path`, else why not. Leaves nothing behind: folders
    it had to create are removed again (a green run with retain=failure keeps no empty dir)."""
    missing = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".guistate-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        blocker = f" ({current})" if current != path and current.exists() and not current.is_dir() else ""
        return f"cannot create files in {path}: {describe_os_error(exc)}{blocker}"
    finally:
        for folder in missing:
            with contextlib.suppress(OSError):
                folder.rmdir()
    return None
