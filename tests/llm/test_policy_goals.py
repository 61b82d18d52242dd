"""Issue 28: the reference policy carries out the goals people write, on both personas, and the
device's action log proves what happened; goals outside its grammar give up with the reason.

Every case also gets one of the reference server's faults on its first request, in rotation, so each
goal kind shows the faults still work on it: the SDK retries 429/529, the actor repairs a malformed,
hallucinated, unoffered or disabled answer, and the action log stays exactly what the goal asks for.
"""

from __future__ import annotations

import pytest

from pytest_guistate.llm.reference.goals import GRAMMAR, OutsideGrammar, SignIn, Toggle, parse_goal
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.llm.goal_table import CASES, GoalCase, run_case

FAULT_ROTATION = ("", "429:retry=0.01", "malformed", "hallucinate", "unoffered", "529:retry=0.01", "disabled")
REPAIRED = {"malformed": "malformed_tool_input", "hallucinate": "hallucinated_element",
            "unoffered": "malformed_tool_input"}


def test_the_table_covers_every_app_and_both_personas() -> None:
    assert len(CASES) >= 20
    assert {c.platform for c in CASES} == {"android", "ios"}
    goals = " ".join(c.goal for c in CASES)
    started = {c.app for c in CASES}
    assert {"com.guistate.feed", "com.guistate.gallery", "com.guistate.settings", "com.guistate.shopa",
            "com.guistate.shopb", None} <= started
    assert "ShopB" in goals and any(not c.success for c in CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_goal(index: int, sim_url: str) -> None:
    case: GoalCase = CASES[index]
    fault = FAULT_ROTATION[index % len(FAULT_ROTATION)]
    with ReferenceServer() as server:
        server.script(fault)
        outcome = run_case(case, sim_url, server.url)
    assert not outcome.problems, (outcome.problems, [(t.tool, t.input, t.outcome) for t in outcome.result.turns])
    first = outcome.result.turns[0]
    if fault.split(":")[0] in REPAIRED:
        assert first.outcome == REPAIRED[fault.split(":")[0]] and first.step is None  # nothing ran for it
    if fault.startswith(("429", "529")):
        assert [r.status for r in server.requests[:2]] == [int(fault[:3]), 200]  # the SDK retried
    assert outcome.steps == len([t for t in outcome.result.turns if t.step is not None])
    assert outcome.tokens > 0


def test_goals_outside_the_grammar_name_the_clause_and_the_grammar() -> None:
    refused = parse_goal("Turn on dark mode and order a pizza")
    assert isinstance(refused, OutsideGrammar) and refused.clause == "order a pizza"
    assert "not a language model" in refused.reason and GRAMMAR in refused.reason
    assert isinstance(parse_goal(""), OutsideGrammar)
    incomplete = parse_goal("Sign in as qa@example.com")
    assert isinstance(incomplete, OutsideGrammar) and "needs both" in incomplete.reason


@pytest.mark.parametrize("goal", [
    "Sign in with the e-mail qa@example.com and the password correct-horse",
    "Log in to Settings as qa@example.com with password correct-horse",
    "log in with password correct-horse and user qa@example.com.",
    "Sign in, username: qa@example.com, password: correct-horse",
])
def test_sign_in_in_any_order_and_phrasing(goal: str) -> None:
    assert parse_goal(goal) == [SignIn("qa@example.com", "correct-horse", "Settings")]


def test_clauses_split_on_then_and_and_only_where_each_piece_reads() -> None:
    plan = parse_goal("Sign in as qa@example.com with password correct-horse and turn off Wi-Fi, then go home")
    assert not isinstance(plan, OutsideGrammar)
    assert [type(p).__name__ for p in plan] == ["SignIn", "Toggle", "Navigate"]
    assert plan[1] == Toggle("Wi-Fi", False)
    moved = parse_goal("Move Beach, Cat and Sunset to the Travel album")
    assert not isinstance(moved, OutsideGrammar) and moved[0].labels == ("Beach", "Cat", "Sunset")  # type: ignore[union-attr]


def test_the_policy_reads_only_the_request() -> None:
    """It decides from the prompt alone: nothing of the sim (apps, ground truth) is imported."""
    import ast
    import inspect

    from pytest_guistate.llm.reference import goals, policy, queries

    for module in (policy, goals, queries):
        tree = ast.parse(inspect.getsource(module))
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if "devices" in m or "sim" in m], imported
