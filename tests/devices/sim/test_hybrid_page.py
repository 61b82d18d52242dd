"""The Hybrid app's page backend alone (no browser): what it serves, what it refuses, what it logs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_guistate.devices.sim.apps.hybrid_page import NOTES, HybridPageServer


@pytest.fixture
def page() -> Iterator[tuple[HybridPageServer, list[tuple[str, dict[str, Any]]]]]:
    log: list[tuple[str, dict[str, Any]]] = []
    server = HybridPageServer(lambda action, **fields: log.append((action, fields)), lambda: 1.5).start()
    yield server, log
    server.stop()


def call(server: HybridPageServer, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(server.url + path.lstrip("/"), data=data, method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if answer.headers["Content-Type"] == "application/json" else raw
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_it_serves_its_page_and_refuses_the_rest(page: Any) -> None:
    server, _ = page
    status, body = call(server, "/")
    assert status == 200 and b'data-testid="signin"' in body
    assert call(server, "/hybrid.js")[0] == 200
    assert call(server, "/hybrid_page.py")[0] == 404 and call(server, "/../hybrid_page.py")[0] == 404
    assert call(server, "/native/elsewhere")[0] == 404 and not server.navigations
    assert call(server, "/api/login", b"[1, 2]")[0] == 400  # not a JSON object
    assert call(server, "/api/delete", {"position": "first"})[0] == 400
    assert call(server, "/api/nothing", {})[0] == 404


def test_sign_in_logs_no_password_and_a_delete_acts_by_position(page: Any) -> None:
    server, log = page
    assert call(server, "/api/delete", {"position": 0})[1] == {"deleted": None, "redraw_ms": 0}  # signed out
    assert call(server, "/api/login", {"email": "qa@example.com", "password": "wrong"})[1]["signed_in"] is False
    assert call(server, "/api/state")[1]["notes"] == []  # nothing shown before a sign-in
    state = call(server, "/api/login", {"email": "qa@example.com", "password": "correct-horse"})[1]
    assert state["signed_in"] is True and len(state["notes"]) == len(NOTES)
    assert call(server, "/api/delete", {"position": 1})[1] == {"deleted": "n2", "redraw_ms": 1500}
    assert [n["id"] for n in call(server, "/api/state")[1]["notes"]][:3] == ["n1", "n3", "n4"]
    assert call(server, "/native/settings")[0] == 200 and list(server.navigations) == ["settings"]
    assert [action for action, _ in log] == ["login", "login", "delete_note", "open_native"]
    assert "correct-horse" not in repr(log) and "wrong" not in repr(log)
