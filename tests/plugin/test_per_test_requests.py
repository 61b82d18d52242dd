"""What a short scripted test costs the device outside its steps (issue 12): a light test with no
check fetches no page source at all, not even at its end (the FINISH anchor, which light does not
record, once asked the last screen's tree for its app), in a new or a reused session; at standard
the FINISH anchor still names the app. Counted by `Device.page_source_calls`, read after the
`guistate` fixture has finished the test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

SUITE = '''
import json
import pytest
from pathlib import Path


@pytest.fixture
def count(device, request):
    yield
    # torn down after `guistate` (requested after this fixture): the test's finish is counted
    with open(Path(request.config.rootpath) / "counts.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({{"test": request.node.name, "sources": device.page_source_calls}}) + "\\n")


@pytest.mark.guistate(app="com.guistate.feed", caps={{"guistate:clock": "frozen"}})
@pytest.mark.parametrize("n", range(2))
def test_open_and_cancel(count, device, guistate, n):
    guistate.goal("open and cancel the delete dialog", plan=[])
    guistate.perform("open", lambda: device.tap(desc="Delete post by Bob"){expect_open})
    guistate.perform("cancel", lambda: device.tap(id="android:id/button2"){expect_cancel})
'''


def _run(pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult], *args: str,
         expect: bool = False) -> list[int]:
    counts = pytester.path / "counts.jsonl"
    if counts.exists():
        counts.unlink()
    pytester.makepyfile(test_requests=SUITE.format(
        expect_open=', expect="Delete post?"' if expect else "",
        expect_cancel=', expect=lambda obs: not obs.tree.find_text("Delete post?")' if expect else ""))
    result = inner("--guistate-memory=off", "--guistate-retain=on", "--guistate-artifacts=art", *args)
    result.assert_outcomes(passed=2)
    return [json.loads(line)["sources"] for line in counts.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("session", ["test", "worker"])
def test_light_without_checks_fetches_no_page_source(pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult],
                                                     session: str) -> None:
    assert _run(pytester, inner, "--guistate=light", f"--guistate-session={session}") == [0, 0]


def test_light_with_checks_fetches_what_they_read(pytester: pytest.Pytester,
                                                  inner: Callable[..., pytest.RunResult]) -> None:
    counts = _run(pytester, inner, "--guistate=light", "--guistate-session=test", expect=True)
    assert all(n >= 2 for n in counts), counts  # each check reads its after-tree


def test_standard_finish_anchor_still_names_the_app(pytester: pytest.Pytester,
                                                    inner: Callable[..., pytest.RunResult]) -> None:
    counts = _run(pytester, inner, "--guistate=standard", "--guistate-session=test")
    assert all(n >= 2 for n in counts), counts
    finishes = [json.loads(line) for journal in sorted(Path(pytester.path, "art").rglob("journal.jsonl"))
                for line in journal.read_text(encoding="utf-8").splitlines()]
    finishes = [e for e in finishes if e.get("type") == "anchor" and e.get("anchor", e).get("type") == "FINISH"]
    assert finishes and all(e.get("anchor", e).get("app") == "com.guistate.feed" for e in finishes), finishes


LOCATOR_SUITE = '''
import json
import pytest
from pathlib import Path
from pytest_guistate import gone, visible


@pytest.fixture
def count(device, request):
    yield
    with open(Path(request.config.rootpath) / "counts.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({{"test": request.node.name, "sources": device.page_source_calls,
                               "platform": device.platform}}) + "\\n")


@pytest.mark.guistate(app="com.guistate.feed", caps={{"guistate:clock": "frozen"{persona}}})
@pytest.mark.parametrize("n", range(2))
def test_open_and_cancel(count, device, guistate, n):
    guistate.goal("open and cancel the delete dialog", plan=[])
    guistate.perform("open", lambda: device.tap(desc="Delete post by Bob"), expect="Delete post?")
    guistate.perform("cancel", lambda: device.tap({cancel}), expect=gone("Delete post?"))
'''


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_light_locator_checks_are_answered_by_finds(pytester: pytest.Pytester,
                                                    inner: Callable[..., pytest.RunResult], platform: str) -> None:
    """Issue 24: a string / `gone()` expect is a find, no page source (on iOS with the alert up, a
    find scoped to the alert). The marker's `app=` names the iOS bundle when the marker's caps make
    the session iOS."""
    ios = platform == "ios"
    pytester.makepyfile(test_locators=LOCATOR_SUITE.format(
        persona=', "platformName": "iOS", "appium:automationName": "XCUITest"' if ios else "",
        cancel='desc="Cancel"' if ios else 'id="android:id/button2"'))
    result = inner("--guistate-memory=off", "--guistate=light", "--guistate-session=worker")
    result.assert_outcomes(passed=2)
    rows = [json.loads(line) for line in (pytester.path / "counts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["platform"] for row in rows} == {platform}
    sources = [row["sources"] for row in rows]
    per_test = [sources[0], sources[1] - sources[0]]  # a reused session's device counts across tests
    assert per_test == [0, 0], sources
