"""`guistate memory merge` (issue 27): order-independent, folds duplicates, evicts by rank, refuses other schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_guistate.cli import main as guistate
from pytest_guistate.memory.flows import FlowStep, add_flow
from pytest_guistate.memory.merge import merge_stores
from pytest_guistate.memory.store import MemorySchemaError, MemoryStore, NewPatch
from tests.helpers.memory_patches import new_patch as _patch


def _store(path: Path, clock: float, patches: list[NewPatch], flows: list[str] = ()) -> Path:  # type: ignore[assignment]
    with MemoryStore(path, clock=lambda: clock) as store:
        for patch in patches:
            store.add_patch(patch)
        for instruction in flows:
            add_flow(store, instruction, [FlowStep("tap", {"target": "Cart"})], ["com.guistate.shopa"])
    return path


@pytest.fixture
def runners(tmp_path: Path) -> list[Path]:
    shared = _patch("add to cart", 10)  # the downloaded memory every runner started from
    return [
        _store(tmp_path / "a.sqlite", 1000.0, [shared, _patch("search", 20)], ["add a phone case"]),
        _store(tmp_path / "b.sqlite", 2000.0, [shared, _patch("checkout", 30, "2")], ["add a phone case", "pay"]),
        _store(tmp_path / "c.sqlite", 3000.0, [_patch("search", 21, "2")]),
    ]


def test_any_input_order_gives_a_byte_identical_file_with_every_entry_accounted_for(
    runners: list[Path], tmp_path: Path
) -> None:
    a, b, c = runners
    first = merge_stores([a, b, c], tmp_path / "m1.sqlite")
    merge_stores([c, a, b], tmp_path / "m2.sqlite")
    merge_stores([b, c, a], tmp_path / "m3.sqlite")
    data = (tmp_path / "m1.sqlite").read_bytes()
    assert data == (tmp_path / "m2.sqlite").read_bytes() == (tmp_path / "m3.sqlite").read_bytes()
    assert (first.patches_read, first.patches_folded, first.patches_evicted, first.patches_written) == (5, 1, 0, 4)
    assert (first.flows_read, first.flows_folded, first.flows_written) == (3, 1, 2)
    with MemoryStore(tmp_path / "m1.sqlite") as merged:
        entries = merged.patches()
        assert sorted((e.function, e.app_version) for e in entries) == [
            ("add to cart", "1"), ("checkout", "2"), ("search", "1"), ("search", "2")]
        shared = next(e for e in entries if e.function == "add to cart")
        assert (shared.created, shared.last_access, shared.access_count) == (1000.0, 2000.0, 1)  # folded, not doubled
    assert not list(tmp_path.glob(".m1.sqlite.merging-*"))


def test_over_the_cap_the_lowest_ranked_go_and_the_count_is_said(
    runners: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "capped.sqlite"
    assert guistate(["memory", "merge", *map(str, runners), "-o", str(out), "--max-entries", "2"]) == 0
    text = capsys.readouterr().out
    assert "5 read, 1 folded as duplicates, 2 evicted over the cap of 2 (lowest rank first), 2 written" in text
    with MemoryStore(out) as merged:  # the most recently used survive (store.py's own eviction rule)
        assert sorted(e.created for e in merged.patches()) == [2000.0, 3000.0]


def test_another_schema_is_refused_naming_the_file_and_nothing_is_written(
    runners: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newer = runners[1]
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 2")
    out = tmp_path / "merged.sqlite"
    with pytest.raises(MemorySchemaError, match=r"b\.sqlite has memory schema 2; this plugin merges schema 1"):
        merge_stores(runners, out)
    assert guistate(["memory", "merge", *map(str, runners), "-o", str(out)]) == 2
    assert "b.sqlite has memory schema 2" in capsys.readouterr().err and not out.exists()
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 10)
    assert guistate(["memory", "merge", str(runners[0]), str(tmp_path / "junk.sqlite"), "-o", str(out)]) == 2
    assert "junk.sqlite is not a guistate memory store" in capsys.readouterr().err and not out.exists()
    assert guistate(["memory", "merge", str(tmp_path / "missing.sqlite"), "-o", str(out)]) == 2


SHOP = """
import pytest
from pytest_guistate import visible

PRODUCT = "//*[@text='Phone Case' and not(contains(@class, 'EditText'))]"

@pytest.mark.guistate(app="com.guistate.shopa", caps={{"guistate:appVersion": {version}}})
def test_add_phone_case_to_cart(device, guistate):
    guistate.perform("search", lambda: device.type("Phone Case\\n", xpath="//android.widget.EditText"), expect="$",
                     idempotent=False)
    guistate.perform("open the product", lambda: device.tap(xpath=PRODUCT), expect="Add to cart")
    guistate.perform("add to cart", lambda: device.tap(id={locator!r}, function="add to cart"),
                     expect=visible({expect!r}), idempotent=False)
"""
CART = {1: "Cart, 1 items", 2: "Shopping bag (1)"}
BUTTON_ID = {1: "add_to_cart", 2: "btn_add"}  # v2 renamed the button


def _shop(pytester: pytest.Pytester, version: int, locator: str, memory: Path) -> dict[str, object]:
    import json

    pytester.makepyfile(test_shop=SHOP.format(version=version, locator=locator, expect=CART[version]))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--guistate=standard", f"--guistate-memory={memory}",
                                          "--guistate-summary=summary.json", "--guistate-retain=off")
    result.assert_outcomes(passed=1)
    return json.loads((pytester.path / "summary.json").read_text())["tests"][0]  # type: ignore[no-any-return]


def test_memories_learnt_on_two_app_versions_heal_on_both_after_the_merge(pytester: pytest.Pytester) -> None:
    """Runner A learns the button on v1, runner B on v2 (its own id there); the merged memory heals the
    other version's locator on each."""
    a, b, merged = (pytester.path / name for name in ("a.sqlite", "b.sqlite", "merged.sqlite"))
    for version, memory in ((1, a), (2, b)):
        assert _shop(pytester, version, BUTTON_ID[version], memory)["heals"] == []  # learns, needs no heal
    merge_stores([b, a], merged)
    with MemoryStore(merged) as store:
        learnt = {e.app_version: e.id for e in store.patches("add to cart")}
    assert sorted(learnt) == ["1", "2"]
    for version in (1, 2):
        stale_id = BUTTON_ID[3 - version]  # the other version's id is not on this screen
        with MemoryStore(merged) as store:
            before = store.get(learnt[str(version)]).access_count
        heals = _shop(pytester, version, stale_id, merged)["heals"]
        assert [(h["locator"], h["status"]) for h in heals] == [(f"id={stale_id}", "healed")], version  # type: ignore[index]
        with MemoryStore(merged) as store:  # the heal used (touched) the look learnt on this very version
            assert store.get(learnt[str(version)]).access_count > before, version
