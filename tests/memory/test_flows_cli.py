"""Procedural memory (abstracted flows) and the `guistate memory` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_guistate.memory import FlowStep, MemoryStore, NewPatch, add_flow, similar_flows
from pytest_guistate.memory.cli import memory_main
from pytest_guistate.memory.flows import abstract_flow
from tests.memory.test_store import _png


def test_flows_are_abstracted_with_placeholders() -> None:
    template, steps, mapping = abstract_flow(
        "Buy Phone Case in ShopB", [FlowStep("search", {"query": "Phone Case", "app": "ShopB"})],
        ["ShopB"], {"item": "Phone Case"})
    assert template == "Buy {item} in {app1}"
    assert steps[0].params == {"query": "{item}", "app": "{app1}"}
    assert mapping == {"{app1}": "ShopB", "{item}": "Phone Case"}


def test_similar_flows_ranks_relevant_ones_and_counts_access(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")
    buy = add_flow(store, "Buy Phone Case in ShopB", [FlowStep("search", {"query": "Phone Case"}),
                                                      FlowStep("add to cart", {})], ["ShopB"], {"item": "Phone Case"})
    add_flow(store, "Delete Carol's post in Feed", [FlowStep("delete post", {"author": "Carol"})], ["Feed"],
             {"author": "Carol"})
    found = similar_flows(store, "Buy a USB-C Cable in ShopA", k=2, apps=["ShopA"])
    assert [f.id for f in found] == [buy]
    assert found[0].steps[1].function == "add to cart"
    assert similar_flows(store, "Buy it in ShopA", k=1, apps=["ShopA"])[0].access_count == 2


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.sqlite"
    with MemoryStore(path) as store:
        for seed in range(3):
            store.add_patch(NewPatch("add to cart", "com.example", _png(seed), (40, 24), (1080, 2400), "1"))
        store.add_patch(NewPatch("locator:id=cart", "com.example", _png(7), (40, 24), (1080, 2400), "2"))
    return path


def test_cli_list_show_prune_export(memory_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert memory_main(["--store", str(memory_file), "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {(r["function"], r["variants"]) for r in listed} == {("add to cart", 3), ("locator:id=cart", 1)}
    assert memory_main(["--store", str(memory_file), "show", "locator:id=cart"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["app_version"] == "2"
    assert memory_main(["--store", str(memory_file), "export", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["patches"]) == 4
    assert (tmp_path / "out" / manifest["patches"][0]["png"]).read_bytes().startswith(b"\x89PNG")
    assert memory_main(["--store", str(memory_file), "prune", "--max-entries", "2"]) == 0
    assert "removed 2" in capsys.readouterr().out


def test_cli_errors_are_clear(tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert memory_main(["--store", str(tmp_path / "none.sqlite"), "list"]) == 2
    assert "no memory file" in capsys.readouterr().err
    assert memory_main(["--store", str(memory_file), "show", "nothing"]) == 1
    assert memory_main(["--store", str(memory_file), "prune"]) == 2
