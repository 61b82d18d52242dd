"""A Selenium Grid 4 hub in the device pool (issue 35), without Java: a stand-in hub that answers
`/status`, the new-session queue and its nodes' own `/status` the way Grid 4.48 does (the shapes
were read from a real hub, see tests/appium/test_grid_real.py for the real one)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from selenium.common.exceptions import SessionNotCreatedException, WebDriverException

from pytest_guistate.devices.appium_server import grid_findings
from pytest_guistate.devices.device_list import DeviceSpec, parse_device_option
from pytest_guistate.devices.errors import DeviceError
from pytest_guistate.devices.grid import (
    failed_service,
    hub_capacity,
    hub_pool,
    is_queue_timeout,
    queue_position,
    read_grid_status,
    stereotype_matches,
    trim_grid_message,
)
from pytest_guistate.devices.hub import HubOut, hub_session_died, open_through_hub
from pytest_guistate.devices.pool import DevicePool, DevicePoolWarning

CHROMIUM = {"platformName": "linux", "browserName": "chrome", "appium:automationName": "Chromium"}
# What Grid 4.48 answered when a relay node's Appium server was down (two copies of its info block).
REFUSED = ("Could not start a new session. Could not start a new session. Error while creating session with the "
           "service http://127.0.0.1:4751. Connection error (POST http://127.0.0.1:4751/session) \n"
           "Host info: host: 'vm', ip: '127.0.0.1'\nBuild info: version: '4.48.0', revision: '27f5213'\n"
           "System info: os.name: 'Linux', os.arch: 'amd64', java.version: '17.0.15'\nDriver info: driver.version: "
           "unknown\nBuild info: version: '4.48.0', revision: '27f5213'\nSystem info: os.name: 'Linux', os.arch: "
           "'amd64', java.version: '17.0.15'\nDriver info: driver.version: unknown; For documentation on this error, "
           "please visit: https://www.selenium.dev/documentation/webdriver/troubleshooting/errors#sessionnotcreated")
QUEUE_TIMED_OUT = ("Could not start a new session. New session request timed out \nHost info: host: 'vm'\n"
                   "Build info: version: '4.48.0'\nDriver info: driver.version: unknown")


class FakeHub:
    """Answers like a hub with relay nodes at `{url}/nodeN`; tests change `nodes`, `down`, `queue`."""

    def __init__(self, nodes: int = 2, stereotype: dict[str, Any] | None = None) -> None:
        self.stereotype = dict(stereotype or CHROMIUM)
        self.busy: dict[int, str | None] = {i: None for i in range(1, nodes + 1)}
        self.down: set[int] = set()  # nodes that report DOWN on their own /status
        self.queue: list[dict[str, Any]] = []
        self.hits: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.hits.append(self.path)
                body = hub.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def node_uri(self, i: int) -> str:
        return f"{self.url}/node{i}"

    def answer(self, path: str) -> Any:
        if path == "/status":
            nodes = [{"id": f"n{i}", "uri": self.node_uri(i), "availability": "UP", "version": "4.48.0 (revision x)",
                      "slots": [{"stereotype": self.stereotype,
                                 "session": {"sessionId": sid, "uri": self.node_uri(i)} if sid else None}]}
                     for i, sid in self.busy.items()]
            return {"value": {"ready": True, "message": "Selenium Grid ready.", "nodes": nodes}}
        if path == "/se/grid/newsessionqueue/queue":
            return {"value": self.queue}
        for i in self.busy:
            if path == f"/node{i}/status":
                availability = "DOWN" if i in self.down else "UP"
                return {"value": {"ready": i not in self.down, "message": "Ready", "node": {"availability": availability}}}
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    fake = FakeHub()
    yield fake
    fake.close()


def pool_of(tmp_path: Path, url: str, **kwargs: Any) -> DevicePool:
    return DevicePool([DeviceSpec(url)], run_id="grid", lock_dir=tmp_path, capabilities=CHROMIUM, **kwargs)


# --- reading the hub ----------------------------------------------------------------------------


def test_the_hubs_status_gives_nodes_slots_and_stereotypes(hub: FakeHub) -> None:
    hub.busy[2] = "s-2"
    status = read_grid_status(hub.url)
    assert status is not None and status.ready
    assert [n.uri for n in status.nodes] == [hub.node_uri(1), hub.node_uri(2)]
    assert status.slot_counts(CHROMIUM) == (2, 1, 0)
    assert status.describe(CHROMIUM) == "1 of 2 matching slot(s) busy on 2 UP node(s)"
    assert read_grid_status(hub.url + "/wd/hub") is not None, "Grid 3's /wd/hub path names the same hub"


def test_an_appium_servers_status_is_not_a_hub(tmp_path: Path) -> None:
    from pytest_guistate.devices.sim.server import SimServer

    with SimServer() as sim:
        assert read_grid_status(sim.url) is None


@pytest.mark.parametrize(("caps", "matches"), [
    (CHROMIUM, True),
    ({"platformName": "LINUX", "browserName": "chrome"}, True),  # case, and a cap the request leaves out
    ({"browserName": "firefox"}, False),
    ({**CHROMIUM, "appium:automationName": "UiAutomator2"}, False),  # an appium: extension the slot names
    ({**CHROMIUM, "goog:chromeOptions": {"args": []}, "appium:newCommandTimeout": 60}, True),
    ({"platformName": "Android", "appium:automationName": "Chromium"}, False),
])
def test_slots_match_as_the_grids_default_matcher(caps: dict[str, Any], matches: bool) -> None:
    assert stereotype_matches(CHROMIUM, caps) is matches


def test_grid_errors_name_the_service_and_lose_their_info_blocks() -> None:
    assert failed_service(REFUSED) == "http://127.0.0.1:4751"
    assert failed_service("Connection error (GET http://127.0.0.1:4752/session/abc/screenshot)") == \
        "http://127.0.0.1:4752"
    assert failed_service("Failed to execute request (POST http://127.0.0.1:4752/session/abc/url)") == \
        "http://127.0.0.1:4752"
    assert failed_service("No nodes support the capabilities in the request") is None
    assert trim_grid_message(REFUSED) == (
        "Could not start a new session. Error while creating session with the service http://127.0.0.1:4751. "
        "Connection error (POST http://127.0.0.1:4751/session)")
    appium = "An unknown server-side error occurred.\nOriginal error: the app is not installed"
    assert trim_grid_message(appium) == appium, "a message without a Grid block is left as it came"
    assert is_queue_timeout(trim_grid_message(QUEUE_TIMED_OUT)) and not is_queue_timeout(REFUSED)


def test_a_request_is_found_in_the_queue_by_what_it_sent(hub: FakeHub) -> None:
    mine = {**CHROMIUM, "appium:chromedriverPort": 40001}
    hub.queue = [{"capabilities": [{**CHROMIUM, "appium:chromedriverPort": 40000}]}, {"capabilities": [mine]}]
    assert queue_position(hub.url, mine) == (2, 2)
    assert queue_position(hub.url, {**CHROMIUM, "appium:chromedriverPort": 40002}) is None


# --- the pool -----------------------------------------------------------------------------------


def test_a_hub_listed_once_is_a_pool_of_its_matching_slots_and_at_least_one_per_worker(
    hub: FakeHub, tmp_path: Path,
) -> None:
    [spec] = parse_device_option(hub.url, tmp_path)
    specs, grids = hub_pool([spec], CHROMIUM, workers=1)
    assert [s.slot for s in specs] == [0, 1] and spec.key in grids
    specs, _ = hub_pool([spec], CHROMIUM, workers=3)
    assert [s.slot for s in specs] == [0, 1, 2], "the third worker queues in the hub instead of failing a lease"
    twice = parse_device_option(f"{hub.url},{hub.url},{hub.url}", tmp_path)
    assert hub_pool(twice, CHROMIUM, workers=1)[0] == twice, "listing the hub once per session keeps working"
    assert hub_pool([spec], {"browserName": "firefox"}, workers=1)[0] == (spec,), "no matching slot: one lease"


def test_more_workers_than_slots_is_said_before_the_run(hub: FakeHub) -> None:
    [line] = hub_capacity([DeviceSpec(hub.url)], CHROMIUM, workers=3)
    assert line == (f"hub {hub.url}: 3 test processes and 2 matching slot(s) (0 of 2 matching slot(s) busy on 2 UP "
                    "node(s)): 1 session(s) at a time will queue in the hub for a free slot (each within "
                    "guistate_session_timeout)")
    assert hub_capacity([DeviceSpec(hub.url)], CHROMIUM, workers=2) == []
    [none] = hub_capacity([DeviceSpec(hub.url)], {"browserName": "firefox"}, workers=1)
    assert "no slot's stereotype matches the capabilities" in none and '"browserName": "chrome"' in none


# --- opening a session through the hub ----------------------------------------------------------


class Opener:
    """Stands in for newSession through the hub: answers each call from a script."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> object:
        self.calls.append(seconds)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def test_a_node_that_refuses_is_marked_and_the_next_try_waits_for_a_healthy_slot(
    hub: FakeHub, tmp_path: Path,
) -> None:
    pool = pool_of(tmp_path, hub.url)
    hub.down = {1}  # node 1's Appium is gone: its own /status says DOWN, the hub still says UP
    opener = Opener(SessionNotCreatedException(REFUSED), "driver")
    shown: list[str] = []
    driver, waited = open_through_hub(pool, pool.specs[0], CHROMIUM, opener, 30.0, shown.append)
    assert driver == "driver" and len(opener.calls) == 2
    assert opener.calls[1] < 30.0, "the second try gets what is left of the one deadline"
    assert pool.node_failures(pool.specs[0]) == {"http://127.0.0.1:4751": trim_grid_message(REFUSED)}
    assert pool.dead() == {}, "one failed node of two does not take the hub out"
    assert waited.why == "node service http://127.0.0.1:4751 failed to start a session (1 of 2 nodes failed)"


def test_the_hub_is_out_only_when_every_matching_node_failed(hub: FakeHub, tmp_path: Path) -> None:
    pool = pool_of(tmp_path, hub.url)
    spec = pool.specs[0]
    pool.node_failed(spec, "http://127.0.0.1:4752", "died under a test")
    with pytest.raises(HubOut), pytest.warns(DevicePoolWarning, match="is taken out of the pool: every node"):
        open_through_hub(pool, spec, CHROMIUM, Opener(SessionNotCreatedException(REFUSED)), 30.0, lambda _: None)
    [reason] = pool.dead().values()
    assert reason.startswith("every node behind the hub that matches the capabilities failed (2 of 2): ")
    assert "http://127.0.0.1:4751: Could not start a new session" in reason and "http://127.0.0.1:4752: died" in reason


def test_the_hubs_queue_timeout_is_a_wait_and_is_not_retried(hub: FakeHub, tmp_path: Path) -> None:
    pool = pool_of(tmp_path, hub.url)
    opener = Opener(SessionNotCreatedException(QUEUE_TIMED_OUT), "never asked")
    with pytest.raises(DeviceError, match=r"the hub's queue gave up after \d+ s \(its session-request-timeout\): "
                                          r"Could not start a new session\. New session request timed out — a wait, "
                                          r"not a refusal: not retried, the hub stays in the pool$"):
        open_through_hub(pool, pool.specs[0], CHROMIUM, opener, 30.0, lambda _: None)
    assert len(opener.calls) == 1 and pool.dead() == {} and pool.node_failures(pool.specs[0]) == {}


def test_a_queue_timeout_while_every_matching_node_is_down_takes_the_hub_out(hub: FakeHub, tmp_path: Path) -> None:
    """CI caught it on a real Grid: both nodes killed, the hub had marked them DOWN before the request came, so
    it queued the request until its session-request-timeout; that is no wait for a slot but a hub with none."""
    pool = pool_of(tmp_path, hub.url)
    hub.down = {1, 2}  # both Appium services gone: each node's own /status says DOWN
    opener = Opener(SessionNotCreatedException(QUEUE_TIMED_OUT), "never asked")
    with pytest.raises(HubOut), pytest.warns(DevicePoolWarning, match="is taken out of the pool: every node"):
        open_through_hub(pool, pool.specs[0], CHROMIUM, opener, 30.0, lambda _: None)
    [reason] = pool.dead().values()
    assert reason.startswith("every node behind the hub that matches the capabilities failed (2 of 2): nodes not up: ")
    assert len(opener.calls) == 1


def test_a_refusal_naming_no_node_goes_back_to_the_caller(hub: FakeHub, tmp_path: Path) -> None:
    pool = pool_of(tmp_path, hub.url)
    refusal = SessionNotCreatedException("No nodes support the capabilities in the request")
    with pytest.raises(SessionNotCreatedException):
        open_through_hub(pool, pool.specs[0], CHROMIUM, Opener(refusal), 30.0, lambda _: None)
    assert pool.node_failures(pool.specs[0]) == {}


def test_a_failed_test_on_a_dead_node_names_the_node_and_its_appium(hub: FakeHub, tmp_path: Path) -> None:
    pool = pool_of(tmp_path, hub.url)
    error = "screenshot failed on HUB: Connection error (GET http://127.0.0.1:4752/session/abc/screenshot)"
    alive = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)  # answers (501): a live Appium
    threading.Thread(target=alive.serve_forever, daemon=True).start()
    try:
        live_error = error.replace("http://127.0.0.1:4752", f"http://127.0.0.1:{alive.server_address[1]}")
        assert hub_session_died(pool, pool.specs[0], hub.node_uri(2), live_error) is None, "healthy: the test's own"
    finally:
        alive.shutdown()
        alive.server_close()
    hub.down = {2}
    why = hub_session_died(pool, pool.specs[0], hub.node_uri(2), error)
    assert why == (f"node {hub.node_uri(2)} (Appium http://127.0.0.1:4752) behind the hub: node {hub.node_uri(2)} "
                   "reports DOWN (Ready)")
    assert list(pool.node_failures(pool.specs[0])) == ["http://127.0.0.1:4752"] and pool.dead() == {}


def test_the_doctor_lists_nodes_and_fails_on_one_that_is_down(hub: FakeHub) -> None:
    status = read_grid_status(hub.url)
    assert status is not None
    assert all(f.ok for f in grid_findings(status))
    hub.down = {2}
    status = read_grid_status(hub.url)
    assert status is not None
    findings = grid_findings(status)
    assert [f.ok for f in findings] == [True, True, False]
    assert findings[0].found == "Selenium Grid 4.48.0, ready=True, 2 node(s): Selenium Grid ready."
    assert findings[2].found.startswith(f"hub says UP, node says node {hub.node_uri(2)} reports DOWN (Ready); 1 slot(s)")
    assert "driver(s) Chromium" in findings[1].found


def test_a_run_with_more_workers_than_slots_says_so_before_the_first_test(
    pytester: pytest.Pytester, hub: FakeHub,
) -> None:
    (pytester.path / "caps.json").write_text(json.dumps(CHROMIUM))
    pytester.makepyfile("def test_nothing_on_the_device():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "3", f"--guistate-device={hub.url}",
                                           "--guistate-caps=caps.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"guistate: hub {hub.url}: 3 test processes and 2 matching slot(s) *will queue*"])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", f"--guistate-device={hub.url}",
                                           "--guistate-caps=caps.json")
    result.assert_outcomes(passed=1)
    assert "will queue" not in result.stdout.str()


def test_a_request_waiting_in_the_hubs_queue_is_announced_and_named(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_guistate.devices import hub as hub_module

    monkeypatch.setattr(hub_module, "POLL_S", 0.1)
    pool = pool_of(tmp_path, hub.url)
    hub.busy = {1: "s-1", 2: "s-2"}
    hub.queue = [{"capabilities": [CHROMIUM]}]  # this request, as sent

    def slow_session(seconds: float) -> str:
        time.sleep(0.6)  # the hub holds the request in its queue
        return "driver"

    shown: list[str] = []
    driver, waited = open_through_hub(pool, pool.specs[0], CHROMIUM, slow_session, 30.0, shown.append)
    assert driver == "driver" and waited.seconds >= 0.6
    assert shown and all(re.fullmatch(r"waiting for a Grid slot, \d+ s, queue 1/1", line) for line in shown), shown
    assert waited.why == "2 of 2 matching slot(s) busy on 2 UP node(s); position 1 of 1 in the hub's queue"
    hub.queue = []
    shown.clear()
    driver, waited = open_through_hub(pool, pool.specs[0], CHROMIUM, slow_session, 30.0, shown.append)
    assert waited.seconds == 0.0 and waited.why == "" and shown == [], "a slow start that never queued is no wait"


def test_a_grid_error_is_shown_once_in_the_device_error() -> None:
    from selenium.common.exceptions import WebDriverException

    from pytest_guistate.devices.errors import driver_call

    def grid_call() -> None:
        raise WebDriverException(REFUSED, stacktrace=["org.openqa.selenium.remote.http.jdk.JdkHttpClient.execute0"])

    with pytest.raises(DeviceError) as caught:
        driver_call("screenshot", "http://hub:4444", grid_call)
    text = str(caught.value)
    assert text == f"screenshot failed on http://hub:4444: {trim_grid_message(REFUSED)}"
    cause = caught.value.__cause__
    assert isinstance(cause, WebDriverException), "the driver's exception type stays for code that tests it"
    assert "Build info" not in str(cause) and "4751" not in str(cause) and "JdkHttpClient" not in str(cause)

    def appium_call() -> None:
        raise WebDriverException("An unknown server-side error occurred", stacktrace=["UnknownError: at x.js:1"])

    with pytest.raises(DeviceError) as caught:
        driver_call("screenshot", "http://appium:4723", appium_call)
    assert "An unknown server-side error occurred" in str(caught.value.__cause__), "an Appium error is left as it is"


# --- a node that dies under a running test (issue 44) ---------------------------------------------


def _closed_port() -> int:
    """A loopback port nothing listens on (an Appium server that died)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _DeadNodeDriver:
    """A browser session behind the hub whose node's Appium just died: every command comes back with the
    relay node's connection error naming that service, as Grid 4.48 answers it."""

    def __init__(self, service: str) -> None:
        self.capabilities = {"browserName": "chrome", "platformName": "linux"}
        self.session_id = "abc"
        self.service = service

    def _dead(self, method: str, path: str) -> WebDriverException:
        return WebDriverException(f"Connection error ({method} {self.service}/session/abc/{path})",
                                  stacktrace=["org.openqa.selenium.remote.http.jdk.JdkHttpClient.execute0"])

    def execute_script(self, script: str, *args: Any) -> Any:
        raise self._dead("POST", "execute/sync")

    def get_screenshot_as_base64(self) -> str:
        raise self._dead("GET", "screenshot")

    @property
    def page_source(self) -> str:
        raise self._dead("GET", "source")

    @property
    def contexts(self) -> list[str]:
        raise self._dead("GET", "contexts")

    def find_elements(self, by: str, value: str) -> list[Any]:
        raise self._dead("POST", "elements")

    @property
    def title(self) -> str:
        raise self._dead("GET", "title")

    def get(self, url: str) -> None:
        raise self._dead("POST", "url")

    def execute(self, command: Any, params: dict[str, Any] | None = None) -> Any:
        raise self._dead("POST", str(command))

    @property
    def command_executor(self) -> Any:  # where the DevTools screenshot's command is registered
        return SimpleNamespace(_commands={}, add_command=lambda *args: None)

    def quit(self) -> None:
        pass


CALLS = {
    "find": lambda d: d.find(text="Pay", timeout=2),
    "exists": lambda d: d.exists(text="Pay"),
    "tree (script)": lambda d: d.ui_tree(),
    "screenshot": lambda d: d.screenshot(),
    "action": lambda d: d.open_url("http://example.test/"),
    "page hook (script)": lambda d: d.ground_truth(),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_every_call_that_meets_a_dead_node_ends_with_its_named_death(hub: FakeHub, tmp_path: Path, call: str) -> None:
    """The node still says UP (a relay node checks its Appium only now and then), the call's error names
    the service, and that service does not answer: the call itself says the device died, naming both."""
    from pytest_guistate.devices.device import Device
    from pytest_guistate.devices.hub import named_death
    from pytest_guistate.devices.timeouts import DeviceGone

    pool = pool_of(tmp_path, hub.url)
    spec = pool.specs[0]
    hub.busy[2] = "abc"  # the hub says node 2 runs this session
    service = f"http://127.0.0.1:{_closed_port()}"
    device = Device(_DeadNodeDriver(service), url=hub.url)  # type: ignore[arg-type]  # scripted, duck-typed
    device.named_death = lambda text: named_death(pool, spec, "abc", text)
    with pytest.raises(DeviceGone) as died:
        CALLS[call](device)
    text = str(died.value)
    assert text.startswith(f"device {spec.label} died: node {hub.node_uri(2)} (Appium {service}) behind the hub: "), text
    assert f"its Appium {service} does not answer /status" in text and "Connection error" in text, text
    assert list(pool.node_failures(spec)) == [service] and pool.dead() == {}, "the hub stays in the pool"


def test_a_call_failing_on_a_live_node_keeps_its_own_error(hub: FakeHub, tmp_path: Path) -> None:
    """A failure that names no connection to a service asks nothing; one whose service answers is the test's own."""
    from pytest_guistate.devices.hub import named_death

    pool = pool_of(tmp_path, hub.url)
    hub.busy[2] = "abc"
    before = len(hub.hits)
    assert named_death(pool, pool.specs[0], "abc", "find text='Pay' failed on HUB: stale element reference") is None
    assert len(hub.hits) == before, "an error naming no dead service costs no request"
    alive = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)  # answers (501): a live Appium
    threading.Thread(target=alive.serve_forever, daemon=True).start()
    try:
        service = f"http://127.0.0.1:{alive.server_address[1]}"
        error = f"find failed on HUB: Connection error (POST {service}/session/abc/execute/sync)"
        assert named_death(pool, pool.specs[0], "abc", error) is None
    finally:
        alive.shutdown()
        alive.server_close()
    assert pool.node_failures(pool.specs[0]) == {}
