"""A device that stops answering ends the test within the command deadline, naming the call (issue 14)."""

from __future__ import annotations

import pytest

from .conftest import SECOND_TAP, two_steps
from .fault_proxy import Rule

HANGS = [
    # (what hangs, the rule, the command named)
    ("screenshot", Rule("GET", r"/screenshot$", "hang", armed=False), "screenshot"),
    ("page source", Rule("GET", r"/source$", "hang", armed=False), "getPageSource"),
    ("tap (element click)", Rule("POST", r"/element/[^/]+/click$", "hang", armed=False), "clickElement"),
]


@pytest.mark.parametrize(("what", "rule", "command"), HANGS, ids=[h[0] for h in HANGS])
def test_a_hung_call_ends_the_test_and_names_it(run_inner, proxy, what: str, rule: Rule, command: str) -> None:
    proxy.add(rule)
    out = run_inner(two_steps(SECOND_TAP))
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=(f"device at {proxy.url} did not answer {command} within 1 s",
                                           "DeviceTimeout"), steps=["open the delete dialog"])


def test_a_hung_session_create_errors_within_the_session_deadline(run_inner, proxy) -> None:
    proxy.add(Rule("POST", r"^/session$", "hang"))
    out = run_inner(two_steps())
    out.result.assert_outcomes(errors=1)
    out.assert_contract(bound_s=30, names="did not answer newSession within 2 s", steps=[])
    # the device is taken out with the reason, and the worker's next test is told why
    assert "taken out of the pool" in out.text


def test_the_rest_of_the_run_goes_on_after_a_hang(run_inner, proxy) -> None:
    """A hang in the first test; the second test gets the device again once /status answers."""
    proxy.add(Rule("GET", r"/screenshot$", "hang", armed=False, times=1))
    source = two_steps(SECOND_TAP) + '''

@pytest.mark.guistate(app="com.guistate.feed")
def test_next(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
'''
    out = run_inner(source, "-p", "no:randomly")
    out.result.assert_outcomes(failed=1, passed=1)
    assert "did not answer screenshot within 1 s" in out.text
    after_hang = proxy.log[proxy.log.index("GET /__arm"):]
    assert "GET /status" in after_hang, "the suspect device was not probed before the next test"


TRICKLES = [
    ("screenshot", Rule("GET", r"/screenshot$", "trickle", armed=False), "screenshot"),
    ("page source", Rule("GET", r"/source$", "trickle", armed=False), "getPageSource"),
]


@pytest.mark.parametrize(("what", "rule", "command"), TRICKLES, ids=[t[0] for t in TRICKLES])
def test_a_trickled_answer_ends_at_the_deadline_not_per_read(run_inner, proxy, what: str, rule: Rule,
                                                             command: str) -> None:
    """Issue 22: 64 bytes every 0.25 s never lets one socket read time out; the 1 s deadline bounds the answer."""
    proxy.add(rule)
    out = run_inner(two_steps(SECOND_TAP))
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=30, names=(f"device at {proxy.url} did not answer {command} within 1 s",
                                           "its answer was still arriving after 1.", "covers the whole answer",
                                           "DeviceTimeout"), steps=["open the delete dialog"],
                        suffix=f" (call phase {out.call_seconds():.1f} s)")
    assert out.call_seconds() < 1 + 5, f"a 1 s deadline took {out.call_seconds():.1f} s"
