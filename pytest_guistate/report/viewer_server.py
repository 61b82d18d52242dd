"""`guistate show DIR`: serve an artifacts dir on 127.0.0.1 for a browser.

report.html is one file, but a big full-tier test links its later frames as files beside it,
and some browsers refuse `file://` images; a local HTTP server shows everything. Standard
library only (`http.server`), bound to loopback (never to other hosts: the artifacts are the
app's screens), read-only (GET/HEAD), until Ctrl-C; served on a thread by the package's one
loopback server life cycle (`support.httpserver`).
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
from collections.abc import Sequence
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any, Self

from pytest_guistate.support.httpserver import LoopbackHTTPServer, ServedThread

__all__ = ["DEFAULT_PORT", "ViewerServer", "show_main"]

DEFAULT_PORT = 8047
HOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    """Static files of one directory; quiet (one line per request would drown the URL)."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a rebuilt report shows at once
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ViewerServer:
    """The files of `root` on `http://127.0.0.1:<port>/`; `start()` binds (an `OSError` when the port
    is taken), `stop()` ends it."""

    def __init__(self, root: Path, port: int = DEFAULT_PORT) -> None:
        self.root = root
        self._served = ServedThread(self._bind, host=HOST, port=port, name="guistate-show", what="guistate show")

    def _bind(self, address: tuple[str, int]) -> LoopbackHTTPServer:
        return LoopbackHTTPServer(address, functools.partial(_Handler, directory=str(self.root)))

    @property
    def url(self) -> str:
        return f"{self._served.url}/"

    def start(self) -> Self:
        self._served.start()
        return self

    def stop(self) -> None:
        self._served.stop()


def start_page(root: Path) -> str:
    """What the printed URL opens: the run index, else a single test's report, else the listing."""
    if (root / "index.html").is_file():
        return "index.html"
    if (root / "report.html").is_file():
        return "report.html"
    return ""


def show_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="guistate show",
                                     description="serve an artifacts dir (or one test's folder) on 127.0.0.1")
    parser.add_argument("dir", type=Path, metavar="DIR", help="the artifacts dir, or one test's folder")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"TCP port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    args = parser.parse_args(argv)
    root: Path = args.dir
    if not root.is_dir():
        print(f"guistate show: {root} is not a directory", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"guistate show: --port {args.port} is not a TCP port (0-65535)", file=sys.stderr)
        return 2
    server = ViewerServer(root.resolve(), args.port)
    try:
        server.start()
    except OSError as exc:
        print(f"guistate show: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}"
              " (try another --port, or --port 0)", file=sys.stderr)
        return 1
    try:
        print(f"guistate show: serving {root} at {server.url}{start_page(root)} (Ctrl-C stops)", flush=True)
        threading.Event().wait()  # the server runs on its thread; Ctrl-C interrupts this wait
    except KeyboardInterrupt:
        print("guistate show: stopped", flush=True)
    finally:
        server.stop()
    return 0
