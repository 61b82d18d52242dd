"""Two elements that both match the goal ("Dark mode" under Keyboard and under Display): the reference
policy acts on the one the recorded target's surroundings pick (a cache fallback's handover hint, or
what it remembered when it acted), and with nothing to tell them apart gives up naming both, never
the first on screen."""

from __future__ import annotations

from typing import Any

from pytest_guistate.llm.cache.identity import surroundings, target_hint
from pytest_guistate.llm.cache.per_test import _handover
from pytest_guistate.llm.reference.policy import actor_answer
from tests.llm.test_policy_decisions import view


def row(n: int, label: str, on: bool = False) -> list[dict[str, Any]]:
    state = "On" if on else "Off"
    return [{"id": f"1/{n}", "kind": "LinearLayout", "tap": True, "in": f"{label} · {state}"},
            {"id": f"1/{n}/0", "kind": "TextView", "text": label},
            {"id": f"1/{n}/1", "kind": "TextView", "text": state},
            {"id": f"1/{n}/2", "kind": "Switch", "text": state.upper(), "tap": True, "in": f"{label} · {state}"}]


def heading(n: int, text: str) -> list[dict[str, Any]]:
    return [{"id": f"1/{n}", "kind": "TextView", "text": text}]


# "Dark mode" twice: the Keyboard section's first, then the Display section's (the one recorded)
TWINS = [*heading(1, "Keyboard"), *row(2, "Dark mode"), *heading(3, "Display"), *row(4, "Wi-Fi", True),
         *row(5, "Dark mode"), *row(6, "Notifications", True)]
RECORDED = {"kind": "Switch", "text": "OFF", "in": "Dark mode · Off", "checked": False,
            "near": ["Wi-Fi", "Notifications"], "alike": [1, 1]}


def handed_over(hint: str, elements: list[dict[str, Any]] = TWINS) -> Any:
    v = view("Turn on Dark mode", elements)
    v.sections["handover"] = "Then: cache miss at step 1: ambiguous.\n" + hint
    return v


def test_the_hint_says_what_the_recorded_element_was_and_what_surrounded_it() -> None:
    hint = target_hint(RECORDED, 2)
    assert hint.startswith('Recorded target: "Dark mode" switch (off); row "Dark mode · Off"; above: "Wi-Fi"; '
                           'below: "Notifications"; 1 of 1 like it then; 2 on this screen match it now')
    assert len(hint) < 300  # it goes into a request: tokens are counted


def test_surroundings_skip_the_elements_own_row() -> None:
    assert surroundings(TWINS, TWINS[4]) == ("Keyboard", "Display")
    assert surroundings(TWINS, TWINS[-5]) == ("Wi-Fi", "Notifications")


def test_the_hint_picks_the_twin_with_the_recorded_surroundings() -> None:
    name, args = actor_answer(handed_over(target_hint(RECORDED, 2)))
    assert (name, args["element_id"]) == ("tap", "1/5/2")
    # the next turn has no hint: it remembers which one it acted on
    assert args["remember"]["goal 1: turn on Dark mode (near)"] == '["Wi-Fi", "Notifications"]'


def test_one_recorded_neighbour_is_enough_when_only_one_twin_has_it() -> None:
    far = [*heading(1, "Keyboard"), *row(2, "Dark mode"), *heading(3, "Display"), *row(4, "Wi-Fi", True),
           *row(5, "Notifications", True), *row(6, "Dark mode"), *heading(7, "Log out")]
    name, args = actor_answer(handed_over(target_hint(RECORDED, 2), far))
    assert (name, args["element_id"]) == ("tap", "1/6/2")


def test_the_turn_after_the_tap_judges_the_remembered_twin_not_the_first() -> None:
    after = [*TWINS[:12], *row(5, "Dark mode", True), *TWINS[16:]]
    facts = {"goal 1: turn on Dark mode": "tapped", "goal 1: turn on Dark mode (near)": '["Wi-Fi", "Notifications"]'}
    name, args = actor_answer(view("Turn on Dark mode", after, facts=facts))
    assert name == "done" and args["success"] is True


def test_a_hint_that_cannot_tell_them_apart_gives_up_naming_both() -> None:
    alone = {**RECORDED, "near": ["Keyboard", "Display"]}
    same = [*heading(1, "Keyboard"), *row(2, "Dark mode"), *heading(3, "Display"),
            *heading(4, "Keyboard"), *row(5, "Dark mode"), *heading(6, "Display")]
    name, args = actor_answer(handed_over(target_hint(alone, 2), same))
    assert name == "done" and args["success"] is False
    assert "ambiguous: 2 elements match 'Dark mode'" in args["summary"]
    assert "1/2/2" in args["summary"] and "1/5/2" in args["summary"]


def test_without_a_hint_two_equal_matches_are_ambiguous_not_the_first() -> None:
    name, args = actor_answer(view("Turn on Dark mode", TWINS))
    assert name == "done" and args["success"] is False
    assert "1/2/2 between 'Keyboard' and 'Display'" in args["summary"]
    assert "1/5/2 between 'Wi-Fi' and 'Notifications'" in args["summary"]


def test_the_goals_words_select_the_exactly_named_one() -> None:
    both = [*row(1, "Dark mode schedule"), *row(2, "Dark mode")]
    name, args = actor_answer(view("Turn on Dark mode", both))
    assert (name, args["element_id"]) == ("tap", "1/2/2")


def test_a_hint_about_another_element_is_not_read_for_this_goal() -> None:
    other = target_hint({"kind": "Button", "text": "Delete", "near": ["Wi-Fi", "Notifications"]}, 2)
    name, args = actor_answer(handed_over(other))
    assert name == "done" and args["success"] is False and "ambiguous" in args["summary"]


def test_the_handover_carries_the_hint_even_when_no_step_was_replayed() -> None:
    hint = target_hint(RECORDED, 2)
    assert _handover([], "cache miss at step 1: ambiguous", [], None, hint) == \
        ["Then: cache miss at step 1: ambiguous.", hint]
    assert _handover([], "cache miss at step 1: no element like 'Dark mode'", [], None) == []  # a plain live run
    assert _handover(["hit: tap Wi-Fi"], "cache miss at step 2: ambiguous", [], None, hint)[-1] == hint


def post(n: int, author: str, text: str, top: int) -> list[dict[str, Any]]:
    return [{"id": f"1/{n}/0", "kind": "TextView", "text": author, "at": [40, top, 400, top + 40]},
            {"id": f"1/{n}/1", "kind": "TextView", "text": text, "at": [40, top + 50, 800, top + 90]},
            {"id": f"1/{n}/2", "kind": "Button", "text": "Delete", "desc": f"Delete post by {author}", "tap": True,
             "in": f"{author} · {text}", "at": [880, top + 20, 1040, top + 80]}]


def test_two_posts_by_the_same_author_are_ambiguous_not_the_first_deleted() -> None:
    feed = [*post(1, "Bob", "Hello again", 300), *post(2, "Alice", "Lunch", 500), *post(3, "Bob", "Old news", 700)]
    name, args = actor_answer(view("Delete the post by Bob", feed, app="com.guistate.feed"))
    assert name == "done" and args["success"] is False and "ambiguous: 2 elements match 'Bob'" in args["summary"]
    one = actor_answer(view("Delete the post by Alice", feed, app="com.guistate.feed"))
    assert (one[0], one[1]["element_id"]) == ("tap", "1/2/2")
