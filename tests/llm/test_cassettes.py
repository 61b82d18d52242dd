"""Record then replay (no network), divergence messages, and the API key never leaking."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from pytest_guistate.llm.actor import run
from pytest_guistate.llm.cassette import REFERENCE_NOTE, cassette_path, match_text
from pytest_guistate.llm.client import Mode
from pytest_guistate.llm.errors import CassetteDivergence, CassetteError

FEED = "com.guistate.feed"
FAKE_KEY = "sk-ant-test-DO-NOT-LEAK-123"


def _record(sim, llm, path: Path, task: str = "Delete the post by Carol") -> list[str]:
    device = sim(FEED)
    client = llm(Mode.RECORD, cassette=path)
    result = run(device.session, device.screen, task, llm=client, max_steps=12)
    client.finish()
    return [t.tool for t in result.turns]


def test_record_then_replay_without_network(sim, llm, server, tmp_path) -> None:
    path = cassette_path(tmp_path / "test_feed.py", "test_delete[carol]")
    assert path == tmp_path / "cassettes" / "test_feed" / "test_delete_carol.json"
    recorded = _record(sim, llm, path)
    data = json.loads(path.read_text())
    assert data["note"] == REFERENCE_NOTE and data["recorded_with"]["server"] == "pytest-guistate reference server"
    assert len(data["exchanges"]) == len(recorded)
    assert "<image omitted: 360x800" in path.read_text()
    served = len(server.requests)
    server.stop()  # replay must not need it
    device = sim(FEED)
    client = llm(Mode.REPLAY, cassette=path)
    result = run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    assert [t.tool for t in result.turns] == recorded
    assert [d["author"] for d in device.log("delete_post")] == ["Carol"]
    assert len(server.requests) == served
    assert client.ledger.totals()["calls"] == len(recorded) and client.unused_exchanges == 0


def test_replay_divergence_names_the_first_exchange_that_differs(sim, llm, tmp_path) -> None:
    path = tmp_path / "cassettes" / "t.json"
    _record(sim, llm, path)
    device = sim(FEED)
    client = llm(Mode.REPLAY, cassette=path)
    with pytest.raises(CassetteDivergence) as info:
        run(device.session, device.screen, "Delete the post by Dave", llm=client, max_steps=12)
    message = str(info.value)
    assert info.value.index == 0
    assert "diverged at exchange #0 (actor, step 1)" in message and str(path) in message
    assert "recorded: user: Delete the post by Carol" in message and "now:      user: Delete the post by Dave" in message


def test_missing_cassette_in_replay_mode_says_how_to_record(llm, tmp_path) -> None:
    with pytest.raises(CassetteError, match="record it first with --guistate-llm=record"):
        llm(Mode.REPLAY, cassette=tmp_path / "none.json")


def test_matching_ignores_images_and_clock_times() -> None:
    base = {"tools": [{"name": "tap"}], "messages": [{"role": "user", "content": [
        {"type": "text", "text": "<screen>\n12:00:01\n</screen>"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}
    later = json.loads(json.dumps(base))
    later["messages"][0]["content"][0]["text"] = "<screen>\n12:00:07\n</screen>"
    later["messages"][0]["content"][1]["source"]["data"] = "BBBB"
    assert match_text(base, "actor") == match_text(later, "actor")
    later["messages"][0]["content"][0]["text"] = "<screen>\nCarol\n</screen>"
    assert match_text(base, "actor") != match_text(later, "actor")


def test_api_key_never_appears_in_cassettes_artifacts_or_logs(sim, llm, server, tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # the SDK logs requests at debug level
    path = tmp_path / "cassettes" / "leak.json"
    device = sim(FEED)
    client = llm(Mode.RECORD, cassette=path)
    run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    client.finish()
    assert any(FAKE_KEY in h for r in server.requests for h in r.headers.values()) is False
    places = {"cassette": path.read_text(), "sdk log": caplog.text, "client log": "\n".join(client.log),
              "ledger": json.dumps(client.ledger.to_dict()),
              "steps": json.dumps([s.to_dict() for s in device.session.steps], default=str),
              "state": device.session.state.to_json()}
    artifacts = getattr(device.session.artifacts, "items", {})
    places["artifacts"] = b"".join(data for data, _ in artifacts.values()).decode("latin-1")
    assert caplog.text  # the SDK did log (so the grep below means something)
    for where, text in places.items():
        assert FAKE_KEY not in text, f"API key leaked into {where}"
        assert "DO-NOT-LEAK" not in text, f"part of the API key leaked into {where}"
