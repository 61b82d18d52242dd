"""Tree on demand changes nothing but the number of page sources (issue 12).

(At light, one thing more by design: a step that no check reads the trees of fetches none, so
its packages stay unknown; `test_light_records_less.py` covers that rule.)

The same inner tests run twice through the plugin - once with the page source fetched right after
every screenshot (`device.tree_on_demand = False`, the old way) and once on demand - and their
journals must be equal once timings and the page-source counter are taken out, their artifacts
byte for byte. The inner tests run on the frozen sim clock (no ticking status bar, no blinking
cursor) with no timed faults, so the two runs see the same pixels; the settle poll count is the
one timing figure dropped with the others (how many looks fit in a time bound).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

INNER = '''
import os
import pytest
from pytest_guistate import gone

FROZEN = {"guistate:clock": "frozen"}


@pytest.fixture(autouse=True)
def _tree_mode(device):
    device.tree_on_demand = os.environ.get("GUISTATE_TEST_TREE") != "eager"
    # the tree alone is compared here; a check answered by a find words its evidence from what the
    # driver said (issue 24: its verdicts against the tree's are in tests/devices/sim/test_check_finding.py)
    device.find_checks = False


@pytest.mark.guistate(app="com.guistate.settings", caps=FROZEN)
def test_login_and_toggle(device, guistate):
    guistate.goal("sign in and turn dark mode on", plan=[("signed in", "Signed in as"), "dark"])
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")
    with guistate.step("switch dark mode", idempotent=False):
        device.tap(text="Dark mode")
    guistate.milestone("dark")
    guistate.assert_complete()


@pytest.mark.guistate(app="com.guistate.feed", caps=FROZEN)
def test_dialog_then_another_app(device, guistate):
    guistate.goal("open and cancel a dialog, then go to the settings app")
    with guistate.step("open the dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    with guistate.step("cancel", expect=gone("Delete post by Bob?")):
        device.tap(id="android:id/button2")
    with guistate.step("open settings", expect="Log in"):
        device.activate_app("com.guistate.settings")


@pytest.mark.guistate(app="com.guistate.feed", caps=FROZEN, faults={"refresh_duration": 30})
def test_no_visible_effect_refreshes_the_list(device, guistate):
    guistate.goal("a tap that shows nothing: settle on a still screen, then pull to refresh")
    with guistate.step("tap the empty bottom bar"):
        device.tap(x=540, y=2390)


@pytest.mark.guistate(app="com.guistate.settings", caps=FROZEN, settle_timeout=0.4)
def test_expect_never_met_fails(device, guistate):
    guistate.goal("a step whose effect never shows")
    with guistate.step("tap the title", expect="Nothing like this", idempotent=False):
        device.tap(x=540, y=150)
'''

# `commands`: the device commands of a step (issue 23's action log) differ by design: when page sources are fetched
_TIMINGS = {"wall", "duration_s", "elapsed_s", "elapsed_ms", "started", "ended", "timestamp", "polls", "page_sources",
            "commands"}
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_POLLS = re.compile(r"after \d+ settle poll\(s\)")  # the poll count, in the failure explanation
_STAMP = re.compile(r"timestamp=[\d.]+")  # in the traceback's locals


def _message(error: Any) -> Any:
    """A failed test's error without pytest's traceback locals (object reprs, clocks): its E lines."""
    if not isinstance(error, str) or "\nE " not in error:
        return error
    return "\n".join(line for line in error.splitlines() if line.startswith("E "))


def _normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normalised(_message(v) if k == "error" else v) for k, v in value.items() if k not in _TIMINGS}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if isinstance(value, str):
        return _STAMP.sub("timestamp=…", _POLLS.sub("after N settle poll(s)", _ADDRESS.sub(" at 0x…", value)))
    return value


def _run(inner: Callable[..., pytest.RunResult], monkeypatch: pytest.MonkeyPatch, mode: str, tier: str,
         out: Path) -> tuple[dict[str, list[Any]], dict[str, Any], int]:
    monkeypatch.setenv("GUISTATE_TEST_TREE", mode)
    result = inner(f"--guistate={tier}", f"--guistate-artifacts={out}", "--guistate-retain=on",
                   "--guistate-memory=off", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    journals: dict[str, list[Any]] = {}
    files: dict[str, Any] = {}
    page_sources = 0
    for journal in sorted(out.glob("*/journal.jsonl")):
        events = [json.loads(line) for line in journal.read_text().splitlines()]
        page_sources += sum(e["record"]["page_sources"] or 0 for e in events if e["type"] == "step")
        # the driver log (the sim's requests) differs by design: when page sources are fetched
        journals[journal.parent.name] = [_normalised(e) for e in events if e["type"] not in ("meta", "driver_log")]
        for path in sorted(journal.parent.rglob("*")):
            if path.is_file() and path.suffix in (".png", ".jpg"):
                files[str(path.relative_to(out))] = path.read_bytes()
            elif path.name in ("state.json", "anchors.json"):
                files[str(path.relative_to(out))] = _normalised(json.loads(path.read_text()))
    return journals, files, page_sources


@pytest.mark.parametrize("tier", ["light", "full"])
def test_same_journal_and_artifacts_with_and_without_tree_on_demand(
    pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult], monkeypatch: pytest.MonkeyPatch, tier: str,
) -> None:
    pytester.makepyfile(test_inner=INNER)
    eager = _run(inner, monkeypatch, "eager", tier, pytester.path / "eager")
    lazy = _run(inner, monkeypatch, "on_demand", tier, pytester.path / "lazy")
    assert sorted(lazy[0]) == sorted(eager[0]) and len(eager[0]) == 4
    if tier == "light":  # light records less: a step that no check reads the trees of leaves its packages unknown
        unchecked = "test_inner.py-test_no_visible_effect_refreshes_the_list"
        for journal in (eager[0][unchecked], lazy[0][unchecked]):
            for event in (e for e in journal if e["type"] == "step"):
                if journal is lazy[0][unchecked]:
                    assert event["record"]["package_before"] == event["record"]["package_after"] == ""
                event["record"]["package_before"] = event["record"]["package_after"] = ""
    for test in eager[0]:
        assert lazy[0][test] == eager[0][test], f"{test}: the journal differs between eager and on-demand trees"
    assert sorted(lazy[1]) == sorted(eager[1]) and lazy[1] == eager[1]  # images byte for byte, state, anchors
    assert any(name.endswith((".png", ".jpg")) for name in eager[1])
    assert 0 < lazy[2] <= eager[2]
    if tier == "full":  # the refresh reads the tree the step loop just read instead of fetching it again
        assert lazy[2] < eager[2]
    print(f"tier {tier}: page sources eager {eager[2]}, on demand {lazy[2]}")
