"""Two Chromium sessions at once on one Appium server (xdist `-n 2`, the server listed twice):
each gets a chromedriver of its own (`devices/driver_ports.py`). With the driver's default port
both sessions would meet on one chromedriver at 9515: the second start fails or its commands
reach the other browser. The inner tests hold their sessions open together before they act."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_guistate.config import get_config
from pytest_guistate.devices.driver_ports import CHROMEDRIVER_PORT, with_driver_ports
from pytest_guistate.devices.web_feed import FeedServer

INNER = """
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize("who", ["alice", "bob"])
def test_both_sessions_at_once(device, guistate, who):
    device.open_url({page!r} + "&who=" + who)
    (HERE / f"ready-{{who}}").write_text("1")
    deadline = time.monotonic() + 60
    while len(list(HERE.glob("ready-*"))) < 2:  # both sessions are open now
        assert time.monotonic() < deadline, "the other worker's session never opened"
        time.sleep(0.2)
    guistate.goal("open and cancel the delete dialog")
    guistate.perform("open the delete dialog", lambda: device.tap("Delete"), expect="Delete post?")
    guistate.perform("cancel", lambda: device.tap(id="cancel_delete"), expect=None)
    assert device.driver.current_url.endswith("who=" + who)  # its own browser, not the other's
"""


@pytest.mark.appium
def test_two_chromium_sessions_on_one_server_each_get_their_own_chromedriver(
    pytester: pytest.Pytester, pytestconfig: pytest.Config, feed_server: FeedServer,
    guistate_capabilities: dict[str, Any],
) -> None:
    [outer] = get_config(pytestconfig).pool[:1]
    caps = {k: v for k, v in guistate_capabilities.items() if k != CHROMEDRIVER_PORT}
    (pytester.path / "caps.json").write_text(json.dumps(caps))
    entry = {"url": outer.url, "name": "parallel-chromium", "capabilities": {"appium:newCommandTimeout": 90}}
    (pytester.path / "devices.json").write_text(json.dumps([entry, entry]))
    pytester.makepyfile(test_parallel_inner=INNER.format(page=feed_server.page_url()))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--guistate=light", "--guistate-device=@devices.json",
        "--guistate-caps=caps.json", f"--guistate-artifacts={pytester.path / 'artifacts'}", timeout=300,
    )
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize(("url", "caps", "added"), [
    ("http://127.0.0.1:4723", {"appium:automationName": "Chromium"}, True),
    ("http://localhost:4723/wd/hub", {"appium:automationName": "chromium"}, True),
    ("http://[::1]:4723", {"appium:automationName": "Chromium"}, True),
    ("http://127.0.0.1:4723", {"appium:automationName": "Chromium", CHROMEDRIVER_PORT: 9600}, False),
    ("http://lab-host:4723", {"appium:automationName": "Chromium"}, False),  # a port free here says nothing there
    ("http://10.0.0.5:4723", {"appium:automationName": "Chromium"}, False),
    ("http://127.0.0.1:4723", {"appium:automationName": "UiAutomator2"}, False),
    ("http://127.0.0.1:4723", {"browserName": "chrome"}, False),
])
def test_a_free_chromedriver_port_only_for_chromium_on_this_machine(url: str, caps: dict[str, Any],
                                                                    added: bool) -> None:
    out = with_driver_ports(url, caps)
    assert {k: v for k, v in out.items() if k != CHROMEDRIVER_PORT or not added} == caps
    assert (CHROMEDRIVER_PORT in out and out is not caps) if added else out == caps
    if added:
        assert 1024 <= out[CHROMEDRIVER_PORT] <= 65535
