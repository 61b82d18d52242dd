"""The action cache never acts on the wrong thing, nor passes with nothing done (issue 32), on drifts
made the way a user's app drifts: from the inner suite's own conftest (monkeypatching the sim apps,
`--drift=...`), not the package's built-in `appVersion` names.

* `replaced_row`: Settings' "Dark mode" row is replaced by a "Battery saver" switch in its place
  (same id, kind, "OFF" and position): a named miss naming both, Battery saver never toggled.
* `lookalike_tiles`: the Gallery's Beach photo is gone; every tile shares the id `photo`: the
  remembered look must not heal onto another photo, nothing is selected.
* `below_the_fold`: ten posts come before Bob's, so his post is below the first screen: `gone("Bob")`
  holds with nothing done; the fallback must not call that the goal reached.
* `late_redraw`: the Feed redraws 1.5 s after a delete (`device.set_faults`): replay settles and
  refreshes like a live step, so it hits at 0 tokens.

Recorded live against the reference server on the undrifted apps with the memory on, on each
persona; what really happened is the phone's action log (`logs/<test>.json`); every miss must be in
the summary (`llm_cache.first_miss`), the journal (`cache.miss_messages`) and `guistate cache stale`."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_guistate.llm.cache.cli import cache_main
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.drift_suite import DRIFT_CONFTEST, FEED, GALLERY, SETTINGS, SHOP, TESTS
from tests.helpers.inner_run import run_inprocess

pytestmark = pytest.mark.slow


class DriftSuite:
    """The inner suite: `record()` on the undrifted apps, `run(mode, drift)` a cache mode on a drift."""

    def __init__(self, pytester: pytest.Pytester, server: ReferenceServer, platform: str) -> None:
        self.pytester, self.server, self.platform = pytester, server, platform
        pytester.makeconftest(DRIFT_CONFTEST)
        pytester.makepyfile(test_apps=TESTS)
        pytester.makeini("[pytest]\nguistate_llm_updater = off\n")

    def run(self, mode: str, drift: str = "", *args: str) -> pytest.RunResult:
        for log in (self.pytester.path / "logs").glob("*.json"):
            log.unlink()
        return run_inprocess(self.pytester, "-p", "no:cacheprovider", f"--guistate-platform={self.platform}",
                             f"--guistate-memory={self.pytester.path / 'memory.sqlite'}", f"--guistate-llm={mode}",
                             "--guistate-summary=summary.json", "--guistate-artifacts=art", "--guistate-retain=on",
                             f"--drift={drift}", *args)

    def record(self) -> None:
        self.run("anthropic", "", "-k", f"not {SHOP}").assert_outcomes(passed=3, deselected=1)
        assert self.log(SETTINGS)[-1] == ("toggle", "dark_mode")
        assert [e for e in self.log(GALLERY) if e[0] == "move_to_album"] == [("move_to_album", "Beach,Mountains")]
        assert self.deletes() == ["Bob"]

    def log(self, test: str) -> list[tuple[str, str]]:
        """The phone's ground truth, one (action, what) per entry."""
        path = self.pytester.path / "logs" / f"{test}.json"
        entries = json.loads(path.read_text()) if path.exists() else []
        return [(e["action"], str(e.get("setting") or e.get("label") or e.get("author")
                                  or ",".join(e.get("labels") or []) or "")) for e in entries]

    def deletes(self) -> list[str]:
        return [what for action, what in self.log(FEED) if action == "delete_post"]

    def rows(self) -> dict[str, dict[str, Any]]:
        data = json.loads((self.pytester.path / "summary.json").read_text())
        return {row["nodeid"].rpartition("::")[2]: row for row in data["tests"]}

    def journal_misses(self, test: str) -> list[str]:
        journal = max((self.pytester.path / "art").rglob(f"*{test}*/journal.jsonl"), key=lambda p: p.stat().st_mtime)
        events = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
        return [m for e in events if e["type"] == "llm" for m in (e.get("cache") or {}).get("miss_messages", [])]

    def stale(self) -> tuple[int, str]:
        out = io.StringIO()
        code = cache_main(["stale", str(self.pytester.path / "cassettes"), "--summary",
                           str(self.pytester.path / "summary.json")], out)
        return code, out.getvalue()

    def assert_miss_recorded(self, test: str, words: str) -> None:
        """The miss is in the summary, the journal and `guistate cache stale`, not only the exception."""
        cache = self.rows()[test]["llm_cache"]
        assert cache["first_miss"] and words in cache["first_miss"], cache
        assert any(words in m for m in self.journal_misses(test))
        code, out = self.stale()
        assert code == 1 and f"{test}.actions.json" in out and words in out


@pytest.fixture(params=["android", "ios"])
def drifts(request: pytest.FixtureRequest, pytester: pytest.Pytester,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[DriftSuite]:
    with ReferenceServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-drift-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        suite = DriftSuite(pytester, server, request.param)
        suite.record()
        yield suite


def test_a_replaced_row_is_a_named_miss_and_its_switch_is_never_toggled(drifts: DriftSuite) -> None:
    strict = drifts.run("cache", "replaced_row", "-k", SETTINGS)
    strict.assert_outcomes(failed=1)
    miss = drifts.rows()[SETTINGS]["llm_cache"]["first_miss"]
    assert miss.startswith("cache miss at step 1 'tap 'Dark mode'"), miss
    if drifts.platform == "android":  # same id, kind, "OFF" and place: only the identity tells them apart
        assert "cached 'Dark mode' switch; on screen the switch in its place is 'Battery saver'" in miss
    else:  # iOS names a switch by its row's label: the fingerprint itself misses, the heal names both
        assert "no element like 'Dark mode' on screen (closest 'Battery saver'" in miss
    assert "memory: not healed: cached 'Dark mode' switch; the memory found 'Battery saver'" in miss
    assert ("toggle", "battery_saver") not in drifts.log(SETTINGS) and drifts.log(SETTINGS)[-1] == ("login", "")
    assert drifts.rows()[SETTINGS]["llm_cache"]["hits"] == 0
    drifts.assert_miss_recorded(SETTINGS, "the memory found 'Battery saver'")

    served = len(drifts.server.requests)
    fallback = drifts.run("cache-fallback", "replaced_row", "-k", SETTINGS)
    assert ("toggle", "battery_saver") not in drifts.log(SETTINGS)  # the live actor does not toggle it either
    assert len(drifts.server.requests) > served  # the miss went to the model: no pass from the cache
    if drifts.rows()[SETTINGS]["outcome"] == "passed":
        assert ("toggle", "dark_mode") in drifts.log(SETTINGS)
    fallback.assert_outcomes(failed=1)  # no Dark mode on this release: the goal cannot be reached


def test_lookalike_tiles_are_never_healed_onto_another_photo(drifts: DriftSuite) -> None:
    result = drifts.run("cache", "lookalike_tiles", "-k", GALLERY)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "cache miss at step 1" in out and "cached 'Beach'" in out
    assert "memory: not healed: cached 'Beach'" in out  # the memory's look alone picked another tile
    assert [e for e in drifts.log(GALLERY) if e[0] != "open_app"] == []  # not one photo selected
    drifts.assert_miss_recorded(GALLERY, "cached 'Beach'")


def test_a_target_pushed_off_screen_is_never_the_goal_reached(drifts: DriftSuite) -> None:
    strict = drifts.run("cache", "below_the_fold", "-k", FEED)
    strict.assert_outcomes(failed=1)
    assert drifts.deletes() == []
    drifts.assert_miss_recorded(FEED, "cache miss at step 1")

    fallback = drifts.run("cache-fallback", "below_the_fold", "-k", FEED)
    row = drifts.rows()[FEED]
    assert row["llm_tokens"] > 0  # "Bob gone" held because Bob was off screen: that is no goal reached
    assert any("already held before this run acted" in m for m in drifts.journal_misses(FEED))
    # the live actor either deletes Bob's post (scrolling to it) or fails: never a pass with nothing done
    if row["outcome"] == "passed":
        assert drifts.deletes() == ["Bob"]
    else:
        assert drifts.deletes() == [] and not row["llm_cache"]["rewritten"]
    assert "goal reached after a miss" not in fallback.stdout.str()


def test_a_late_redraw_settles_and_refreshes_like_a_live_step(drifts: DriftSuite) -> None:
    path = drifts.pytester.path / "cassettes" / "test_apps" / ("ios" if drifts.platform == "ios" else "")
    before = (path / f"{FEED}.actions.json").read_text()
    served = len(drifts.server.requests)
    for mode in ("cache", "cache-fallback"):
        result = drifts.run(mode, "late_redraw", "-k", FEED)
        result.assert_outcomes(passed=1)
        cache = drifts.rows()[FEED]["llm_cache"]
        assert (cache["hits"], cache["misses"], cache["live"]) == (2, 0, 0), (mode, cache)
        assert drifts.deletes() == ["Bob"]  # exactly once
    assert len(drifts.server.requests) == served  # no token spent on what a refresh fixes
    assert (path / f"{FEED}.actions.json").read_text() == before  # nothing to rewrite


def test_the_rewritten_cache_keeps_the_milestone_of_the_run_it_came_from(drifts: DriftSuite) -> None:
    """A fallback run rewrites the cache from what it did; each milestone it reached stays on a step,
    so a replay of the new file settles and refreshes for it."""
    path = drifts.pytester.path / "cassettes" / "test_apps" / ("ios" if drifts.platform == "ios" else "")
    fallback = drifts.run("cache-fallback", "below_the_fold", "-k", FEED)
    if drifts.rows()[FEED]["outcome"] != "passed":
        pytest.fail(f"the live actor did not reach Bob's post below the fold: {fallback.stdout.str()[-2000:]}")
    steps = json.loads((path / f"{FEED}.actions.json").read_text())["runs"][0]["steps"]
    assert [s["milestone"] for s in steps if s["milestone"]] == ["Bob's post gone"]
    strict = drifts.run("cache", "below_the_fold", "-k", FEED)
    strict.assert_outcomes(passed=1)
    assert drifts.deletes() == ["Bob"]

