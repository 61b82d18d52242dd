"""What a step and a test cost under realistic driver latency (issues 11 and 12).

Run: `python benchmarks/latency_bench.py [--profiles none,uiautomator2,xcuitest] [--pairs 2] [--rounds 1]
[--steps 4] [--skip-test] [--memory off|on]`.

The embedded HTTP sim serves the Feed with a latency profile (`guistate:latency`): `none` (the
sim's own speed), `uiautomator2`, `xcuitest` (estimates, docs/latency.md). The xcuitest profile runs
on the sim's Android persona here (its delays, not its page-source shape). Per profile:

Per step - one session, "open Bob's delete dialog, cancel it" x `--pairs` (each step has an
expect, so each step reads the tree):
  bare        driver.find_element(...).click()
  bare+shot   the same plus one screenshot per tap (the least a visual check needs)
  bare+check  plus a find per tap checking the step's expectation (what a careful script does)
  light/standard/full x eager|on-demand   `TaskSession.perform(..., expect=...)` over `Device` with the
              plugin's `ArtifactRecorder`; eager = page source right after each screenshot (before
              tree on demand), on-demand = fetched when read.
  light/standard/full no-expect   the same taps with no expect (on demand): the plugin's own share,
              to compare with bare+shot (at light such a step fetches no page source, issue 12).
  Chromium only: bare+devtools   bare+shot with the screenshot taken the plugin's way (DevTools,
              optimizeForSpeed, the dialog check: `devices/devtools_capture.py`), and light
              no-expect-w3c, the plugin with the W3C screenshot; column /bare+devtools = the plugin's own work.
  Columns: ms/step, page sources/step, ratio to bare+shot (the plugin's per-step share) and to bare.
With `--appium URL`, the same against a real Appium server (chromium driver, headless Chromium, the
web Feed; the page source there is a DOM walk).
Per test - a new session, `--steps` taps, quit: a bare client (tap + screenshot) against the
plugin at light and standard (on demand); the session start is in both.

`--memory on`: the plugin rows run with the cross-run memory on (a fresh store per run, as the plugin's
default `.guistate/memory.sqlite` would be), so each located tap also teaches the memory its element's
look; the line after the table says how many looks were learnt.

Ratios are against baselines measured in the same run; timing only, nothing here is a pass/fail
criterion. The delays are real sleeps (the server's phones run on the real clock here).
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from appium.webdriver.common.appiumby import AppiumBy

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.devtools_capture import DevtoolsScreenshots
from pytest_guistate.devices.sim.server import SimServer
from pytest_guistate.devices.web_feed import FeedServer
from pytest_guistate.memory import Healer, MemoryStore
from pytest_guistate.memory.bridge import MemoryBridge
from pytest_guistate.report.artifacts import create_test_folder
from pytest_guistate.report.recorder import ArtifactRecorder, RecordingScreen

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_bench import Scenario, web_scenario

FEED = "com.guistate.feed"
OPEN_DESC, CANCEL_ID = "Delete post by Bob", "android:id/button2"
TIERS = ("light", "standard", "full")
MEMORY = {"on": False, "looks": 0}  # --memory on: plugin rows learn into a fresh store; looks learnt so far
STORES: list[MemoryStore] = []


def caps(profile: str) -> dict[str, Any]:
    return {"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": FEED,
            "guistate:clock": "frozen", "guistate:seed": 11, "guistate:latency": profile}


def sim_scenario(url: str, profile: str) -> Scenario:
    return Scenario(f"sim, latency {profile}", url, caps(profile), True,
                    ((AppiumBy.ACCESSIBILITY_ID, OPEN_DESC), (AppiumBy.ID, CANCEL_ID)),
                    ({"desc": OPEN_DESC}, {"id": CANCEL_ID}))


def check_locator(scenario: Scenario) -> tuple[str, str]:
    """What each step expects (the dialog open, then gone), as the bare client checks it: on the sim
    the cheapest strategy a careful script has for a text (a UiSelector: XPath is priced above a find)."""
    if scenario.is_sim:
        return AppiumBy.ANDROID_UIAUTOMATOR, 'new UiSelector().text("Delete post?")'
    return AppiumBy.XPATH, "//*[contains(text(), 'Delete post?')]"


def bare_steps(scenario: Scenario, driver: Any, pairs: int, shot: bool, check: bool = False,
               devtools: bool = False) -> float:
    """Taps; `shot` adds a screenshot per tap, `check` a find verifying the step's expectation;
    `devtools`: the screenshot taken the plugin's Chromium way (`devices/devtools_capture.py`)."""
    route = DevtoolsScreenshots(driver, scenario.url) if devtools else None
    started = time.perf_counter()
    for _ in range(pairs):
        for by, value in scenario.bare_taps:
            driver.find_element(by, value).click()
            if route is not None:
                base64.b64decode(route.take())
            elif shot:
                driver.get_screenshot_as_png()
            if check:
                driver.find_elements(*check_locator(scenario))
    return time.perf_counter() - started


def plugin_session(scenario: Scenario, driver: Any, tier: str, on_demand: bool,
                   root: Path, w3c: bool = False) -> tuple[Device, TaskSession, ArtifactRecorder]:
    device = Device(driver, url=scenario.url, is_sim=scenario.is_sim)
    if w3c:
        device.devtools_screenshots = False  # Chromium: the W3C screenshot, as before the DevTools route
    device.tree_on_demand = on_demand
    nodeid = f"latency_bench.py::test_{tier}_{'lazy' if on_demand else 'eager'}"
    recorder = ArtifactRecorder(create_test_folder(root, nodeid), nodeid=nodeid, tier=tier, background=True)
    session = TaskSession(RecordingScreen(device, recorder), policy=TierPolicy.for_tier(tier), listeners=[recorder],
                          artifacts=recorder, name=nodeid)
    recorder.bind(session)
    session.cycles.limit = 0  # open/cancel is a deliberate A-B loop: the cycle guard (issue 14) would stop it
    if MEMORY["on"]:
        store = MemoryStore(root / f"memory-{time.monotonic_ns()}.sqlite")
        bridge = MemoryBridge(Healer(store), session, nodeid)
        device.memory = bridge
        session.journal.listeners.insert(0, bridge)  # as the plugin places it: before the recorder
        STORES.append(store)
    session.goal("open and cancel the delete dialog", plan=[])
    return device, session, recorder


def close_memory() -> None:
    """Count what the open stores learnt, close them."""
    while STORES:
        store = STORES.pop()
        MEMORY["looks"] += len(store.patches())
        store.close()


def run_pairs(scenario: Scenario, device: Device, session: TaskSession, pairs: int, expect: bool = True) -> None:
    open_tap, cancel_tap = scenario.device_taps
    for i in range(pairs):
        session.perform(f"open dialog {i}", lambda: device.tap(**open_tap),  # type: ignore[arg-type]
                        expect=visible("Delete post?") if expect else None)
        session.perform(f"cancel {i}", lambda: device.tap(**cancel_tap),  # type: ignore[arg-type]
                        expect=gone("Delete post?") if expect else None)


def plugin_steps(scenario: Scenario, driver: Any, pairs: int, tier: str, on_demand: bool,
                 root: Path, expect: bool = True, w3c: bool = False) -> tuple[float, int]:
    """Seconds for `2 * pairs` steps and the page sources they fetched."""
    device, session, recorder = plugin_session(scenario, driver, tier, on_demand, root, w3c)
    started = time.perf_counter()
    run_pairs(scenario, device, session, pairs, expect)
    recorder.drain()
    elapsed = time.perf_counter() - started
    recorder.close_writer()
    close_memory()
    return elapsed, device.page_source_calls


def per_step(scenario: Scenario, pairs: int, rounds: int, root: Path) -> None:
    steps = 2 * pairs
    ms: dict[str, list[float]] = defaultdict(list)
    sources: dict[str, list[float]] = defaultdict(list)
    modes = ["bare", "bare+shot", "bare+check", *[f"{t} {m}" for t in TIERS for m in ("eager", "on-demand")],
             *[f"{t} no-expect" for t in TIERS]]
    if not scenario.is_sim:  # Chromium: the bare client with the plugin's screenshot route, the plugin without it
        modes[3:3] = ["bare+devtools"]
        modes.append("light no-expect-w3c")
    driver = scenario.open()  # one session: its start is the per-test part's business
    try:
        plugin_steps(scenario, driver, 1, "light", True, root / "warm")  # fonts, OpenCV, connections
        for r in range(rounds):
            for mode in modes:
                if mode.startswith("bare"):
                    ms[mode].append(bare_steps(scenario, driver, pairs, mode != "bare", mode == "bare+check",
                                               mode == "bare+devtools") / steps * 1000)
                    sources[mode].append(0.0)
                    continue
                tier, tree = mode.split()
                elapsed, calls = plugin_steps(scenario, driver, pairs, tier, tree != "eager", root / f"r{r}",
                                              expect=not tree.startswith("no-expect"), w3c=tree.endswith("w3c"))
                ms[mode].append(elapsed / steps * 1000)
                sources[mode].append(calls / steps)
    finally:
        driver.quit()
    med = {mode: statistics.median(ms[mode]) for mode in modes}
    print(f"\n{scenario.label}: per step, Feed open/cancel x{pairs} ({steps} steps with an expect), median of "
          f"{rounds} round(s); load {os.getloadavg()[0]:.1f}")
    devtools = med.get("bare+devtools")
    extra = f"  {'/bare+devtools':>14}" if devtools else ""
    print(f"  {'mode':>19}  {'ms/step':>8}  {'sources/step':>12}  {'/bare+shot':>10}  {'/bare+check':>11}  {'/bare':>6}"
          + extra)
    for mode in modes:
        print(f"  {mode:>19}  {med[mode]:8.1f}  {statistics.median(sources[mode]):12.2f}  "
              f"{med[mode] / med['bare+shot']:9.2f}x  {med[mode] / med['bare+check']:10.2f}x  "
              f"{med[mode] / med['bare']:5.2f}x" + (f"  {med[mode] / devtools:13.2f}x" if devtools else ""))
    if MEMORY["on"]:
        print(f"  memory on: {MEMORY['looks']} looks learnt so far (2 per plugin run when every tap teaches)")


def per_test(scenario: Scenario, steps: int, root: Path) -> None:
    """A whole test: new session, `steps` taps (open/cancel alternating), quit."""
    results: dict[str, float] = {}
    for mode in ("bare+shot", "light", "light no-expect", "standard"):
        started = time.perf_counter()
        driver = scenario.open()
        try:
            if mode == "bare+shot":
                bare_steps(scenario, driver, steps // 2, True)
            else:
                tier = mode.split()[0]
                device, session, recorder = plugin_session(scenario, driver, tier, True, root / "test")
                run_pairs(scenario, device, session, steps // 2, expect=not mode.endswith("no-expect"))
                recorder.drain()
                recorder.close_writer()
                close_memory()
        finally:
            driver.quit()
        results[mode] = time.perf_counter() - started
    line = ", ".join(f"{mode} {sec:.2f} s ({sec / results['bare+shot']:.2f}x)" for mode, sec in results.items())
    print(f"  per test (new session + {steps} steps + quit): {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="none,uiautomator2,xcuitest")
    parser.add_argument("--pairs", type=int, default=2, help="open/cancel pairs per per-step run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--steps", type=int, default=4, help="steps of the per-test run (even)")
    parser.add_argument("--skip-test", action="store_true", help="skip the per-test part (session starts are slow)")
    parser.add_argument("--appium", metavar="URL", default=None,
                        help="also measure against a real Appium server (chromium driver, headless Chromium, "
                             "the web Feed; `bash .ci/appium.sh start` prints one)")
    parser.add_argument("--memory", choices=("off", "on"), default="off",
                        help="run the plugin rows with the cross-run memory on (a fresh store per run)")
    args = parser.parse_args(argv)
    MEMORY["on"] = args.memory == "on"
    if args.pairs < 1 or args.rounds < 1 or args.steps < 2:
        parser.error("--pairs and --rounds must be >= 1, --steps >= 2")
    print("the xcuitest profile runs on the sim's Android persona: its delays, not an iOS page source")
    with SimServer(host="127.0.0.1", port=0) as server, tempfile.TemporaryDirectory(prefix="latency-bench-") as tmp:
        for profile in [p for p in args.profiles.split(",") if p]:
            scenario = sim_scenario(server.url, profile)
            per_step(scenario, args.pairs, args.rounds, Path(tmp))
            if not args.skip_test:
                per_test(scenario, args.steps, Path(tmp))
        if args.appium:
            with FeedServer() as feed:
                scenario = web_scenario(args.appium, feed.page_url(delay_ms=0))
                per_step(scenario, args.pairs, args.rounds, Path(tmp))
                if not args.skip_test:
                    per_test(scenario, args.steps, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
