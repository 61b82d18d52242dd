"""The actor's tools depend on the platform (issue 11): an iPhone has no back key, so the iOS set
has `home` and a `back` that is the navigation bar's; a tool the platform lacks goes back to the
model as an invalid answer. Real SDK, reference server, sim over HTTP for the iOS persona."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.llm.actor import run
from pytest_guistate.llm.reference.policy import read_prompt
from pytest_guistate.llm.tools import ACTOR_TOOLS, actor_tools, tool_names, unoffered

IOS = {"platformName": "iOS", "appium:automationName": "XCUITest", "guistate:clock": "frozen"}


@pytest.fixture
def ios_shop() -> Iterator[Device]:
    with SimServer() as server:
        options = AppiumOptions().load_capabilities({**IOS, "appium:bundleId": "com.guistate.shopa"})
        device = Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True)
        try:
            yield device
        finally:
            device.close()


def _described(tools: list[dict], name: str) -> str:
    return next(str(t["description"]) for t in tools if t["name"] == name)


def test_the_ios_tool_set_has_home_and_no_back_key() -> None:
    ios, android = actor_tools("ios"), actor_tools("android")
    assert "home" in tool_names(ios) and "home" not in tool_names(android)
    assert set(tool_names(ios)) - set(tool_names(android)) == {"home"}  # nothing else is iOS-only
    assert "system back key" in _described(android, "back")
    back = _described(ios, "back")
    assert "navigation bar" in back and "left edge" in back and "system back key" not in back
    assert android is ACTOR_TOOLS  # Android's list is what every recorded cassette offers
    with pytest.raises(ValueError, match="no actor tool set for platform 'windows'; known: "):
        actor_tools("windows")


def test_the_actors_home_on_ios_brings_springboard(ios_shop: Device, llm, server) -> None:
    session = TaskSession(ios_shop, name="ios-home")
    result = run(session, ios_shop, "Compare the price of Phone Case in ShopA and ShopB", llm=llm(), max_steps=12)
    assert result.success, result.summary
    assert len(server.requests) == len(result.turns)
    first = server.requests[0].body
    assert "home" in tool_names(first["tools"]) and first["system"][0]["text"].startswith("You operate an iPhone")
    homes = [i for i, t in enumerate(result.turns) if t.tool == "home"]
    assert homes and all(result.turns[i].outcome in ("ok", "settled") for i in homes)
    before = read_prompt(server.requests[homes[0]].body)
    after = read_prompt(server.requests[homes[0] + 1].body)  # what the actor saw next
    assert before.app == "ShopA" and after.app == "SpringBoard"
    icons = {e["text"] for e in after.elements if e.get("kind") == "Icon" and e.get("tap")}
    assert {"ShopA", "ShopB"} <= icons
    facts = session.state.facts
    assert (facts["price_shopa"].app, facts["price_shopb"].app) == ("ShopA", "ShopB")


def test_a_tool_the_platform_does_not_offer_goes_back_to_the_actor(sim, llm, server) -> None:
    device = sim(None)  # Android: the launcher
    server.script("unoffered")
    result = run(device.session, device.screen, "Log in to Settings as qa@example.com with password correct-horse",
                 llm=llm(), max_steps=10)
    first = result.turns[0]
    assert (first.tool, first.outcome, first.step) == ("home", "malformed_tool_input", None)  # nothing ran
    assert first.note == unoffered("home", "android")
    assert "'home' exists on ios only, not on this android device" in first.note
    retry = read_prompt(server.requests[1].body).sections["last_error"]
    assert first.note in retry and "Answer again with one valid tool call" in retry
    assert result.success  # the model corrected itself with the tools it has
    assert all(step.name != "home" for step in device.session.steps)
    assert not [e for e in device.phone.action_log() if (e["action"], e["app"]) == ("open_app", "com.android.launcher3")]
