"""Costs of `Device` calls against a real Appium 3 server (chromium driver, headless Chromium).

    URL=$(bash .ci/appium.sh start)
    python benchmarks/appium_bench.py --url "$URL" [--rounds 10]

Prints medians in ms: session start/quit, screenshot, HTML page source, the DOM tree script,
observe (screenshot + tree), tap, and the stale-Feed confirm step through the step loop.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.capabilities import chromium
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.web_feed import FeedServer


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def median(samples: list[float]) -> str:
    return f"{statistics.median(samples):8.1f} ms  (n={len(samples)}, min {min(samples):.1f}, max {max(samples):.1f})"


def open_device(url: str) -> tuple[Device, float]:
    start = time.perf_counter()
    driver = webdriver.Remote(url, options=AppiumOptions().load_capabilities(chromium()))
    return Device(driver, url=url), (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:4723")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {k: [] for k in (
        "session start", "session quit", "screenshot", "page source (HTML)", "ui_tree (DOM script)", "observe",
        "tap by text (dialog opens)", "confirm step, delay 1.5 s", "confirm step, delay 60 s")}
    with FeedServer() as feed:
        for _ in range(max(1, args.rounds // 3)):
            device, started = open_device(args.url)
            rows["session start"].append(started)
            rows["session quit"].append(timed(device.close))
        device, _ = open_device(args.url)
        device.open_url(feed.page_url())
        for _ in range(args.rounds):
            rows["screenshot"].append(timed(device.screenshot))
            rows["page source (HTML)"].append(timed(device.page_source))
            rows["ui_tree (DOM script)"].append(timed(device.ui_tree))
            rows["observe"].append(timed(device.observe))
            rows["tap by text (dialog opens)"].append(timed(lambda: device.tap("Delete")))
            device.back()
        for delay in (1500, 60_000):
            for _ in range(max(1, args.rounds // 5)):
                device.open_url(feed.page_url(delay_ms=delay, refresh_ms=500))
                session = TaskSession(device, name="bench")
                session.goal("delete Alice's post")
                session.perform("open", lambda: device.tap("Delete"), expect=visible("Delete post?"))
                start = time.perf_counter()
                record = session.perform("confirm", lambda: device.tap(id="confirm_delete"),
                                         expect=gone("Alice", exact=True), idempotent=False)
                rows[f"confirm step, delay {delay / 1000:g} s"].append((time.perf_counter() - start) * 1000)
                print(f"delay {delay} ms: outcome {record.outcome}, stages {[a.stage for a in record.attempts]}, "
                      f"actions {record.actions}")
        device.close()
    for name, samples in rows.items():
        print(f"{name:30s} {median(samples)}")


if __name__ == "__main__":
    main()
