"""App releases nobody here defined in the sim, replayed from a cache recorded on the old release: every
replay toggles or deletes the element the recording did, or misses with nothing done (or, when Bob posts
twice, right after deleting the post recorded) -- never a wrong action, never a pass without the goal's effect.

The releases are made the way a user's app drifts (monkeypatched from the inner conftest,
`tests/cache/drift_suite.py`): fourteen Settings releases (switches swapped, a row above, the label in
capitals, with other spacing and punctuation, or in German, Dark mode already on, disabled, behind a
confirm dialog, named twice in two sections near or far from its old place, its label a heading outside
its row, ids renamed, a check box for the switch, a new tab) and three Feed releases (the list reversed,
an icon-only Delete, a second post by Bob above his old one). One inner session records Settings' and the
Feed's goal on the old release, a second replays every release strictly (`--guistate-llm=cache`), each
from its own copy of that cache; the phone's action log says what happened.

Before the identity and state rules of `llm/cache/identity.py` and `llm/cache/replay.py` covered them,
four of these passed wrongly: `disabled` (both personas) and `confirm_dialog` (Android) passed with Dark
mode never toggled, `already_on` on iOS turned Dark mode off and passed, and `duplicate_far` toggled the
keyboard's Dark mode and passed."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from pytest_guistate.memory.heal_proposal import heal_diff_main
from tests.cache.drift_suite import DRIFT_CONFTEST, FEED_RELEASES, RELEASE_TESTS, SETTINGS_DRIFTS
from tests.helpers.inner_run import run_inprocess

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Outcome:
    """How a release's strict replay must end: `passed`; `acted` (the goal's action done exactly once, else
    nothing that changes something); `words` its miss names."""

    passed: bool
    acted: bool
    words: str = ""


PASS = Outcome(True, True)


def miss(words: str, *, acted: bool = False) -> Outcome:
    return Outcome(False, acted, words)


Expected = dict[str, Outcome | dict[str, Outcome]]  # a dict when the personas differ
SETTINGS_EXPECTED: Expected = {
    "swapped_switches": PASS,
    "row_above": PASS,
    "label_case": PASS,
    "label_punctuation": PASS,
    "renamed_ids": PASS,
    "checkbox": {"android": PASS, "ios": miss("no element like 'Dark mode'")},  # iOS shows a check box as a Button
    "localized": miss("Dunkelmodus"),
    # Android: the switch's "ON" is another text, the fingerprint misses; iOS names it by its label: the state rule
    "already_on": {"android": miss("no element like 'Dark mode' on screen (closest 'ON'"),
                   "ios": miss("the 'Dark mode' switch is already on (it was off when the step was recorded")},
    "disabled": miss("disabled"),
    "confirm_dialog": miss("'Dark mode' on"),
    "duplicate_label": miss("ambiguous"),
    "duplicate_far": miss("ambiguous"),
    "label_to_heading": miss("cache miss at step 1"),
    "new_tab": miss("cache miss at step 1"),
}
FEED_EXPECTED: Expected = {
    "reordered": PASS,
    "icon_delete": PASS,  # found by its recorded desc="Delete post by Bob", which still names it alone
    # the right post deleted (the cached neighbours pick Bob's old post), then the confirm's cached effect, "Delete
    # post by Bob" gone, cannot show: his other post has that label too, and so the test's gone("Bob") never holds
    "same_author": miss("cache miss at step 2", acted=True),
}

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
        assert self.acts("test_bob[none]") == ["delete_post Bob/p2"]

    def acts(self, test: str) -> list[str]:
        """What the phone did that changes something: toggles and deletions, in order."""
        path = self.pytester.path / "logs" / f"{test}.json"
        entries = json.loads(path.read_text()) if path.exists() else []
        return [f"toggle {e['setting']}" if e["action"] == "toggle" else f"delete_post {e['author']}/{e['post_id']}"
                for e in entries if e["action"] in ("toggle", "delete_post")]

    def rows(self) -> dict[str, dict[str, Any]]:
        data = json.loads((self.pytester.path / "summary.json").read_text())
        return {row["nodeid"].rpartition("::")[2]: row for row in data["tests"]}


@pytest.fixture(params=["android", "ios"])
def releases(request: pytest.FixtureRequest, pytester: pytest.Pytester, reference_server: ReferenceServer) -> Releases:
    suite = Releases(pytester, request.param)
    suite.record()
    return suite


def test_every_release_replays_the_recorded_action_or_misses_with_nothing_done(releases: Releases) -> None:
    releases.run("cache", "-k", "not none")
    rows = releases.rows()
    ran = sorted(rows)  # every release ran, each from its own copy of the cache
    assert ran == sorted([f"test_dark_mode[{r}]" for r in SETTINGS_DRIFTS] + [f"test_bob[{r}]" for r in FEED_RELEASES])
    assert sorted(SETTINGS_EXPECTED) == sorted(SETTINGS_DRIFTS) and sorted(FEED_EXPECTED) == sorted(FEED_RELEASES)
    wrong: list[str] = []  # every release that did not go as expected, to name them all at once
    for test, expected, meant in (("test_dark_mode", SETTINGS_EXPECTED, "toggle dark_mode"),
                                  ("test_bob", FEED_EXPECTED, "delete_post Bob/p2")):
        for release, said in expected.items():
            want = said if isinstance(said, Outcome) else said[releases.platform]
            node = f"{test}[{release}]"
            outcome, acts = rows[node]["outcome"], releases.acts(node)
            miss_said = str((rows[node].get("llm_cache") or {}).get("first_miss") or "")
            got = (outcome, acts)
            if got != ("passed" if want.passed else "failed", [meant] if want.acted else []):
                wrong.append(f"{node}: {outcome} having done {acts} (expected {want}); {miss_said[:400]}")
            elif want.words not in miss_said:
                wrong.append(f"{node}: the miss does not name {want.words!r}: {miss_said[:400]}")
    assert wrong == []


TWINS = ("duplicate_label", "duplicate_far")  # "Dark mode" under a new Keyboard heading above the recorded one


def test_after_an_ambiguous_miss_the_fallback_toggles_the_recorded_twin_and_live_names_both(releases: Releases) -> None:
    """The strict replay misses on the place-only tie; the live actor then gets the recorded target's
    surroundings (`Miss.target_hint`) and must toggle the Display section's Dark mode, never the
    Keyboard's. Without a cache (live) nothing tells the twins apart: a clear failure naming both."""
    releases.run("cache-fallback", "-k", " or ".join(TWINS))
    rows = releases.rows()
    for release in TWINS:
        node = f"test_dark_mode[{release}]"
        assert (rows[node]["outcome"], releases.acts(node)) == ("passed", ["toggle dark_mode"]), rows[node]
        assert "ambiguous" in str(rows[node]["llm_cache"]["first_miss"])
    live = releases.run("anthropic", "-k", " or ".join(TWINS))
    rows = releases.rows()
    for release in TWINS:
        node = f"test_dark_mode[{release}]"
        assert (rows[node]["outcome"], releases.acts(node)) == ("failed", []), rows[node]
    assert live.stdout.str().count("ambiguous: 2 elements match 'Dark mode'") >= len(TWINS), live.stdout.str()[-3000:]


def test_a_heal_during_the_replay_proposes_the_cache_files_new_target(
    pytester: pytest.Pytester, reference_server: ReferenceServer
) -> None:
    """`renamed_ids`: every resource id renamed; the strict replay hits only because the memory healed the switch.
    A heal of a replayed step has no locator written in a test: the file to patch is the cache, and the heal
    proposes the step's new target there (`guistate heal-diff`). Applied, the replay hits with no memory and no
    heal (before it missed); nothing else of the cache changed. Before, a replay's heal proposed nothing."""
    releases = Releases(pytester, "android")
    releases.record()
    node = "test_dark_mode[renamed_ids]"
    releases.run("cache", "-k", "renamed_ids").assert_outcomes(passed=1, deselected=len(SETTINGS_DRIFTS) + len(FEED_RELEASES) + 1)
    heals = releases.rows()[node]["heals"]
    assert [h["status"] for h in heals] == ["healed"] and releases.acts(node) == ["toggle dark_mode"]
    proposal = heals[0]["proposal"]
    cache = pytester.path / "cassettes" / "test_releases" / "test_dark_mode_renamed_ids.actions.json"
    assert proposal["file"] == str(cache) and proposal["edit"]["step"] == 0
    assert (proposal["old"], proposal["new"]) == ('id="switch_widget"', 'id="toggle"')
    before = json.loads(cache.read_text())
    out = io.StringIO()
    assert heal_diff_main([str(pytester.path / "guistate-artifacts"), "--apply"], out) == 0
    diff = out.getvalue()
    changed = [line[0] + line[1:].strip() for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    assert changed == ['-"rid": "switch_widget",', '+"rid": "toggle",', '-"id": "switch_widget"', '+"id": "toggle"']
    after = json.loads(cache.read_text())
    assert after["runs"][0]["steps"][0]["target"]["fingerprint"]["rid"] == "toggle"
    for data in (before, after):  # only the healed step's target changed
        del data["runs"][0]["steps"][0]["target"]
    assert after == before
    again = releases.run("cache", "--guistate-memory=off", "-k", "renamed_ids")
    again.assert_outcomes(passed=1, deselected=len(SETTINGS_DRIFTS) + len(FEED_RELEASES) + 1)
    assert not releases.rows()[node].get("heals") and releases.acts(node) == ["toggle dark_mode"]
