"""Per-test cost of `--guistate-session=worker` vs `test` against a bare client that reuses its
session (issue 12), under the sim's latency profiles and on real Appium + Chromium.

Run: `python benchmarks/session_bench.py [--profiles uiautomator2,xcuitest] [--appium URL] [--tests 4]
[--pairs 2] [--rounds 1] [--variants NAME,...]`.

Every variant is an in-process pytest run of `--tests` identical tests, timed per test (setup + call +
teardown, `pytest_runtest_protocol`). A test is a short scripted one: `2 * --pairs` steps, "open the
delete dialog, cancel it" (sim: Bob's post; Chromium: the web Feed's first post, loaded first):
  bare reuse        a session-scoped raw Appium client: the test resets the app itself (sim:
                    `mobile: guistateReset`, which costs one app launch under a profile; Chromium:
                    cookies, storage, `data:,`), then find + click + screenshot per step - the baseline;
  bare reuse+check  the same plus a find per step checking the step's expectation (the baseline of
                    the `expect` rows: what a careful script does);
  bare new          the tap + screenshot body with a new session per test (start and quit per test);
  bare reuse devtools   Chromium only: `bare reuse` with its screenshots taken the plugin's way
                    (`devices/devtools_capture.py`: DevTools, optimizeForSpeed), so the
                    ratio to it is the plugin's own work alone;
  test|worker light|standard [expect]   the plugin's `device` + `guistate` fixtures, each step a
                    `guistate.perform(...)` (with `expect=visible/gone("Delete post?")` in the expect
                    rows), `--guistate-session=test|worker`, `--guistate=light|standard|full`, as a
                    user runs them: the cross-run memory on (the default; a new memory file per inner
                    run, so its first test learns every look and the others refresh them) and the
                    default tier rules (issue 38: the figures are the defaults' first);
  ... memory off    the same with `--guistate-memory=off` (how every row ran before issue 38);
                    `worker light w3c` (Chromium only) with the W3C screenshot, as before the DevTools route;
                    `... unknown`: the same with `device.known_screens = 0`, so no tree is taken from a
                    screen the session read before (the test's screens repeat: the feed after each cancel,
                    the dialog, the launch screen after the reset; a flow whose screens never repeat pays
                    what these rows pay).
The sim variants share one SimServer (the plugin's embedded sim is pointed at it), so its request log
gives, per variant, the page sources per step and the latency delay (`delay_ms`) per test by command:
`sim ms` is the sim's own time serving them (request time minus delay: drawing and encoding a
screenshot, writing a page source, which a real driver's figure already contains), wall ms minus both
(`client ms`) is what the client side (Appium client, plugin) adds, and `delay/+check` (the median
test's delay, its own requests' sum, over the checking bare client's median test's) is what the
`/+check` column would read with no client or sim time at all: the profile's share, the same at any
machine load (a mean would spread the worker's one session start over its tests and understate it). `first_readers` splits each row's page sources by the code that read the tree first.
Per row and step (issue 42): `path`, the client's time on the test's path (the median test's wall minus the
time spent inside the WebDriver commands it sent, over its steps: the plugin's own work, its sleeps and the
client's; the mean over the tests beside it, which the worker's session start in its first test weighs on),
`plugin`, that less `bare reuse`'s, and `beside`, the CPU of this process's other threads (the decode,
writer and memory threads; on the sim less the sim's own serving time, a wall time that overstates its
CPU under load, so there the column reads low, often 0), the work done beside the test.
Ratios are against the baselines of the same run. Timing only: nothing here is a pass/fail criterion;
issue 12's target is worker <= 1.1x bare reuse per test.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.remote.remote_connection import RemoteConnection

from pytest_guistate import runtime
from pytest_guistate.devices import capabilities
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim.server import SimServer
from pytest_guistate.devices.web_feed import FeedServer

FEED = "com.guistate.feed"
SIM_TAPS = ("ACCESSIBILITY_ID", "Delete post by Bob", "ID", "android:id/button2")
SIM_DEVICE_TAPS = ({"desc": "Delete post by Bob"}, {"id": "android:id/button2"})
IOS_TAPS = ("IOS_PREDICATE", 'label == "Delete post by Bob"', "ACCESSIBILITY_ID", "Cancel")
IOS_DEVICE_TAPS = ({"desc": "Delete post by Bob"}, {"desc": "Cancel"})
WEB_FIRST_DELETE = "(//*[@data-testid='delete'])[1]"
WEB_TAPS = ("XPATH", WEB_FIRST_DELETE, "XPATH", "//*[@data-testid='cancel_delete']")
WEB_DEVICE_TAPS = ({"xpath": WEB_FIRST_DELETE}, {"id": "cancel_delete"})
# the bare client's check: the cheapest strategy a careful script has for a text (not XPath, which
# both drivers price above a find: the sim's latency profiles do too)
SIM_CHECK = ("ANDROID_UIAUTOMATOR", 'new UiSelector().text("Delete post?")')
IOS_CHECK = ("IOS_PREDICATE", 'label == "Delete post?"')
WEB_CHECK = ("XPATH", "//*[contains(text(), 'Delete post?')]")
# the sim persona of each latency profile: the xcuitest profile on the iOS persona (its page source
# shape, its predicates), uiautomator2 on the Android one
PERSONAS = {"xcuitest": {"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": FEED}}
ANDROID = {"platformName": "Android", "appium:automationName": "UiAutomator2", "appium:appPackage": FEED}

BARE = '''
import base64

import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from appium.webdriver.common.appiumby import AppiumBy

from pytest_guistate.devices.devtools_capture import DevtoolsScreenshots
from pytest_guistate.devices.driver_ports import with_driver_ports

URL, CAPS, PAGE, REUSE, CHECK, DEVTOOLS = {url!r}, {caps!r}, {page!r}, {reuse!r}, {check!r}, {devtools!r}
OPEN_BY, OPEN, CANCEL_BY, CANCEL = {taps!r}


def open_driver():  # as the plugin opens it: on this machine a chromedriver of its own
    return webdriver.Remote(URL, options=AppiumOptions().load_capabilities(with_driver_ports(URL, CAPS)))


@pytest.fixture(scope="session")
def kept():
    driver = open_driver() if REUSE else None
    yield driver
    if driver is not None:
        driver.quit()


@pytest.fixture
def driver(kept):
    if kept is not None:
        if PAGE:
            kept.delete_all_cookies()
            kept.execute_script("try {{ localStorage.clear(); sessionStorage.clear(); }} catch (e) {{}}")
            kept.get("data:,")
        else:
            kept.execute_script("mobile: guistateReset", {{"capabilities": dict(CAPS)}})
        yield kept
        return
    fresh = open_driver()
    yield fresh
    fresh.quit()


@pytest.mark.parametrize("n", range({tests}))
def test_body(driver, n):
    if PAGE:
        driver.get(PAGE)
        driver.find_element(AppiumBy.XPATH, "//*[@data-testid='post_row']")
    devtools = DevtoolsScreenshots(driver, URL) if DEVTOOLS else None
    for _ in range({pairs}):
        for by, value in ((OPEN_BY, OPEN), (CANCEL_BY, CANCEL)):
            driver.find_element(getattr(AppiumBy, by), value).click()
            if devtools is not None:
                base64.b64decode(devtools.take())  # the plugin's Chromium route (its capture checks for a dialog)
            else:
                driver.get_screenshot_as_png()
            if CHECK:
                driver.find_elements(getattr(AppiumBy, CHECK[0]), CHECK[1])
'''

PLUGIN = '''
import json
from pathlib import Path

import pytest
from pytest_guistate import gone, visible

PAGE, EXPECT, W3C, KNOWN = {page!r}, {expect!r}, {w3c!r}, {known!r}
OPEN, CANCEL = {device_taps!r}


@pytest.fixture
def count(device, request):
    before = device.page_source_calls  # a reused session's Device counts across tests
    yield  # torn down after `guistate`: the test's finish is counted too
    with open(Path(request.config.rootpath) / "sources.txt", "a", encoding="utf-8") as out:
        out.write(f"{{device.page_source_calls - before}}\\n")


{marker}@pytest.mark.parametrize("n", range({tests}))
def test_body(count, device, guistate, n):
    if KNOWN is not None:
        device.known_screens = KNOWN  # 0: every new screenshot's tree is read, none taken from a screen seen before
    if W3C:
        device.devtools_screenshots = False  # Chromium: the W3C screenshot, as before the DevTools route
    if PAGE:
        device.open_url(PAGE)
        device.find(xpath="//*[@data-testid='post_row']")
    guistate.goal("open and cancel the delete dialog", plan=[])
    for i in range({pairs}):
        guistate.perform(f"open {{i}}", lambda: device.tap(**OPEN), expect=visible("Delete post?") if EXPECT else None)
        guistate.perform(f"cancel {{i}}", lambda: device.tap(**CANCEL), expect=gone("Delete post?") if EXPECT else None)
'''

_RUNS = itertools.count()


class PerTest:
    """Milliseconds of each test's whole protocol (setup, call, teardown)."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.windows: list[tuple[float, float]] = []  # wall clock of each test: its requests in the sim's log
        self.fixture_ms: list[float] = []  # setup + teardown: the session handling and the reset
        self.cpu_ms: list[float] = []  # this process's CPU time in the test, every thread (plugin, client)
        self.main_cpu_ms: list[float] = []  # the same, the test's own thread only (the rest: background threads)
        self.failed: list[str] = []
        self._phases = 0.0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._phase())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, Any]:
        result = yield from self._phase()
        self.fixture_ms.append(self._phases)
        self._phases = 0.0
        return result

    def _phase(self) -> Generator[None, Any, Any]:
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            self._phases += (time.perf_counter() - start) * 1000

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
        start, wall, cpu, main = time.perf_counter(), time.time(), time.process_time(), time.thread_time()
        result = yield
        self.ms.append((time.perf_counter() - start) * 1000)
        self.cpu_ms.append((time.process_time() - cpu) * 1000)
        self.main_cpu_ms.append((time.thread_time() - main) * 1000)
        self.windows.append((wall, time.time()))
        return result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.append(f"{report.nodeid} {report.when}: {report.longreprtext[-600:]}")


# frames of these files only pass the read on: the reader is the first plugin frame outside them
_PASS_ON = ("devices/device.py", "core/observation.py", "report/redact.py")


@contextmanager
def first_readers(counts: Counter[str]) -> Iterator[None]:
    """Count every page source (or web DOM walk) by who read the tree first (`module.function` of
    the first plugin frame that is not the device, the observation or the redactor), so a row's
    sources per test split by cause. Wraps `Device.ui_tree` for the duration only."""
    original = Device.ui_tree

    def counted(self: Device) -> Any:
        # innermost first, without reading source lines (extract_stack did: ~1 ms a tree on the path)
        for frame, _ in traceback.walk_stack(sys._getframe(1)):
            where = frame.f_code.co_filename.replace(os.sep, "/")
            if "/pytest_guistate/" in where and not where.endswith(_PASS_ON):
                counts[f"{Path(where).stem}.{frame.f_code.co_name}"] += 1
                break
        else:
            counts["(outside the plugin)"] += 1
        return original(self)

    Device.ui_tree = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        Device.ui_tree = original  # type: ignore[method-assign]


@contextmanager
def timed_commands(counts: Counter[str], ms: defaultdict[str, float],
                   spans: list[tuple[float, float]] | None = None) -> Iterator[None]:
    """Count and time every WebDriver command sent from this process (the bare clients' and the
    plugin's alike) by its name: on a real server, where no request log says what each one cost.
    `spans`: each command's (wall clock start, ms), to split them by test."""
    original = RemoteConnection.execute

    def timed(self: RemoteConnection, command: str, params: dict[str, Any]) -> Any:
        start, wall = time.perf_counter(), time.time()
        try:
            return original(self, command, params)
        finally:
            took = (time.perf_counter() - start) * 1000
            counts[command] += 1
            ms[command] += took
            if spans is not None:
                spans.append((wall, took))

    RemoteConnection.execute = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        RemoteConnection.execute = original  # type: ignore[method-assign]


def page_sources(folder: Path) -> list[int]:
    """`Device.page_source_calls` at the end of each plugin test (its steps and its finish)."""
    path = folder / "sources.txt"
    return [int(line) for line in path.read_text(encoding="utf-8").split()] if path.exists() else []


def run_inner(source: str, args: list[str]) -> tuple[PerTest, list[int]]:
    with tempfile.TemporaryDirectory(prefix="session-bench-") as tmp:
        path = Path(tmp) / f"test_bench_{next(_RUNS)}.py"  # a new module name per in-process run
        path.write_text(source, encoding="utf-8")
        artifacts = Path(tmp) / "artifacts"
        timer = PerTest()
        # the memory on, as by default, in a file of this run (a later --guistate-memory=off wins)
        code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                            f"--guistate-memory={Path(tmp) / 'memory.sqlite'}", f"--guistate-artifacts={artifacts}",
                            "--rootdir", tmp, str(path), *args], plugins=[timer])
        if code != 0 or timer.failed:
            raise SystemExit(f"inner run failed ({code}): {timer.failed[:2]}")
        return timer, page_sources(Path(tmp))


def kind(method: str, path: str) -> str:
    """The request-log entry's command, coarsely (what the delay table groups by)."""
    if path == "/session":
        return "session"
    tail = path.split("/", 3)[3] if path.count("/") >= 3 else ""
    if method == "DELETE" and not tail:
        return "quit"
    last = tail.rsplit("/", 1)[-1]
    return {"sync": "execute", "elements": "element", "source": "source", "screenshot": "screenshot",
            "click": "click", "element": "element"}.get(last, "other")


def variants(args: argparse.Namespace, url: str, caps: dict[str, Any], page: str,
             profile: str) -> dict[str, tuple[str, list[str]]]:
    web = bool(page)
    ios = caps.get("platformName") == "iOS"
    taps, device_taps, check = ((WEB_TAPS, WEB_DEVICE_TAPS, WEB_CHECK) if web else
                                (IOS_TAPS, IOS_DEVICE_TAPS, IOS_CHECK) if ios else (SIM_TAPS, SIM_DEVICE_TAPS, SIM_CHECK))
    common = {"url": url, "caps": caps, "page": page, "tests": args.tests, "pairs": args.pairs, "taps": taps}
    out = {
        "bare reuse": (BARE.format(reuse=True, check="", devtools=False, **common), []),
        "bare reuse+check": (BARE.format(reuse=True, check=tuple(check), devtools=False, **common), []),
        "bare new": (BARE.format(reuse=False, check="", devtools=False, **common), []),
    }
    if web:  # the same baseline with the plugin's screenshot route: what is left is the plugin's own work
        out["bare reuse devtools"] = (BARE.format(reuse=True, check="", devtools=True, **common), [])
    persona = "'platformName': 'iOS', 'appium:automationName': 'XCUITest', " if ios else ""
    marker = "" if web else (f"@pytest.mark.guistate(app={FEED!r}, caps={{{persona}'guistate:clock': 'frozen', "
                             f"'guistate:seed': 11, 'guistate:latency': {profile!r}}})\n")
    device_args = [f"--guistate-device={url}", f"--guistate-caps={args.caps_file}"] if web else []
    for mode in ("worker", "test"):
        for tier in ("light", "standard", "full"):
            for expect in (False, True):
                for known in (None, 0):
                    source = PLUGIN.format(page=page, expect=expect, device_taps=device_taps, marker=marker,
                                           tests=args.tests, pairs=args.pairs, w3c=False, known=known)
                    out[f"{mode} {tier}{' expect' if expect else ''}{' unknown' if known == 0 else ''}"] = (
                        source, [f"--guistate-session={mode}", f"--guistate={tier}", *device_args])
    # beside the defaults: the same rows without the cross-run memory
    for name in [n for n in out if n.startswith("worker")]:
        out[f"{name} memory off"] = (out[name][0], [*out[name][1], "--guistate-memory=off"])
    if web:
        w3c = PLUGIN.format(page=page, expect=False, device_taps=device_taps, marker=marker, tests=args.tests,
                            pairs=args.pairs, w3c=True, known=None)
        out["worker light w3c"] = (w3c, out["worker light"][1])
    wanted = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else []
    return {name: value for name, value in out.items() if not wanted or name in wanted or name.startswith("bare")}


def measure(args: argparse.Namespace, where: str, url: str, caps: dict[str, Any], page: str, profile: str,
            sim: SimServer | None) -> None:
    table = variants(args, url, caps, page, profile)
    samples: dict[str, list[float]] = defaultdict(list)
    fixture: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)  # this process's CPU ms per test: all threads, the test's own
    main_cpu: dict[str, list[float]] = defaultdict(list)
    sources: dict[str, list[int]] = defaultdict(list)
    delays: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    readers: dict[str, Counter[str]] = defaultdict(Counter)
    served: dict[str, float] = defaultdict(float)
    test_delays: dict[str, list[float]] = defaultdict(list)  # each test's own delay (its requests' sum)
    sent: dict[str, Counter[str]] = defaultdict(Counter)  # real server: commands by name, and their ms
    sent_ms: dict[str, defaultdict[str, float]] = defaultdict(lambda: defaultdict(float))
    path_ms: dict[str, list[float]] = defaultdict(list)  # each test's wall minus its WebDriver commands
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, (source, extra) in table.items():
            mark = len(sim.request_log()) if sim is not None else 0
            spans: list[tuple[float, float]] = []
            with first_readers(readers[name]), timed_commands(sent[name], sent_ms[name], spans):
                timer, calls = run_inner(source, extra)
            windows = timer.windows
            # each test's wall minus the commands sent inside it: its client time on the path
            path_ms[name].extend(ms - sum(took for at, took in spans if start <= at <= end)
                                 for ms, (start, end) in zip(timer.ms, windows, strict=True))
            samples[name].extend(timer.ms)
            fixture[name].extend(timer.fixture_ms)
            cpu[name].extend(timer.cpu_ms)
            main_cpu[name].extend(timer.main_cpu_ms)
            sources[name].extend(calls)
            log = sim.request_log()[mark:] if sim is not None else []
            if sim is not None:
                test_delays[name].extend(sum(r.delay_ms for r in log if start <= r.at <= end) for start, end in windows)
            for rec in log:
                delays[name][kind(rec.method, rec.path)] += rec.delay_ms
                served[name] += rec.ms - rec.delay_ms  # the sim's own work: rendering, encoding, the XML
                counts[name][kind(rec.method, rec.path)] += 1
    tests, steps = args.tests * args.rounds, 2 * args.pairs
    print(f"\nper test on {where}: {args.tests} tests x {args.rounds} round(s), {steps} steps each; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    base, check_base = statistics.median(samples["bare reuse"]), statistics.median(samples["bare reuse+check"])
    # what the profile alone charges the median test against the checking client's (`/+check` without client time)
    check_delay = max(statistics.median(test_delays["bare reuse+check"]), 1.0) if sim is not None else 1.0
    head = f"  {'variant':22s} {'median ms':>9s} {'first':>8s} {'mean':>8s} {'/bare reuse':>11s} {'/+check':>8s} " \
           f"{'setup+td':>8s} {'src/step':>8s}"
    devtools = statistics.median(samples["bare reuse devtools"]) if "bare reuse devtools" in samples else None
    if sim is not None:
        head += f" {'src/test':>8s} {'delay ms/test':>13s} {'delay/+check':>12s} {'sim ms':>7s} {'client ms':>9s}"
    if devtools is not None:
        head += f" {'/bare devtools':>14s}"
    print(head)
    for name, values in samples.items():
        med = statistics.median(values)
        src_steps = statistics.fmean(sources[name]) / steps if sources[name] else 0.0
        line = (f"  {name:22s} {med:9.0f} {values[0]:8.0f} {statistics.fmean(values):8.0f} {med / base:10.2f}x "
                f"{med / check_base:7.2f}x {statistics.median(fixture[name]):8.0f} {src_steps:8.2f}")
        if sim is not None:
            delay = sum(delays[name].values()) / tests
            own = served[name] / tests
            floor = statistics.median(test_delays[name]) / check_delay
            line += (f" {counts[name]['source'] / tests:8.2f} {delay:13.0f} {floor:11.2f}x"
                     f" {own:7.0f} {statistics.fmean(values) - delay - own:9.0f}")
        if devtools is not None:
            line += f" {med / devtools:13.2f}x"
        print(line)
    if sim is not None:
        print("  delay ms per test by command (mean over the variant's tests, session starts included):")
        kinds = ("session", "quit", "execute", "element", "click", "screenshot", "source", "other")
        print("  " + f"{'variant':22s} " + " ".join(f"{k:>10s}" for k in kinds))
        for name in samples:
            print("  " + f"{name:22s} " + " ".join(f"{delays[name][k] / tests:10.0f}" for k in kinds))
        print("  requests per test by command:")
        for name in samples:
            print("  " + f"{name:22s} " + " ".join(f"{counts[name][k] / tests:10.2f}" for k in kinds))
    if sim is None:  # what the request log gives on the sim: commands per test and their client-side ms
        print("  WebDriver commands per test (count x mean ms), the most expensive first:")
        for name in samples:
            top = sorted(sent_ms[name], key=lambda c: -sent_ms[name][c])[:6]
            print(f"  {name:22s} " + ", ".join(
                f"{c} {sent[name][c] / tests:.2f}x{sent_ms[name][c] / sent[name][c]:.0f}" for c in top))
    # where the rest of a test's time goes (issue 38: memory on against off on Chromium, same commands)
    print("  CPU ms of this process per test (median; all threads / the test's thread / the others)"
          + (", WebDriver command ms per test (mean; waiting on the server) and wall minus it:" if sim is None else
             " (the sim serves from this process too: its threads are among the others):"))
    for name, values in samples.items():
        every, own_thread = statistics.median(cpu[name]), statistics.median(main_cpu[name])
        others = statistics.median(a - b for a, b in zip(cpu[name], main_cpu[name], strict=True))
        line = f"  {name:22s} {every:7.0f} {own_thread:7.0f} {others:7.0f}"
        if sim is None:
            waiting = sum(sent_ms[name].values()) / tests
            line += f"   commands {waiting:7.0f}   wall - commands {statistics.fmean(values) - waiting:7.0f}"
        print(line)
    # issue 42: what the client does on the test's path a step (wall minus the time spent inside
    # WebDriver commands: the plugin's and the client's own work, and its sleeps) and what runs beside
    # it (CPU of this process's other threads; on the sim less the sim's own serving time)
    print("  per step: client ms on the test's path (wall - WebDriver commands; median test, and the mean), the "
          "plugin's share of it (minus bare reuse's), CPU ms beside the test (other threads"
          + (", less the sim's serving)" if sim else ")"))
    path = {name: statistics.median(path_ms[name]) / steps for name in samples}
    mean_path = {name: statistics.fmean(path_ms[name]) / steps for name in samples}
    for name in samples:
        others = statistics.median(a - b for a, b in zip(cpu[name], main_cpu[name], strict=True))
        beside = max(0.0, others - (served[name] / tests if sim is not None else 0.0)) / steps
        print(f"  {name:22s} path {path[name]:7.1f} (mean {mean_path[name]:7.1f})   "
              f"plugin {path[name] - path['bare reuse']:7.1f}   beside {beside:7.1f}")
    print("  page sources per test by their first reader (module.function):")
    for name in samples:
        if readers[name]:
            print(f"  {name:22s} " + ", ".join(f"{who} {n / tests:.2f}" for who, n in readers[name].most_common()))
    print("  median: per test (for worker the first test also opens the session: column 'first'); "
          "target worker <= 1.10x bare reuse")
    if devtools is not None:
        print("  /bare devtools: against the bare client taking its screenshots the plugin's Chromium way "
              "(DevTools, optimizeForSpeed): the plugin's own work alone")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="uiautomator2,xcuitest", help="sim latency profiles ('' for none)")
    parser.add_argument("--appium", metavar="URL", help="also a real Appium 3 server (chromium driver)")
    parser.add_argument("--tests", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=2, help="open/cancel pairs per test (steps = 2 x pairs)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variants", default="", help="plugin variants to run (comma-separated; bare ones always)")
    args = parser.parse_args()
    if args.tests < 2 or args.pairs < 1 or args.rounds < 1:
        parser.error("--tests >= 2, --pairs and --rounds >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        profiles = [p for p in args.profiles.split(",") if p]
        if profiles:
            sim = SimServer(host="127.0.0.1", port=0, request_log_size=200_000).start()
            # the plugin's embedded sim is this server, so its request log covers every variant
            runtime.GuistateRuntime.sim_url = lambda self: sim.url  # type: ignore[method-assign]
            runtime.GuistateRuntime.stop_sim = lambda self: None  # type: ignore[method-assign]
            try:
                for profile in profiles:
                    caps = {**PERSONAS.get(profile, ANDROID), "guistate:clock": "frozen", "guistate:seed": 11,
                            "guistate:latency": profile}
                    measure(args, f"the sim ({caps['platformName']} persona), latency profile {profile}", sim.url,
                            caps, "", profile, sim)
            finally:
                sim.stop()
        if args.appium:
            with FeedServer() as feed:
                caps = capabilities.chromium()
                args.caps_file = Path(tmp) / "caps.json"
                args.caps_file.write_text(json.dumps(caps), encoding="utf-8")
                measure(args, f"real Appium + headless Chromium at {args.appium}", args.appium, caps,
                        feed.page_url(delay_ms=0), "", None)


if __name__ == "__main__":
    main()
