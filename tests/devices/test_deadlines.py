"""Per-command deadlines without a thread per command (issue 42): one watcher ends a hung request."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from pytest_guistate.devices import timeouts
from pytest_guistate.devices.timeouts import DeviceTimeout, bounded_connection
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread


class _Answers(BaseHTTPRequestHandler):
    """a title answers at once; `/session/x/source` never does (a hung driver)."""

    def do_GET(self) -> None:
        if self.path.endswith("/source"):
            time.sleep(30)  # the client's deadline ends it long before
            return
        body = json.dumps({"value": {"ready": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    served = ServedThread(lambda address: LoopbackHTTPServer(address, _Answers), host="127.0.0.1", port=0,
                          name="deadlines", what="the hung driver")
    served.start()
    try:
        yield served.url
    finally:
        served.stop()


def test_commands_start_no_thread_each(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    connection = bounded_connection(server, 60.0, 60.0)
    connection.execute("getTitle", {"sessionId": "x"})  # the watcher, if any, starts with the first deadline
    started: list[str] = []
    original = threading.Thread.start
    caller = threading.get_ident()

    def counted(self: threading.Thread) -> None:
        if threading.get_ident() == caller:  # not the server's threads, one per request it serves
            started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", counted)
    for _ in range(20):
        assert connection.execute("getTitle", {"sessionId": "x"})["value"]["ready"] is True
    assert started == [], f"20 commands started {len(started)} threads: {started[:3]}"


def test_a_hung_command_still_ends_at_its_deadline_behind_longer_ones(server: str) -> None:
    """Finished 60 s deadlines sit ahead in the watcher's queue; a 0.5 s one still fires at its time."""
    patient = bounded_connection(server, 60.0, 60.0)
    for _ in range(5):
        patient.execute("getTitle", {"sessionId": "x"})
    hurried = bounded_connection(server, 0.5, 0.5)
    start = time.monotonic()
    with pytest.raises(DeviceTimeout, match="did not answer getPageSource within 0.5 s"):
        hurried.execute("getPageSource", {"sessionId": "x"})
    assert time.monotonic() - start < 10, "the deadline did not end the hung request"


def test_a_deadline_ends_only_its_own_request(server: str) -> None:
    """Two threads: one hangs and times out, the other's quick commands are untouched."""
    hurried = bounded_connection(server, 0.5, 0.5)
    patient = bounded_connection(server, 60.0, 60.0)
    errors: list[BaseException] = []

    def hang() -> None:
        try:
            hurried.execute("getPageSource", {"sessionId": "x"})
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            errors.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    end = time.monotonic() + 1.5
    answers = 0
    while time.monotonic() < end:
        assert patient.execute("getTitle", {"sessionId": "x"})["value"]["ready"] is True
        answers += 1
    thread.join(10)
    assert answers > 0
    assert len(errors) == 1 and isinstance(errors[0], DeviceTimeout), errors


def test_no_socket_left_open_by_a_finished_deadline(server: str) -> None:
    """A finished deadline stays queued until its time but holds no connection (nothing to shut)."""
    connection = bounded_connection(server, 60.0, 60.0)
    connection.execute("getTitle", {"sessionId": "x"})
    queued = [entry[2] for entry in timeouts._watcher._heap]
    assert queued and all(d.finished and d._connection is None for d in queued)
