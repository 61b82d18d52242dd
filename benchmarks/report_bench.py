"""Bytes per step per tier, and report generation time, on the 1080x2400 simulated phone.

Run: `python benchmarks/report_bench.py [--steps N]`. Prints a table; asserts nothing (timing and
sizes are figures for the closing note, not pass/fail criteria).

Scenario per tier: sign in to the Settings app (a password typed), then toggle the settings rows
round-robin until N steps, then one step that fails (an expected text never appears), so the
light tier also writes what it keeps on failure. Bytes per step = every file in the test folder
except report.html (reported separately, it re-embeds crops and frames).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))

from scenario import CREDENTIALS, PASSWORD, start

from pytest_guistate.core.errors import StepFailed
from pytest_guistate.report.finish import finalize
from pytest_guistate.report.html import rebuild_report

ROWS = ("wifi", "dark_mode", "notifications")


def run_tier(root: Path, tier: str, steps: int) -> tuple[Path, int, float]:
    run = start(root, tier=tier, nodeid=f"bench.py::test_{tier}_{steps}")
    s, phone = run.session, run.phone
    s.goal("sign in and flip settings", plan=["signed in", "flipped"])
    s.perform("tap email", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    s.perform("type email", lambda: phone.type_text("settings/username", CREDENTIALS[0]))
    s.perform("tap password", lambda: phone.tap(*phone.find_key("settings/password").bounds.center))
    s.perform("type password", lambda: phone.type_text("settings/password", PASSWORD), idempotent=False)
    s.perform("log in", lambda: phone.tap(*phone.find_key("settings/login").bounds.center), expect="Wi-Fi")
    s.milestone("signed in")
    n = 0
    started = time.perf_counter()
    while len(s.steps) < steps - 1:
        key = ROWS[n % len(ROWS)]
        s.perform(f"toggle {key}", lambda key=key: phone.tap(*phone.find_key(f"settings/row/{key}").bounds.center))
        n += 1
    elapsed = time.perf_counter() - started
    try:
        s.perform("wait for sync", lambda: None, expect="Synced just now", idempotent=False)
    except StepFailed as exc:
        s.finish("failed", exc)
        done = finalize(run.recorder, outcome="failed", error=str(exc), retain="on", root=root)
    assert done.folder is not None
    return done.folder, len(s.steps), elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--report-steps", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="guistate-bench-"))
    try:
        print(f"{'tier':<9} {'steps':>5} {'files KB':>9} {'KB/step':>8} {'report KB':>9} {'s/step':>7}")
        for tier in ("light", "standard", "full"):
            folder, steps, elapsed = run_tier(root, tier, args.steps)
            files = [p for p in folder.rglob("*") if p.is_file() and p.name != "report.html"]
            total = sum(p.stat().st_size for p in files)
            report = (folder / "report.html").stat().st_size
            print(f"{tier:<9} {steps:>5} {total / 1024:>9.1f} {total / 1024 / steps:>8.1f} {report / 1024:>9.1f}"
                  f" {elapsed / max(1, steps - 6):>7.3f}")
        folder, steps, _ = run_tier(root, "full", args.report_steps)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            rebuild_report(folder)
            times.append(time.perf_counter() - started)
        size = (folder / "report.html").stat().st_size
        print(f"report.html of a {steps}-step full-tier test: {min(times) * 1000:.0f} ms (best of 3), "
              f"{size / 1024:.0f} KB")
    finally:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
