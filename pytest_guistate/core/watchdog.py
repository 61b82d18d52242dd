"""A wall-clock budget per test (issue 14): long LLM runs and flows end cleanly, not by a process kill.

One budget is armed per test (the pytest layer arms it around the call phase). It is enforced
where the test thread is anyway: every device call (`devices/timeouts.py` checks it and clips its
HTTP deadline to what is left) and every step boundary (`TaskSession`). A test that spends its
budget elsewhere — a `time.sleep` loop, a hung LLM request without its own timeout — gets the same
exception raised asynchronously in its thread `GRACE_S` later. Either way `TestTimeout` unwinds the
test normally: step records are closed, the journal is flushed and report.html is built by the
usual teardown, and the next test starts.
"""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass, field

__all__ = ["GRACE_S", "TestTimeout", "arm", "check", "disarm", "remaining"]

GRACE_S = 2.0  # after the budget, how long a test gets to reach a device call or step boundary


class TestTimeout(AssertionError):
    """The test used up its wall-clock budget (`guistate_test_timeout` or the marker's `timeout=`)."""

    __test__ = False  # not a pytest test class, whatever its name


@dataclass
class _Budget:
    seconds: float
    name: str
    deadline: float
    thread_id: int
    fired: bool = False
    timer: threading.Timer | None = field(default=None, repr=False)

    def message(self, where: str) -> str:
        return f"test {self.name} exceeded its {self.seconds:g} s budget (guistate_test_timeout) at {where}"


_current: _Budget | None = None
_lock = threading.Lock()


def arm(seconds: float, name: str) -> None:
    """Start the budget of the test running in this thread; <= 0 means none."""
    global _current
    disarm()
    if seconds <= 0:
        return
    budget = _Budget(seconds, name, time.monotonic() + seconds, threading.get_ident())
    timer = threading.Timer(seconds + GRACE_S, _interrupt, args=(budget,))
    timer.daemon = True
    budget.timer = timer
    with _lock:
        _current = budget
    timer.start()


def disarm() -> None:
    global _current
    with _lock:
        budget, _current = _current, None
    if budget is not None and budget.timer is not None:
        budget.timer.cancel()


def remaining() -> float | None:
    """Seconds left in the current test's budget, None without one."""
    budget = _current
    return None if budget is None else budget.deadline - time.monotonic()


def check(where: str) -> None:
    """Raise `TestTimeout` if the current test's budget is spent (called at device calls and steps)."""
    budget = _current
    if budget is None or threading.get_ident() != budget.thread_id:
        return
    if time.monotonic() >= budget.deadline:  # every check while armed: a caller may swallow one
        raise TestTimeout(budget.message(where))


def _interrupt(budget: _Budget) -> None:
    """The test reached no check point within the grace: raise in its thread (CPython)."""
    with _lock:  # held while raising, so `disarm()` (the test's end) cannot interleave
        if _current is not budget or budget.fired:
            return
        budget.fired = True
        exc = type("TestTimeout", (TestTimeout,), {"__init__": _fixed_message(budget), "__module__": __name__})
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(budget.thread_id), ctypes.py_object(exc))


def _fixed_message(budget: _Budget):  # type: ignore[no-untyped-def]
    """An async exception is raised from its class alone; this gives it the budget's message."""
    text = budget.message("a point with no device call or step (interrupted)")

    def __init__(self, *args: object) -> None:
        TestTimeout.__init__(self, text)

    return __init__
