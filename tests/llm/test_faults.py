"""Scripted faults of the reference server: each ends in a clear outcome and keeps the steps so far."""

from __future__ import annotations

import pytest

from pytest_guistate.llm.actor import run
from pytest_guistate.llm.errors import LLMBudgetExceeded, LLMRunFailed

FEED = "com.guistate.feed"
TASK = "Delete the post by Carol"


def test_429_529_500_with_retry_after_are_retried_by_the_sdk(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("429:retry=0.05", "529:retry=0.05", "", "500:retry=0.05")
    client = llm(max_retries=2)
    result = run(device.session, device.screen, TASK, llm=client, max_steps=10)
    assert result.success
    assert [r.status for r in server.requests[:5]] == [429, 529, 200, 500, 200]
    assert client.ledger.totals()["retries"] == 3
    assert server.requests[0].body == server.requests[2].body  # the SDK re-sent the same request


def test_retries_exhausted_is_an_api_error_outcome_with_steps_kept(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "429:retry=0.01", "429:retry=0.01", "429:retry=0.01")
    result = run(device.session, device.screen, TASK, llm=llm(max_retries=2), max_steps=10, raise_on_failure=False)
    assert result.outcome == "api_error"
    assert "429" in result.summary and "rate_limit_error" in result.summary and "request-id req_ref_" in result.summary
    assert len(result.turns) == 1 and result.turns[0].step == 1
    assert len(device.session.steps) == 1  # the first step is kept in the session


def test_timeout_is_an_api_error_outcome(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "slow:3")
    result = run(device.session, device.screen, TASK, llm=llm(timeout_s=0.5, max_retries=0), max_steps=10,
                 raise_on_failure=False)
    assert result.outcome == "api_error" and "Timeout" in result.summary
    assert len(result.turns) == 1 and len(device.session.steps) == 1


def test_malformed_tool_input_is_repaired_once(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("malformed")
    result = run(device.session, device.screen, TASK, llm=llm(), max_steps=10)
    assert result.success
    first = result.turns[0]
    assert first.outcome == "malformed_tool_input" and "tap input.element_id must be string" in first.note
    assert "last_error" in server.requests[1].body["messages"][0]["content"][5]["text"]


def test_malformed_tool_input_twice_ends_the_run(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "malformed", "malformed")
    with pytest.raises(LLMRunFailed, match="malformed_tool_input") as info:
        run(device.session, device.screen, TASK, llm=llm(), max_steps=10)
    result = info.value.result
    assert [t.outcome for t in result.turns] == ["ok", "malformed_tool_input", "malformed_tool_input"]
    assert len(device.session.steps) == 1


def test_max_tokens_stop(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "max_tokens")
    result = run(device.session, device.screen, TASK, llm=llm(), max_steps=10, raise_on_failure=False)
    assert result.outcome == "max_tokens" and "max_tokens" in result.summary
    assert len(device.session.steps) == 1


def test_small_max_tokens_is_a_max_tokens_stop_too(sim, llm) -> None:
    device = sim(FEED)
    result = run(device.session, device.screen, TASK, llm=llm(max_tokens=5), max_steps=3, raise_on_failure=False)
    assert result.outcome == "max_tokens"


def test_refusal_text_instead_of_a_tool_call(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "refusal")
    result = run(device.session, device.screen, TASK, llm=llm(), max_steps=10, raise_on_failure=False)
    assert result.outcome == "refusal" and "can't help" in result.summary
    assert len(result.turns) == 2 and len(device.session.steps) == 1


def test_hallucinated_element_id(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("", "hallucinate", "hallucinate")
    result = run(device.session, device.screen, TASK, llm=llm(), max_steps=10, raise_on_failure=False)
    assert result.outcome == "hallucinated_element" and "'9/9/9/9' is not in <elements>" in result.summary
    assert len(device.session.steps) == 1  # nothing was tapped for the invented id
    assert len(device.log("tap")) == 1


def test_budget_exceeded_stops_the_test_with_a_clear_failure(sim, llm) -> None:
    device = sim(FEED)
    client = llm(budget=6000)
    with pytest.raises(LLMBudgetExceeded, match=r"used \d+ tokens of a budget of 6000") as info:
        run(device.session, device.screen, TASK, llm=client, max_steps=10)
    assert isinstance(info.value, AssertionError)
    assert info.value.used > 6000
    assert len(device.session.steps) >= 1


def test_under_a_test_budget_429_529_500_are_still_retried_and_booked(sim, llm, server) -> None:
    """With a budget the client makes the attempts itself (llm/budgeted.py): same retries, same accounting."""
    from pytest_guistate.core import watchdog

    device = sim(FEED)
    server.script("429:retry=0.05", "529:retry=0.05", "", "500:retry=0.05")
    client = llm(max_retries=2)
    watchdog.arm(120, "budgeted")
    try:
        result = run(device.session, device.screen, TASK, llm=client, max_steps=10)
    finally:
        watchdog.disarm()
    assert result.success
    assert [r.status for r in server.requests[:5]] == [429, 529, 200, 500, 200]
    assert client.ledger.totals()["retries"] == 3
    assert server.requests[0].body == server.requests[2].body



def test_a_tap_on_a_disabled_control_is_refused_and_never_sent(sim, llm, server) -> None:
    device = sim("com.guistate.shopa")
    device.screen.tap_id("com.guistate.shopa:id/cart")  # the empty cart: its Checkout is disabled
    server.script("disabled", "disabled")  # the model taps it, and again after the refusal
    result = run(device.session, device.screen, "Check out", llm=llm(), max_steps=10, raise_on_failure=False)
    assert result.outcome == "disabled_element", (result.outcome, [t.outcome for t in result.turns])
    assert "'Checkout'" in result.summary and "is disabled" in result.summary
    assert [t.outcome for t in result.turns] == ["disabled_element", "disabled_element"]
    assert "is disabled on this screen" in server.requests[1].body["messages"][0]["content"][5]["text"]
    assert not device.session.steps  # nothing was tapped
    assert not device.log("checkout")
