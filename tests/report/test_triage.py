"""Triage: each label from a known cause, with its evidence; rule order decides ties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.core.errors import MilestoneNotVisible
from pytest_guistate.report.finish import finalize
from pytest_guistate.report.triage import LABELS, triage
from tests.helpers.scenario import start


def step(index: int, name: str = "tap", **kw: Any) -> dict[str, Any]:
    base = {"index": index, "name": name, "outcome": "ok", "verdict": "changed", "confirmed": True, "episode": False,
            "attempts": [], "error": None, "explanation": "", "package_after": "com.app"}
    return {**base, **kw}


def anchor(id: str, type: str, step: int | None, title: str = "", app: str = "", **data: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "step": step, "title": title, "app": app, "data": data}


def test_environment_wins_over_everything() -> None:
    steps = [step(1), step(2, outcome="failed", error="DeviceError: no Appium server answers at http://127.0.0.1:1")]
    result = triage(steps, [anchor("a1", "EXCEPTION", 2, "conflict", kind="conflict")])
    assert result.label == "environment" and result.step == 2 and "deviceerror" in result.evidence[0].lower()


def test_progress_hallucination_from_a_conflict() -> None:
    conflicts = [{"milestone": "cart has 2 items", "step": 5, "evidence": "text '2 items' not visible",
                  "resolution": "not completed"}]
    result = triage([step(5)], [], {}, "AssertionError", conflicts=conflicts)
    assert result.label == "progress_hallucination" and "cart has 2 items" in result.evidence[0]


def test_hidden_operation_when_the_target_was_never_on_screen() -> None:
    steps = [step(3, "tap Buy", outcome="failed", error="ElementNotFound: no element with text 'Buy'")]
    result = triage(steps)
    assert result.label == "hidden_operation" and result.step == 3 and "'tap Buy'" in result.evidence[0]


def test_a_locator_miss_with_a_close_label_on_screen_is_a_locator_failure_naming_it() -> None:
    """Issue 34: the label was there in another case (CSS upper-cased it), or with a typo: the locator is
    wrong, not the operation hidden; the evidence names the closest candidates, not unrelated ones."""
    miss = ("ElementNotFound: no element with text='Sign in' after waiting 5 s; on screen: 'Email', 'SIGN IN', "
            "'Help'; memory: nothing remembered for 'locator:text=Sign in'")
    result = triage([step(2, "sign in", outcome="failed", error=miss)])
    assert result.label == "grounding_error" and result.step == 2
    assert "'SIGN IN'" in result.evidence[0] and "'Help'" not in result.evidence[0]
    typo = "no element with desc='Delete note by Bob'; on screen: 'Delete note by Bobb', 'Cancel'"
    assert triage([], error=f"ElementNotFound: {typo}").label == "grounding_error"
    android = "no element with -android uiautomator='new UiSelector().text(\"Log in\")'; on screen: 'Log In'"
    assert "'Log In'" in triage([], error=f"ElementNotFound: {android}").evidence[0]


def test_a_locator_miss_with_only_a_word_of_it_on_screen_stays_hidden_operation() -> None:
    miss = ("ElementNotFound: no element with accessibility id='Delete post by Judy'; on screen: 'posts', 'Delete', "
            "'Delete'; memory: nothing remembered for 'locator:desc=Delete post by Judy'")
    assert triage([step(1, outcome="failed", error=miss)]).label == "hidden_operation"


def test_grounding_error_when_the_tap_missed() -> None:
    steps = [step(4, "tap Delete", outcome="failed", explanation="the tap at (540, 910) did not hit 'Delete'")]
    assert triage(steps).label == "grounding_error"
    assert triage([step(1)], [anchor("a1", "EXCEPTION", 1, "missed", kind="grounding")]).label == "grounding_error"


def test_stale_screen_repetition_from_an_unconfirmed_episode() -> None:
    attempts = [{"stage": "initial", "verdict": "no_change"}, {"stage": "settle", "verdict": "no_change"},
                {"stage": "refresh", "verdict": "no_change"}]
    steps = [step(1), step(2, "delete post", outcome="failed", verdict="no_change", confirmed=False, episode=True,
                          attempts=attempts)]
    result = triage(steps)
    assert result.label == "stale_screen_repetition" and "initial -> settle -> refresh" in result.evidence[0]


def test_stale_screen_repetition_from_repeated_no_change_actions() -> None:
    steps = [step(i, "scroll down", verdict="no_change") for i in range(1, 4)]
    assert triage(steps, error="AssertionError: never found").label == "stale_screen_repetition"


def test_goal_drift_when_the_test_wandered_into_another_app() -> None:
    anchors = [anchor("a1", "SUBGOAL", 2, "search done", app="com.shop"),
               anchor("a2", "STATE_CHANGE", 3, "opened com.gallery", app="com.gallery")]
    steps = [step(1, package_after="com.shop"), step(2, package_after="com.shop"),
             step(3, package_after="com.gallery"), step(4, package_after="com.gallery"),
             step(5, package_after="com.gallery")]
    state = {"tracker": {"completed": ["search done"], "current": "add to cart", "remaining": []}}
    result = triage(steps, anchors, state, "AssertionError: timeout")
    assert result.label == "goal_drift" and result.anchor == "a2" and "add to cart" in result.evidence[0]


def test_visual_state_misunderstanding_when_the_screen_changed_differently() -> None:
    attempts = [{"stage": "initial", "verdict": "changed", "expect_ok": False,
                 "evidence": "text 'Order placed' not visible"}]
    steps = [step(6, "place order", outcome="failed", attempts=attempts)]
    result = triage(steps)
    assert result.label == "visual_state_misunderstanding" and "Order placed" in result.evidence[0]


def test_unclassified_says_so() -> None:
    result = triage([step(1)], error="ZeroDivisionError")
    assert result.label == "unclassified" and result.evidence
    assert set(LABELS) >= {result.label}


def test_a_live_milestone_that_left_the_screen_is_not_a_hallucination() -> None:
    conflicts = [{"milestone": "dialog open", "step": 2, "evidence": "marked done at step 1 but now text not visible",
                  "resolution": "reopened"}]
    anchors = [anchor("a1", "EXCEPTION", 2, "conflict: milestone 'dialog open'", kind="conflict",
                      resolution="reopened")]
    result = triage([step(2, outcome="failed")], anchors, {}, "StepFailed", conflicts=conflicts)
    assert result.label != "progress_hallucination"


def test_grounding_needs_the_change_beside_the_expected_element() -> None:
    attempts = [{"stage": "initial", "verdict": "changed", "expect_ok": False, "evidence": "switch is off"}]
    beside = step(4, "switch on", outcome="failed", verdict="changed", confirmed=False, attempts=attempts,
                  regions=[{"box": [0, 400, 1080, 580]}], expect_box=[872, 638, 1032, 702],
                  expect_before={"ok": False, "evidence": "switch is off"})
    assert triage([beside]).label == "grounding_error"
    on_target = {**beside, "regions": [{"box": [0, 580, 1080, 760]}]}
    assert triage([on_target]).label == "visual_state_misunderstanding"  # changed at the target, wrong state
    already = {**beside, "expect_before": {"ok": True, "evidence": "switch is on"}}
    result = triage([already])
    assert result.label == "visual_state_misunderstanding" and "switch is on" in result.evidence[0]


def test_a_scrim_over_the_target_is_not_where_the_tap_landed() -> None:
    """Issue 43: a drawer or dialog opened over a scrim in the app's window gets a `scrim` region (the
    dimmed screen behind, visible change) that touches every element; it says nothing of where the
    step acted, so a tap that opened a drawer instead of toggling the switch stays a grounding error."""
    attempts = [{"stage": "initial", "verdict": "changed", "expect_ok": False, "evidence": "switch is off"}]
    regions = [{"box": [0, 72, 840, 1776], "kind": "change", "container": "dialog 'Menu' appeared"},
               {"box": [0, 72, 1080, 1776], "kind": "scrim", "container": "the screen behind, dimmed"}]
    drawer = step(4, "switch on", outcome="failed", verdict="changed", confirmed=False, attempts=attempts,
                  regions=regions, expect_box=[872, 638, 1032, 702],
                  expect_before={"ok": False, "evidence": "switch is off"})
    result = triage([drawer])
    assert result.label == "grounding_error" and "[0,72][840,1776]" in result.evidence[0]
    assert "[0,72][1080,1776]" not in result.evidence[0]
    changed_there = {**drawer, "regions": [{**regions[0], "kind": "change", "box": [0, 72, 1080, 1776]}]}
    assert triage([changed_there]).label == "visual_state_misunderstanding"  # an item region there still counts


def test_an_app_the_goal_names_is_not_drift() -> None:
    anchors = [anchor("a1", "SUBGOAL", 2, "price in ShopA known", app="com.shopa"),
               anchor("a2", "STATE_CHANGE", 3, "app com.shopa -> com.shopb", app="com.shopb")]
    steps = [step(1, package_before="com.shopa", package_after="com.shopa"), step(2, package_after="com.shopa"),
             step(3, package_after="com.shopb"),
             step(4, "search", outcome="failed", package_after="com.shopb",
                  error="ElementNotFound: no element with id='search'")]
    state = {"summary": {"goal": "Buy in whichever of ShopA and ShopB is cheaper"},
             "tracker": {"completed": ["price in ShopA known"], "current": "price in ShopB known", "remaining": []}}
    assert triage(steps, anchors, state).label == "hidden_operation"
    state = {"summary": {"goal": "Buy in ShopA"},
             "tracker": {"completed": ["price in ShopA known"], "current": "order placed", "remaining": []}}
    assert triage(steps, anchors, state).label == "goal_drift"


def test_source_lines_quoted_in_a_traceback_are_not_evidence() -> None:
    longrepr = ("    def find(self, by, value):\n"
                "            except WebDriverException as exc:\n"
                ">       raise ElementNotFound(f'no element with {by}={value!r}')\n"
                "E       pytest_guistate.devices.errors.ElementNotFound: no element with id='buy'\n")
    result = triage([step(1, "tap Buy")], error=longrepr)
    assert result.label == "hidden_operation" and "id='buy'" in result.evidence[0]


# -- known causes on the simulated phone -------------------------------------------------------

def _finish(run: Any, root: Path, error: BaseException) -> Any:
    run.session.finish("failed", error)
    return finalize(run.recorder, outcome="failed", error=f"{type(error).__name__}: {error}", retain="on", root=root)


def test_sim_milestone_claimed_but_not_visible_is_progress_hallucination(tmp_path: Path) -> None:
    run = start(tmp_path, tier="standard", nodeid="t.py::hallucination")
    run.session.goal("sign in", plan=[("signed in", "Wi-Fi")])
    with pytest.raises(MilestoneNotVisible) as info:
        run.session.milestone("signed in")  # still on the login form
    done = _finish(run, tmp_path, info.value)
    assert done.triage.label == "progress_hallucination"
    assert "signed in" in done.triage.evidence[0]
    assert done.summary.conflicts == 1


def test_sim_tapping_a_missing_element_is_hidden_operation(tmp_path: Path) -> None:
    run = start(tmp_path, tier="standard", nodeid="t.py::hidden")
    run.session.goal("open dark mode", plan=["dark mode on"])
    with pytest.raises(LookupError) as info:
        run.session.perform("tap Dark mode", lambda: run.screen.tap_text("Dark mode"))  # not on the login form
    done = _finish(run, tmp_path, info.value)
    assert done.triage.label == "hidden_operation" and done.triage.step == 1


def test_expected_effect_missing_names_the_look_that_saw_the_change_when_the_last_did_not() -> None:
    attempts = [
        {"stage": "initial", "verdict": "changed", "expect_ok": False, "regions": [[0, 200, 1080, 400]],
         "evidence": "text 'Saved' not visible"},
        {"stage": "settle", "verdict": "changed", "expect_ok": False, "regions": [[0, 200, 1080, 420]],
         "evidence": "text 'Saved' not visible"},
        {"stage": "refresh", "verdict": "no_change", "expect_ok": False, "refreshed_by": "pull-to-refresh",
         "regions": [], "evidence": "text 'Saved' not visible"},
    ]
    steps = [step(3, "save", outcome="failed", expect="visible('Saved')", confirmed=False, episode=True,
                  verdict="no_change", regions=[], attempts=attempts)]
    result = triage(steps)
    assert result.label == "expected_effect_missing", result
    evidence = result.evidence[0]
    assert "somewhere on screen" not in evidence
    assert "[0,200][1080,420] (seen at the settle look; the refresh look after it saw no_change" in evidence


def test_expected_effect_missing_keeps_the_step_regions_when_it_has_them() -> None:
    attempts = [{"stage": "initial", "verdict": "changed", "expect_ok": False, "evidence": "x"},
                {"stage": "refresh", "verdict": "changed", "expect_ok": False, "refreshed_by": "step refresh",
                 "evidence": "text 'Saved' not visible"}]
    regions = [{"box": [10, 20, 110, 220], "container": "android.widget.FrameLayout"}]
    steps = [step(2, "save", outcome="failed", expect="visible('Saved')", confirmed=False, episode=True,
                  regions=regions, attempts=attempts)]
    result = triage(steps)
    assert result.label == "expected_effect_missing"
    assert "changed the screen at [10,20][110,220] (android.widget.FrameLayout), but" in result.evidence[0]
