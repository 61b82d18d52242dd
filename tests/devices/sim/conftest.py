"""Fixtures of the simulated-phone tests: one sim server per module, `Device`s opened on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    """The sim with the real `Phone` (a module needing another phone overrides this fixture)."""
    with SimServer() as srv:
        yield srv


@pytest.fixture
def open_device(server: SimServer) -> Iterator[Any]:
    """`open_device(caps)` → a `Device` on a new session of `server`, its clock frozen unless `caps`
    say otherwise; every one opened is closed after the test."""
    opened: list[Device] = []

    def make(caps: dict[str, Any]) -> Device:
        options = AppiumOptions().load_capabilities({"guistate:clock": "frozen", **caps})
        opened.append(Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True))
        return opened[-1]

    yield make
    for device in opened:
        device.close()
