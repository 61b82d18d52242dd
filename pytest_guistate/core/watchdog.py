"""A wall-clock budget per test (issue 14): long LLM runs and flows end cleanly, not by a process kill.

One budget is armed per test (the pytest layer arms it around the call phase). It is enforced
where the test thread is anyway: every device call (`devices/timeouts.py` checks it and clips its
HTTP deadline to what is left) and every step boundary (`TaskSession`). A test that spends its
budget elsewhere gets the same exception from an interrupt:

- on the main thread of a platform with `signal.setitimer` (Linux, macOS; xdist workers run tests
  on their main thread too), a SIGALRM `SIGNAL_GRACE_S` after the budget. Its handler raises
  `TestTimeout`, which also ends a call blocked in C: `time.sleep(40)`, a socket read, a lock
  (issue 22: the budget used to be checked only when the sleep returned);
- elsewhere (Windows, a test on another thread), or when SIGALRM is taken (pytest-timeout's signal
  method, or any handler or timer already set: never replaced), an exception raised asynchronously
  in the test's thread `GRACE_S` after the budget, which takes effect at its next Python bytecode.
  This thread interrupt stays armed beside the signal, as a second chance if a test swallows it.

Either way `TestTimeout` unwinds the test normally: step records are closed, the journal is flushed
and report.html is built by the usual teardown, and the next test starts. An interrupt never lands
inside the bookkeeping of a finished step (`deferred()`): it waits until the step is journaled.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GRACE_S", "SIGNAL_GRACE_S", "TestTimeout", "arm", "check", "deferred", "disarm", "interrupt_method",
           "remaining"]

GRACE_S = 2.0  # after the budget, how long a test gets to reach a device call or step boundary
SIGNAL_GRACE_S = 0.5  # the signal's grace: a device call or LLM request clipped to the budget names itself first
_RETRY_S = 0.05  # an interrupt that found the test inside `deferred()` tries again this much later


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
    previous_handler: Any = field(default=None, repr=False)  # SIGALRM's handler before ours (signal method)
    method: str = "thread"  # "signal" or "thread": how a blocking test is interrupted
    setting: str = "guistate_test_timeout"  # where the budget was set, named in the message

    def message(self, where: str) -> str:
        return f"test {self.name} exceeded its {self.seconds:g} s budget ({self.setting}) at {where}"


_current: _Budget | None = None
_lock = threading.RLock()  # re-entrant: the signal handler may run while the main thread holds it
_deferring = 0  # > 0 while the test thread is inside `deferred()`


def interrupt_method() -> tuple[str, str]:
    """("signal" | "thread", why): how a budget armed now, in this thread, would interrupt a blocking call."""
    if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGALRM"):
        return "thread", "this platform has no SIGALRM/setitimer (Windows)"
    if threading.current_thread() is not threading.main_thread():
        return "thread", "the test runs outside the main thread (signals reach the main thread only)"
    handler = signal.getsignal(signal.SIGALRM)
    if handler not in (signal.SIG_DFL, signal.SIG_IGN, None):
        owner = getattr(handler, "__module__", "") or type(handler).__name__
        return "thread", f"SIGALRM already has a handler ({owner}, e.g. pytest-timeout's signal method)"
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return "thread", "a SIGALRM timer is already running"
    return "signal", "SIGALRM on the main thread"


def arm(seconds: float, name: str, setting: str = "guistate_test_timeout") -> None:
    """Start the budget of the test running in this thread; <= 0 means none. `setting` says where the
    budget was set (the ini/option, or the marker's `timeout=`), for the message."""
    global _current
    disarm()
    if seconds <= 0:
        return
    budget = _Budget(seconds, name, time.monotonic() + seconds, threading.get_ident(), setting=setting)
    timer = threading.Timer(seconds + GRACE_S, _interrupt, args=(budget,))
    timer.daemon = True
    budget.timer = timer
    budget.method = interrupt_method()[0]
    with _lock:
        _current = budget
    if budget.method == "signal":
        budget.previous_handler = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds + SIGNAL_GRACE_S)
    timer.start()


def disarm() -> None:
    global _current
    with _lock:
        budget, _current = _current, None
    if budget is None:
        return
    if budget.timer is not None:
        budget.timer.cancel()
    if budget.method == "signal":
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, budget.previous_handler if budget.previous_handler is not None
                      else signal.SIG_DFL)


@contextmanager
def deferred() -> Iterator[None]:
    """No budget interrupt inside this block (the bookkeeping of a finished step): one that comes due
    waits until it ends, so the step is journaled whole before `TestTimeout` unwinds the test."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1


def _on_alarm(signum: int, frame: object) -> None:
    """SIGALRM on the main thread: raise `TestTimeout` there, ending a blocking call (issue 22)."""
    budget = _current
    if budget is None or budget.method != "signal":
        return
    if _deferring:
        signal.setitimer(signal.ITIMER_REAL, _RETRY_S)  # inside a step's bookkeeping: a moment later
        return
    raise TestTimeout(budget.message("a blocking call (interrupted by SIGALRM)"))


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
        if _deferring:  # inside a step's bookkeeping: a moment later
            retry = threading.Timer(_RETRY_S, _interrupt, args=(budget,))
            retry.daemon = True
            budget.timer = retry
            retry.start()
            return
        budget.fired = True
        exc = type("TestTimeout", (TestTimeout,), {"__init__": _fixed_message(budget), "__module__": __name__})
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(budget.thread_id), ctypes.py_object(exc))


def _fixed_message(budget: _Budget) -> Callable[..., None]:
    """An async exception is raised from its class alone; this gives it the budget's message."""
    text = budget.message("a point with no device call or step (interrupted)")

    def __init__(self: TestTimeout, *args: object) -> None:
        TestTimeout.__init__(self, text)

    return __init__
