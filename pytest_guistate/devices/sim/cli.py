"""`guistate sim`: serve the simulated phone on loopback until Ctrl-C or SIGTERM.

Lets any WebDriver client (another language's Appium client, curl, a debugger) talk to the sim:
`guistate sim --port 4723` then point the client at the printed URL. Each session picks its persona
(Android / UiAutomator2 by default; iOS / XCUITest for `platformName: iOS`); `--width/--height` size
the Android screen in pixels, an iOS session sizes its own in points (`guistate:screen`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

from pytest_guistate.devices.sim.server import SimServer

__all__ = ["add_sim_arguments", "run_sim", "serve_sim"]


def add_sim_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The `sim` subcommand's options, for the top-level `guistate` parser to reuse."""
    parser.add_argument("--port", type=int, default=4723, help="TCP port (0 picks a free one; default 4723)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--width", type=int, help="Android sessions' screen width in pixels (default 1080); an iOS "
                        "session's screen is in points, from its guistate:screen capability (default 393)")
    parser.add_argument("--height", type=int, help="Android sessions' screen height in pixels (default 2400); iOS: "
                        "points from guistate:screen (default 852, scale 3)")
    return parser


def run_sim(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Start the server, print its URL, block until `stop` is set or a signal arrives."""
    if (args.width is None) != (args.height is None):
        print("guistate sim: give both --width and --height, or neither", file=sys.stderr)
        return 2
    default_caps: dict[str, Any] = {}
    if args.width is not None:
        default_caps["guistate:screen"] = {"width": args.width, "height": args.height}
    try:
        server = SimServer(args.host, args.port, default_caps=default_caps).start()
    except (ValueError, OSError) as exc:
        print(f"guistate sim: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    stop = stop or threading.Event()
    previous = _on_signals(stop)
    try:
        screen = f"{args.width}x{args.height} px" if args.width is not None else "1080x2400 px"
        print(f"guistate sim: serving simulated phones at {server.url} (Android: UiAutomator2, {screen}; iOS: "
              f"XCUITest, 393x852 pt at 3x; each session's capabilities pick one; Ctrl-C to stop)", flush=True)
        while not stop.wait(0.5):  # short waits keep the main thread responsive to signals
            pass
    except KeyboardInterrupt:
        stop.set()
    finally:
        server.stop()
        _restore(previous)
    print("guistate sim: stopped", flush=True)
    return 0


def serve_sim(argv: Sequence[str] | None = None) -> int:
    """Entry point: `serve_sim(["--port", "4723"])`; returns the process exit code."""
    parser = add_sim_arguments(argparse.ArgumentParser(prog="guistate sim", description=__doc__))
    return run_sim(parser.parse_args(argv))


def _on_signals(stop: threading.Event) -> dict[int, Any]:
    """SIGTERM/SIGINT set `stop` (only possible from the main thread; elsewhere the caller stops)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}


def _restore(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(serve_sim())
