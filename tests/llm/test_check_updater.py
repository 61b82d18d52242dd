"""guistate.check (cross-checked verdicts) and the LLM state updater (TSR's U)."""

from __future__ import annotations

import pytest

from pytest_guistate.core.checks import gone
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import TaskState
from pytest_guistate.llm.actor import run
from pytest_guistate.llm.check import AICheckFailed, check
from pytest_guistate.llm.updater import LLMStateUpdater, should_activate

FEED = "com.guistate.feed"


def test_check_pass_cites_elements_that_exist(sim, llm) -> None:
    device = sim(FEED)
    verdict = check(device.session, "The feed shows a post by Carol", llm=llm())
    assert verdict.passed and verdict.problems == []
    cited = device.session.observe().tree.by_index_path(verdict.evidence[0]["element_id"])
    assert cited is not None and "Carol" in cited.label


def test_check_fail_raises_with_progress(sim, llm) -> None:
    device = sim(FEED)
    device.session.goal("tidy the feed", ["delete Carol's post"])
    with pytest.raises(AICheckFailed, match=r"(?s)AI check fail: .*Carol.* still on screen.*current \"delete Carol's post\"") as info:
        check(device.session, "The post by Carol is gone", llm=llm())
    assert info.value.verdict.verdict == "fail"


def test_check_with_hallucinated_evidence_is_unverified_not_pass(sim, llm, server) -> None:
    device = sim(FEED)
    server.script("hallucinate")
    verdict = check(device.session, "The feed shows a post by Carol", llm=llm(), raise_on_failure=False)
    assert verdict.model_verdict == "pass" and verdict.verdict == "unverified"
    assert "cited element '9/9/9/9' is not on the screen" in verdict.problems


def test_updater_on_demand_asks_only_at_exceptions_and_boundaries(sim, llm, server) -> None:
    device = sim(FEED, refresh_delay=1.5)
    client = llm()
    updater = LLMStateUpdater(client)
    device.session.updater = updater
    plan = [("post by Carol gone", gone("Carol"))]  # a milestone boundary: one reason to ask
    result = run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12, plan=plan)
    assert result.success
    assert any("milestone boundary" in reason for reason in updater.reasons)
    steps = len(device.session.steps)
    assert 0 < updater.calls < steps and not updater.errors, updater.reasons
    purposes = [c.purpose for c in client.ledger.calls]
    assert purposes.count("updater") == updater.calls
    answers = [r for r in server.requests if r.body["tools"][0]["name"] == "update_task_state"]
    assert all(r.body["tool_choice"] == {"type": "tool", "name": "update_task_state"} for r in answers)


def test_activation_names_every_reason_of_a_step() -> None:
    previous = TaskState()
    reached = TaskState(completed=["post by Carol gone"])
    plain = StepRecord(1, "tap", "perform", None, False, outcome="ok", verdict="changed", confirmed=True)
    assert should_activate(previous, previous, plain, None) == ""
    assert should_activate(previous, reached, plain, None) == "milestone boundary"
    # the milestone reached inside a stale-screen episode: the boundary is not hidden by the exception
    settled = StepRecord(3, "refresh", "perform", None, True, outcome="settled", verdict="changed",
                         confirmed=True, episode=True)
    assert should_activate(previous, reached, settled, None) == "exception, milestone boundary"
    unsure = StepRecord(2, "tap", "perform", None, False, outcome="ok", verdict="no_change", confirmed=False)
    assert should_activate(previous, previous, unsure, None) == "oracle uncertain"


def test_updater_always_runs_every_step_and_merges_focus(sim, llm) -> None:
    device = sim(FEED)
    client = llm()
    updater = LLMStateUpdater(client, activation="always")
    device.session.updater = updater
    run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    assert updater.calls == len(device.session.steps) and not updater.errors
    assert device.session.state.focus.next_focus  # the model's focus was merged into S_t


def test_updater_malformed_answer_keeps_the_offline_state(sim, llm, server) -> None:
    device = sim(FEED)
    client = llm()
    updater = LLMStateUpdater(client, activation="always")
    device.session.updater = updater
    server.script("", "malformed")  # actor turn 1 ok, then the updater's answer is malformed
    run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    assert updater.errors and "update_task_state input is missing the required field 'summary'" in updater.errors[0]
