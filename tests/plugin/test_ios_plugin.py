"""The whole plugin on the sim's iOS persona (`--guistate-platform=ios`, issue 11): stale Feed,
password redaction, crops snapped to cells, and the actor's element list."""

from __future__ import annotations

import json
from collections.abc import Callable

import cv2
import numpy as np
import pytest
from appium import webdriver
from appium.options.common import AppiumOptions

from pytest_guistate.devices.device import Device
from pytest_guistate.devices.sim import SimServer
from pytest_guistate.llm.prompt import ImageScale, element_lines

InnerRun = Callable[..., pytest.RunResult]

STALE_FEED = """
import pytest
from pytest_guistate import gone


@pytest.mark.guistate(app="com.guistate.feed")
@pytest.mark.parametrize("delay", [0, 1.5, 3])
def test_delete_once(device, guistate, delay):
    assert device.platform == "ios" and device.scale == 3.0
    device.set_faults(refresh_delay=delay)
    guistate.goal("Delete Carol's post", plan=[("post gone", gone("Carol"))])
    with guistate.step("open the dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("confirm", expect=gone("Carol"), idempotent=False) as confirm:
        device.tap(id="Delete")  # an iOS alert's buttons are named by their titles
    guistate.milestone("post gone")
    deleted = [e["author"] for e in device.action_log() if e["action"] == "delete_post"]
    assert deleted == ["Carol"], deleted
    assert confirm.outcome in (("ok",) if delay == 0 else ("settled", "refreshed")), confirm.outcome
"""


def test_stale_feed_deletes_exactly_once_on_ios(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_feed=STALE_FEED)
    pytester.makeini("[pytest]\nguistate_settle_timeout = 2\n")
    result = inner("--guistate=standard", "--guistate-platform=ios", "--guistate-memory=off",
                   "--guistate-summary=summary.json")
    result.assert_outcomes(passed=3)
    summary = json.loads((pytester.path / "summary.json").read_text(encoding="utf-8"))
    tests = {t["nodeid"].rpartition("[")[2].rstrip("]"): t for t in summary["tests"]}
    assert set(tests) == {"0", "1.5", "3"}
    assert tests["3"]["stale_episodes"] >= 1 and tests["1.5"]["stale_episodes"] >= 1
    assert all(t["retries"] == 0 for t in tests.values()), "a non-idempotent confirm is never repeated"


LOGIN_THEN_FAIL = """
import pytest


@pytest.mark.guistate(app="com.guistate.settings")
def test_login_then_fail(device, guistate):
    guistate.goal("Sign in", plan=[("signed in", "Signed in as qa@example.com")])
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")
    assert device.exists(text="correct-horse"), "correct-horse is not shown"
"""


def test_a_password_typed_on_ios_reaches_no_artifact(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_login=LOGIN_THEN_FAIL)
    result = inner("--guistate=full", "--guistate-retain=on", "--guistate-artifacts=art", "--guistate-platform=ios",
                   "--guistate-memory=off", "--guistate-summary=art/summary.json")
    result.assert_outcomes(failed=1)
    files = sorted(p for p in (pytester.path / "art").rglob("*") if p.is_file())
    journal = next(p for p in files if p.name == "journal.jsonl").read_text(encoding="utf-8")
    assert "type the password" in journal and "qa@example.com" in journal
    assert any(p.parent.name == "frames" for p in files)
    leaks = [p.name for p in files if b"correct-horse" in p.read_bytes()]
    assert leaks == [], f"the password reached saved artifacts: {leaks}"


SELECT_THEN_FAIL = """
import pytest


@pytest.mark.guistate(app="com.guistate.gallery")
def test_select_then_fail(device, guistate):
    guistate.goal("Select the beach photo", plan=["selected"])
    with guistate.step("select Beach", expect="1 selected"):
        device.tap(desc="Beach")
    assert False, "fails on purpose"
"""


def test_a_failing_report_shows_crops_snapped_to_cells(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gallery=SELECT_THEN_FAIL)
    result = inner("--guistate=standard", "--guistate-artifacts=art", "--guistate-platform=ios",
                   "--guistate-memory=off")
    result.assert_outcomes(failed=1)
    folder = next(p for p in (pytester.path / "art").iterdir() if p.is_dir())  # beside the run's index.html
    steps = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    step = next(e["record"] for e in steps if e.get("type") == "step")
    cell = next(r for r in step["regions"] if r["container"].startswith("Beach "))
    left, top, right, bottom = cell["box"]
    assert (right - left, bottom - top) < (1179 // 2, 2556 // 2), "snapped to the photo's cell, not the window"
    assert all(r["box"] != [0, 0, 1179, 2556] for r in step["regions"])
    sizes = []
    for crop in sorted((folder / "crops").iterdir()):
        image = cv2.imdecode(np.frombuffer(crop.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
        sizes.append((image.shape[1], image.shape[0]))
    assert any(abs(w - (right - left)) <= 20 and abs(h - (bottom - top)) <= 20 for w, h in sizes), sizes
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "select Beach" in html


def test_the_actors_element_list_has_the_buttons_and_cells() -> None:
    caps = {"platformName": "iOS", "appium:automationName": "XCUITest", "appium:bundleId": "com.guistate.feed",
            "guistate:clock": "frozen"}
    with SimServer() as server:
        driver = webdriver.Remote(server.url, options=AppiumOptions().load_capabilities(caps))
        try:
            device = Device(driver, url=server.url, is_sim=True)
            tree = device.ui_tree()
            rows = element_lines(tree, ImageScale.for_frame(*device.size, 3))
        finally:
            driver.quit()
    tappable = [r for r in rows if r.get("tap")]
    kinds = {r["kind"].removeprefix("XCUIElementType") for r in tappable}
    assert {"Button", "Cell"} <= kinds, kinds
    assert any(r.get("text") == "Delete post by Carol" for r in tappable)
    assert any(r["kind"].endswith("Cell") and str(r.get("text", "")).startswith("Carol") for r in tappable)
    assert any(r.get("scroll") for r in rows), "the feed's table is scrollable"
    assert max(r["at"][2] for r in rows) <= 393, "bounds in the shown image (1179 px / 3), not points or pixels"
