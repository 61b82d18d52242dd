"""A loopback Messages endpoint that answers badly (issue 22): in front of the project's reference server,
it forwards the first `good` requests and then answers every request with one fault — a body cut off
mid-JSON, JSON of another shape, a message without usage or content. The real SDK reads these over
real HTTP; nothing in the client's call path is replaced.
"""

from __future__ import annotations

import http.client
import json
from functools import partial
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

BAD_ANSWERS = ("cut", "short", "shape", "no_usage", "no_content")


class BadLLM:
    """`BadLLM(upstream_url, answer, good=1).start()`; its `url` is the ANTHROPIC_BASE_URL of the inner run."""

    def __init__(self, upstream: str, answer: str, good: int = 1) -> None:
        if answer not in BAD_ANSWERS:
            raise ValueError(f"unknown bad answer {answer!r}; known: {BAD_ANSWERS}")
        self.upstream = urlsplit(upstream)
        self.answer, self.good = answer, good
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests += 1
                status, data = owner._forward(self.path, body, dict(self.headers))
                if owner.requests > owner.good:
                    status, data = 200, owner._spoil(data)
                if owner.answer == "short" and owner.requests > owner.good:
                    self.send_response(200)  # claims the whole answer, sends half, closes
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", f"req_bad_{owner.requests}")
                self.end_headers()
                self.wfile.write(data)

        self._served = ServedThread(partial(LoopbackHTTPServer, handler=Handler), host="127.0.0.1", port=0,
                                    name="bad-llm", what="BadLLM")
        self._url = ""

    @property
    def url(self) -> str:
        """The address it serves at; still the one it served at after `stop()` (for messages that name it)."""
        return self._url or self._served.url  # before start(): the life cycle's "not running" error

    def start(self) -> BadLLM:
        self._served.start()
        self._url = self._served.url
        return self

    def stop(self) -> None:
        self._served.stop()

    def _forward(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.upstream.hostname or "127.0.0.1", self.upstream.port, timeout=30)
        try:
            kept = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
            conn.request("POST", path, body=body, headers=kept)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def _spoil(self, data: bytes) -> bytes:
        if self.answer in ("cut", "short"):
            return data[: len(data) // 2] if self.answer == "cut" else data
        if self.answer == "shape":
            return json.dumps({"result": {"text": "done"}, "status": "ok"}).encode()
        message = json.loads(data)
        message.pop("usage" if self.answer == "no_usage" else "content", None)
        return json.dumps(message).encode()
