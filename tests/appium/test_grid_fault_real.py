"""Appium servers behind a real Grid hub die mid-run (issue 35): the hub stays in the pool while a node lives.

`GUISTATE_GRID_SERVERS="PID1 APPIUM1 NODE1 PID2 APPIUM2 NODE2"` names the two Appium servers behind
the hub (their process groups: `.ci/grid.sh` starts each in its own) and the relay node in front of
each (`bash .ci/grid.sh pid appium1`, `bash .ci/grid.sh nodes`).

1. An inner run of six tests goes through the hub with `-n 2`; once a test runs on node 2, its
   Appium is killed. The test running there fails in the find that met the death, whose own error
   is `device … died` naming the node and its Appium (issue 44), every test on node 1 passes, the later tests all finish on node 1, the hub is
   never taken out, no test waits past its deadline, and the doctor names the dead node.
2. Once the node has freed the dead session's slot (its session-timeout), the hub routes new
   sessions there again: each fails naming the service, is recorded against that node, and the
   test waits for node 1 instead; every test passes.
3. Node 1's Appium is killed too: now every matching node failed, and only now is the hub out.

Both servers stay dead: run this last.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.devices.driver_ports import CHROMEDRIVER_PORT
from pytest_guistate.devices.grid import read_grid_status

pytestmark = [pytest.mark.grid, pytest.mark.grid_fault]

SESSION_TIMEOUT_S = 60
INNER = """
import json
import time
import urllib.request
from pathlib import Path

import pytest

HUB = {hub!r}
HERE = Path(__file__).parent


def node_of(session_id):
    status = json.load(urllib.request.urlopen(HUB + "/status", timeout=5))["value"]
    for node in status["nodes"]:
        for slot in node["slots"]:
            if slot["session"] and slot["session"]["sessionId"] == session_id:
                return node["uri"]
    return None


@pytest.mark.parametrize("n", range({tests}))
def test_steps_on_the_hub(device, n):
    node = node_of(device.driver.session_id)
    device.open_url("data:text/html,<h1>step</h1><button>Pay</button>")
    with (HERE / "nodes.jsonl").open("a") as out:
        out.write(json.dumps({{"test": f"test_steps_on_the_hub[{{n}}]", "node": node, "t": time.time()}}) + "\\n")
    for _ in range(10):
        device.find(text="Pay")  # a find, as a user's test meets the death (issue 44); screenshots: the unit tests
        time.sleep(0.5)
    # the first test on the node to kill goes on with its steps until its Appium is killed: it dies mid-test
    deadline = time.time() + 120
    while node == {kill_node!r} and not (HERE / "killed").exists() and time.time() < deadline:
        device.find(text="Pay")
        time.sleep(0.5)
    device.find(text="Pay")
"""


def _servers() -> list[tuple[int, str, str]]:
    raw = os.environ.get("GUISTATE_GRID_SERVERS", "").split()
    if len(raw) != 6:
        pytest.fail("set GUISTATE_GRID_SERVERS='PID1 APPIUM1 NODE1 PID2 APPIUM2 NODE2' (bash .ci/grid.sh pid "
                    "appium1; bash .ci/grid.sh nodes) to say which Appium servers behind the hub this test may kill")
    return [(int(raw[i]), raw[i + 1], raw[i + 2]) for i in (0, 3)]


def _run_inner(path: Path, hub: str, *args: str) -> tuple[str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--guistate-device={hub}",
         "--guistate-caps=caps.json", "-o", f"guistate_session_timeout={SESSION_TIMEOUT_S}", "-rA", "-W",
         "always::pytest_guistate.devices.pool.DevicePoolWarning", *args],
        cwd=path, capture_output=True, text=True, timeout=600, check=False)
    print(done.stdout)
    return done.stdout, time.monotonic() - started


def _slot_free(hub: str, node_uri: str) -> bool:
    status = read_grid_status(hub)
    return status is not None and any(n.uri == node_uri and not any(s.busy for s in n.slots) for n in status.nodes)


def _hub_says_up(hub: str, node_uri: str) -> bool:
    status = read_grid_status(hub)
    return status is not None and any(n.uri == node_uri and n.up for n in status.nodes)


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _junit(path: Path) -> dict[str, dict[str, Any]]:
    """test name → {"outcome": passed|failed, "text": every failure/error message, "call": the call's own
    failure message, "time": seconds}."""
    found: dict[str, dict[str, Any]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        entry = found.setdefault(case.get("name", "?"), {"outcome": "passed", "text": "", "call": "", "time": 0.0})
        entry["time"] = max(entry["time"], float(case.get("time", 0)))
        for bad in [*case.iter("failure"), *case.iter("error")]:
            entry["outcome"] = "failed"
            entry["text"] += f"{bad.get('message', '')}\n{bad.text or ''}\n"
        for bad in case.iter("failure"):
            entry["call"] += f"{bad.get('message', '')}\n"
    return found


def test_dead_nodes_fail_their_tests_and_the_hub_is_out_only_when_every_node_failed(
    pytester: pytest.Pytester, grid_hub: str, guistate_capabilities: dict[str, Any],
) -> None:
    (live_pid, live_appium, live_node), (pid, appium_url, node_uri) = _servers()
    os.kill(pid, 0)  # the servers to kill are running now (ProcessLookupError otherwise)
    os.kill(live_pid, 0)
    (pytester.path / "caps.json").write_text(
        json.dumps({k: v for k, v in guistate_capabilities.items() if k != CHROMEDRIVER_PORT}))
    pytester.makepyfile(test_fault_inner=INNER.format(hub=grid_hub, tests=6, kill_node=node_uri))
    records = pytester.path / "nodes.jsonl"
    started = time.monotonic()
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", f"--guistate-device={grid_hub}",
         "--guistate-caps=caps.json", "-o", f"guistate_session_timeout={SESSION_TIMEOUT_S}",
         "--junitxml=inner.xml", "-rA"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while not any(r["node"] == node_uri for r in _records(records)):
            assert inner.poll() is None, "the inner run ended before a test ran on the node to kill"
            assert time.monotonic() - started < 180, "no test ran on the node to kill within 180 s"
            time.sleep(0.2)
        os.killpg(pid, signal.SIGKILL)  # that test keeps stepping until "killed" exists
        killed_at = time.time()
        (pytester.path / "killed").write_text("1")
        output, _ = inner.communicate(timeout=600)
    finally:
        if inner.poll() is None:
            inner.kill()
    took = time.monotonic() - started
    print(output)  # the inner run's report, shown on failure (and with -s)
    results = _junit(pytester.path / "inner.xml")
    runs = _records(records)
    assert len(results) == 6, f"every test has a result:\n{output}"

    dead_tests = {r["test"] for r in runs if r["node"] == node_uri and r["t"] < killed_at}
    live_tests = {r["test"] for r in runs if r["node"] != node_uri}
    on_dead_after_kill = [r for r in runs if r["node"] == node_uri and r["t"] >= killed_at]
    assert dead_tests, runs
    assert not on_dead_after_kill, f"a session started on the dead node after the kill: {on_dead_after_kill}"
    for name in dead_tests:  # the one running there when it died (earlier ones there had passed)
        if results[name]["outcome"] == "failed":  # the find that met the death names it, node and Appium
            call = results[name]["call"]
            assert "DeviceGone: device " in call and \
                f" died: node {node_uri} (Appium {appium_url}) behind the hub" in call, results[name]["text"]
    assert sum(results[name]["outcome"] == "failed" for name in dead_tests) == 1, (results, runs)
    assert all(results[name]["outcome"] == "passed" for name in live_tests), (results, runs)
    assert live_tests | dead_tests == set(results), "every test ran on one of the two nodes"
    assert "taken out of the pool" not in output, f"the hub was taken out:\n{output}"
    slowest = max(entry["time"] for entry in results.values())
    assert slowest < SESSION_TIMEOUT_S + 30, f"a test took {slowest:.0f} s (session deadline {SESSION_TIMEOUT_S} s)"
    assert took < 6 * (SESSION_TIMEOUT_S + 30), f"the inner run took {took:.0f} s"

    doctor = subprocess.run([sys.executable, "-m", "pytest_guistate.cli", "appium", "doctor", "--url", grid_hub],
                            capture_output=True, text=True, timeout=120, check=False)
    assert doctor.returncode == 1, doctor.stdout
    [line] = [line for line in doctor.stdout.splitlines() if f"grid node {node_uri}:" in line]
    assert line.startswith("MISSING") and f"node {node_uri} reports DOWN" in line, doctor.stdout

    # 2. the node frees the dead session's slot after its session-timeout; the hub may route there again
    deadline = time.monotonic() + 180
    while not _slot_free(grid_hub, node_uri):
        assert time.monotonic() < deadline, "the dead node kept its slot for 180 s (its session-timeout?)"
        time.sleep(2)
    routed_there = _hub_says_up(grid_hub, node_uri)  # until the hub's own health check marks it DOWN
    records.unlink()
    pytester.makepyfile(test_fault_inner=INNER.format(hub=grid_hub, tests=3, kill_node=node_uri))
    output, _took = _run_inner(pytester.path, grid_hub, "-n", "2")
    assert "3 passed" in output and "taken out of the pool" not in output, output
    assert {r["node"] for r in _records(records)} == {live_node}, _records(records)
    if routed_there:  # the hub sent a session to the dead node: named, recorded, and the test waited instead
        assert f"node service {appium_url} failed to start a session (1 of 2 nodes failed)" in output, output

    # 3. the last node dies: every matching node has failed, so now the hub is out
    os.killpg(live_pid, signal.SIGKILL)
    pytester.makepyfile(test_fault_inner=INNER.format(hub=grid_hub, tests=1, kill_node=node_uri))
    output, took = _run_inner(pytester.path, grid_hub)
    assert "1 error" in output, output
    # the error's traceback line ("E   ...DeviceError: ..."); the short summary repeats it, cut to the terminal's
    # width unless CI is set in the environment, so it is not the line to read
    reasons = [line for line in output.splitlines()
               if line.startswith("E ") and "DeviceError: every node behind the hub" in line]
    assert reasons, output
    reason = reasons[0]
    assert "every node behind the hub that matches the capabilities failed (2 of 2): " in reason, output
    for appium, node in ((live_appium, live_node), (appium_url, node_uri)):  # each named by its service or itself
        assert f"{appium}: " in reason or f"{node}: node {node} reports DOWN" in reason, reason
    assert took < SESSION_TIMEOUT_S + 30, f"taking the hub out took {took:.0f} s"
