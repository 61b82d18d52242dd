"""Bytes per step per tier, and report generation time, on the 1080x2400 simulated phone.

Run: `python benchmarks/report_bench.py [--steps N]`. Prints a table; asserts nothing (timing and
sizes are figures for the closing note, not pass/fail criteria).

`--screens example-failing` (issue 38) runs `example_failing`'s 9-step failing test at full, as a
user does (`pytest example_failing -k long_flow --guistate=full`, a subprocess), `--runs` times, and
prints its bytes per step by kind: every file of its folder, report.html included, a hard-linked
repeat counted once (as on disk) and, beside it, every path counted (as an archive of the folder).

`--screens recorder` (issue 42) prints, for a passing test under the default retention and a kept one,
the recorder's time on the test's thread per step, its writer's CPU per step beside the test, the
finish and the bytes per step (standard and full, the settings flow, `--steps`, median of `--runs`).

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.core.errors import StepFailed
from pytest_guistate.report.finish import finalize
from pytest_guistate.report.html import rebuild_report
from pytest_guistate.report.journal import read_journal
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


def example_failing(root: Path, runs: int) -> None:
    """Bytes per step of example_failing's long flow at full (issue 38: <= 150 KB a step)."""
    repo = Path(__file__).resolve().parents[1]
    kinds = ("report.html", "journal.jsonl", "frames", "crops", "other")
    print(f"{'run':>3} {'steps':>5} {'KB/step':>8} {'paths KB/step':>13} " + " ".join(f"{k:>13}" for k in kinds))
    for run in range(runs):
        artifacts = root / f"run-{run}"
        subprocess.run([sys.executable, "-m", "pytest", str(repo / "example_failing"), "-k", "long_flow",
                        "--guistate=full", "-p", "no:cacheprovider", "-q", f"--guistate-artifacts={artifacts}"],
                       cwd=root, capture_output=True, check=False, timeout=600)
        [folder] = [p for p in artifacts.iterdir() if p.is_dir()]
        steps = len(read_journal(folder).steps)
        by_kind: dict[str, int] = dict.fromkeys(kinds, 0)
        seen: set[int] = set()
        paths = 0
        for path in (p for p in folder.rglob("*") if p.is_file()):
            stat = path.stat()
            paths += stat.st_size
            if stat.st_ino in seen:
                continue
            seen.add(stat.st_ino)
            top = path.relative_to(folder).parts[0]
            by_kind[top if top in by_kind else "other"] += stat.st_size
        total = sum(by_kind.values())
        print(f"{run:>3} {steps:>5} {total / 1000 / steps:>8.1f} {paths / 1000 / steps:>13.1f} "
              + " ".join(f"{by_kind[k] / 1000 / steps:>13.1f}" for k in kinds))
    print("  KB = 1000 bytes; columns by kind: KB per step, hard links once")


def _settings_flow(run: Any, steps: int) -> None:
    """Sign in (a password typed), then toggle settings rows until `steps` steps, every step passing."""
    s, phone = run.session, run.phone
    s.goal("sign in and flip settings", plan=[])
    s.perform("tap email", lambda: phone.tap(*phone.find_key("settings/username").bounds.center))
    s.perform("type email", lambda: phone.type_text("settings/username", CREDENTIALS[0]))
    s.perform("tap password", lambda: phone.tap(*phone.find_key("settings/password").bounds.center))
    s.perform("type password", lambda: phone.type_text("settings/password", PASSWORD), idempotent=False)
    s.perform("log in", lambda: phone.tap(*phone.find_key("settings/login").bounds.center), expect="Wi-Fi")
    n = 0
    while len(s.steps) < steps:
        key = ROWS[n % len(ROWS)]
        s.perform(f"toggle {key}", lambda key=key: phone.tap(*phone.find_key(f"settings/row/{key}").bounds.center))
        n += 1


def recorder_cost(root: Path, steps: int, rounds: int) -> None:
    """Issue 42: the recorder's time on the test's thread per step (its listener calls, waits for its
    writer included), its writer thread's CPU per step beside the test, the finish, and bytes per step:
    a passing test under the default `--guistate-retain=failure` (its folder deleted: issue 42 item 4)
    and a kept one (`on`), the settings flow at standard and full, medians of `rounds`."""
    import statistics
    import threading

    from pytest_guistate.report import background, recorder

    spent = {"path": 0.0, "writer": 0.0}
    main = threading.main_thread()

    def on_path(original: Any) -> Any:
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not main:
                return original(self, *args, **kwargs)
            started = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                spent["path"] += time.perf_counter() - started
        return timed

    for name in ("put", "on_step", "on_observation", "on_anchor", "on_state", "write_event", "on_finish"):
        setattr(recorder.ArtifactRecorder, name, on_path(getattr(recorder.ArtifactRecorder, name)))
    guarded = background.SerialWriter._guarded

    def writer_cpu(self: Any, *args: Any) -> None:
        started = time.thread_time()
        try:
            guarded(self, *args)
        finally:
            spent["writer"] += time.thread_time() - started

    background.SerialWriter._guarded = writer_cpu  # type: ignore[method-assign]
    print(f"{'tier':<9} {'retain':<8} {'outcome':<7} {'path ms/step':>12} {'writer CPU ms/step':>18} "
          f"{'finish ms':>9} {'KB/step':>8}")
    for tier in ("standard", "full"):
        for retain, outcome in (("failure", "passed"), ("on", "failed")):
            rows = []
            for n in range(rounds):
                run = start(root / f"{tier}-{retain}-{n}", tier=tier, nodeid=f"bench.py::test_{tier}", background=True)
                run.recorder.defer = retain != "on"  # what the plugin sets without Allure
                spent.update(path=0.0, writer=0.0)
                _settings_flow(run, steps)
                run.session.finish(outcome)
                started = time.perf_counter()
                done = finalize(run.recorder, outcome=outcome, retain=retain, root=root / f"{tier}-{retain}-{n}",
                                timeline=False)
                finish = time.perf_counter() - started
                size = sum(p.stat().st_size for p in done.folder.rglob("*") if p.is_file()) if done.folder else 0
                rows.append((spent["path"] / steps * 1000, spent["writer"] / steps * 1000, finish * 1000,
                             size / 1024 / steps))
            med = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(f"{tier:<9} {retain:<8} {outcome:<7} {med[0]:>12.1f} {med[1]:>18.1f} {med[2]:>9.0f} {med[3]:>8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--report-steps", type=int, default=100)
    parser.add_argument("--screens", choices=("settings", "realistic", "example-failing", "recorder"),
                        default="settings",
                        help="realistic: the Feed app's screens at full tier, 25/50/100 steps (issue 23); "
                             "example-failing: example_failing's 9-step failing test at full (issue 38); "
                             "recorder: the recorder's time on the test's path and beside it (issue 42)")
    parser.add_argument("--runs", type=int, default=3, help="example-failing, recorder: how many runs")
    args = parser.parse_args()
    if args.screens == "example-failing":
        root = Path(tempfile.mkdtemp(prefix="guistate-bench-"))
        try:
            example_failing(root, args.runs)
        finally:
            shutil.rmtree(root)
        return 0
    if args.screens == "recorder":
        root = Path(tempfile.mkdtemp(prefix="guistate-bench-"))
        try:
            recorder_cost(root, args.steps, args.runs)
        finally:
            shutil.rmtree(root)
        return 0
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
