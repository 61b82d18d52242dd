"""What the memory costs per located tap (issue 12, "tree on demand"): nothing of its own.

The memory learns an element's look from the screen the step already knows (its before-screen,
still current) and no longer takes a screenshot and a page source per tap. Driven through the stock
Appium client against the simulated phone; every count comes from the server's request log and the
device's own page-source counter, with the memory off as the baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options

from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.memory import Healer, MemoryStore
from pytest_guistate.memory.bridge import MemoryBridge

FEED, SETTINGS = "com.guistate.feed", "com.guistate.settings"
OPEN, CANCEL, CONFIRM = {"desc": "Delete post by Bob"}, {"id": "android:id/button2"}, {"id": "android:id/button1"}


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    with SimServer() as srv:
        yield srv


@dataclass
class Run:
    screenshots: int
    sources: int  # page sources in the server's log
    page_source_calls: int  # the device's own counter
    looks: list[tuple[str, str, bytes]]  # (function, app, patch PNG) learnt
    unlearned: list[str]


def run(server: SimServer, tmp: Path, tier: str, flow: Callable[[Device, TaskSession], None], *, memory: bool,
        app: str = FEED) -> Run:
    options = UiAutomator2Options()
    for key, value in {"appium:appPackage": app, "guistate:clock": "frozen", "guistate:seed": 7}.items():
        options.set_capability(key, value)
    device = Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True)
    store = MemoryStore(tmp / f"{tier}-{memory}-{flow.__name__}.sqlite")
    try:
        session = TaskSession(device, policy=TierPolicy.for_tier(tier), name=flow.__name__)
        bridge = MemoryBridge(Healer(store), session, flow.__name__)
        if memory:
            device.memory = bridge
            session.journal.listeners.insert(0, bridge)
        session.goal("open and cancel the delete dialog")
        flow(device, session)
        sid = device.driver.session_id
        paths = [r.path for r in server.request_log() if r.path.startswith(f"/session/{sid}/")]
        looks = sorted((p.function, p.app, p.png) for p in store.patches())
        return Run(sum(p.endswith("/screenshot") for p in paths), sum(p.endswith("/source") for p in paths),
                   device.page_source_calls, looks, bridge.unlearned)
    finally:
        device.close()
        store.close()


def open_and_cancel(device: Device, session: TaskSession) -> None:
    session.perform("open the dialog", lambda: device.tap(**OPEN))
    session.perform("cancel", lambda: device.tap(**CANCEL))


def open_and_confirm(device: Device, session: TaskSession) -> None:
    session.perform("open the dialog", lambda: device.tap(**OPEN))
    session.perform("delete", lambda: device.tap(**CONFIRM))


def both_taps_in_one_step(device: Device, session: TaskSession) -> None:
    """The second tap comes after an input of the same step: no screen of it is known."""
    with session.step("delete at once"):
        device.tap(**OPEN)
        device.tap(**CONFIRM)


def log_in(device: Device, session: TaskSession) -> None:
    session.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"))
    session.perform("type the password", lambda: device.type("correct-horse", id="password"))
    session.perform("tap Log in", lambda: device.tap(id="login"))


def test_a_light_test_with_memory_on_costs_no_page_source_and_no_screenshot(server: SimServer,
                                                                           tmp_path: Path) -> None:
    off = run(server, tmp_path, "light", open_and_cancel, memory=False)
    on = run(server, tmp_path, "light", open_and_cancel, memory=True)
    assert on.sources == on.page_source_calls == off.sources == 0  # before issue 12's fix: one per tap
    assert on.screenshots == off.screenshots  # before: one more per tap
    assert [(f, a) for f, a, _ in on.looks] == [("locator:desc=Delete post by Bob", FEED),
                                                ("locator:id=android:id/button2", FEED)]
    assert on.unlearned == []


def test_the_looks_learnt_at_light_are_those_learnt_at_standard(server: SimServer, tmp_path: Path) -> None:
    light = run(server, tmp_path, "light", open_and_cancel, memory=True)
    standard = run(server, tmp_path, "standard", open_and_cancel, memory=True)
    standard_off = run(server, tmp_path, "standard", open_and_cancel, memory=False)
    assert light.looks == standard.looks and len(standard.looks) == 2  # the same pixels, byte for byte
    # standard reads each before-screen's tree anyway: the memory reuses it and adds no request
    assert (standard.screenshots, standard.sources) == (standard_off.screenshots, standard_off.sources)


def test_a_tap_after_an_input_learns_from_a_fresh_screen_only_where_the_step_reads_trees(
        server: SimServer, tmp_path: Path) -> None:
    light = run(server, tmp_path, "light", both_taps_in_one_step, memory=True)
    assert [f for f, _, _ in light.looks] == ["locator:desc=Delete post by Bob"]  # from the before-screen
    assert light.sources == 0 and len(light.unlearned) == 1 and "reads no trees" in light.unlearned[0]
    standard = run(server, tmp_path, "standard", both_taps_in_one_step, memory=True)
    standard_off = run(server, tmp_path, "standard", both_taps_in_one_step, memory=False)
    assert [f for f, _, _ in standard.looks] == ["locator:desc=Delete post by Bob", "locator:id=android:id/button1"]
    assert standard.screenshots == standard_off.screenshots + 1  # the dialog, observed for the second tap
    assert standard.sources == standard_off.sources + 1
    two_steps = run(server, tmp_path, "standard", open_and_confirm, memory=True)
    assert standard.looks == two_steps.looks  # the fresh screen showed the dialog as its own step would


def test_after_a_typed_password_a_light_step_learns_nothing_it_cannot_check(server: SimServer,
                                                                          tmp_path: Path) -> None:
    light = run(server, tmp_path, "light", log_in, memory=True, app=SETTINGS)
    assert light.looks == [] and light.sources == 0
    assert light.unlearned == ["id=login: may show a secret and its screen's tree is not read"]
    standard = run(server, tmp_path, "standard", log_in, memory=True, app=SETTINGS)
    assert [(f, a) for f, a, _ in standard.looks] == [("locator:id=login", SETTINGS)]  # the tree shows it is safe
