"""Fixtures: the reference Messages API server on loopback, a fake key, sim sessions, LLM clients.

The real `anthropic` SDK is used throughout; it makes real HTTP requests to the loopback server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.llm.client import LLMClient, LLMSettings, Mode, make_client
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.direct_screen import DirectScreen

FAKE_KEY = "sk-ant-test-DO-NOT-LEAK-123"
FEED, SETTINGS = "com.guistate.feed", "com.guistate.settings"


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    """The sim over HTTP, for goals run through the real Appium client (`goal_table.run_case`)."""
    with SimServer() as server:
        yield server.url


@pytest.fixture
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer() as srv:
        yield srv


class Sim:
    def __init__(self, package: str | None, faults: dict[str, Any] | None) -> None:
        # One virtual clock for the phone and the session: a delayed redraw lands after the same
        # settle polls and waits on every run, however busy the machine (the model's latency is
        # wall time and must not move the phone's timeline).
        self.clock = VirtualClock()
        self.phone = Phone(app_package=package, seed=1, faults=faults, clock=self.clock)
        self.screen = DirectScreen(self.phone)
        self.session = TaskSession(self.screen, name="llm-test", clock=self.clock)

    def log(self, action: str) -> list[dict[str, Any]]:
        return [entry for entry in self.phone.action_log() if entry.get("action") == action]


@pytest.fixture
def sim() -> Iterator[Callable[..., Sim]]:
    made: list[Sim] = []

    def make(package: str | None = FEED, **faults: Any) -> Sim:
        made.append(Sim(package, faults or None))
        return made[-1]

    yield make
    for item in made:
        item.phone.close()


@pytest.fixture
def llm(server: ReferenceServer) -> Iterator[Callable[..., LLMClient]]:
    clients: list[LLMClient] = []
    url = server.url  # taken now: a test may stop the server to prove replay needs no network

    def make(mode: Mode = Mode.ANTHROPIC, cassette: Path | None = None, **settings: Any) -> LLMClient:
        settings.setdefault("timeout_s", 10.0)
        env = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": url}
        client = make_client(LLMSettings(mode=mode, **settings), cassette_path=cassette, env=env)
        assert client is not None
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.finish()
