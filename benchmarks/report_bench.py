"""Bytes per step per tier, and report generation time, on the 1080x2400 simulated phone.

Run: `python benchmarks/report_bench.py [--steps N]`. Prints a table; asserts nothing (timing and
sizes are figures for the closing note, not pass/fail criteria).

`--screens realistic` (issue 23: the settings toggles understate real screens) runs the Feed app
instead at full tier: avatars, a dimmed confirm dialog opened and cancelled, the list scrolled, a
post deleted, every step on a 1080x2400 screen. It prints the bytes per step of every file of the
test (report.html included; a hard-linked repeat counted once, as on disk) at 25/50/100 steps,
and how long report.html of the 100-step test takes to open in headless Chromium (Playwright).

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.report.finish import finalize
from pytest_guistate.report.html import rebuild_report
from tests.helpers.scenario import CREDENTIALS, PASSWORD, start

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


def run_feed(root: Path, steps: int) -> tuple[Path, int]:
    """Full tier on the Feed (1080x2400): dialogs opened and cancelled, scrolls, a delete, a failure."""
    run = start(root, tier="full", nodeid=f"bench.py::test_feed_{steps}")
    run.phone.activate_app("com.guistate.feed")
    s, screen, phone = run.session, run.screen, run.phone
    s.goal("browse the feed", plan=["browsed"])
    n = deleted = 0
    while len(s.steps) < steps - 1:
        kind = n % 5
        if kind in (0, 2):
            s.perform(f"open the delete dialog {n}", lambda n=n: screen.tap_text("Delete", nth=n % 3),
                      expect="Delete post?")
        elif kind == 3 and (n // 5) % 4 == 1 and deleted < 6:  # now and then a post really goes
            s.perform(f"confirm the delete {n}", lambda: screen.tap_id("android:id/button1"), idempotent=False)
            deleted += 1
        elif kind in (1, 3):
            s.perform(f"cancel {n}", lambda: screen.tap_id("android:id/button2"))
        else:
            up = (n // 5) % 2 == 0
            s.perform(f"scroll {'down' if up else 'up'} {n}",
                      lambda up=up: phone.swipe(540, 1800 if up else 900, 540, 900 if up else 1800, 300))
        n += 1
    try:
        s.perform("wait for sync", lambda: None, expect="Synced just now", idempotent=False)
    except StepFailed as exc:
        s.finish("failed", exc)
        done = finalize(run.recorder, outcome="failed", error=str(exc), retain="on", root=root)
    assert done.folder is not None
    return done.folder, len(s.steps)


def folder_bytes(folder: Path) -> int:
    """Bytes of every file of a test folder, a hard-linked repeat counted once (as `du`)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in folder.rglob("*"):
        if path.is_file():
            stat = path.stat()
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_size
    return total


def open_time_ms(report: Path) -> float | None:
    """Milliseconds from navigation to a shown step in headless Chromium; None without Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            page.goto(report.as_uri(), wait_until="load")
            page.wait_for_selector(".detail.shown")
            best = min(best, (time.perf_counter() - started) * 1000)
        browser.close()
    return best


def realistic(root: Path) -> None:
    print(f"{'screens':<10} {'steps':>5} {'files KB':>9} {'KB/step':>8} {'report KB':>9} {'crops KB':>8} "
          f"{'frames KB':>9}")
    folder = root
    for steps in (25, 50, 100):
        folder, count = run_feed(root, steps)
        total = folder_bytes(folder)
        print(f"{'feed':<10} {count:>5} {total / 1024:>9.1f} {total / 1024 / count:>8.1f} "
              f"{(folder / 'report.html').stat().st_size / 1024:>9.1f} {folder_bytes(folder / 'crops') / 1024:>8.1f} "
              f"{folder_bytes(folder / 'frames') / 1024:>9.1f}")
    started = time.perf_counter()
    rebuild_report(folder)
    built = (time.perf_counter() - started) * 1000
    opened = open_time_ms(folder / "report.html")
    print(f"report.html of the {count}-step feed test: built in {built:.0f} ms; opens in "
          + ("(no Playwright/Chromium)" if opened is None else f"{opened:.0f} ms in headless Chromium (best of 3)"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--report-steps", type=int, default=100)
    parser.add_argument("--screens", choices=("settings", "realistic"), default="settings",
                        help="realistic: the Feed app's screens at full tier, 25/50/100 steps (issue 23)")
    args = parser.parse_args()
    if args.screens == "realistic":
        root = Path(tempfile.mkdtemp(prefix="guistate-bench-"))
        try:
            realistic(root)
        finally:
            shutil.rmtree(root)
        return 0
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
