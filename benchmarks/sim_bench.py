"""Latency of the simulated phone's WebDriver server through the real Appium client.

Run: `python benchmarks/sim_bench.py [--rounds N] [--all-cores]`. Pins itself to one core by
default (client, server and phone share it, as on a loaded CI runner) and prints per command the
median and p90 wall time, the ratio to a bare HTTP round trip (`GET /status`) measured in the same
run, and the server-side handling time from the server's own request log. Compare ratios, not
absolute times: noise between runs on this machine is 20-40% (shared/MEASURED.md).
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable

from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.webdriver.common.appiumby import AppiumBy

from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.phone import Phone

FEED = "com.guistate.feed"


def measure(fn: Callable[[], object], rounds: int, setup: Callable[[], object] | None = None) -> list[float]:
    """Wall times in ms of `fn`; `setup` runs untimed before each call."""
    times = []
    for _ in range(rounds):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) >= 10 else max(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--all-cores", action="store_true", help="do not pin to one core")
    args = parser.parse_args()
    if not args.all_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    with SimServer(request_log_size=100_000) as server:
        options = UiAutomator2Options()
        options.set_capability("appium:appPackage", FEED)
        options.set_capability("guistate:clock", "frozen")  # identical frames unless the app changes
        drv = webdriver.Remote(server.url, options=options)
        conn = http.client.HTTPConnection("127.0.0.1", server.port)

        def bare_status() -> None:
            conn.request("GET", "/status")
            conn.getresponse().read()

        def open_dialog() -> None:
            drv.execute_script("mobile: clickGesture", {"elementId": delete.id})

        def close_dialog() -> None:
            drv.back()

        delete = drv.find_elements(AppiumBy.ID, "delete")[0]
        toggles = iter(range(10**9))

        def change_screen() -> None:  # untimed: forces the next screenshot to be a fresh render
            (open_dialog if next(toggles) % 2 == 0 else close_dialog)()

        dialog_open = [False]

        def click() -> None:
            delete.click()
            dialog_open[0] = True

        def reset() -> None:  # untimed: close the dialog the previous click opened
            if dialog_open[0]:
                drv.back()
                dialog_open[0] = False

        rows: dict[str, list[float]] = {}
        rounds = args.rounds
        rows["GET /status (raw http.client)"] = measure(bare_status, rounds)
        rows["GET /status (client get_status)"] = measure(drv.get_status, rounds)
        rows["screenshot, unchanged frame"] = measure(drv.get_screenshot_as_png, rounds)
        rows["screenshot, fresh render"] = measure(drv.get_screenshot_as_png, rounds, setup=change_screen)
        if next(toggles) % 2 == 1:
            close_dialog()
        rows["page source"] = measure(lambda: drv.page_source, rounds)
        rows["find by xpath"] = measure(lambda: drv.find_element(AppiumBy.XPATH, "//*[@text='Delete']"), rounds)
        rows["find by id"] = measure(lambda: drv.find_element(AppiumBy.ID, "delete"), rounds)
        rows["element click (opens dialog)"] = measure(click, rounds, setup=reset)
        reset()

        phone = Phone.from_capabilities({"appium:appPackage": FEED, "guistate:clock": "frozen"})
        flip = iter(range(10**9))

        def phone_change() -> None:
            node = phone.find_xpath(f"//*[@resource-id='{FEED}:id/delete']")[0]
            if next(flip) % 2 == 0:
                phone.tap(*node.bounds.center)
            else:
                phone.back()

        rows["(phone only) screenshot_png, fresh render"] = measure(phone.screenshot_png, rounds, setup=phone_change)
        rows["(phone only) page_source"] = measure(phone.page_source, rounds)

        server_ms: dict[str, list[float]] = defaultdict(list)
        for record in server.request_log():
            server_ms[f"{record.method} {record.path.split('/')[-1] or record.path}"].append(record.ms)
        drv.quit()
        conn.close()

    base = statistics.median(rows["GET /status (raw http.client)"])
    print(f"sim WebDriver server, 1080x2400, {rounds} rounds, {'all cores' if args.all_cores else 'one core'}")
    print(f"{'command':45} {'median ms':>10} {'p90 ms':>8} {'x /status':>10}")
    for name, values in rows.items():
        median = statistics.median(values)
        print(f"{name:45} {median:10.2f} {p90(values):8.2f} {median / base:10.1f}")
    print("\nserver-side handling (request log, median ms):")
    for name in ("GET screenshot", "GET source", "POST element", "POST click", "GET status"):
        if server_ms.get(name):
            print(f"  {name:20} {statistics.median(server_ms[name]):8.2f}  (n={len(server_ms[name])})")


if __name__ == "__main__":
    main()
