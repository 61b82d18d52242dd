"""The reference policy's turn decisions on hand-made prompts: what it does from the request alone
(the element list, the task state's facts and focus, the history, the tools offered)."""

from __future__ import annotations

from typing import Any

from pytest_guistate.llm.reference.policy import PromptView, actor_answer

ANDROID_TOOLS = ["tap", "type_text", "swipe", "back", "wait", "refresh", "done"]
IOS_TOOLS = ["tap", "type_text", "swipe", "back", "home", "wait", "refresh", "done"]
DARK_OFF = [{"id": "1/3/0", "kind": "TextView", "text": "Dark mode"},
            {"id": "1/3/2", "kind": "Switch", "text": "OFF", "tap": True, "in": "Dark mode · Off"}]
CAROL = [{"id": "1/1/0", "kind": "RecyclerView", "scroll": True},
         {"id": "1/1/0/2/1", "kind": "TextView", "text": "Carol"},
         {"id": "1/1/0/2/3", "kind": "Button", "text": "Delete", "desc": "Delete post by Carol", "tap": True,
          "in": "Avatar of Carol · Carol · Sunset from the pier"}]


def view(instruction: str, elements: list[dict[str, Any]], *, facts: dict[str, str] | None = None,
         history: list[str] | None = None, verdict: str | None = None, app: str = "com.guistate.settings",
         tools: list[str] | None = None) -> PromptView:
    state = {"summary": {"goal": instruction, "facts": {k: {"value": v} for k, v in (facts or {}).items()}},
             "focus": {"verdict": verdict, "last_action": (history or [""])[-1].partition(" ")[2]}}
    return PromptView(instruction=instruction, state=state, elements=elements, history=history or [],
                      screen={"app": app}, tools=tools or ANDROID_TOOLS)


def test_a_switch_is_tapped_once_and_the_tap_is_remembered() -> None:
    name, args = actor_answer(view("Turn on dark mode", DARK_OFF))
    assert (name, args["element_id"]) == ("tap", "1/3/2")
    assert args["remember"] == {"goal 1: turn on dark mode": "tapped"}


def test_a_switch_that_did_not_change_is_looked_at_again_never_tapped_twice() -> None:
    tapped = {"goal 1: turn on dark mode": "tapped"}
    first = view("Turn on dark mode", DARK_OFF, facts=tapped, history=['1 tap 1/3/2 "OFF" -> ok, no_change'],
                 verdict="no_change")
    assert actor_answer(first)[0] == "wait"
    looked = view("Turn on dark mode", DARK_OFF, facts=tapped, verdict="no_change",
                  history=['1 tap 1/3/2 "OFF" -> ok', "2 wait 1s -> ok", "3 wait 1s -> ok"])
    name, args = actor_answer(looked)
    assert name == "done" and args["success"] is False and "did not turn on after one tap" in args["summary"]


def test_what_already_holds_is_done_without_an_action() -> None:
    on = [{"id": "1/4/2", "kind": "Switch", "text": "ON", "tap": True, "in": "Notifications · On"}]
    name, args = actor_answer(view("Make sure Notifications is on", on))
    assert name == "done" and args["success"] is True and args["remember"] == {"goal 1: turn on Notifications": "done"}


def test_a_deleted_row_still_shown_is_refreshed_then_given_up_never_deleted_again() -> None:
    confirmed = {"goal 1: delete Carol": "confirmed"}
    stale = view("Delete the post by Carol", CAROL, facts=confirmed, app="com.guistate.feed",
                 history=['2 tap 2/2 "Delete" in: Delete post? · Delete post by Carol? -> ok, uncertain'])
    assert actor_answer(stale)[0] == "refresh"
    still = view("Delete the post by Carol", CAROL, facts=confirmed, app="com.guistate.feed",
                 history=['2 tap 2/2 "Delete" -> ok', "3 refresh -> ok", "4 refresh -> ok"])
    name, args = actor_answer(still)
    assert name == "done" and not args["success"] and "still shown after two refreshes" in args["summary"]


def test_a_spinner_is_waited_for() -> None:
    spinner = [{"id": "1/3", "kind": "ProgressBar", "desc": "Loading"}]
    assert actor_answer(view("Add a Phone Case to the cart", spinner, app="com.guistate.shopa"))[0] == "wait"


def test_going_home_uses_the_tool_the_platform_offers() -> None:
    feed = CAROL
    assert actor_answer(view("Go home", feed, app="Feed", tools=IOS_TOOLS))[0] == "home"
    assert actor_answer(view("Go home", feed, app="com.guistate.feed"))[0] == "back"
    icons = [{"id": "1/0", "kind": "ViewGroup", "desc": "Feed", "rid": "icon", "tap": True},
             {"id": "1/1", "kind": "ViewGroup", "desc": "Gallery", "rid": "icon", "tap": True}]
    name, args = actor_answer(view("Go home", icons, app="com.android.launcher3"))
    assert name == "done" and args["success"] is True


def test_a_finished_intent_is_skipped_by_its_remembered_marker() -> None:
    icons = [{"id": "0/0", "kind": "Icon", "text": "Feed", "tap": True},
             {"id": "0/1", "kind": "Icon", "text": "Gallery", "tap": True}]
    done_first = {"goal 1: go home": "done"}
    name, args = actor_answer(view("Go home and open Gallery", icons, facts=done_first, app="SpringBoard",
                                   tools=IOS_TOOLS))
    assert (name, args["element_id"]) == ("tap", "0/1")


def test_a_goal_outside_the_grammar_gives_up_before_acting() -> None:
    name, args = actor_answer(view("Turn on dark mode and order a pizza", DARK_OFF))
    assert name == "done" and not args["success"] and "'order a pizza'" in args["summary"]
    assert "not a language model" in args["summary"]


def test_a_screen_with_nothing_that_fits_gives_up_with_the_reason() -> None:
    empty_cart = [{"id": "1/1", "kind": "TextView", "text": "Your cart is empty"},
                  {"id": "1/3", "kind": "Button", "text": "Checkout", "tap": True, "disabled": True}]
    name, args = actor_answer(view("Check out", empty_cart, app="com.guistate.shopa"))
    assert name == "done" and not args["success"] and "the cart is empty" in args["summary"]
    name, args = actor_answer(view("Add a Phone Case to the cart", [], app="com.android.launcher3"))
    assert not args["success"] and "in which app" in args["summary"]


def test_an_interstitial_is_dismissed_by_its_way_out() -> None:
    nag = [*CAROL, {"id": "2/1", "kind": "TextView", "text": "Enjoying Feed? Rate us!"},
           {"id": "2/2", "kind": "Button", "text": "Rate now", "tap": True, "in": "Enjoying Feed? Rate us!"},
           {"id": "2/3", "kind": "Button", "text": "Not now", "tap": True, "in": "Enjoying Feed? Rate us!"}]
    name, args = actor_answer(view("Delete the post by Carol", nag, app="com.guistate.feed"))
    assert (name, args["element_id"]) == ("tap", "2/3") and "not part of the goal" in args["reason"]
