"""The `guistate` command: tools around the plugin that run outside pytest.

`guistate sim` serves the simulated phone so Appium Inspector or any WebDriver client can use
it. Subcommands import their machinery lazily so `guistate --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guistate", description="pytest-guistate command-line tools")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    sim = commands.add_parser("sim", help="serve the simulated phone (Appium/W3C WebDriver) until stopped")
    sim.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, loopback only)")
    sim.add_argument("--port", type=int, default=4723, help="port (default: 4723, Appium's; 0 picks a free one)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "sim":
        from pytest_guistate.devices.sim.cli import serve

        return serve(host=args.host, port=args.port)
    return 2  # argparse already refused anything else


if __name__ == "__main__":
    sys.exit(main())
