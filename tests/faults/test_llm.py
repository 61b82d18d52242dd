"""LLM faults end-to-end (issue 14): the reference server's fault modes through the real SDK in a
pytester run; each ends with a named outcome, the steps before it kept and the API key nowhere."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer

from .bad_llm import BadLLM

API_KEY = "sk-ant-api03-FAULT-SUITE-KEY-never-logged"

RUN = '''
import pytest

SECRET = "hunter2-never-in-logs"


@pytest.mark.guistate(app="com.guistate.feed")
def test_llm(device, guistate):
    guistate.secret(SECRET)
    guistate.run("Delete the post by Carol", max_steps=6)
'''


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReferenceServer]:
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        yield server


CASES = [
    # (fault, the script after one good turn, extra args, what the output names)
    ("429 with retry-after", ["429:retry=0.01"] * 3, (), ("api_error", "429", "rate_limit_error")),
    ("malformed tool input", ["malformed", "malformed"], (), ("malformed_tool_input",)),
    ("refusal", ["refusal"], (), ("refusal", "answered without a tool call")),
]
# 529, 500 and max_tokens end the same way (tests/llm/test_faults.py drives them through the actor);
# benchmarks/fault_table.py runs them end to end too. Kept out here for the suite's time budget.
EXTRA_CASES = [
    ("529 overloaded", ["529:retry=0.01"] * 3, (), ("api_error", "529", "overloaded_error")),
    ("500", ["500:retry=0.01"] * 3, (), ("api_error", "500", "api_error")),
    ("max_tokens", ["max_tokens"], (), ("max_tokens", "guistate_llm_max_tokens")),
]


ALL = CASES + (EXTRA_CASES if os.environ.get("GUISTATE_FAULT_TABLE") else [])


@pytest.mark.parametrize(("what", "script", "args", "names"), ALL, ids=[c[0] for c in ALL])
def test_an_llm_fault_ends_the_run_naming_it(run_inner, llm_server: ReferenceServer, what: str, script: list[str],
                                             args: tuple[str, ...], names: tuple[str, ...]) -> None:
    llm_server.script("", *script)
    out = run_inner(RUN, "--guistate-device=sim", "--guistate-llm=anthropic", *args)
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=60, names=names, steps=[])
    assert len(out.finished_steps()) >= 1, "the step of the good turn was lost"
    assert API_KEY not in out.text
    for path in out.root.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), f"the API key reached {path}"


def test_a_slow_llm_call_ends_at_the_budget_not_after_it(run_inner, llm_server: ReferenceServer) -> None:
    """The request's timeout is what is left of the budget and no retry outlives it (issue 14: 7.6 s for 4 s)."""
    # 10 s, not less: the good turn before the slow one must fit in the budget on a loaded CI machine (at 4 s it
    # ran out at a device call first, and the slow request was never sent)
    llm_server.script("", "slow:30")
    out = run_inner(RUN, "--guistate-device=sim", "--guistate-llm=anthropic", "--guistate-test-timeout=10")
    out.result.assert_outcomes(failed=1)
    assert len(llm_server.requests) == 2, "the slow request was retried past the budget"
    budget_spent = "exceeded its 10 s budget (guistate_test_timeout) at the LLM actor call"
    out.assert_contract(bound_s=60, names=("TestTimeout", budget_spent), steps=[],
                        suffix=f" (call phase {out.call_seconds():.1f} s)")
    assert len(out.finished_steps()) >= 1, "the step of the good turn was lost"


BAD_ANSWER_CASES = [
    # (the bad answer, what the message names)
    ("cut", ("answered HTTP 200 with a body that is not a Messages API answer", "JSONDecodeError")),
    ("short", ("failed after 0 retries", "peer closed connection without sending complete message body")),
    ("shape", ("answered HTTP 200 with JSON of another shape: missing type 'message', usage.input_tokens",)),
    ("no_usage", ("answered HTTP 200 with JSON of another shape: missing usage.input_tokens",)),
    ("no_content", ("answered HTTP 200 with JSON of another shape: missing content (a list)",)),
]


@pytest.mark.parametrize(("answer", "names"), BAD_ANSWER_CASES, ids=[c[0] for c in BAD_ANSWER_CASES])
def test_an_answer_the_sdk_cannot_use_is_an_llm_error_naming_the_endpoint(
        run_inner, llm_server: ReferenceServer, monkeypatch: pytest.MonkeyPatch, answer: str,
        names: tuple[str, ...]) -> None:
    """Issue 22: a cut-off body was a raw JSONDecodeError, JSON of another shape an AttributeError."""
    bad = BadLLM(llm_server.url, answer, good=1).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", bad.url)
    try:
        out = run_inner(RUN, "--guistate-device=sim", "--guistate-llm=anthropic", "-o", "guistate_llm_retries=0")
    finally:
        bad.stop()
    out.result.assert_outcomes(failed=1)
    out.assert_contract(bound_s=60, names=("LLMError", f"{bad.url}/v1/messages", *names), steps=[])
    assert "AttributeError" not in out.text and "Traceback" not in out.text
    assert len(out.finished_steps()) >= 1, "the step of the good turn was lost"


def test_the_request_timeout_is_an_option(run_inner, llm_server: ReferenceServer) -> None:
    """Issue 22: 60 s x 3 attempts was neither an option nor documented; here 1 s, one retry."""
    llm_server.script("", "slow:20", "slow:20")
    out = run_inner(RUN, "--guistate-device=sim", "--guistate-llm=anthropic", "--guistate-llm-timeout=1",
                    "-o", "guistate_llm_retries=1")
    out.result.assert_outcomes(failed=1)
    # the SDK says APITimeoutError, or APIConnectionError caused by httpx's ReadTimeout when the read timed
    # out inside its transport (seen in CI): either way the message says the attempt timed out
    out.assert_contract(bound_s=60, names=("LLMError", "failed after 1 retries", "timed out",
                                           "timeout 1 s per attempt, --guistate-llm-timeout"), steps=[],
                        suffix=f" (call phase {out.call_seconds():.1f} s)")
    assert out.call_seconds() < 20, f"two 1 s attempts took {out.call_seconds():.1f} s (60 s each by default)"


def test_a_bad_llm_timeout_is_a_usage_error(run_inner) -> None:
    out = run_inner("def test_x():\n    pass\n", "--guistate-llm-timeout=soon")
    assert out.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--guistate-llm-timeout: 'soon' is not a number of seconds" in out.text
