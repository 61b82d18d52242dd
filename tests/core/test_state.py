"""TaskState (TSR's three views), the plan, and the offline updater's rules."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_guistate.core.checks import visible
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import Fact, Milestone, TaskState, normalise_plan
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.core.updater import OfflineUpdater, reconcile

FRAME = Frame.from_array(np.zeros((20, 20, 3), np.uint8))


def screen(*texts: str, package: str = "com.app") -> Observation:
    nodes = "".join(f'<node class="android.widget.TextView" text="{t}" bounds="[0,{i * 2}][20,{i * 2 + 2}]"/>'
                    for i, t in enumerate(texts))
    xml = f'<hierarchy width="20" height="20"><node class="android.widget.FrameLayout" bounds="[0,0][20,20]">{nodes}</node></hierarchy>'
    return Observation(FRAME, parse_page_source(xml), package)


def record(index: int, name: str = "step", **kwargs: object) -> StepRecord:
    rec = StepRecord(index, name, "perform", None, True)
    for key, value in kwargs.items():
        setattr(rec, key, value)
    return rec


def test_normalise_plan_forms_and_errors() -> None:
    plan = normalise_plan(["open", ("search", "Results"), Milestone("buy", visible("Thanks"))])
    assert [m.name for m in plan] == ["open", "search", "buy"]
    assert plan[0].check is None and plan[1].check is not None
    with pytest.raises(ValueError, match="duplicate"):
        normalise_plan(["a", "a"])
    with pytest.raises(TypeError, match="plan item 1"):
        normalise_plan(["a", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        Milestone(" ")


def test_state_views_and_json() -> None:
    state = TaskState(goal="buy the cheaper one", plan=normalise_plan(["a", "b", "c"]))
    state.complete("a", "declared", 1)
    state.facts["price_a"] = Fact("price_a", 12.5, "read price", 2, "com.shop.a")
    data = json.loads(state.to_json())
    assert data["summary"] == {"goal": "buy the cheaper one",
                               "facts": {"price_a": {"value": 12.5, "step": "read price", "app": "com.shop.a"}}}
    assert data["tracker"] == {"decomposition": ["a", "b", "c"], "completed": ["a"], "current": "b",
                               "remaining": ["c"]}
    assert set(data["focus"]) == {"last_action", "verdict", "regions", "next_focus", "conflicts"}
    clone = state.copy()
    clone.complete("b", "auto", 2)
    clone.focus.regions.append("x")
    assert state.current == "b" and state.focus.regions == []


def test_offline_updater_auto_completes_in_order_only() -> None:
    state = TaskState(goal="g", plan=normalise_plan([("login", "Welcome"), ("cart", "Cart (1)")]))
    updater = OfflineUpdater()
    # the cart text is on screen before login: no skipping ahead
    new = updater.update(state, record(1), None, screen("Cart (1)"), None)
    assert new.completed == [] and new.current == "login"
    new = updater.update(new, record(2), None, screen("Welcome", "Cart (1)"), None)
    assert new.completed == ["login", "cart"] and new.how == {"login": "auto", "cart": "auto"}
    assert new.focus.next_focus.startswith("all milestones complete")
    assert state.completed == []  # the input state is not mutated


def test_live_milestone_conflict_reopens_and_sealing_rules() -> None:
    plan = normalise_plan([("added", "Cart (1)"), ("paid", "Paid")])
    updater = OfflineUpdater()
    state = updater.update(TaskState(goal="g", plan=plan), record(1), None, screen("Cart (1)"), None)
    assert state.completed == ["added"]
    # the badge disappears on the same screen: the screen wins, the milestone is reopened
    state = updater.update(state, record(2), None, screen("Cart (0)"), None)
    assert state.completed == [] and state.current == "added"
    (conflict,) = state.focus.conflicts
    assert conflict.milestone == "added" and conflict.resolution == "reopened"
    assert "marked done at step 1" in conflict.evidence and "'Cart (1)'" in conflict.evidence
    # completed again, then the test navigates (route change): sealed, no conflict
    state = updater.update(state, record(3), None, screen("Cart (1)"), None)
    state = updater.update(state, record(4, route_changed=True), None, screen("Checkout"), None)
    assert state.completed == ["added"] and state.focus.conflicts == []


def test_flag_mode_keeps_completion() -> None:
    updater = OfflineUpdater(conflicts="flag")
    state = updater.update(TaskState(goal="g", plan=normalise_plan([("a", "A"), "b"])), record(1), None, screen("A"), None)
    state = updater.update(state, record(2), None, screen("B"), None)
    assert state.completed == ["a"]
    assert state.focus.conflicts[0].resolution == "kept completed, flagged"
    with pytest.raises(ValueError):
        OfflineUpdater(conflicts="ignore")  # type: ignore[arg-type]


def test_reconcile_screen_wins_over_any_updater() -> None:
    old = TaskState(goal="g", plan=normalise_plan([("login", "Welcome"), "other"]))
    claimed = old.copy()
    claimed.complete("login", "actor", 3)
    claimed.complete("other", "actor", 3)  # no check: nothing to contradict
    conflicts = reconcile(old, claimed, screen("Login failed"), 3)
    assert [c.milestone for c in conflicts] == ["login"]
    assert claimed.completed == ["other"] and "updater marked it done" in conflicts[0].evidence


def test_next_focus_texts() -> None:
    state = TaskState(goal="g", plan=normalise_plan(["a"]))
    updater = OfflineUpdater()
    assert updater.update(state, record(1, outcome="ok", verdict="no_change"), None, None, None).focus.next_focus \
        == "pull to refresh, then verify 'step' took effect"
    assert "refreshed" in updater.update(state, record(1, outcome="refreshed", confirmed=True), None, None,
                                         None).focus.next_focus
    failed = record(1, outcome="failed", expect="text 'x' gone")
    assert "still unmet after settling" in updater.update(state, failed, None, None, None).focus.next_focus
