"""A tiny loopback HTTP server shared by the reference server and the cassette replayer.

Both exist so the real `anthropic` SDK makes real HTTP requests in tests and in replay mode
(never a patched client). Binding is refused for anything but a loopback address.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from pytest_guistate.support.loopback import is_loopback_host

__all__ = ["HttpReply", "LoopbackServer", "json_reply"]


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


def _require_loopback(host: str) -> None:
    if not is_loopback_host(host):
        raise ValueError(f"refusing to bind {host!r}: LLM test servers listen on loopback addresses only")


class LoopbackServer:
    """Runs `handler(method, path, headers, body) -> HttpReply` on a thread; `url` once started."""

    def __init__(self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0, name: str = "llm") -> None:
        _require_loopback(host)
        self._handler = handler
        self._host, self._port, self._name = host, port, name
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.errors: list[str] = []  # what went wrong while answering (e.g. client hung up)

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(f"{self._name} server is not running; call start() first")
        host, port = self._httpd.server_address[0], self._httpd.server_address[1]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def start(self) -> Self:
        if self._httpd is not None:
            return self
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

        self._stopping.clear()
        self._httpd = ThreadingHTTPServer((self._host, self._port), _Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=f"{self._name}-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
