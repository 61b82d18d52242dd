"""What the memory costs per located tap (issue 12, "tree on demand"): nothing of its own.

The memory learns an element's look from the screen the step already knows (its before-screen,
still current) and no longer takes a screenshot and a page source per tap. Driven through the stock
Appium client against the simulated phone; every count comes from the server's request log and the
device's own page-source counter, with the memory off as the baseline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.android import UiAutomator2Options
from appium.options.ios import XCUITestOptions

from pytest_guistate.core import frame as frame_module
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.tiers import TierPolicy
from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.memory import Healer, MemoryStore
from pytest_guistate.memory.bridge import MemoryBridge
from pytest_guistate.memory.store import NewPatch

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
    requests: list[str] = field(default_factory=list)  # the session's request paths, its id cut off
    uses: list[int] = field(default_factory=list)  # each kept look's access count, in `looks` order


def run(server: SimServer, tmp: Path, tier: str, flow: Callable[[Device, TaskSession], None], *, memory: bool,
        app: str = FEED, ios: bool = False) -> Run:
    options = XCUITestOptions() if ios else UiAutomator2Options()
    caps = {"appium:bundleId" if ios else "appium:appPackage": app, "guistate:clock": "frozen", "guistate:seed": 7}
    for key, value in caps.items():
        options.set_capability(key, value)
    device = Device(webdriver.Remote(server.url, options=options), url=server.url, is_sim=True)
    store = MemoryStore(tmp / f"{tier}-{memory}-{flow.__name__}{'-ios' if ios else ''}.sqlite")
    try:
        session = TaskSession(device, policy=TierPolicy.for_tier(tier), name=flow.__name__)
        bridge = MemoryBridge(Healer(store), session, flow.__name__)
        if memory:
            device.memory = bridge
            session.journal.listeners.insert(0, bridge)
        session.goal("open and cancel the delete dialog")
        flow(device, session)
        session.finish("passed")  # as the plugin does: a last light step with no check is recorded (learnt) here
        sid = device.driver.session_id
        paths = [r.path for r in server.request_log() if r.path.startswith(f"/session/{sid}/")]
        kept = sorted(store.patches(), key=lambda p: (p.function, p.app, p.png))
        looks = [(p.function, p.app, p.png) for p in kept]
        return Run(sum(p.endswith("/screenshot") for p in paths), sum(p.endswith("/source") for p in paths),
                   device.page_source_calls, looks, bridge.unlearned,
                   [p.split("/", 3)[3] for p in paths], [p.access_count for p in kept])
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
    # the e-mail field is learnt before anything secret was typed (a typed field heals like a tapped one); the
    # password field and everything after it, tree-less, is not
    assert [(f, a) for f, a, _ in light.looks] == [("locator:id=username", SETTINGS)] and light.sources == 0
    assert light.unlearned == ["id=password: may show a secret and its screen's tree is not read",
                               "id=login: may show a secret and its screen's tree is not read"]
    standard = run(server, tmp_path, "standard", log_in, memory=True, app=SETTINGS)
    # the tree shows the rest is safe; the password field's own pixels are never stored
    assert sorted((f, a) for f, a, _ in standard.looks) == [("locator:id=login", SETTINGS),
                                                            ("locator:id=username", SETTINGS)]


def _shape(paths: list[str]) -> list[str]:
    """The request paths with element ids cut off (each session's ids are its own)."""
    return [re.sub(r"^element/[^/]+", "element/*", p) for p in paths]


def _asks(paths: list[str]) -> list[str]:
    """The requests that ask an element about itself (its rect, its attributes), ids cut off."""
    return sorted("element/" + "/".join(p.split("/")[2:]) for p in paths
                  if p.startswith("element/") and not p.endswith("/click"))


def test_a_light_step_whose_look_is_kept_adds_no_request_and_refreshes_it(server: SimServer, tmp_path: Path) -> None:
    """Issue 38: learning cost three requests per located tap at light (the element's rect, app
    and password attribute), so the default (memory on) was 1.14x a bare client. A look the
    memory keeps is refreshed from the before-frame after the step passed: no request at all."""
    off = run(server, tmp_path, "light", open_and_cancel, memory=False)
    first = run(server, tmp_path, "light", open_and_cancel, memory=True)  # a new memory: both looks learnt
    assert _asks(off.requests) == []
    assert _asks(first.requests) == ["element/attribute/package", "element/attribute/package",
                                     "element/attribute/password", "element/attribute/password",
                                     "element/rect", "element/rect"]
    again = run(server, tmp_path, "light", open_and_cancel, memory=True)  # the same memory file
    assert _shape(again.requests) == _shape(off.requests)  # request for request what the run without memory sends
    assert again.looks == first.looks and again.unlearned == []
    assert [u - f for u, f in zip(again.uses, first.uses, strict=True)] == [1, 1]  # each look refreshed once


def test_a_kept_look_the_light_step_does_not_show_is_learnt_again_from_the_element(
        server: SimServer, tmp_path: Path) -> None:
    """A kept look not found in the before-frame (the app changed it) is not refreshed, and its
    next tap in the test asks the element again instead of trusting the memory."""
    first = run(server, tmp_path, "light", open_twice_and_cancel, memory=True)
    assert first.unlearned == [] and first.uses == [2, 2]  # learnt from the element, then refreshed
    store = MemoryStore(tmp_path / "light-True-open_twice_and_cancel.sqlite")  # the file `run` uses
    try:
        [dialog] = [p for p in store.patches() if p.function == "locator:id=android:id/button2"]
        store.delete([dialog.id])
        flipped = NewPatch(function=dialog.function, app=dialog.app, png=_inverted(dialog.png), size=dialog.size,
                           screen=dialog.screen, app_version="", description="", density=None,
                           locator=dialog.locator, test="", step="", attrs={})
        store.add_patch(flipped)
    finally:
        store.close()
    twice = run(server, tmp_path, "light", open_twice_and_cancel, memory=True)
    assert len(twice.unlearned) == 1 and "not in the before-frame" in twice.unlearned[0]
    # the Cancel button's second tap asks the element (and learns its real look back); the open taps ask nothing
    assert _asks(twice.requests) == ["element/attribute/package", "element/attribute/password", "element/rect"]
    assert sorted(f for f, _, _ in twice.looks) == sorted([*(f for f, _, _ in first.looks),
                                                          "locator:id=android:id/button2"])


def open_twice_and_cancel(device: Device, session: TaskSession) -> None:
    for _ in range(2):
        open_and_cancel(device, session)


def _inverted(png: bytes) -> bytes:
    pixels = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    return cv2.imencode(".png", 255 - pixels)[1].tobytes()


def test_a_step_that_read_its_tree_takes_the_box_from_it_and_asks_the_element_nothing(
        server: SimServer, tmp_path: Path) -> None:
    """Standard reads every before-tree: the tapped element's box is the one node with its
    content-desc / resource id there, so learning adds no `rect` request (it added one a tap)."""
    off = run(server, tmp_path, "standard", open_and_cancel, memory=False)
    on = run(server, tmp_path, "standard", open_and_cancel, memory=True)
    assert _asks(on.requests) == [] and _shape(on.requests) == _shape(off.requests)
    light = run(server, tmp_path, "light", open_and_cancel, memory=True)  # a new memory: boxes from `rect`
    assert on.looks == light.looks and len(on.looks) == 2  # the same boxes, the same pixels


def test_a_light_step_that_can_learn_nothing_asks_the_element_nothing(server: SimServer, tmp_path: Path) -> None:
    """After a typed password a tree-less light step learns nothing (its screen may show the secret):
    the element is asked whether it is private, and not for its rect, which nothing would use."""
    off = run(server, tmp_path, "light", log_in, memory=False, app=SETTINGS)
    light = run(server, tmp_path, "light", log_in, memory=True, app=SETTINGS)
    assert light.unlearned == ["id=password: may show a secret and its screen's tree is not read",
                               "id=login: may show a secret and its screen's tree is not read"]
    extra = [p for p in _asks(light.requests) if p not in _asks(off.requests)]
    # each element's app; whether each typed field is a password (asked to learn it, and as the device types);
    # one rect: the e-mail field's, whose look is learnt (before the password was typed). The password field and
    # the tap after it are asked nothing more: nothing would use their rect
    assert extra == [*["element/attribute/package"] * 3, *["element/attribute/password"] * 4, "element/rect"]


def ios_open_and_cancel(device: Device, session: TaskSession) -> None:
    session.perform("open the dialog", lambda: device.tap(desc="Delete post by Bob"))
    session.perform("cancel", lambda: device.tap(desc="Cancel"))


def test_on_ios_too_a_read_tree_gives_the_box_and_a_tree_less_light_step_asks_nothing(
        server: SimServer, tmp_path: Path) -> None:
    """The iOS persona: at standard the box comes from the before-tree (its name / label, as the
    predicate compared them); at light nothing can be learnt without a tree (no per-element app),
    so nothing is asked (the rect was asked and thrown away)."""
    off = run(server, tmp_path, "standard", ios_open_and_cancel, memory=False, ios=True)
    standard = run(server, tmp_path, "standard", ios_open_and_cancel, memory=True, ios=True)
    assert _asks(standard.requests) == [] and _shape(standard.requests) == _shape(off.requests)
    assert [f for f, _, _ in standard.looks] == ["locator:desc=Cancel", "locator:desc=Delete post by Bob"]
    light_off = run(server, tmp_path, "light", ios_open_and_cancel, memory=False, ios=True)
    light = run(server, tmp_path, "light", ios_open_and_cancel, memory=True, ios=True)
    assert _shape(light.requests) == _shape(light_off.requests) and light.looks == []
    assert len(light.unlearned) == 2 and all("names no app" in why for why in light.unlearned)


def test_a_standard_step_whose_look_is_kept_refreshes_it_without_a_full_size_decode(
        server: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42: at standard the tree gives the tapped element's box for free, and the memory cut its look
    from the before-frame decoded in full (~14 ms of CPU a step beside the test, competing with it on a
    2-core machine) even when it already kept that look. A kept look is now found again in the half-size
    copy the oracle decoded, as at light: refreshed, and its frame never decoded in full for it."""
    first = run(server, tmp_path, "standard", open_and_cancel, memory=True)  # a new memory: both looks learnt
    asked: list[str] = []  # full-size decodes asked for the memory: queued ahead, or made while learning
    prefetch_full, decode, learn = frame_module.Frame.prefetch_full, frame_module._imdecode, MemoryBridge._learn
    learning: list[bool] = []

    def queued(self: frame_module.Frame) -> None:
        asked.append("prefetch_full")
        prefetch_full(self)

    def counted(png: bytes) -> Any:
        if learning:
            asked.append("decoded while learning")
        return decode(png)

    def learnt(self: MemoryBridge, item: Any, step_name: str) -> None:
        learning.append(True)
        try:
            learn(self, item, step_name)
        finally:
            learning.pop()

    monkeypatch.setattr(frame_module.Frame, "prefetch_full", queued)
    monkeypatch.setattr(frame_module, "_imdecode", counted)
    monkeypatch.setattr(MemoryBridge, "_learn", learnt)
    again = run(server, tmp_path, "standard", open_and_cancel, memory=True)  # the same memory file
    assert again.looks == first.looks and again.unlearned == []
    assert [u - f for u, f in zip(again.uses, first.uses, strict=True)] == [1, 1]  # each look refreshed once
    assert asked == [], asked
