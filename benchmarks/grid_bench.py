"""What a Selenium Grid 4 hub adds per session and per step, against the Appium server direct (issue 35).

    HUB=$(bash .ci/grid.sh start)
    python benchmarks/grid_bench.py --hub "$HUB" --direct http://127.0.0.1:4751 [--sessions 6] [--steps 20]

Both routes reach the same kind of Appium server (chromium driver, headless Chromium) in the same
run, interleaved (direct, hub, direct, hub, ...) so load on the machine hits both alike. A session
is start + quit; a step is what the plugin does to observe a screen (screenshot + page source, the
Device's own calls), once with the W3C screenshot (every call crosses the hub) and once with the
Device's default route (on Chromium the screenshot goes over DevTools to the browser's debugger
address, which bypasses the hub when the browser is reachable from here; the page source still
crosses it). Prints medians in ms and the hub's overhead (median hub - median direct).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.capabilities import chromium
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.driver_ports import with_driver_ports
from pytest_guistate.devices.web_feed import FeedServer


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def open_device(url: str) -> tuple[Device, float]:
    caps = with_driver_ports(url, chromium())
    start = time.perf_counter()
    driver = webdriver.Remote(url, options=AppiumOptions().load_capabilities(caps))
    return Device(driver, url=url), (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub", required=True, help="the Grid hub URL")
    parser.add_argument("--direct", required=True, help="an Appium server behind the hub, asked directly")
    parser.add_argument("--sessions", type=int, default=6, help="sessions per route (start + quit)")
    parser.add_argument("--steps", type=int, default=20, help="steps per route (screenshot + page source)")
    args = parser.parse_args()
    routes = {"direct": args.direct, "hub": args.hub}
    start: dict[str, list[float]] = {name: [] for name in routes}
    quit_: dict[str, list[float]] = {name: [] for name in routes}
    step: dict[str, list[float]] = {name: [] for name in routes}
    step_default: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(args.sessions):
        for name, url in routes.items():
            device, took = open_device(url)
            start[name].append(took)
            quit_[name].append(timed(device.close))
    with FeedServer() as feed:
        devices = {name: open_device(url)[0] for name, url in routes.items()}
        try:
            for device in devices.values():
                device.open_url(feed.page_url())
            for _ in range(args.steps):
                for name, device in devices.items():
                    device.devtools_screenshots = False
                    step[name].append(timed(lambda d=device: (d.screenshot(), d.page_source())))
                    device.devtools_screenshots = True
                    step_default[name].append(timed(lambda d=device: (d.screenshot(), d.page_source())))
        finally:
            for device in devices.values():
                device.close()

    def row(label: str, samples: dict[str, list[float]]) -> str:
        direct, hub = statistics.median(samples["direct"]), statistics.median(samples["hub"])
        return (f"{label:<32}{direct:9.1f} ms{hub:9.1f} ms{hub - direct:+9.1f} ms   x{hub / direct:.2f}   "
                f"(n={len(samples['hub'])} each)")

    print(f"Grid hub {args.hub} against Appium direct {args.direct}, medians, interleaved in one run")
    print(f"{'':<32}{'direct':>12}{'hub':>12}{'overhead':>12}")
    print(row("session start", start))
    print(row("session quit", quit_))
    print(row("session start + quit", {k: [a + b for a, b in zip(start[k], quit_[k], strict=True)] for k in routes}))
    print(row("step, W3C screenshot + source", step))
    print(row("step, default route", step_default))


if __name__ == "__main__":
    main()
