"""The hybrid app's web backend: serves its page (`hybrid_web/`) and the page's API on loopback.

The page in the web view is real HTML run by a real Chromium; its state (signed in or not, the
notes, the toggle) lives here, in the app's process, as a hybrid app's backend would, so a
reload keeps it and the sim's action log records what really happened. The handlers run on the
server's own threads while a proxied click may hold the session lock: they never take it. They
log through the app's `log` (an append) and leave a navigation to a native screen in a queue
that the app applies on its next `advance`.

API: `GET /api/state`; `POST /api/login {email, password}` (the password is compared and
dropped, never logged or stored); `POST /api/delete {position}` deletes at once by position and
answers how long the page waits before it redraws (the phone's `refresh_delay` fault);
`POST /api/toggle {name, value}`; `GET /native/<screen>` is a link out of the page to a native
screen (the web view goes away, as when a WebViewClient hands a URL to the app).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from pytest_guistate.devices.sim.apps.settings import CREDENTIALS
from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread, load_static_files, send_bytes

__all__ = ["NATIVE_SCREENS", "NOTES", "STATIC_DIR", "HybridPageServer", "PageState"]

STATIC_DIR = Path(__file__).with_name("hybrid_web")
NOTES = ("Buy milk", "Call the plumber", "Book flights to Lisbon", "Renew passport", "Water the plants",
         "Send the invoice", "Pick up the dry cleaning", "Plan the team offsite", "Fix the bike light",
         "Back up the laptop", "Order birthday flowers", "Cancel the gym trial")  # longer than one screen: it scrolls
NATIVE_SCREENS = ("settings",)  # `/native/<screen>` links the page may follow out of the web view
MAX_BODY = 64 << 10


@dataclass
class PageState:
    """The backend's state; guarded by `HybridPageServer.lock`."""

    user: str | None = None
    notes: list[tuple[str, str]] = field(default_factory=lambda: [(f"n{i + 1}", t) for i, t in enumerate(NOTES)])
    sync_wifi_only: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"signed_in": self.user is not None, "user": self.user or "", "sync_wifi_only": self.sync_wifi_only,
                "notes": [{"id": note_id, "title": title} for note_id, title in self.notes] if self.user else []}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: what matters goes to the phone's action log."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        page = self.server.page
        if path == "/api/state":
            with page.lock:
                self._json(page.state.as_json())
        elif path.startswith("/native/"):
            screen = path.removeprefix("/native/")
            if screen not in NATIVE_SCREENS:
                self._send(HTTPStatus.NOT_FOUND, f"no native screen {screen!r}\n".encode(), "text/plain")
                return
            page.navigations.append(screen)
            page.log("open_native", screen=screen)
            self._send(HTTPStatus.OK, b"<!doctype html><title>Opening</title>", "text/html; charset=utf-8")
        elif path in page.files:
            self._send(HTTPStatus.OK, *page.files[path])
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "text/plain")
        else:
            self._send(HTTPStatus.NOT_FOUND, f"no such file: {path}\n".encode(), "text/plain")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length", "0") or 0)
        if length > MAX_BODY:
            self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b"body too large\n", "text/plain")
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send(HTTPStatus.BAD_REQUEST, b"the body must be a JSON object\n", "text/plain")
            return
        handler = {"/api/login": self.server.page.login, "/api/delete": self.server.page.delete,
                   "/api/toggle": self.server.page.toggle}.get(path)
        if handler is None:
            self._send(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}\n".encode(), "text/plain")
            return
        try:
            self._json(handler(body))
        except (TypeError, ValueError) as exc:
            self._send(HTTPStatus.BAD_REQUEST, f"{exc}\n".encode(), "text/plain")

    def _json(self, payload: dict[str, Any]) -> None:
        self._send(HTTPStatus.OK, json.dumps(payload).encode("utf-8"), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        send_bytes(self, status, body, content_type)


class _Server(LoopbackHTTPServer):
    def __init__(self, address: tuple[str, int], page: HybridPageServer) -> None:
        self.page = page
        super().__init__(address, _Handler)


class HybridPageServer:
    """The page's loopback server. `log(action, **fields)` is the app's action log; `redraw_s()` the
    current `refresh_delay` fault (read at each delete, so `set_faults` applies at once)."""

    def __init__(self, log: Callable[..., None], redraw_s: Callable[[], float]) -> None:
        self.log, self._redraw_s = log, redraw_s
        self.lock = threading.Lock()
        self.state = PageState()
        self.navigations: deque[str] = deque()  # native screens the page linked to, applied by the app
        self.files = load_static_files(STATIC_DIR, "the hybrid app's page")
        self._served = ServedThread(lambda address: _Server(address, self), host="127.0.0.1", port=0,
                                    name="guistate-hybrid-page", what="the hybrid app's page server")

    def start(self) -> Self:
        if not self._served.running:
            self._served.start()
        return self

    @property
    def url(self) -> str:
        return f"{self._served.url}/"

    def stop(self) -> None:
        self._served.stop()

    # -- the API (server threads) -------------------------------------------------------------
    def login(self, body: dict[str, Any]) -> dict[str, Any]:
        email, password = body.get("email"), body.get("password")
        if not isinstance(email, str) or not isinstance(password, str):
            raise TypeError("login needs string 'email' and 'password'")
        ok = (email.strip(), password) == CREDENTIALS
        self.log("login", user=email.strip(), success=ok)  # never the password
        with self.lock:
            if ok:
                self.state.user = email.strip()
            return self.state.as_json()

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        position = body.get("position")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValueError(f"'position' must be an integer >= 0, got {position!r}")
        with self.lock:
            if self.state.user is None or position >= len(self.state.notes):
                return {"deleted": None, "redraw_ms": 0}
            note_id, title = self.state.notes.pop(position)
        self.log("delete_note", note_id=note_id, title=title, position=position)
        return {"deleted": note_id, "redraw_ms": round(self._redraw_s() * 1000)}

    def toggle(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("name") != "sync_wifi_only" or not isinstance(body.get("value"), bool):
            raise ValueError("toggle needs name 'sync_wifi_only' and a boolean 'value'")
        with self.lock:
            self.state.sync_wifi_only = bool(body["value"])
        self.log("toggle", setting="sync_wifi_only", value=bool(body["value"]))
        return {"sync_wifi_only": bool(body["value"])}
