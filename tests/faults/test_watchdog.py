"""The whole-test watchdog: a test over its wall-clock budget ends cleanly with its record kept (issue 14)."""

from __future__ import annotations

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
