"""A fault-injecting HTTP proxy in front of the simulated phone (issue 14).

Everything is forwarded to a real `SimServer`, so sessions, taps and page sources behave as on the
sim; a `Rule` replaces the answer of matching requests with a fault: no answer at all (`hang`), an
HTTP error, an HTML page, or the sim's own JSON with its `value` rewritten (a truncated PNG, a 1x1
frame, hostile XML). Rules can start after the n-th matching request, so a test gets through its
first steps and the fault hits mid-test.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler
from typing import Any

from pytest_guistate.devices.sim.server import SimServer
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

HANG_S = 40.0  # a hung request is let go after this; a case taking that long has failed its bound
TRICKLE_BYTES = 64  # a trickled answer: this many bytes ...
TRICKLE_EVERY_S = 0.25  # ... this often, so no single socket read waits long enough to time out


@dataclass
class Rule:
    """Requests whose method and path match get `fault` instead of the sim's answer, from the
    `after`-th match on (0 = the first)."""

    method: str
    path: str  # a regex searched in the request path
    fault: str  # hang | status | html | value | close | trickle (the real answer, TRICKLE_BYTES every TRICKLE_EVERY_S)
    after: int = 0
    status: int = 500
    body: str = ""
    value: Callable[[Any], Any] | None = None  # for fault="value": old JSON value -> new
    times: int | None = None  # how many requests get the fault (None: all from `after` on)
    armed: bool = True  # False: waits for the inner test's GET /__arm (a fault between two given steps)
    seen: int = field(default=0, init=False)

    def matches(self, method: str, path: str) -> bool:
        return method == self.method and re.search(self.path, path) is not None


class FaultProxy:
    """`FaultProxy().start()`: its `url` is the device URL the inner test run uses."""

    def __init__(self) -> None:
        self.sim = SimServer(port=0).start()
        self.rules: list[Rule] = []
        self.log: list[str] = []
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.log.append(f"{self.command} {self.path}")
                if self.path == "/__arm":
                    for waiting in proxy.rules:
                        waiting.armed = True
                    self._send(200, b"{}", "application/json")
                    return
                rule = proxy._rule(self.command, self.path)
                if rule is not None and rule.fault == "hang":
                    proxy._release.wait(HANG_S)  # until the proxy stops: the client's deadline must end it
                    self.close_connection = True
                    return
                if rule is not None and rule.fault == "close":
                    self.close_connection = True
                    return
                if rule is not None and rule.fault in ("status", "html"):
                    payload = rule.body or (json.dumps({"value": {"error": "unknown error", "message": "boom",
                                                                  "stacktrace": ""}}))
                    kind = "text/html" if rule.fault == "html" else "application/json"
                    self._send(rule.status, payload.encode(), kind)
                    return
                status, data, kind = proxy._forward(self.command, self.path, body, dict(self.headers))
                if rule is not None and rule.fault == "trickle":
                    self._trickle(status, data, kind)
                    return
                if rule is not None and rule.fault == "value" and rule.value is not None:
                    answer = json.loads(data)
                    answer["value"] = rule.value(answer["value"])
                    data = json.dumps(answer).encode()
                self._send(status, data, kind)

            def _trickle(self, status: int, data: bytes, kind: str) -> None:
                """The whole answer announced (Content-Length), its body sent a few bytes at a time, for at
                most HANG_S: until the client gives up (its socket closes) or the proxy stops."""
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.close_connection = True
                sent, ends = 0, time.monotonic() + HANG_S
                try:
                    while sent < len(data) and time.monotonic() < ends and not proxy._release.is_set():
                        self.wfile.write(data[sent:sent + TRICKLE_BYTES])
                        self.wfile.flush()
                        sent += TRICKLE_BYTES
                        proxy._release.wait(TRICKLE_EVERY_S)
                except OSError:
                    pass  # the client closed the connection: what a deadline should do

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _handle

        self._served = ServedThread(partial(LoopbackHTTPServer, handler=Handler), host="127.0.0.1", port=0,
                                    name="fault-proxy", what="FaultProxy")
        self._url = ""

    @property
    def url(self) -> str:
        """The address it serves at; still the one it served at after `stop()` (for messages that name it)."""
        return self._url or self._served.url  # before start(): the life cycle's "not running" error

    def start(self) -> FaultProxy:
        self._served.start()
        self._url = self._served.url
        return self

    def stop(self) -> None:
        self._release.set()
        self._served.stop()
        self.sim.stop()

    def add(self, *rules: Rule) -> FaultProxy:
        self.rules.extend(rules)
        return self

    def _rule(self, method: str, path: str) -> Rule | None:
        for rule in self.rules:
            if rule.armed and rule.matches(method, path):
                rule.seen += 1
                if rule.seen > rule.after and (rule.times is None or rule.seen <= rule.after + rule.times):
                    return rule
        return None

    def _forward(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.sim.port, timeout=30)
        try:
            conn.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            return response.status, response.read(), response.getheader("Content-Type") or "application/json"
        finally:
            conn.close()
