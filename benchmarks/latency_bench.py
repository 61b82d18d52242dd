"""What a step and a test cost under realistic driver latency (issues 11 and 12).

Run: `python benchmarks/latency_bench.py [--profiles none,uiautomator2,xcuitest] [--pairs 2] [--rounds 1]
[--steps 4] [--skip-test] [--memory off|on] [--settling]`.

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
              optimizeForSpeed: `devices/devtools_capture.py`), and light
              no-expect-w3c, the plugin with the W3C screenshot; column /bare+devtools = the plugin's own work.
  Columns: ms/step, page sources/step, ratio to bare+shot (the plugin's per-step share) and to bare.
With `--appium URL`, the same against a real Appium server (chromium driver, headless Chromium, the
web Feed; the page source there is a DOM walk).
Per test - a new session, `--steps` taps, quit: a bare client (tap + screenshot) against the
plugin at light and standard (on demand); the session start is in both.

`--memory on`: the plugin rows run with the cross-run memory on (a fresh store per run, as the plugin's
default `.guistate/memory.sqlite` would be), so each located tap also teaches the memory its element's
look; the line after the table says how many looks were learnt.

`--settling` (instead of the rest): the step the plugin settles in because the app is slow, on
screens that never repeat (`known_screens = 0`), at standard and full: `late redraw` (the Feed's
list redraws 3 s after a confirmed delete: settle, pull to refresh, settle) and `spinner` (the
Shop's results after a 2.5 s spinner: settle through it). `before` reads every new poll's page
source when its screenshot is taken, as the recorder and the settle loop did before issue 38's
change (a wrapper of the screen, `EveryPollRead`); `after` is the plugin as it is. Rounds alternate
before / after; columns: ms and page sources per settling step (medians), after / before.

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


class EveryPollRead(RecordingScreen):
    """The recorder's screen as it was before issue 38's change at standard and full: each new
    screenshot's page source read as it is taken (a poll with the bytes of the one before read none)."""

    def __init__(self, screen: Any, recorder: ArtifactRecorder) -> None:
        super().__init__(screen, recorder)
        self._last_png = b""

    def observe(self) -> Any:
        observation = self._screen.observe()
        if observation.frame.png != self._last_png:
            _ = observation.tree
        self._last_png = observation.frame.png
        self._recorder.on_observation(observation)
        return observation

    observe_poll = observe  # a poll as every other screen


# name -> (the app and its fault, the step before, the settling step); taps by the Android persona's ids
SETTLING: dict[str, tuple[str, dict[str, float], Any, Any]] = {
    "late redraw": (FEED, {"refresh_delay": 3.0},
                    lambda device: device.tap(desc="Delete post by Carol"),
                    lambda device: device.tap(id="android:id/button1")),
    "spinner": ("com.guistate.shopa", {"search_delay": 2.5}, None,
                lambda device: device.type("Phone Case\n", id="search")),
}
SETTLING_EXPECT = {"late redraw": (visible("Delete post by Carol?"), gone("Carol")),
                   "spinner": (None, visible(id="result_row"))}


def settling_step(url: str, profile: str, case: str, tier: str, before: bool, root: Path,
                  driver: Any) -> tuple[float, int, str]:
    """One settling step on a fresh phone (`mobile: guistateReset`, not timed): ms, page sources, outcome."""
    app, faults, first, settling = SETTLING[case]
    first_expect, expect = SETTLING_EXPECT[case]
    # the running clock: a frozen one stills the spinners, so a loading screen would look settled
    wanted = {**caps(profile), "appium:appPackage": app, "guistate:faults": faults, "guistate:clock": "realtime"}
    driver.execute_script("mobile: guistateReset", {"capabilities": wanted})
    device = Device(driver, url=url, is_sim=True)
    device.known_screens = 0  # screens that never repeat: no tree taken from an earlier screenshot
    nodeid = f"latency_bench.py::test_settling_{tier}_{'before' if before else 'after'}"
    recorder = ArtifactRecorder(create_test_folder(root, nodeid), nodeid=nodeid, tier=tier, background=True)
    screen = EveryPollRead(device, recorder) if before else RecordingScreen(device, recorder)
    session = TaskSession(screen, policy=TierPolicy.for_tier(tier), listeners=[recorder], artifacts=recorder,
                          name=nodeid)
    recorder.bind(session)
    session.goal(case, plan=[])
    if first is not None:
        session.perform("the step before", lambda: first(device), expect=first_expect)
    started, sources = time.perf_counter(), device.page_source_calls
    record = session.perform("the settling step", lambda: settling(device), expect=expect, idempotent=False)
    elapsed = time.perf_counter() - started
    recorder.drain()
    recorder.close_writer()
    return elapsed * 1000, device.page_source_calls - sources, record.outcome


def settling(url: str, profile: str, rounds: int, root: Path) -> None:
    driver = sim_scenario(url, profile).open()
    ms: dict[tuple[str, str, bool], list[float]] = defaultdict(list)
    sources: dict[tuple[str, str, bool], list[int]] = defaultdict(list)
    outcomes: dict[tuple[str, str, bool], set[str]] = defaultdict(set)
    try:
        for r in range(rounds):
            for case in SETTLING:
                for tier in ("standard", "full"):
                    for before in ((True, False) if r % 2 == 0 else (False, True)):
                        took, read, outcome = settling_step(url, profile, case, tier, before, root / f"s{r}", driver)
                        ms[case, tier, before].append(took)
                        sources[case, tier, before].append(read)
                        outcomes[case, tier, before].add(outcome)
    finally:
        driver.quit()
    print(f"\nsim, latency {profile}: the settling step, median of {rounds} round(s); load {os.getloadavg()[0]:.1f}")
    print(f"  {'case':>12} {'tier':>8}  {'ms before':>9} {'ms after':>9} {'after/before':>12}  "
          f"{'sources before':>14} {'sources after':>13}  outcomes")
    for case in SETTLING:
        for tier in ("standard", "full"):
            old, new = (statistics.median(ms[case, tier, b]) for b in (True, False))
            src_old, src_new = (statistics.median(sources[case, tier, b]) for b in (True, False))
            seen = sorted(outcomes[case, tier, True] | outcomes[case, tier, False])
            print(f"  {case:>12} {tier:>8}  {old:9.0f} {new:9.0f} {new / old:11.2f}x  {src_old:14.1f} {src_new:13.1f}"
                  f"  {'/'.join(seen)}")


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
    parser.add_argument("--settling", action="store_true",
                        help="only the settling step (late redraw, spinner) before / after issue 38's change")
    args = parser.parse_args(argv)
    MEMORY["on"] = args.memory == "on"
    if args.pairs < 1 or args.rounds < 1 or args.steps < 2:
        parser.error("--pairs and --rounds must be >= 1, --steps >= 2")
    print("the xcuitest profile runs on the sim's Android persona: its delays, not an iOS page source")
    with SimServer(host="127.0.0.1", port=0) as server, tempfile.TemporaryDirectory(prefix="latency-bench-") as tmp:
        if args.settling:
            for profile in [p for p in args.profiles.split(",") if p]:
                settling(server.url, profile, args.rounds, Path(tmp))
            return 0
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
