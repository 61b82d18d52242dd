"""Where a test's artifacts live: one folder per test id, collision-free, kept per retention.

As pytest-playwright does with `<output>/<slug(nodeid)>/`, but written to the final folder from
the first step on (not a temp dir moved at the end): a test killed with SIGKILL must still leave
its journal where `guistate report DIR` can find it. Folders that are not retained are deleted
when the test finishes instead.

Collisions: two xdist workers never share a folder (the worker id is part of the name when
running under xdist) and a rerun of the same test in the same worker gets `-attempt2`, `-attempt3`
(the folder is created with `exist_ok=False`, so even two processes racing get distinct folders).
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import re
import shutil
import unicodedata
from pathlib import Path

__all__ = ["MAX_SLUG", "Retain", "create_test_folder", "discard_folder", "should_retain", "slug_nodeid"]

MAX_SLUG = 96  # characters; keeps full paths well under Windows' 260 and most CI upload limits
_HASH_LEN = 10
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Retain(str, enum.Enum):
    """Mirror of `config.Retain` without importing pytest (report/ stays importable by the CLI)."""

    ON = "on"
    FAILURE = "failure"
    OFF = "off"


def slug_nodeid(nodeid: str, max_len: int = MAX_SLUG) -> str:
    """A file-system safe, readable name for a pytest node id; long ids end in a short hash.

    `tests/test_login.py::TestX::test_a[param-1]` -> `tests-test_login.py-TestX-test_a-param-1`.
    Two ids that slug to the same text (e.g. differ only in punctuation) also get the hash, so
    the result is unique per id whenever it is shortened or lossy.
    """
    if not nodeid or not nodeid.strip():
        raise ValueError("cannot slug an empty node id")
    if max_len < _HASH_LEN + 8:
        raise ValueError(f"max_len must be >= {_HASH_LEN + 8}, got {max_len}")
    ascii_text = unicodedata.normalize("NFKD", nodeid).encode("ascii", "ignore").decode("ascii")
    text = ascii_text.replace("::", "-").replace("/", "-").replace("\\", "-")
    slug = _UNSAFE.sub("-", text)
    slug = re.sub(r"\.{2,}", ".", slug)  # no ".." anywhere, even though "/" is already gone
    slug = re.sub(r"-{2,}", "-", slug).strip("-.") or "test"
    lossy = _reversible(slug) != _reversible(nodeid)
    if len(slug) <= max_len and not lossy:
        return slug
    digest = hashlib.sha1(nodeid.encode("utf-8")).hexdigest()[:_HASH_LEN]
    head = slug[: max_len - _HASH_LEN - 1].rstrip("-.")
    return f"{head}-{digest}"


def _reversible(text: str) -> str:
    """What the slug keeps of an id when nothing is lost: `::` and `/` both become `-`."""
    return text.replace("::", "-").replace("/", "-")


def create_test_folder(root: Path, nodeid: str, *, worker: str | None = None, max_attempts: int = 1000) -> Path:
    """Create and return a new, empty folder for one run of `nodeid` under `root`.

    `worker` is xdist's worker id (`gw0`), None outside xdist. The first free name of
    `slug[@worker]`, `slug[@worker]-attempt2`, ... is taken atomically (mkdir without exist_ok).
    """
    root.mkdir(parents=True, exist_ok=True)
    base = slug_nodeid(nodeid)
    if worker:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", worker):
            raise ValueError(f"worker id {worker!r} is not a plain name like 'gw0'")
        base = f"{base}@{worker}"
    for attempt in range(1, max_attempts + 1):
        folder = root / (base if attempt == 1 else f"{base}-attempt{attempt}")
        for _ in range(3):
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                break
            except FileNotFoundError:  # another run sharing the root removed it while empty (discard_folder)
                root.mkdir(parents=True, exist_ok=True)
    raise RuntimeError(f"{max_attempts} artifact folders for {nodeid!r} already exist under {root}")


def should_retain(retain: Retain | str, *, failed: bool) -> bool:
    """on: always keep; failure: keep failed (and errored/killed) tests; off: keep nothing."""
    mode = Retain(getattr(retain, "value", retain))
    if mode is Retain.ON:
        return True
    if mode is Retain.OFF:
        return False
    return failed


def discard_folder(folder: Path, root: Path | None = None) -> None:
    """Delete a test folder that is not retained; refuses anything outside `root`."""
    folder = folder.resolve()
    if root is not None and root.resolve() not in folder.parents:
        raise ValueError(f"refusing to delete {folder}: not inside the artifacts root {root}")
    shutil.rmtree(folder)
    if root is not None and root.is_dir() and not any(root.iterdir()):
        # leave no empty artifacts dir behind on a green run with retain=failure; another
        # xdist worker may create a folder in between, which rmdir then refuses: that is fine
        with contextlib.suppress(OSError):
            root.rmdir()
