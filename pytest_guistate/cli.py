"""The `guistate` command: tools around the plugin that run outside pytest.

Each subcommand owns its argument parser in the module that implements it; this file only
dispatches, importing lazily so `guistate --help` stays instant.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

# command -> (module, function taking argv and returning an exit code, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "sim": ("pytest_guistate.devices.sim.cli", "serve_sim",
            "serve the simulated phone (Appium/W3C WebDriver) on loopback until stopped"),
    "report": ("pytest_guistate.report.html", "report_main",
               ("rebuild report.html from the journal of a test folder (or a whole artifacts dir); "
                "--run DIR also writes the run's index.html")),
    "show": ("pytest_guistate.report.viewer_server", "show_main",
             "serve an artifacts dir on 127.0.0.1 and print the URL of its index (Ctrl-C stops)"),
    "gate": ("pytest_guistate.report.gate.cli", "gate_main",
             ("CI merge gate: read --guistate-summary JSON(s) (one per CI shard, and a --baseline), print text, "
              "markdown, GitHub annotations or JSON, exit 1 if the run must not merge")),
    "summary": ("pytest_guistate.report.gate.summary_merge", "summary_main",
                "merge the --guistate-summary files of CI shards into one (for one gate over the whole run)"),
    "memory": ("pytest_guistate.memory.cli", "memory_main",
               "inspect, prune and export the cross-run memory of UI functions (self-healing locators)"),
    "appium": ("pytest_guistate.devices.appium_server", "appium_main",
               "check (doctor), start and stop a real Appium 3 server installed with npm"),
    "cache": ("pytest_guistate.llm.cache.cli", "cache_main",
              "list, show and find stale action caches of LLM-driven tests (record once, replay at 0 tokens)"),
    "export-test": ("pytest_guistate.llm.export", "export_main",
                    "write a verified LLM run (its .actions.json) as a scripted pytest test that needs no model"),
    "heal-diff": ("pytest_guistate.memory.heal_proposal", "heal_diff_main",
                  "print the locator edits the memory's verified heals propose as unified diffs (--apply writes them)"),
    "llm-server": ("pytest_guistate.llm.reference.server", "serve",
                   "serve the local Messages-API reference server (for recording cassettes offline)"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: guistate COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, _, help_text) in COMMANDS.items()]
    lines += ["", "guistate COMMAND --help shows a command's own options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"guistate: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, function_name, _ = COMMANDS[command]
    function: Callable[[list[str]], int] = getattr(importlib.import_module(module_name), function_name)
    return int(function(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
