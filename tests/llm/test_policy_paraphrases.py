"""Issue 32, item 7: the reference policy reads the everyday phrasings of each intent it knows, and a
goal it cannot read without guessing is refused before any action.

Each paraphrase of `goal_table.PARAPHRASES` runs through the real Appium client against the sim and
the real `anthropic` SDK against the reference server; the device's own action log
(`device.action_log()`) must show exactly the goal's effects, in order, and a refusal must show none.
"""

from __future__ import annotations

import pytest

from pytest_guistate.llm.reference.goals import DeleteItem, OutsideGrammar, SignIn, Toggle, parse_goal
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.llm.goal_table import CASES, PARAPHRASES, GoalCase, run_case


def test_the_paraphrases_are_new_and_cover_every_intent_kind_and_both_personas() -> None:
    assert len(PARAPHRASES) >= 20
    assert not {c.goal for c in PARAPHRASES} & {c.goal for c in CASES}
    assert {c.platform for c in PARAPHRASES} == {"android", "ios"}
    kinds = {type(i).__name__ for c in PARAPHRASES if not isinstance(p := parse_goal(c.goal), OutsideGrammar)
             for i in p}
    assert {"SignIn", "Toggle", "DeleteItem", "AddToCart", "Checkout", "MovePhotos"} <= kinds


@pytest.mark.parametrize("index", range(len(PARAPHRASES)), ids=[c.id for c in PARAPHRASES])
def test_paraphrase(index: int, sim_url: str) -> None:
    case: GoalCase = PARAPHRASES[index]
    with ReferenceServer() as server:
        outcome = run_case(case, sim_url, server.url)
    assert not outcome.problems, (outcome.problems, [(t.tool, t.input, t.outcome) for t in outcome.result.turns])
    if not case.success:  # refused before it acted: not one step ran, one request was answered
        assert outcome.steps == 0 and outcome.result.outcome == "gave_up" and len(server.requests) == 1


@pytest.mark.parametrize(("goal", "password"), [
    ("Log in as qa@example.com (password correct-horse) and turn on dark mode", "correct-horse"),
    ("Log in as qa@example.com (password 'p(a)ss') and go home", "p(a)ss"),
    ('Sign in as qa@example.com, password "two words"', "two words"),
    ("Sign in with qa@example.com / pa/ss, then switch Wi-Fi off", "pa/ss"),
])
def test_a_password_is_read_without_the_bracket_or_comma_around_it(goal: str, password: str) -> None:
    plan = parse_goal(goal)
    assert not isinstance(plan, OutsideGrammar) and plan[0] == SignIn("qa@example.com", password, "Settings")


@pytest.mark.parametrize(("goal", "intent"), [
    ("Remove Erin's post from the feed", DeleteItem("Erin")),
    ("Delete Bob's post from the feed", DeleteItem("Bob")),
    ("Remove the post from Bob", DeleteItem("Bob")),
    ("Switch Wi-Fi off", Toggle("Wi-Fi", False)),
    ("Make sure that dark mode is switched on", Toggle("dark mode", True)),
])
def test_everyday_phrasings_parse_to_the_intent(goal: str, intent: object) -> None:
    assert parse_goal(goal) == [intent]


@pytest.mark.parametrize("goal", ["Remove the post", "Delete the post by the", "Delete the post from the feed",
                                  "Log in as qa@example.com (password)",
                                  "Log in as qa@example.com (password (secret)) and go home"])
def test_a_goal_that_would_be_a_guess_is_refused_with_a_name(goal: str) -> None:
    refused = parse_goal(goal)
    assert isinstance(refused, OutsideGrammar) and any(
        why in refused.reason for why in ("which one?", "needs both", "put the password in quotes"))
