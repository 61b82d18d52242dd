"""A text field whose placeholder was rewritten heals by role, place and frame (`memory/role.py`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_guistate.memory import Healer, HealOutcome, Locator, MemoryStore, heal_and_act, learn_patch
from pytest_guistate.memory.learn import crop_bgr
from pytest_guistate.memory.role import RolePolicy, heal_by_role, outline_similarity
from tests.helpers.simcases import Case, SimRig, find_by_locator, negatives, positives

SIZE = (720, 1600)
FIELD = next(c for c in positives(SIZE) if c.name == "ShopA search field")
ON_CART = next(c for c in negatives(SIZE) if c.name == "ShopB search field on the cart page")
SETTINGS = "com.guistate.settings"


def _learn_field(store: MemoryStore, app: str, *, as_app: str | None = None) -> None:
    rig = SimRig(app, 1, SIZE)
    rig.go("search")
    before = rig.observe()
    node = find_by_locator(before.tree, FIELD.locator)
    assert node is not None and node.bounds is not None
    result = learn_patch(store, before, node.bounds, locator=FIELD.locator, app=as_app or app, app_version="1")
    assert result.new_variant, result.reason


@pytest.fixture()
def store(tmp_path: Path) -> MemoryStore:
    memory = MemoryStore(tmp_path / "memory.sqlite")
    _learn_field(memory, "com.guistate.shopa")
    _learn_field(memory, "com.guistate.shopb")
    return memory


def _run(store: MemoryStore, case: Case) -> tuple[SimRig, HealOutcome]:
    rig = SimRig(case.app, 2, case.size)
    rig.go(case.screen)
    assert find_by_locator(rig.observe().tree, case.locator) is None, "v1 locator must fail on v2"
    outcome = heal_and_act(Healer(store), rig.observe, rig.tap, case.locator, case.expect,
                           settle=lambda: rig.settle(0.5), version="2")
    return rig, outcome


def test_rewritten_placeholder_heals_by_role(store: MemoryStore) -> None:
    rig, outcome = _run(store, FIELD)
    assert outcome.verdict == "healed", outcome.result.reason
    assert outcome.result.cue == "role" and "only text input" in outcome.result.reason
    assert FIELD.truth(rig.log()) and rig.taps == 1
    assert outcome.learned is not None and outcome.learned.new_variant, "the v2 look is kept for next time"


def test_the_v2_look_then_heals_by_looks(store: MemoryStore) -> None:
    _run(store, FIELD)
    _rig, again = _run(store, FIELD)
    assert again.verdict == "healed" and again.result.cue == "looks", again.result.reason


def test_no_text_input_on_screen_is_not_healed(store: MemoryStore) -> None:
    rig, outcome = _run(store, ON_CART)
    assert rig.taps == 0 and outcome.verdict == "not healed"
    assert "no text input on screen" in outcome.result.reason


def test_two_text_inputs_are_ambiguous(tmp_path: Path) -> None:
    """The login form has Email and Password inputs: a field's role cannot choose between them."""
    memory = MemoryStore(tmp_path / "m.sqlite")
    _learn_field(memory, "com.guistate.shopa", as_app=SETTINGS)  # a remembered field of that app
    rig = SimRig(SETTINGS, 1, SIZE)
    result = Healer(memory).heal(rig.observe(), FIELD.locator)
    assert result.status == "ambiguous" and result.point is None, result.reason
    assert "2 text inputs" in result.reason


def test_role_needs_the_same_app(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path / "m.sqlite")
    _learn_field(memory, "com.guistate.shopa")
    rig = SimRig("com.guistate.shopb", 2, SIZE)
    rig.go("search")
    result = Healer(memory).heal(rig.observe(), FIELD.locator)
    assert result.status == "no_match", result.reason


def test_a_moved_field_is_refused(store: MemoryStore) -> None:
    rig = SimRig(FIELD.app, 2, SIZE)
    rig.go("search")
    observation = rig.observe()
    entries = store.patches(f"locator:{FIELD.locator}")
    assert heal_by_role(entries, observation, FIELD.app).target is not None
    strict = heal_by_role(entries, observation, FIELD.app, RolePolicy(max_shift=0.001))
    assert strict.target is None and "not where the field was" in strict.reason


def test_outline_tells_a_field_from_a_button() -> None:
    crops: dict[str, np.ndarray] = {}
    for version in (1, 2):
        rig = SimRig(FIELD.app, version, SIZE)
        rig.go("search")
        observation = rig.observe()
        for rid in ("search", "query_input", "search_button", "btn_search"):
            node = find_by_locator(observation.tree, Locator("id", rid))
            crop = crop_bgr(observation.frame.bgr, node.bounds) if node is not None and node.bounds else None
            if crop is not None:
                crops[rid] = crop
    field_v1 = crops["search"]
    assert outline_similarity(field_v1, crops["query_input"]) >= 0.8  # new placeholder, same frame
    assert outline_similarity(field_v1, crops["btn_search"]) < 0.5  # a filled pill is another frame
    assert outline_similarity(field_v1, crops["search_button"]) < 0.5
    flat = np.full((40, 200, 3), 255, np.uint8)
    assert outline_similarity(field_v1, flat) == 0.0  # no frame: nothing to compare
