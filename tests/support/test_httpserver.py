"""The package's loopback HTTP servers share one life cycle (`support/httpserver.py`, issue 36):
each refuses a host that is not loopback and a bad port before binding, listens on a free port when
`start()` returns, and after `stop()` leaves no listening socket and no serving thread behind."""

from __future__ import annotations

import re
import socket
import threading
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_guistate.devices.sim.server import SimServer
from pytest_guistate.devices.web_feed.server import FeedServer
from pytest_guistate.llm.reference.server import ReferenceServer
from pytest_guistate.report.viewer_server import ViewerServer
from pytest_guistate.support.httpserver import LoopbackHTTPServer, LoopbackServer, ServedThread, json_reply

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_guistate"


class _Server(Protocol):
    url: str

    def start(self) -> Any: ...

    def stop(self) -> None: ...


def _viewer(port: int = 0) -> ViewerServer:
    return ViewerServer(PACKAGE, port)  # `guistate show` takes no host: 127.0.0.1 only


SERVERS: dict[str, Callable[..., _Server]] = {
    "sim": SimServer,
    "web feed": FeedServer,
    "viewer": _viewer,
    "reference llm": ReferenceServer,
    "loopback (cassette replayer)": lambda host="127.0.0.1", port=0: LoopbackServer(
        lambda *_: json_reply(200, {}), host=host, port=port, name="llm-replay"),
}


def _port_of(url: str) -> int:
    found = re.match(r"http://[^/]*:(\d+)", url)
    assert found, url
    return int(found.group(1))


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("kind", list(SERVERS))
def test_a_server_listens_on_a_free_port_at_start_and_leaves_nothing_at_stop(kind: str) -> None:
    # Thread objects, not idents: a thread that ends after this line (another test's daemon) frees its ident for
    # the server's own thread, which an ident set would then count as old.
    before = set(threading.enumerate())
    server = SERVERS[kind]()
    server.start()
    try:
        port = _port_of(server.url)
        assert port > 0 and _listening(port)
        serving = [t for t in threading.enumerate() if t not in before and t.name.endswith(f"-{port}")]
        assert len(serving) == 1 and serving[0].daemon, [t.name for t in threading.enumerate()]
    finally:
        server.stop()
    assert not _listening(port), f"{kind}: port {port} still accepts after stop()"
    assert not serving[0].is_alive(), f"{kind}: {serving[0].name} outlived stop()"
    server.stop()  # a second stop is harmless


@pytest.mark.parametrize("kind", [kind for kind in SERVERS if kind != "viewer"])
@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.com"])
def test_a_server_refuses_a_host_that_is_not_loopback(kind: str, host: str) -> None:
    with pytest.raises(ValueError, match=rf"serves on loopback only; '{re.escape(host)}' is not a loopback"):
        SERVERS[kind](host=host)


@pytest.mark.parametrize("kind", list(SERVERS))
def test_a_server_refuses_a_port_that_is_none(kind: str) -> None:
    with pytest.raises(ValueError, match=r"port must be in 0\.\.65535, got 70000"):
        SERVERS[kind](port=70000)


def test_a_server_answers_on_ipv6_loopback_too() -> None:
    if not socket.has_ipv6:
        pytest.skip("this Python has no IPv6")
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback on this machine: {exc}")
    with FeedServer(host="::1") as server:
        assert server.url.startswith("http://[::1]:")
        with urllib.request.urlopen(server.url + "index.html", timeout=5) as answer:
            assert answer.status == 200


def test_a_running_server_refuses_a_second_start_of_its_life_cycle() -> None:
    served = ServedThread(_bind_plain, host="127.0.0.1", port=0, name="t", what="the test server")
    served.start()
    try:
        with pytest.raises(RuntimeError, match="the test server already started"):
            served.start()
    finally:
        assert served.stop() is not None
    with pytest.raises(RuntimeError, match="the test server is not running"):
        _ = served.port


def _bind_plain(address: tuple[str, int]) -> LoopbackHTTPServer:
    return LoopbackHTTPServer(address, BaseHTTPRequestHandler)


def test_only_the_support_module_runs_an_http_server_loop() -> None:
    """One life cycle in one place: no other module of the package binds or serves an HTTP server itself."""
    own = PACKAGE / "support" / "httpserver.py"
    elsewhere = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if path != own
                       and re.search(r"serve_forever|ThreadingHTTPServer\(|HTTPServer\(\(", path.read_text(encoding="utf-8")))
    assert not elsewhere, f"these modules run their own HTTP server life cycle; use support.httpserver.ServedThread: {elsewhere}"
