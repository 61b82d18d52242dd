"""A real Selenium Grid 4 hub with two relay nodes in front of two Appium servers (issue 35).

Run with the hub as the device (`bash .ci/grid.sh start` prints it). These tests hold slots of the
hub themselves, so run them without `-n`. The queue-timeout test needs the hub's
`session-request-timeout` in `GUISTATE_GRID_QUEUE_TIMEOUT` (`.ci/grid.sh` starts the hub with
`GRID_SESSION_REQUEST_TIMEOUT`). Destructive fault tests are in `test_grid_fault_real.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_guistate.devices.driver_ports import CHROMEDRIVER_PORT, with_driver_ports
from pytest_guistate.devices.grid import read_grid_status

pytestmark = pytest.mark.grid

SLEEPER = """
import time

import pytest


@pytest.mark.parametrize("n", range({tests}))
def test_on_the_hub(device, n):
    device.driver.get("data:text/html,<h1>hub</h1>")
    time.sleep({seconds})
"""


def inner_caps(pytester: pytest.Pytester, caps: dict[str, Any]) -> None:
    (pytester.path / "caps.json").write_text(json.dumps({k: v for k, v in caps.items() if k != CHROMEDRIVER_PORT}))


def run_inner(pytester: pytest.Pytester, hub: str, *args: str, timeout: float = 300) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--guistate-device={hub}", "--guistate-caps=caps.json", "-W",
        "always::pytest_guistate.devices.pool.DevicePoolWarning", *args, timeout=timeout)


@pytest.fixture
def both_slots_held(grid_hub: str, guistate_capabilities: dict[str, Any]) -> Iterator[list[Any]]:
    """Two sessions of the outer test hold both slots of the hub."""
    from appium import webdriver
    from appium.options.common import AppiumOptions

    caps = {k: v for k, v in guistate_capabilities.items() if k != CHROMEDRIVER_PORT}
    held: list[Any] = []
    try:
        for _ in range(2):
            options = AppiumOptions().load_capabilities(with_driver_ports(grid_hub, caps))
            held.append(webdriver.Remote(grid_hub, options=options))
        status = read_grid_status(grid_hub)
        assert status is not None and status.slot_counts(caps)[:2] == (2, 2), status
        yield held
    finally:
        for driver in held:
            driver.quit()


def test_the_doctor_lists_the_hubs_nodes_slots_and_drivers(grid_hub: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_guistate.cli", "appium", "doctor", "--url", grid_hub],
                          capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.splitlines()
    hub = [line for line in lines if line.startswith(f"ok      grid hub {grid_hub}")]
    assert hub and "2 node(s)" in hub[0], done.stdout
    nodes = [line for line in lines if "grid node http" in line]
    assert len(nodes) == 2 and all(line.startswith("ok") for line in nodes), done.stdout
    assert all("driver(s) Chromium" in line and '"browserName": "chrome"' in line for line in nodes), done.stdout


def test_more_workers_than_slots_says_it_queues_and_finishes(
    pytester: pytest.Pytester, grid_hub: str, guistate_capabilities: dict[str, Any],
) -> None:
    inner_caps(pytester, guistate_capabilities)
    pytester.makepyfile(test_sleeper=SLEEPER.format(tests=3, seconds=4))
    result = run_inner(pytester, grid_hub, "-n", "3")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        f"guistate: hub {grid_hub}: 3 test processes and 2 matching slot(s) *: 1 session(s) at a time will queue*",
    ])
    # the one test that found both slots busy is named, with its place in the hub's queue
    result.stdout.fnmatch_lines(["*waited * s for a session from hub*busy*position 1 of * in the hub's queue*"])


def test_a_wait_past_the_plugins_deadline_is_a_wait_and_the_hub_stays(
    pytester: pytest.Pytester, grid_hub: str, guistate_capabilities: dict[str, Any], both_slots_held: list[Any],
) -> None:
    inner_caps(pytester, guistate_capabilities)
    pytester.makepyfile(test_sleeper=SLEEPER.format(tests=1, seconds=0))
    started = time.monotonic()
    result = run_inner(pytester, grid_hub, "-o", "guistate_session_timeout=6")
    took = time.monotonic() - started
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([("*waited 6 s for a session from hub*guistate_session_timeout*2 of 2 matching slot(s) "
                                 "busy*a wait, not a dead hub: it stays in the pool*")])
    assert "taken out of the pool" not in result.stdout.str()
    assert "no Appium server answers" not in result.stdout.str()
    assert took < 6 + 30, f"the inner run took {took:.0f} s for a 6 s deadline"


def test_the_hubs_queue_timeout_is_named_and_not_retried(
    pytester: pytest.Pytester, grid_hub: str, guistate_capabilities: dict[str, Any], both_slots_held: list[Any],
) -> None:
    queue_s = float(os.environ.get("GUISTATE_GRID_QUEUE_TIMEOUT", "0"))
    if not queue_s:
        pytest.skip("GUISTATE_GRID_QUEUE_TIMEOUT (the hub's session-request-timeout) is not set")
    inner_caps(pytester, guistate_capabilities)
    pytester.makepyfile(test_sleeper=SLEEPER.format(tests=1, seconds=0))
    started = time.monotonic()
    result = run_inner(pytester, grid_hub, "-o", f"guistate_session_timeout={queue_s * 4:g}")
    took = time.monotonic() - started
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([("*no slot of hub * came free: the hub's queue gave up after * s (its "
                                 "session-request-timeout): Could not start a new session. New session request timed "
                                 "out — a wait, not a refusal: not retried, the hub stays in the pool*")])
    text = result.stdout.str()
    assert "refused" not in text and "taken out of the pool" not in text
    assert "Build info" not in text and "Host info" not in text, "the Grid's info block is trimmed"
    # one wait: the hub checks its queue every 10 s by default, so it answers within queue_s + 10
    assert took < 2 * queue_s + 15, f"the inner run took {took:.0f} s: was the queue wait doubled?"
