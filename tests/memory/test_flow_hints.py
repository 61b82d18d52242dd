"""Procedural memory reaches the actor as hints, and never breaks a cassette replay."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pytest_guistate.llm.cassette import match_text
from pytest_guistate.memory.flows import flow_hints, remember_flow
from pytest_guistate.memory.store import MemoryStore


def _turns() -> list[SimpleNamespace]:
    return [
        SimpleNamespace(tool="type_text", input={"text": "Phone Case", "element_id": "1/1", "_in": "ShopA"}),
        SimpleNamespace(tool="tap", input={"element_id": "1/2", "x": 3, "y": 4, "_in": "ShopA · Search"}),
        SimpleNamespace(tool="done", input={"success": True, "summary": "bought"}),
    ]


def test_a_remembered_run_comes_back_as_one_abstract_hint(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.sqlite")
    instruction = "Buy Phone Case in ShopA"
    for _ in range(2):
        remember_flow(store, instruction, _turns(), ["com.guistate.shopa", "ShopA"], test="t")
    hints = flow_hints(store, "Buy Phone Case in ShopB", ["com.guistate.shopb", "ShopB"])
    assert len(hints) == 1  # learned twice, hinted once
    hint = hints[0]
    assert "ShopA" not in hint and "{app" in hint  # app names abstracted into placeholders
    assert "type_text(text=Phone Case" in hint and "tap(on=" in hint
    assert "element_id" not in hint and "done" not in hint  # ids of an old screen are no guidance
    store.close()


def test_flow_hints_are_left_out_of_cassette_matching() -> None:
    def body(hints: str | None) -> dict[str, object]:
        content = [{"type": "text", "text": "<instruction>\nBuy it\n</instruction>"}]
        if hints is not None:
            content.append({"type": "text", "text": f"<flow_hints>\n{hints}\n</flow_hints>"})
        return {"messages": [{"role": "user", "content": content}], "tools": [{"name": "tap"}]}

    assert match_text(body(None), "actor") == match_text(body("- {app1}: tap(on=x)"), "actor")
    assert match_text(body(None), "actor") != match_text(
        {"messages": [{"role": "user", "content": "<instruction>\nSell it\n</instruction>"}], "tools": [{"name": "tap"}]},
        "actor",
    )
