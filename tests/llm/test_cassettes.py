"""Record then replay (no network), divergence messages, and the API key never leaking."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim import phone as phone_module
from pytest_guistate.devices.sim.ios.phone import IosPhone
from pytest_guistate.llm.actor import run
from pytest_guistate.llm.cassette import REFERENCE_NOTE, cassette_path, match_text, without_toasts
from pytest_guistate.llm.client import Mode
from pytest_guistate.llm.errors import CassetteDivergence, CassetteError
from tests.helpers.direct_screen import DirectScreen
from tests.llm.conftest import Sim

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


def _ios_sim(package: str) -> Sim:
    """The Sim fixture's set-up on the iOS persona: same virtual clock for phone and session."""
    sim = Sim.__new__(Sim)
    sim.clock = VirtualClock()
    caps = {"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": package}
    ios = IosPhone.from_capabilities(caps, clock=sim.clock)
    sim.phone, sim.screen = ios.inner, DirectScreen(ios)
    sim.session = TaskSession(sim.screen, name="llm-test", clock=sim.clock)
    return sim


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_replay_matches_when_a_toast_has_ended_before_the_observation(
    sim, llm, tmp_path, monkeypatch, platform
) -> None:
    """A loaded machine observes the screen after the 1.5 s toast ("Post deleted") has gone: the
    cassette recorded with the toast must still match. iOS has no toast type (the sim shows it as a
    lone StaticText in a window of its own), so this failed there while Android's `Toast` rows were
    already left out."""
    path = tmp_path / "cassettes" / "t.json"
    device = sim(FEED) if platform == "android" else _ios_sim(FEED)
    client = llm(Mode.RECORD, cassette=path)
    result = run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    recorded = [t.tool for t in result.turns]
    client.finish()
    assert "Post deleted" in path.read_text()  # the recording saw the toast
    monkeypatch.setattr(phone_module, "TOAST_S", 0.0)  # the replay never does: it ended before the look
    device = sim(FEED) if platform == "android" else _ios_sim(FEED)
    client = llm(Mode.REPLAY, cassette=path)
    result = run(device.session, device.screen, "Delete the post by Carol", llm=client, max_steps=12)
    assert [t.tool for t in result.turns] == recorded and client.unused_exchanges == 0
    assert [d["author"] for d in device.log("delete_post")] == ["Carol"]


def _elements(*rows: str) -> dict:
    text = "<elements>\n" + "\n".join(rows) + "\n</elements>"
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}


def test_matching_drops_an_ios_toast_but_not_an_alert_or_a_real_change() -> None:
    cart = '{"id":"0/0/0/3","kind":"Button","text":"Checkout","tap":true}'
    toast = '{"id":"0/1/0","kind":"StaticText","text":"Added to cart","at":[139,721,254,760]}'
    assert match_text(_elements(cart, toast), "actor") == match_text(_elements(cart), "actor")
    # an alert's window holds its buttons too: its text is the app's state, not a toast
    alert = [
        '{"id":"0/1/0/0","kind":"Alert","text":"Delete post?"}',
        '{"id":"0/1/0/0/1","kind":"StaticText","text":"Delete post by Erin?"}',
        '{"id":"0/1/0/0/3","kind":"Button","text":"Delete","tap":true}',
    ]
    other = [alert[0], alert[1].replace("Erin", "Dave"), alert[2]]
    assert match_text(_elements(cart, *alert), "actor") != match_text(_elements(cart, *other), "actor")
    # a lone text in the app's own window, or a tappable one over it, is not a toast either
    label = '{"id":"0/0/0","kind":"StaticText","text":"Added to cart"}'
    banner = '{"id":"0/1/0","kind":"StaticText","text":"Undo","tap":true}'
    for row in (label, banner):
        assert match_text(_elements(cart, row), "actor") != match_text(_elements(cart), "actor")
    # a cassette recorded before this rule holds the toast's line in its match text: still a match
    old_rule = match_text(_elements(cart), "actor").replace(f"user: {cart}", f"user: {cart}\nuser: {toast}")
    assert toast in old_rule and without_toasts(old_rule) == match_text(_elements(cart), "actor")
