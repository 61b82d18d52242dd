"""App releases nobody here defined in the sim, replayed from a cache recorded on the old release: every
replay toggles or deletes the element the recording did, or misses with nothing done -- never a wrong
action, never a pass without the goal's effect.

The releases are made the way a user's app drifts (monkeypatched from the inner conftest,
`tests/cache/drift_suite.py`): thirteen Settings releases (switches swapped, a row above, the label in
capitals or in German, Dark mode already on, disabled, behind a confirm dialog, named twice in two sections
near or far from its old place, its label a heading outside its row, ids renamed, a check box for the
switch, a new tab) and two Feed releases (the list reversed, an icon-only Delete). One inner session
records Settings' and the Feed's goal on the old release, a second replays every release strictly
(`--guistate-llm=cache`), each from its own copy of that cache; the phone's action log says what happened.

Before the identity and state rules of `llm/cache/identity.py` and `llm/cache/replay.py` covered them,
four of these passed wrongly: `disabled` (both personas) and `confirm_dialog` (Android) passed with Dark
mode never toggled, `already_on` on iOS turned Dark mode off and passed, and `duplicate_far` toggled the
keyboard's Dark mode and passed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.drift_suite import DRIFT_CONFTEST, FEED_RELEASES, RELEASE_TESTS, SETTINGS_DRIFTS
from tests.helpers.inner_run import run_inprocess

pytestmark = pytest.mark.slow

# release -> "" when the strict replay passes (having done exactly the goal's action once), else words its miss
# names (with nothing done); a dict when the personas differ
Expected = dict[str, str | dict[str, str]]
SETTINGS_EXPECTED: Expected = {
    "swapped_switches": "",
    "row_above": "",
    "label_case": "",
    "renamed_ids": "",
    "checkbox": {"android": "", "ios": "no element like 'Dark mode'"},  # iOS shows a check box as a Button
    "localized": "Dunkelmodus",
    # Android: the switch's "ON" is another text, the fingerprint misses; iOS names it by its label: the state rule
    "already_on": {"android": "no element like 'Dark mode' on screen (closest 'ON'",
                   "ios": "the 'Dark mode' switch is already on (it was off when the step was recorded"},
    "disabled": "disabled",
    "confirm_dialog": "'Dark mode' on",
    "duplicate_label": "ambiguous",
    "duplicate_far": "ambiguous",
    "label_to_heading": "cache miss at step 1",
    "new_tab": "cache miss at step 1",
}
FEED_EXPECTED: Expected = {"reordered": "", "icon_delete": "cache miss at step 1"}


class Releases:
    """The inner suite: `record()` the goals on the old release and copy the cache to every release's test;
    `run("cache", ...)` replays them."""

    def __init__(self, pytester: pytest.Pytester, platform: str) -> None:
        self.pytester, self.platform = pytester, platform
        pytester.makeconftest(DRIFT_CONFTEST)
        pytester.makepyfile(test_releases=RELEASE_TESTS)
        pytester.makeini("[pytest]\nguistate_llm_updater = off\n")

    def run(self, mode: str, *args: str) -> pytest.RunResult:
        return run_inprocess(self.pytester, "-p", "no:cacheprovider", f"--guistate-platform={self.platform}",
                             f"--guistate-memory={self.pytester.path / 'memory.sqlite'}", f"--guistate-llm={mode}",
                             "--guistate-summary=summary.json", *args)

    def record(self) -> None:
        self.run("anthropic", "-k", "none").assert_outcomes(passed=2, deselected=len(SETTINGS_DRIFTS) + len(FEED_RELEASES))
        folder = self.pytester.path / "cassettes" / "test_releases" / ("ios" if self.platform == "ios" else "")
        for test, releases in (("test_dark_mode", SETTINGS_DRIFTS), ("test_bob", FEED_RELEASES)):
            recorded = folder / f"{test}_none.actions.json"
            for release in releases:
                shutil.copy(recorded, folder / f"{test}_{release}.actions.json")
        assert self.acts("test_dark_mode[none]") == ["toggle dark_mode"]
        assert self.acts("test_bob[none]") == ["delete_post Bob"]

    def acts(self, test: str) -> list[str]:
        """What the phone did that changes something: toggles and deletions, in order."""
        path = self.pytester.path / "logs" / f"{test}.json"
        entries = json.loads(path.read_text()) if path.exists() else []
        return [f"{e['action']} {e.get('setting') or e.get('author')}" for e in entries
                if e["action"] in ("toggle", "delete_post")]

    def rows(self) -> dict[str, dict[str, Any]]:
        data = json.loads((self.pytester.path / "summary.json").read_text())
        return {row["nodeid"].rpartition("::")[2]: row for row in data["tests"]}


@pytest.fixture(params=["android", "ios"])
def releases(request: pytest.FixtureRequest, pytester: pytest.Pytester,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Releases]:
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-release-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        suite = Releases(pytester, request.param)
        suite.record()
        yield suite


def test_every_release_replays_the_recorded_action_or_misses_with_nothing_done(releases: Releases) -> None:
    releases.run("cache", "-k", "not none")
    rows = releases.rows()
    ran = sorted(rows)  # every release ran, each from its own copy of the cache
    assert ran == sorted([f"test_dark_mode[{r}]" for r in SETTINGS_DRIFTS] + [f"test_bob[{r}]" for r in FEED_RELEASES])
    assert sorted(SETTINGS_EXPECTED) == sorted(SETTINGS_DRIFTS) and sorted(FEED_EXPECTED) == sorted(FEED_RELEASES)
    wrong: list[str] = []  # every release that did not go as expected, to name them all at once
    for test, expected, meant in (("test_dark_mode", SETTINGS_EXPECTED, "toggle dark_mode"),
                                  ("test_bob", FEED_EXPECTED, "delete_post Bob")):
        for release, said in expected.items():
            words = said if isinstance(said, str) else said[releases.platform]
            node = f"{test}[{release}]"
            outcome, acts = rows[node]["outcome"], releases.acts(node)
            miss = str((rows[node].get("llm_cache") or {}).get("first_miss") or "")
            if words and (outcome, acts) != ("failed", []):  # a miss must do nothing that changes something
                wrong.append(f"{node}: {outcome} having done {acts} (expected a miss naming {words!r} with nothing done)")
            elif words and words not in miss:
                wrong.append(f"{node}: the miss does not name {words!r}: {miss[:400]}")
            elif not words and (outcome, acts) != ("passed", [meant]):  # a pass did exactly the goal's action, once
                wrong.append(f"{node}: {outcome} having done {acts} (expected a pass doing {meant!r}); {miss[:400]}")
    assert wrong == []
