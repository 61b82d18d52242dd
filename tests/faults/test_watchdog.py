"""The whole-test watchdog: a test over its wall-clock budget ends cleanly with its record kept (issue 14)."""

from __future__ import annotations

import signal
import time

import pytest

from pytest_guistate.core import watchdog

from .conftest import SECRET

SLOW_STEPS = '''
import time

import pytest

SECRET = "{secret}"


@pytest.mark.guistate(app="com.guistate.feed"{marker})
def test_long_flow(device, guistate):
    guistate.secret(SECRET)
    guistate.goal("Open Bob's delete dialog, then dawdle", plan=["dialog open"])
    with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")
    {dawdle}
'''

AT_STEPS = '''for i in range(100):
        time.sleep(0.3)
        with guistate.step(f"look again {i}", expect="Delete post by Bob?"):
            pass'''
NO_CALLS = '''while True:
        time.sleep(0.05)  # no device call, no step: only the asynchronous interrupt ends this'''


def source(dawdle: str, marker: str = "") -> str:
    return SLOW_STEPS.format(secret=SECRET, marker=marker, dawdle=dawdle)


def test_the_option_ends_a_test_at_a_step_boundary(run_inner) -> None:
    out = run_inner(source(AT_STEPS, marker=", cycle_limit=0"), "--guistate-test-timeout=2")
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=40, names=("TestTimeout", "exceeded its 2 s budget"), steps=["open the delete dialog"])
    assert out.journal()[-1]["type"] == "finish", "the journal was not closed"


def test_the_marker_overrides_the_option_and_the_interrupt_ends_a_busy_loop(run_inner) -> None:
    out = run_inner(source(NO_CALLS, marker=", timeout=1.5"), "--guistate-test-timeout=600")
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=40, names=("exceeded its 1.5 s budget", "interrupted"),
                        steps=["open the delete dialog"])


def test_a_bad_budget_is_a_usage_error(run_inner) -> None:
    out = run_inner(source("pass", marker=", timeout='soon'"))
    assert "timeout='soon') is not a number of seconds" in out.text
    out = run_inner(source("pass"), "--guistate-test-timeout=-3")
    assert "--guistate-test-timeout: must be >= 0 seconds, got '-3'" in out.text


BLOCKING_SLEEP = '''time.sleep(40)  # one call blocked in C: only a signal ends it before it returns'''


def test_the_budget_interrupts_a_blocking_sleep(run_inner) -> None:
    """Issue 22: `timeout=4` on `time.sleep(40)` ended after 40 s; SIGALRM ends it at the budget."""
    out = run_inner(source(BLOCKING_SLEEP, marker=", timeout=5"))  # room for step 1 on a loaded machine
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=40, names=("TestTimeout", "exceeded its 5 s budget",
                                           "a blocking call (interrupted by SIGALRM)"),
                        steps=["open the delete dialog"], suffix=f" (call phase {out.call_seconds():.1f} s)")
    assert out.call_seconds() < 5 + 5, f"the sleep ran {out.call_seconds():.1f} s past a 5 s budget"
    assert out.journal()[-1]["type"] == "finish", "the journal was not closed"


def test_beside_pytest_timeouts_signal_method_the_budget_leaves_sigalrm_alone(run_inner) -> None:
    """pytest-timeout's signal method owns SIGALRM for the test: guistate's budget does not replace its
    handler (its timeout still fires) and interrupts with its thread method instead."""
    pytest.importorskip("pytest_timeout", reason="pytest-timeout is a dev dependency (pyproject.toml)")
    busy = source(NO_CALLS, marker=", timeout=5")
    out = run_inner(busy, "--timeout=60", "--timeout-method=signal")
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=40, names=("exceeded its 5 s budget", "(interrupted)"), steps=["open the delete dialog"])
    assert "SIGALRM" not in out.text.split("exceeded its 5 s budget", 1)[1].splitlines()[0]
    out = run_inner(source(BLOCKING_SLEEP, marker=", timeout=60"), "--timeout=8", "--timeout-method=signal")
    out.result.assert_outcomes(failed=1)
    assert "Failed: Timeout (>8.0s) from pytest-timeout" in out.text, out.text[-2000:]
    assert out.call_seconds() < 8 + 5, "pytest-timeout's own timeout did not fire beside the budget"
    out.record(("Timeout",), message="pytest-timeout --timeout=8 (signal) beside timeout=60: pytest-timeout fires, "
                                     "Failed: Timeout (>8.0s) from pytest-timeout")


def test_the_signal_waits_for_a_steps_bookkeeping_and_is_put_back_after() -> None:
    """In-process: SIGALRM ends a blocking sleep, never inside `deferred()` (a step being journaled),
    and SIGALRM's previous handler is restored when the budget is disarmed."""
    method, why = watchdog.interrupt_method()
    if method != "signal":
        pytest.skip(f"no signal interrupt here: {why}")  # Windows, or pytest-timeout's signal method is on
    before = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    watchdog.arm(0.2, "t")
    try:
        with pytest.raises(watchdog.TestTimeout, match="interrupted by SIGALRM"):
            with watchdog.deferred():
                time.sleep(1.0)  # the alarm comes due in here, and waits
                inside = time.monotonic() - started
            time.sleep(10)
    finally:
        watchdog.disarm()
    assert inside >= 1.0 and time.monotonic() - started < 3.0
    assert signal.getsignal(signal.SIGALRM) == before and signal.getitimer(signal.ITIMER_REAL)[0] == 0
