"""Latency profiles (`guistate:latency`): the delay each request got is read from the server's
request log, never from wall-clock time; the phones run on a manual clock, which the delay
advances, so these tests sleep for nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.webdriver.common.appiumby import AppiumBy
from selenium.common.exceptions import SessionNotCreatedException

from pytest_guistate.devices.sim import SimServer
from pytest_guistate.devices.sim.latency import PROFILES, LatencyError, parse_profile
from pytest_guistate.devices.sim.phone import ManualClock, Phone

CLOCKS: list[ManualClock] = []


def _manual_phone(caps: dict[str, Any]) -> Phone:
    clock = ManualClock()
    CLOCKS.append(clock)
    return Phone.from_capabilities(caps, clock=clock)


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    with SimServer(phone_factory=_manual_phone) as srv:
        yield srv


def _open(server: SimServer, latency: Any = None, seed: int = 0) -> webdriver.Remote:
    options = UiAutomator2Options()
    options.set_capability("appium:appPackage", "com.guistate.feed")
    options.set_capability("guistate:seed", seed)
    if latency is not None:
        options.set_capability("guistate:latency", latency)
    return webdriver.Remote(server.url, options=options)


def _delays(server: SimServer, drv: webdriver.Remote) -> dict[str, list[float]]:
    """Applied delay per endpoint kind, for this session's requests (and its creation)."""
    out: dict[str, list[float]] = {}
    for rec in server.request_log():
        if rec.path == "/session" and rec.method == "POST":
            kind = "session"
        elif drv.session_id not in rec.path:
            continue
        else:
            kind = rec.path.rsplit("/", 1)[-1]
        out.setdefault(kind, []).append(rec.delay_ms)
    return out


def _exercise(drv: webdriver.Remote) -> None:
    for _ in range(3):
        drv.get_screenshot_as_base64()
        _ = drv.page_source
        drv.find_element(AppiumBy.ACCESSIBILITY_ID, "Delete post by Carol")


def test_default_adds_nothing(server: SimServer) -> None:
    drv = _open(server)
    try:
        _exercise(drv)
        delays = _delays(server, drv)
    finally:
        drv.quit()
    assert delays["source"] and delays["screenshot"] and delays["element"]
    assert all(d == 0.0 for values in delays.values() for d in values)


def test_xcuitest_profile_delays_what_it_says_on_the_sim_clock(server: SimServer) -> None:
    drv = _open(server, "xcuitest")
    clock = CLOCKS[-1]
    started = clock()
    try:
        _exercise(drv)
        delays = _delays(server, drv)
    finally:
        drv.quit()
    costs = PROFILES["xcuitest"]
    for kind, key in (("source", "source"), ("screenshot", "screenshot"), ("element", "find")):
        mean, jitter = costs[key]
        assert len(delays[kind]) == 3
        assert all(mean - jitter <= d <= mean + jitter for d in delays[kind]), (kind, delays[kind])
    session = [d for d in delays["session"] if d > 0]
    # XCUITest: a session start dwarfs a page source, which costs more than a screenshot or a find
    assert min(session) > max(delays["source"])
    assert min(delays["source"]) > max(delays["screenshot"]) and min(delays["source"]) > max(delays["element"])
    assert len(set(delays["source"])) == 3  # jitter: not one constant
    # the delay ran on the phone's (manual) clock: it moved by what the log says, nobody slept
    applied = sum(delays["source"] + delays["screenshot"] + delays["element"])
    assert clock() - started >= applied / 1000.0 - 1e-6


def test_same_seed_same_delays_other_seed_other_delays(server: SimServer) -> None:
    runs = []
    for seed in (7, 7, 8):
        drv = _open(server, "uiautomator2", seed=seed)
        try:
            _exercise(drv)
            runs.append(_delays(server, drv)["source"])
        finally:
            drv.quit()
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_custom_dict_overrides_per_command(server: SimServer) -> None:
    drv = _open(server, {"source": [5000, 0], "screenshot": 20})
    try:
        _exercise(drv)
        delays = _delays(server, drv)
    finally:
        drv.quit()
    assert delays["source"] == [5000.0] * 3
    assert delays["screenshot"] == [20.0] * 3
    assert delays["element"] == [0.0] * 3  # not listed, and no base profile: free


def test_custom_dict_on_a_base_profile() -> None:
    profile = parse_profile({"base": "uiautomator2", "source": [2000, 100]})
    assert profile.costs["source"] == (2000.0, 100.0)
    assert profile.costs["screenshot"] == PROFILES["uiautomator2"]["screenshot"]


@pytest.mark.parametrize(("value", "named"), [
    ({"sourec": [100, 10]}, "'sourec'"),
    ({"source": [100, 500]}, "'source'"),
    ({"find": "fast"}, "'find'"),
    ("espresso", "'espresso'"),
    ({"base": "appium", "find": 1}, "'appium'"),
])
def test_bad_profile_refuses_the_session_naming_the_key(server: SimServer, value: Any, named: str) -> None:
    with pytest.raises(LatencyError, match=named):
        parse_profile(value)
    before = set(server.session_ids())
    with pytest.raises(SessionNotCreatedException, match=named):
        _open(server, value)
    assert set(server.session_ids()) == before  # the refused session is not left open


def test_app_starts_and_the_sims_reset_cost_an_app_launch(server: SimServer) -> None:
    """A reused session's reset is not free on a real driver: `mobile: guistateReset` (the sim's
    terminate + relaunch) and the app `mobile:` scripts cost the profile's `app`; other scripts `execute`."""
    drv = _open(server, {"app": 777, "execute": 11})
    try:
        drv.execute_script("mobile: clearApp", {"appId": "com.guistate.feed"})
        drv.execute_script("mobile: activateApp", {"appId": "com.guistate.feed"})
        drv.execute_script("mobile: guistateReset", {})
        drv.execute_script("mobile: terminateApp", {"appId": "com.guistate.feed"})
        delays = _delays(server, drv)
    finally:
        drv.quit()
    assert delays["sync"] == [11.0, 777.0, 777.0, 777.0]


@pytest.mark.parametrize("profile", ["uiautomator2", "xcuitest"])
def test_an_xpath_find_costs_more_than_an_id_find(server: SimServer, profile: str) -> None:
    """XCUITest snapshots the whole hierarchy for XPath (its docs: a page source's price);
    UiAutomator2 dumps the window first (above an id find). A custom profile without `xpath`
    prices it like `find`."""
    drv = _open(server, profile)
    try:
        for _ in range(3):
            drv.find_element(AppiumBy.ACCESSIBILITY_ID, "Delete post by Carol")
            drv.find_elements(AppiumBy.XPATH, "//*[@text='Carol']")
        by_using = [rec.delay_ms for rec in server.request_log() if drv.session_id in rec.path
                    and rec.path.endswith(("/element", "/elements"))]
    finally:
        drv.quit()
    ids, xpaths = by_using[0::2], by_using[1::2]
    for kind, delays in (("find", ids), ("xpath", xpaths)):
        mean, jitter = PROFILES[profile][kind]
        assert all(mean - jitter <= d <= mean + jitter for d in delays), (kind, delays)
    assert PROFILES[profile]["xpath"][0] > PROFILES[profile]["find"][0] and sum(xpaths) > sum(ids)
    if profile == "xcuitest":
        assert PROFILES[profile]["xpath"] == PROFILES[profile]["source"]
    custom = parse_profile({"find": [100, 0]})
    assert custom.delay_ms("xpath", 0, 0) == custom.delay_ms("find", 0, 0) == 100.0
