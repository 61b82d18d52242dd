"""The per-process threads the step loop hands work to beside the test (issue 42).

Each is one thread, made on first use and named by its work: `guistate-decode` (frames decoded
ahead, `frame.py`) and `guistate-judge` (a look nothing waits for, judged while the test goes on,
`steploop.py`). One thread each keeps their work in order. Each pytest-xdist worker has its own;
a forked child gets new ones: its parent's threads do not exist there, and work queued to them
would never run.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["own_thread"]

_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}  # name -> (pid that made it, pool)
_lock = threading.Lock()


def own_thread(name: str) -> ThreadPoolExecutor:
    """This process's single-thread pool called `name`."""
    with _lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():
            entry = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix=name))
            _pools[name] = entry
        return entry[1]
