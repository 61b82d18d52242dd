"""The one life cycle of the package's loopback HTTP servers, and the tiny server of the LLM stand-ins.

`ServedThread` is what the simulated phone's WebDriver server, the mobile-web Feed, `guistate show`,
the reference Messages API server and the cassette replayer share: refuse a host that is not this
machine's loopback (their content is app screens, test data and keys), bind (port 0 picks a free
one; the socket listens before `start()` returns, so a client may connect at once), serve on a daemon
thread, and on `stop()` stop accepting, join the thread and close the socket. What each one serves
stays in its own module, over `LoopbackHTTPServer`.

`LoopbackServer` runs a plain `handler(method, path, headers, body) -> HttpReply` function: the
reference server and the cassette replayer exist so the real `anthropic` SDK makes real HTTP requests
in tests and in replay mode (never a patched client).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseRequestHandler
from typing import Any, Generic, Self, TypeVar

from pytest_guistate.support.loopback import is_loopback_host

__all__ = ["HttpReply", "LoopbackHTTPServer", "LoopbackServer", "ServedThread", "json_reply", "load_static_files",
           "require_loopback", "send_bytes"]

STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8"}


def require_loopback(host: str, what: str) -> None:
    """`ValueError` naming the server unless `host` is this machine's loopback (`support.loopback`)."""
    if not is_loopback_host(host):
        raise ValueError(f"{what} serves on loopback only; {host!r} is not a loopback address")


def load_static_files(root: Path, what: str) -> dict[str, tuple[bytes, str]]:
    """A page's files by URL path (`/index.html` also at `/`): a fixed allow-list read once, so a
    server of them lists no directory and follows no `..`. `what` names the page in the error."""
    files = {"/" + path.name: (path.read_bytes(), STATIC_TYPES[path.suffix])
             for path in sorted(root.iterdir()) if path.suffix in STATIC_TYPES}
    if "/index.html" not in files:
        raise FileNotFoundError(f"{what} has no index.html in {root} (is the package data installed?)")
    files["/"] = files["/index.html"]
    return files


def send_bytes(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
    """One whole reply, never cached (every session loads the page fresh)."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-store")
    handler.end_headers()
    handler.wfile.write(body)


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A `ThreadingHTTPServer` on an IPv4 or IPv6 loopback address; connection threads are daemons,
    so a client that never hangs up cannot keep the test process alive."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Callable[..., BaseRequestHandler]) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)


S = TypeVar("S", bound=LoopbackHTTPServer)


class ServedThread(Generic[S]):
    """One server's life: `build((host, port))` binds it, a daemon thread named `<name>-<port>` serves it.

    The host and port are checked here, before anything binds; `what` names the server in errors.
    """

    def __init__(self, build: Callable[[tuple[str, int]], S], *, host: str, port: int, name: str, what: str,
                 poll_interval: float = 0.5) -> None:
        require_loopback(host, what)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be in 0..65535, got {port!r}")
        self._build, self.host, self.requested_port = build, host, port
        self.name, self.what, self._poll_interval = name, what, poll_interval
        self.server: S | None = None
        self._thread: threading.Thread | None = None
        self.thread_name = name

    @property
    def running(self) -> bool:
        return self.server is not None

    @property
    def port(self) -> int:
        """The bound port (the free one picked for port 0)."""
        if self.server is None:
            raise RuntimeError(f"{self.what} is not running; call start() first")
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """`http://host:port` with the host as given (an IPv6 one in brackets), no trailing slash."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> S:
        """Bind and serve; the socket already listens when this returns."""
        if self.server is not None:
            raise RuntimeError(f"{self.what} already started")
        server = self._build((self.host, self.requested_port))
        self.server = server
        self.thread_name = f"{self.name}-{self.port}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": self._poll_interval},
                                        name=self.thread_name, daemon=True)
        self._thread.start()
        return server

    def stop(self, timeout: float = 5.0) -> S | None:
        """Stop accepting, wait for the serving thread, close the socket; the stopped server (None if
        it was not running), for a caller that still has open connections of its own to end."""
        server, thread = self.server, self._thread
        if server is None:
            return None
        server.shutdown()
        if thread is not None:
            thread.join(timeout)
        server.server_close()
        self.server, self._thread = None, None
        return server


@dataclass
class HttpReply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before answering (the "slow response" fault)


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None, delay_s: float = 0.0) -> HttpReply:
    merged = {"content-type": "application/json"}
    merged.update(headers or {})
    return HttpReply(status, json.dumps(payload).encode("utf-8"), merged, delay_s)


Handler = Callable[[str, str, dict[str, str], bytes], HttpReply]


class LoopbackServer:
    """Runs `handler(method, path, headers, body) -> HttpReply` on a thread; `url` once started."""

    def __init__(self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0, name: str = "llm") -> None:
        self._handler = handler
        self._name = name
        self._served = ServedThread(self._bind, host=host, port=port, name=f"{name}-server", what=f"the {name} server")
        self._stopping = threading.Event()
        self.errors: list[str] = []  # what went wrong while answering (e.g. client hung up)

    @property
    def url(self) -> str:
        httpd = self._served.server
        if httpd is None:
            raise RuntimeError(f"{self._name} server is not running; call start() first")
        host, port = httpd.server_address[0], httpd.server_address[1]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def start(self) -> Self:
        if not self._served.running:
            self._stopping.clear()
            self._served.start()
        return self

    def _bind(self, address: tuple[str, int]) -> LoopbackHTTPServer:
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    reply = outer._handler(self.command, self.path, headers, body)
                except Exception as exc:  # noqa: BLE001 - a bug in the handler must still answer, never hang the client
                    outer.errors.append(f"handler crashed on {self.command} {self.path}: {exc!r}")
                    reply = json_reply(500, {"type": "error", "error": {"type": "api_error",
                                                                         "message": f"server bug: {exc!r}"}})
                if reply.delay_s > 0 and outer._stopping.wait(reply.delay_s):
                    return
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError) as exc:
                    outer.errors.append(f"client went away before the reply to {self.path}: {exc!r}")

            do_POST = _serve
            do_GET = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return  # requests are recorded by the handler itself; stderr stays quiet

        return LoopbackHTTPServer(address, _Handler)

    def stop(self) -> None:
        self._stopping.set()  # a reply still sleeping out its `delay_s` gives up at once
        self._served.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
