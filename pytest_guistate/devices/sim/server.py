"""The simulated phone's WebDriver server: W3C + Appium endpoints over HTTP on loopback.

A stdlib `ThreadingHTTPServer` in a background thread, so a test can run the stock
Appium-Python-Client against `SimServer().start().url` with no Node, adb or emulator. Requests
are untrusted: bodies are size-bounded and every failure becomes a W3C error body, never an HTML
page, a hung connection or a dead server thread. `stop()` closes kept-alive connections too, so
no thread and no listening port outlive it.

A request is in `request_log()` before its reply is sent (a client that got the answer can read
the log at once). When the server itself drops a connection whose request bytes it did not read
(an oversize, chunked or unparsable request), it closes *lingering*: it half-closes and discards
what the client is still sending, within a byte and time bound, so the client reads the error
instead of a connection reset from a close with unread data.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import socket
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import urlsplit

from pytest_guistate.devices.sim import (  # noqa: F401  (they register routes and mobile: commands)
    mobile_apps,
    mobile_reset,
    routes_context,
    routes_element,
    routes_input,
)
from pytest_guistate.devices.sim.errors import W3CError, error_body, from_sim_error, invalid_argument
from pytest_guistate.devices.sim.latency import LatencyBook, LatencyError, command_kind
from pytest_guistate.devices.sim.model import PhoneModel, SimError
from pytest_guistate.devices.sim.routes import Request, match_route
from pytest_guistate.devices.sim.webdriver_session import PhoneFactory, SessionStore
from pytest_guistate.devices.sim.webview import BrowserPool
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

__all__ = ["RequestRecord", "SimServer", "default_phone_factory"]

MAX_BODY_BYTES = 1 << 20
LINGER_MAX_BYTES = 64 << 20  # discarded at most after a refused request; past it the client may see a reset
LINGER_S = 2.0  # and for at most this long
_LEGACY_PREFIX = "/wd/hub"  # Appium 1 base path; old clients still send it


def default_phone_factory(capabilities: dict[str, Any], browsers: BrowserPool | None = None) -> PhoneModel:
    """The phone for the session's persona (Android `Phone`, or `IosPhone` in points), imported on
    first use so the server loads without the apps; `browsers` is the server's web view browsers."""
    from pytest_guistate.devices.sim.ios.persona import IOS, platform_of

    if platform_of(capabilities) == IOS:
        from pytest_guistate.devices.sim.ios.phone import IosPhone

        return IosPhone.from_capabilities(capabilities, browsers=browsers)
    from pytest_guistate.devices.sim.phone import Phone

    return Phone.from_capabilities(capabilities, browsers=browsers)


@dataclass(frozen=True)
class RequestRecord:
    """One served request, kept in a bounded in-memory log for debugging (nothing goes to stdout)."""

    at: float
    method: str
    path: str
    status: int
    ms: float
    error: str = ""
    delay_ms: float = 0.0  # what the session's latency profile added (guistate:latency)


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the Selenium client pools its connections
    server_version = "guistate-sim/0.1"
    disable_nagle_algorithm = True  # header and body go out as written, no 40 ms delayed-ACK stall
    timeout = 120  # an idle kept-alive connection is dropped after this many seconds
    server: _HTTPServer
    linger = False  # set when the server closes with client bytes possibly left unread
    delay_ms = 0.0  # latency applied to the request being served

    def handle(self) -> None:
        super().handle()
        if self.linger:
            self._discard_unread()

    def _discard_unread(self) -> None:
        """Lingering close: half-close, then read and drop what the client still sends (bounded).

        Closing a socket with unread input makes the kernel send a reset, which can reach the
        client before it has read the reply (or while it is still sending the body it was
        refused); the reply would be lost as a BrokenPipe/ConnectionReset on the client side.
        """
        sock = self.connection
        deadline = time.monotonic() + LINGER_S
        discarded = 0
        try:
            sock.shutdown(socket.SHUT_WR)  # the reply is complete: the client sees it end here
            while discarded < LINGER_MAX_BYTES:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                sock.settimeout(remaining)
                chunk = sock.recv(65536)
                if not chunk:
                    return  # the client closed its side: nothing unread is left
                discarded += len(chunk)
        except OSError:  # reset, timeout or already closed by stop(): nothing more to protect
            return

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib's stderr log; requests are recorded in `SimServer.request_log()`."""

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_GET

    def do_HEAD(self) -> None:
        self._reply(405, error_body("unknown method", "HEAD is not a WebDriver command"), head=True)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level failures (bad request line, oversize headers) as W3C JSON, then close."""
        self.close_connection = True
        self.linger = True  # the rest of the unparsable request is still unread
        self.request_version = "HTTP/1.1"  # an unparsable request line left "HTTP/0.9": no headers at all
        error = "unknown method" if code == 501 else "invalid argument"
        self._reply(code, error_body(error, message or explain or f"HTTP {code}"))

    def _read_body(self) -> dict[str, Any]:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = self.linger = True
            raise W3CError("invalid argument", "chunked request bodies are not supported; send Content-Length", 411)
        raw_length = self.headers.get("Content-Length", "0").strip() or "0"
        if not raw_length.isdigit():
            self.close_connection = self.linger = True
            raise invalid_argument(f"bad Content-Length {raw_length!r}")
        length = int(raw_length)
        if length > self.server.sim.max_body_bytes:
            self.close_connection = self.linger = True  # the unread body must not be parsed as the next request
            raise W3CError(
                "payload too large", f"request body of {length} bytes exceeds {self.server.sim.max_body_bytes}"
            )
        data = self.rfile.read(length) if length else b""
        if len(data) != length:
            self.close_connection = True
            raise invalid_argument(f"request body ended after {len(data)} of {length} bytes")
        if self.command not in ("POST", "PUT", "PATCH") or not data.strip():
            return {}
        try:
            body = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise invalid_argument(f"malformed JSON body: {exc}") from exc
        if not isinstance(body, dict):
            raise invalid_argument(f"the request body must be a JSON object, got {type(body).__name__}")
        return body

    def _dispatch(self) -> None:
        started = time.perf_counter()
        path = urlsplit(self.path).path
        if path.startswith(_LEGACY_PREFIX + "/") or path == _LEGACY_PREFIX:
            path = path[len(_LEGACY_PREFIX) :] or "/"
        status, payload = 200, None
        self.delay_ms = 0.0
        try:
            payload = {"value": self._call(path)}
            data = json.dumps(payload, default=_json_default, separators=(",", ":")).encode("utf-8")
        except W3CError as exc:
            status, data = exc.status, json.dumps(exc.body()).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - a bug or a phone crash: report it, keep the thread serving
            status = 500
            body = error_body("unknown error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
            data = json.dumps(body).encode("utf-8")
        error = "" if status == 200 else json.loads(data)["value"].get("error", "")
        # recorded before the reply goes out: once the client has its answer, the log shows it
        self.server.sim.record(
            RequestRecord(time.time(), self.command, path, status, (time.perf_counter() - started) * 1000, error,
                          self.delay_ms)
        )
        self._reply(status, data)

    def _call(self, path: str) -> Any:
        body = self._read_body()
        handled, value = routes_context.proxied(self.server.sim.store, self.command, path, body)
        if handled:  # a web view context's command, answered by its chromedriver
            return value
        route, params = match_route(self.command, path)
        store = self.server.sim.store
        req = Request(store, params, body)
        try:
            if "sid" in params:
                req.session = store.get(params["sid"])
                self._charge(params["sid"], route.template, body, req.session.phone)
            if route.template == "/session" and self.command == "POST":
                return self._new_session(route.handler(req))
            if not route.locked or req.session is None:
                return route.handler(req)
            with req.session.lock:
                if req.session.closed:
                    raise W3CError("invalid session id", f"session {params['sid']!r} was closed")
                return route.handler(req)
        except SimError as exc:
            raise from_sim_error(exc) from exc

    def _charge(self, sid: str, template: str, body: dict[str, Any], phone: Any) -> None:
        """The latency hook (issue 11): wait what this command costs under the session's profile."""
        book = self.server.sim.latency
        self.delay_ms = book.charge(sid, command_kind(self.command, template, body), phone)
        if template == "/session/{sid}" and self.command == "DELETE":
            book.close(sid)

    def _new_session(self, created: dict[str, Any]) -> dict[str, Any]:
        """Register the new session's profile (a bad one refuses the session) and charge its start."""
        sid = created["sessionId"]
        try:
            self.server.sim.latency.open(sid, created["capabilities"])
        except LatencyError as exc:
            self.server.sim.store.delete(sid)
            raise W3CError("session not created", str(exc)) from exc
        self.delay_ms = self.server.sim.latency.charge(sid, "session", self.server.sim.store.get(sid).phone)
        return created

    def _reply(self, status: int, payload: bytes | dict[str, Any], head: bool = False) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(0 if head else len(data)))
            self.send_header("Cache-Control", "no-cache")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(data)
        except OSError:  # the client went away mid-reply; nothing left to tell it
            self.close_connection = True


class _HTTPServer(LoopbackHTTPServer):
    """Tracks its connection threads and sockets so `stop()` can end kept-alive connections."""

    block_on_close = False

    def __init__(self, address: tuple[str, int], sim: SimServer) -> None:
        self.sim = sim
        self.connections: dict[threading.Thread, socket.socket] = {}
        self.connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name=f"{self.sim.thread_name}-conn",
            daemon=True,
        )
        with self.connections_lock:
            self.connections[thread] = request
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.pop(threading.current_thread(), None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that died outside a request (reset, timeout): record it, print nothing."""
        self.sim.record(RequestRecord(time.time(), "-", "-", 0, 0.0, traceback.format_exc(limit=1).strip()))


class SimServer:
    """WebDriver server for simulated phones: one phone per session, many sessions per server.

    `SimServer(port=0)` picks a free port; `url` is valid after `start()`. `default_caps` are
    merged under each session's capabilities (the client's own values win); a default
    `guistate:screen` is the Android persona's, in pixels: an iOS session keeps its own (points).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        phone_factory: PhoneFactory | None = None,
        *,
        default_caps: Mapping[str, Any] | None = None,
        max_sessions: int = 16,
        max_body_bytes: int = MAX_BODY_BYTES,
        request_log_size: int = 500,
    ) -> None:
        self._served = ServedThread(partial(_HTTPServer, sim=self), host=host, port=port, name="guistate-sim",
                                    what="SimServer", poll_interval=0.1)
        self.host = host
        self.max_body_bytes = max_body_bytes
        self.browsers = BrowserPool()  # the hybrid app's web view browsers, reused across sessions
        self.store = SessionStore(phone_factory or self._default_phone, default_caps or {}, max_sessions)
        self.latency = LatencyBook()  # per-session latency profiles (guistate:latency)
        self._log: deque[RequestRecord] = deque(maxlen=request_log_size)
        self._log_lock = threading.Lock()

    def _default_phone(self, capabilities: dict[str, Any]) -> PhoneModel:
        return default_phone_factory(capabilities, browsers=self.browsers)

    @property
    def thread_name(self) -> str:
        """The serving thread's name (`guistate-sim-<port>`); its connection threads add `-conn`."""
        return self._served.thread_name

    @property
    def port(self) -> int:
        return self._served.port

    @property
    def url(self) -> str:
        return self._served.url

    def start(self) -> Self:
        """Serve; a second start is an error (`RuntimeError`), as each start means new phones."""
        if self._served.running:
            raise RuntimeError("SimServer already started")
        self.store.stopping.clear()
        if self.browsers.closed:
            self.browsers = BrowserPool()
        self._served.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, end open connections, close every phone. Safe to call twice."""
        if not self._served.running:
            return
        self.store.stopping.set()
        httpd = self._served.stop(timeout)
        if httpd is None:  # stopped by another thread meanwhile
            return
        with httpd.connections_lock:
            connections = dict(httpd.connections)
        for sock in connections.values():
            with contextlib.suppress(OSError):  # already closed by its client: nothing to end
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout
        for conn_thread in connections:
            conn_thread.join(max(0.0, deadline - time.monotonic()))
        stuck = [t.name for t in connections if t.is_alive()]
        errors = self.store.close_all()
        self.browsers.close()  # the web view browsers sessions gave back: chromedriver and Chromium stop here
        if stuck or errors:
            warnings.warn(
                f"SimServer.stop: {len(stuck)} connection thread(s) still busy; phone close errors: {errors}",
                RuntimeWarning,
                stacklevel=2,
            )

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def record(self, entry: RequestRecord) -> None:
        with self._log_lock:
            self._log.append(entry)

    def request_log(self) -> list[RequestRecord]:
        with self._log_lock:
            return list(self._log)

    def session_ids(self) -> list[str]:
        return self.store.ids()
