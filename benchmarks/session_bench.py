"""Per-test cost of `--guistate-session=worker` vs `test` against a bare client that reuses its
session (issue 12), on the embedded sim and, with `--appium URL`, on real Appium + Chromium.

Run: `python benchmarks/session_bench.py [--tests 20] [--rounds 3] [--appium URL]`.

Every variant is an in-process pytest run of `--tests` identical tests, timed per test
(setup + call + teardown, `pytest_runtest_protocol`); the table shows the median ms per test, and
the median of setup + teardown alone (where the session handling and the reset run):
  bare reuse    a session-scoped raw Appium-client fixture (no plugin fixture): the test resets
                the app itself (sim: `mobile: guistateReset`; Chromium: delete cookies, clear
                storage, load the start page) and runs the body with raw client calls;
  bare new      the same with a new session per test (what `test` mode costs at the least);
  worker        the plugin's `device` fixture, `--guistate-session=worker` (its reset), the bare
                body through `device.driver`: the session layer's own cost;
  test          the same with `--guistate-session=test` (a new session per test);
  worker Device / test Device   the body through `Device` calls (`tap`, `screenshot`) instead;
  worker +gs / test +gs         and with the `guistate` fixture too (journal, light tier).
Body: sim — tap "Delete post by Carol" (the dialog opens), one screenshot; Chromium — open the
web Feed, tap Delete, one screenshot. Rounds interleave the variants. Timing only: nothing here is
a pass/fail criterion; the issue's target is worker <= 1.1x bare reuse.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.devices import capabilities
from pytest_guistate.devices.web_feed import FeedServer

SIM_CAPS = {"platformName": "Android", "appium:automationName": "UiAutomator2",
            "appium:appPackage": "com.guistate.feed", "guistate:clock": "frozen"}

BARE = '''
import pytest
from appium import webdriver
from appium.options.common import AppiumOptions
from appium.webdriver.common.appiumby import AppiumBy

URL, CAPS, PAGE, REUSE = {url!r}, {caps!r}, {page!r}, {reuse!r}


def open_driver():
    return webdriver.Remote(URL, options=AppiumOptions().load_capabilities(dict(CAPS)))


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
        driver.find_element(AppiumBy.XPATH, "//button[normalize-space()='Delete']").click()
    else:
        driver.find_element(AppiumBy.ACCESSIBILITY_ID, "Delete post by Carol").click()
    driver.get_screenshot_as_base64()
'''

PLUGIN = '''
import pytest
from appium.webdriver.common.appiumby import AppiumBy

PAGE, RAW = {page!r}, {raw!r}


@pytest.mark.parametrize("n", range({tests}))
def test_body({fixtures}, n):
    if RAW:  # the bare client's own calls through device.driver: only the fixture and reset differ
        driver = device.driver
        if PAGE:
            driver.get(PAGE)
            driver.find_element(AppiumBy.XPATH, "//button[normalize-space()='Delete']").click()
        else:
            driver.find_element(AppiumBy.ACCESSIBILITY_ID, "Delete post by Carol").click()
        driver.get_screenshot_as_base64()
        return
    if PAGE:
        device.open_url(PAGE)
        device.tap("Delete")
    else:
        device.tap(desc="Delete post by Carol")
    device.screenshot()
'''


_RUNS = itertools.count()


class PerTest:
    """Milliseconds of each test's whole protocol (setup, call, teardown)."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.fixture_ms: list[float] = []  # setup + teardown: the session handling and the reset
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
        start = time.perf_counter()
        result = yield
        self.ms.append((time.perf_counter() - start) * 1000)
        return result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.append(f"{report.nodeid} {report.when}: {report.longreprtext[-400:]}")


def run_inner(source: str, args: list[str]) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory(prefix="session-bench-") as tmp:
        path = Path(tmp) / f"test_bench_{next(_RUNS)}.py"  # a new module name per in-process run
        path.write_text(source, encoding="utf-8")
        timer = PerTest()
        code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--guistate-memory=off",
                            "--guistate-retain=off", f"--guistate-artifacts={Path(tmp) / 'artifacts'}",
                            "--rootdir", tmp, str(path), *args], plugins=[timer])
        if code != 0 or timer.failed:
            raise SystemExit(f"inner run failed ({code}): {timer.failed[:2]}")
        return timer.ms, timer.fixture_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--appium", metavar="URL", help="a real Appium 3 server (chromium driver) instead of the sim")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FeedServer() as feed:
        if args.appium:
            caps, url, page = capabilities.chromium(), args.appium, feed.page_url()
            caps_file = Path(tmp) / "caps.json"
            caps_file.write_text(json.dumps(caps), encoding="utf-8")
            device_args = [f"--guistate-device={url}", f"--guistate-caps={caps_file}"]
            where = f"real Appium + headless Chromium at {url}"
        else:
            from pytest_guistate.devices.sim.server import SimServer

            bare_sim = SimServer().start()
            caps, url, page = SIM_CAPS, bare_sim.url, ""
            device_args = []
            where = "the embedded sim (in-process HTTP server)"
        plugin_marker = "" if args.appium else "@pytest.mark.guistate(app='com.guistate.feed', caps={'guistate:clock': 'frozen'})\n"
        variants = {
            "bare reuse": (BARE.format(url=url, caps=caps, page=page, reuse=True, tests=args.tests), []),
            "bare new": (BARE.format(url=url, caps=caps, page=page, reuse=False, tests=args.tests), []),
        }
        for mode in ("worker", "test"):
            for suffix, fixtures, raw in (("", "device", True), (" Device", "device", False),
                                          (" +gs", "device, guistate", False)):
                source = PLUGIN.format(page=page, tests=args.tests, fixtures=fixtures, raw=raw)
                source = source.replace("@pytest.mark.parametrize", plugin_marker + "@pytest.mark.parametrize")
                variants[mode + suffix] = (source, [f"--guistate-session={mode}", "--guistate=light", *device_args])
        samples: dict[str, list[float]] = {name: [] for name in variants}
        fixture: dict[str, list[float]] = {name: [] for name in variants}
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for name, (source, extra) in variants.items():
                whole, phases = run_inner(source, extra)
                samples[name].extend(whole)
                fixture[name].extend(phases)
        if not args.appium:
            bare_sim.stop()
    print(f"\nper-test ms on {where}: {args.tests} tests x {args.rounds} rounds, "
          f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    base = statistics.median(samples["bare reuse"])
    print(f"{'variant':14s} {'median':>9s} {'mean':>9s} {'vs bare reuse':>14s} {'setup+teardown':>15s}")
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"{name:14s} {med:9.1f} {statistics.fmean(values):9.1f} {med / base:13.2f}x "
              f"{statistics.median(fixture[name]):14.1f}")
    print("target: worker <= 1.10x bare reuse (median per test; the mean includes the one session start);")
    print("the Device rows add the device layer's own per-call cost (web locators: a reachability script)")


if __name__ == "__main__":
    main()
