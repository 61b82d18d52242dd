"""A tiny loopback static server for the mobile web Feed (issue 6).

Only the files of `static/` are served (a fixed allow-list: no directory listing, no path
traversal), with `no-store` caching so every session loads the app fresh. It binds 127.0.0.1 on
an ephemeral port and runs in a daemon thread (`support.httpserver`), so a test session can start one in a fixture.
"""

from __future__ import annotations

from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlencode, urlsplit

from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread, load_static_files, send_bytes

__all__ = ["STATIC_DIR", "FeedServer"]

STATIC_DIR = Path(__file__).with_name("static")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "text/plain")
            return
        entry = self.server.files.get(path)
        if entry is None:
            self._send(HTTPStatus.NOT_FOUND, f"no such file: {path}\n".encode(), "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, *entry)

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        send_bytes(self, status, body, content_type)
        self.server.hits.append(f"{status.value} {self.path}")

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: requests are kept in `FeedServer.hits()` instead of stderr noise."""


class _Server(LoopbackHTTPServer):
    def __init__(self, address: tuple[str, int], files: dict[str, tuple[bytes, str]]) -> None:
        self.files = files
        self.hits: list[str] = []
        super().__init__(address, _Handler)


class FeedServer:
    """Serves the web Feed on `http://127.0.0.1:<port>/`; use as a context manager or start/stop."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, static_dir: Path = STATIC_DIR) -> None:
        self._served = ServedThread(self._bind, host=host, port=port, name="web-feed", what="FeedServer")
        self._files = load_static_files(static_dir, "the web Feed")

    def _bind(self, address: tuple[str, int]) -> _Server:
        return _Server(address, self._files)

    def start(self) -> Self:
        if not self._served.running:
            self._served.start()
        return self

    def stop(self) -> None:
        self._served.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if not self._served.running:
            raise RuntimeError("FeedServer is not started")
        return f"{self._served.url}/"

    def page_url(self, *, delay_ms: int = 0, refresh_ms: int = 600, toast_ms: int = 1500,
                 scrim_dialog: bool = False) -> str:
        """The Feed's URL: `delay_ms` is how long the list stays stale after a delete;
        `scrim_dialog` gives `role="dialog"` to the full-screen dim layer instead of the dialog box."""
        for name, value in (("delay_ms", delay_ms), ("refresh_ms", refresh_ms), ("toast_ms", toast_ms)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        fields = {"delay": delay_ms, "refresh": refresh_ms, "toast": toast_ms}
        if scrim_dialog:
            fields["scrim_dialog"] = 1
        return f"{self.url}index.html?{urlencode(fields)}"

    def hits(self) -> list[str]:
        """Requests served so far, e.g. `['200 /index.html?delay=0', ...]`."""
        server = self._served.server
        return list(server.hits) if server is not None else []
