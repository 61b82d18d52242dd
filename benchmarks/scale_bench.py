"""Scaling and per-step overhead (issue 6): xdist speed-up of the example suite, and the plugin's
cost per step against bare Appium client calls on the same scenario through the HTTP sim.

Run: `python benchmarks/scale_bench.py [--suite-rounds 1] [--rounds 3] [--pairs 10] [--appium URL]
[--skip-suite] [--skip-overhead]`.

Part 1 runs `pytest example_suite --guistate=full -p no:cacheprovider` in subprocesses: plain (no
xdist), `-n 2`, `-n 4`, and prints wall times as speed-ups against the plain run.
Part 2 opens the Feed on the embedded sim server (in-process, as the plugin runs it; status-bar
clock frozen), or with `--appium URL` the web Feed in headless Chromium behind a real Appium
server, and repeats "open Bob's delete dialog, cancel it" (`--pairs` pairs = 2x taps):
  bare        driver.find_element(...).click(), nothing else (the issue's baseline);
  bare+shot   the same plus one screenshot per tap (the least any visual check needs);
  bare+obs    plus screenshot and page source per tap (what the step loop observes);
  light/standard/full  `TaskSession.perform(..., expect=...)` over `Device`, with the plugin's
              `ArtifactRecorder` writing to a temp folder on its background writer, as the
              `guistate` fixture builds it (the time includes draining the writer at the end).
Modes are interleaved per round; the table shows medians of ms/step and ratios to the baselines
measured in the same run, then where the full tier's time goes (wall time by component).
Timing only: nothing here is a pass/fail criterion.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from appium import webdriver
from appium.options.common import AppiumOptions
from appium.webdriver.common.appiumby import AppiumBy

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices import capabilities
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.driver_ports import with_driver_ports
from pytest_guistate.devices.sim.server import SimServer
from pytest_guistate.devices.web_feed import FeedServer
from pytest_guistate.report.artifacts import create_test_folder
from pytest_guistate.report.recorder import ArtifactRecorder, RecordingScreen

ROOT = Path(__file__).resolve().parents[1]
FEED = "com.guistate.feed"
OPEN_DESC, CANCEL_ID = "Delete post by Bob", "android:id/button2"
MODES = ("bare", "bare+shot", "bare+obs", "light", "standard", "full")
TARGETS = {"light": 1.15, "full": 1.6}


# -- part 1: xdist ---------------------------------------------------------------------------
@dataclass
class SuiteRun:
    wall_s: float
    code: int
    tail: str
    test_s: dict[str, float]  # per test: setup + call + teardown, from the JUnit XML
    failed: list[str]


def run_suite(workers: int | None, tmp: Path) -> SuiteRun:
    junit = tmp / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "example_suite", "--guistate=full", "-p", "no:cacheprovider", "-q",
           f"--guistate-artifacts={tmp / 'artifacts'}", f"--junitxml={junit}"]
    if workers is not None:
        cmd += ["-n", str(workers)]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    tail = (done.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    test_s: dict[str, float] = {}
    failed: list[str] = []
    if junit.exists():
        for case in ElementTree.parse(junit).getroot().iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            test_s[name] = float(case.get("time") or 0.0)
            if case.find("failure") is not None or case.find("error") is not None:
                failed.append(name)
    return SuiteRun(elapsed, done.returncode, tail, test_s, failed)


def ideal_speedup(test_s: dict[str, float], workers: int) -> float:
    """Upper bound from the plain run's test times alone: the longest test, or perfect packing."""
    total = sum(test_s.values())
    return total / max(max(test_s.values(), default=0.0), total / workers) if total else float("nan")


def suite_scaling(rounds: int) -> None:
    configs: list[tuple[str, int | None]] = [("plain (no xdist)", None), ("-n 2", 2), ("-n 4", 4)]
    runs: dict[str, list[SuiteRun]] = defaultdict(list)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        for r in range(rounds):
            for label, workers in configs:
                folder = Path(tmp) / f"{r}-{workers}"
                folder.mkdir()
                runs[label].append(run_suite(workers, folder))
    plain = statistics.median(run.wall_s for run in runs["plain (no xdist)"])
    plain_tests = runs["plain (no xdist)"][0].test_s
    print(f"\nexample_suite --guistate=full, {os.cpu_count()} CPUs, median of {rounds} run(s), wall incl. start-up; "
          f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"{'run':>18}  {'wall s':>7}  {'speed-up':>8}  {'bound':>6}  result")
    for label, workers in configs:
        wall = statistics.median(run.wall_s for run in runs[label])
        bound = "" if workers is None else f"{ideal_speedup(plain_tests, workers):5.2f}x"
        print(f"{label:>18}  {wall:7.1f}  {plain / wall:7.2f}x  {bound:>6}  {runs[label][-1].tail}")
    longest = sorted(plain_tests.items(), key=lambda kv: -kv[1])[:2]
    print("  bound = the plain run's summed test time / max(longest test, even split); longest: "
          + ", ".join(f"{name.rpartition('.')[2]} {sec:.1f} s" for name, sec in longest))
    for label, _ in configs:
        for i, run in enumerate(runs[label]):
            if run.code != 0:
                print(f"  {label} run {i + 1}: pytest exited {run.code}; failed: {', '.join(run.failed) or run.tail}")


# -- part 2: per-step overhead ---------------------------------------------------------------
class Tally:
    """Wall time per component, by wrapping bound methods of the objects one run uses."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, obj: Any, method: str, bucket: str) -> None:
        original = getattr(obj, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[bucket] += time.perf_counter() - started

        setattr(obj, method, timed)


@dataclass
class Scenario:
    """Open a delete dialog and cancel it, on one kind of device: the same two taps for the bare
    client (raw locators) and for the plugin (`Device` locators and an expect per tap)."""

    label: str
    url: str
    caps: dict[str, Any]
    is_sim: bool
    bare_taps: tuple[tuple[str, str], tuple[str, str]]  # (By, value) for open, cancel
    device_taps: tuple[dict[str, str], dict[str, str]]  # Device.tap(**locator) for open, cancel
    page: str = ""  # a web page to load first (real Appium + Chromium)

    def open(self) -> Any:
        caps = with_driver_ports(self.url, self.caps)  # as the plugin opens it: a chromedriver of its own
        driver = webdriver.Remote(self.url, options=AppiumOptions().load_capabilities(caps))
        if self.page:
            driver.get(self.page)
            driver.find_element(AppiumBy.XPATH, "//*[@data-testid='post_row']")  # the list is drawn
        return driver


def sim_scenario(url: str) -> Scenario:
    caps = {"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": FEED,
            "guistate:clock": "frozen"}
    return Scenario("embedded HTTP sim", url, caps, True,
                    ((AppiumBy.ACCESSIBILITY_ID, OPEN_DESC), (AppiumBy.ID, CANCEL_ID)),
                    ({"desc": OPEN_DESC}, {"id": CANCEL_ID}))


def web_scenario(url: str, page: str) -> Scenario:
    """Real Appium 3 + chromium driver + headless Chromium emulating a Pixel 7, the web Feed."""
    first_delete = "(//*[@data-testid='delete'])[1]"
    return Scenario(f"real Appium at {url}, web Feed", url, capabilities.chromium(), False,
                    ((AppiumBy.XPATH, first_delete), (AppiumBy.XPATH, "//*[@data-testid='cancel_delete']")),
                    ({"xpath": first_delete}, {"id": "cancel_delete"}),
                    page=page)


def bare_run(scenario: Scenario, driver: Any, pairs: int, observe: int) -> float:
    """`observe`: 0 nothing, 1 a screenshot per tap, 2 screenshot + page source per tap."""
    started = time.perf_counter()
    for _ in range(pairs):
        for by, value in scenario.bare_taps:
            driver.find_element(by, value).click()
            if observe >= 1:
                driver.get_screenshot_as_png()
            if observe >= 2:
                _ = driver.page_source
    return time.perf_counter() - started


def plugin_run(scenario: Scenario, driver: Any, pairs: int, tier: str, folder_root: Path,
               tally: Tally | None = None) -> float:
    device = Device(driver, url=scenario.url, is_sim=scenario.is_sim)
    nodeid = f"scale_bench.py::test_{tier}"
    recorder = ArtifactRecorder(create_test_folder(folder_root, nodeid), nodeid=nodeid, tier=tier, background=True)
    session = TaskSession(RecordingScreen(device, recorder), policy=TierPolicy.for_tier(tier), listeners=[recorder],
                          artifacts=recorder, name=nodeid)
    recorder.bind(session)
    session.cycles.limit = 0  # open/cancel is a deliberate A-B loop: the cycle guard (issue 14) would stop it
    if tally is not None:
        for method, bucket in (("screenshot", "screenshot (HTTP + base64)"), ("ui_tree", "page source + parse"),
                               ("tap", "tap (find + click)")):
            tally.wrap(device, method, bucket)
        tally.wrap(session.oracle, "compare", "oracle compare (decode + diff)")
        for method in ("on_observation", "on_step", "on_anchor", "on_state"):
            tally.wrap(recorder, method, "recorder (journal, frames, crops)")
    session.goal("open and cancel the delete dialog", plan=[])
    open_tap, cancel_tap = scenario.device_taps
    started = time.perf_counter()
    for i in range(pairs):
        session.perform(f"open dialog {i}", lambda: device.tap(**open_tap), expect=visible("Delete post?"))
        session.perform(f"cancel {i}", lambda: device.tap(**cancel_tap), expect=gone("Delete post?"))
    recorder.drain()  # the writer's backlog counts: the run is over when its files are on disk
    elapsed = time.perf_counter() - started
    recorder.close_writer()
    return elapsed


def measure(scenario: Scenario, rounds: int, pairs: int) -> None:
    per_step: dict[str, list[float]] = defaultdict(list)
    steps = 2 * pairs
    tiers = [mode for mode in MODES if not mode.startswith("bare")]
    tallies = {tier: Tally() for tier in tiers}
    totals: dict[str, float] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        root = Path(tmp)
        for r in range(rounds + 1):  # round 0 warms up fonts, OpenCV and connections; not counted
            for mode in MODES:
                driver = scenario.open()
                try:
                    if mode.startswith("bare"):
                        elapsed = bare_run(scenario, driver, pairs, MODES.index(mode))
                    else:
                        elapsed = plugin_run(scenario, driver, pairs, mode, root / f"r{r}")
                finally:
                    driver.quit()
                if r > 0:
                    per_step[mode].append(elapsed / steps * 1000)
            shutil.rmtree(root / f"r{r}", ignore_errors=True)
        for tier in tiers:  # one more instrumented run per tier, kept out of the table above
            driver = scenario.open()
            try:
                totals[tier] = plugin_run(scenario, driver, pairs, tier, root / "tally", tallies[tier])
            finally:
                driver.quit()

    med = {mode: statistics.median(per_step[mode]) for mode in MODES}
    print(f"\nper-step wall time, Feed open/cancel x{pairs} ({steps} taps), {scenario.label}, median of {rounds} "
          f"round(s); load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"{'mode':>10}  {'ms/step':>8}  {'/bare':>7}  {'/bare+shot':>10}  {'/bare+obs':>9}  target")
    for mode in MODES:
        target = TARGETS.get(mode)
        verdict = "" if target is None else f"<= {target}x vs bare: {'met' if med[mode] / med['bare'] <= target else 'NOT met'}"
        print(f"{mode:>10}  {med[mode]:8.1f}  {med[mode] / med['bare']:6.2f}x  {med[mode] / med['bare+shot']:9.2f}x  "
              f"{med[mode] / med['bare+obs']:8.2f}x  {verdict}")
    floor = med["bare+shot"] / med["bare"]
    print(f"  floor: one screenshot per step alone is {floor:.2f}x a bare tap here, and a pixel oracle needs one "
          f"per step, so no tier can be under {floor:.2f}x vs bare; the plugin's own share is the /bare+shot column")
    buckets = sorted({b for t in tallies.values() for b in t.seconds}, key=lambda b: -tallies["full"].seconds[b])
    print(f"\nwhere a step's time goes (ms/step, one instrumented run per tier, {steps} steps):")
    print(f"  {'component':36} " + " ".join(f"{tier:>13}" for tier in tiers))
    for bucket in [*buckets, "rest (step loop, checks, anchors)", "total"]:
        cells = []
        for tier in tiers:
            spent = tallies[tier].seconds
            value = {"total": totals[tier], "rest (step loop, checks, anchors)":
                     max(0.0, totals[tier] - sum(spent.values()))}.get(bucket, spent.get(bucket, 0.0))
            cells.append(f"{value / steps * 1000:7.1f} {value / totals[tier]:4.0%}")
        print(f"  {bucket:36} " + " ".join(f"{c:>13}" for c in cells))


def step_overhead(rounds: int, pairs: int, appium_url: str | None) -> None:
    if appium_url:
        with FeedServer() as feed:
            measure(web_scenario(appium_url, feed.page_url(delay_ms=0)), rounds, pairs)
        return
    with SimServer(host="127.0.0.1", port=0) as server:
        measure(sim_scenario(server.url), rounds, pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite-rounds", type=int, default=1, help="runs of each pytest configuration")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the per-step comparison")
    parser.add_argument("--pairs", type=int, default=10, help="open/cancel pairs per round (2 taps each)")
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--appium", metavar="URL", default=None,
                        help="measure the per-step overhead against a real Appium server (chromium driver, "
                             "headless Chromium; `bash .ci/appium.sh start` prints one) instead of the sim")
    args = parser.parse_args(argv)
    if args.suite_rounds < 1 or args.rounds < 1 or args.pairs < 1:
        parser.error("--suite-rounds, --rounds and --pairs must be >= 1")
    if not args.skip_suite:
        suite_scaling(args.suite_rounds)
    if not args.skip_overhead:
        step_overhead(args.rounds, args.pairs, args.appium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
