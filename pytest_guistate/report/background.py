"""`SerialWriter`: runs the recorder's file work in order, on one background thread or inline.

Issue 6 (per-step overhead): at tier standard/full a step's crops (after and before) are PNG-
encoded and written with its journal line, 15-35 ms per step on this machine kind, all of it
on the test's critical path. None of it decides anything the test waits for, so the recorder
hands it here in order (FIFO, one thread: the journal stays in event order) and the step loop
goes on to the next action while OpenCV encodes without the GIL.

The writer may fall at most `steps_behind` step jobs behind: submitting one more waits for the
oldest, so memory held by queued frames and crops stays bounded and a process killed outright
loses at most the step(s) still being written (the journal is flushed line by line).

A job that fails does not stop the ones after it; its error is kept and reported as a
`GuistateWarning` the next time the owner looks (`drain()` or `take_errors()`), in the words a
synchronous failure would have had. `inline=True` runs each job at once and lets errors raise.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["SerialWriter"]


class SerialWriter:
    def __init__(self, *, inline: bool, name: str = "guistate-writer", steps_behind: int = 1) -> None:
        if steps_behind < 1:
            raise ValueError(f"steps_behind must be >= 1, got {steps_behind}")
        self.inline = inline
        self.steps_behind = steps_behind
        self._steps: deque[Future[Any]] = deque()
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        self._last: Future[Any] | None = None
        self._errors: list[tuple[str, BaseException]] = []
        self._lock = threading.Lock()

    def submit(self, what: str, fn: Callable[..., Any], *args: Any, step: bool = False) -> None:
        """Run `fn(*args)` after every job submitted before it; `what` names it in an error.
        `step=True` counts the job against `steps_behind` (waits for the oldest beyond it)."""
        if self.inline:
            fn(*args)
            return
        pool = self._own_pool()
        if step:
            while len(self._steps) >= self.steps_behind:
                self._steps.popleft().result()  # never raises: `_guarded` keeps the error
        self._last = pool.submit(self._guarded, what, fn, args)
        if step:
            self._steps.append(self._last)

    def _own_pool(self) -> ThreadPoolExecutor:
        """This process's thread: a forked child must not wait on its parent's (absent) one."""
        if self._pool is None or self._pid != os.getpid():
            self._pool, self._pid = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._name), os.getpid()
            self._last, self._steps = None, deque()
        return self._pool

    def _guarded(self, what: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - kept and reported to the owner, never lost
            with self._lock:
                self._errors.append((what, exc))

    def drain(self) -> list[tuple[str, BaseException]]:
        """Wait until every job submitted so far ran; returns (and forgets) their errors."""
        self.wait()
        return self.take_errors()

    def wait(self) -> None:
        """Wait until every job submitted so far ran; their errors stay for `drain`/`take_errors`."""
        if self._pid != os.getpid():  # a forked child: its parent's jobs are not its own
            self._pool, self._last, self._steps = None, None, deque()
        last = self._last
        if last is not None:
            last.result()
        self._steps.clear()

    def take_errors(self) -> list[tuple[str, BaseException]]:
        with self._lock:
            errors, self._errors = self._errors, []
        return errors

    def close(self) -> list[tuple[str, BaseException]]:
        """Drain, then stop the thread (a later `submit` starts a new one)."""
        errors = self.drain()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        return errors
