"""The action cache end to end (issue 21): the example suite's two LLM tests in an inner pytest run
on the sim, recorded on app version 1, replayed strictly at 0 tokens, replayed on each drift of
version 1 (`devices/sim/apps/drift.py`), and finished by the live actor in the fallback mode.

What really happened is read from the phone's action log, never from the plugin's own report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_guistate.llm.cache.cachefile import SCHEMA
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import (
    FEED_TEST,
    SHOP_TEST,
    committed_caches,
    deletes,
    purchases,
    summary_rows,
)

pytestmark = pytest.mark.slow


def _cache(folder: Path, test: str) -> dict:
    return json.loads((folder / f"{test}.actions.json").read_text())


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_record_on_v1_then_strict_replay_uses_no_model(suite, pytester: pytest.Pytester,
                                                       reference_server: ReferenceServer, platform: str) -> None:
    recorded = suite(f"--guistate-platform={platform}", "--guistate-llm=anthropic", "-k", "deletes")
    recorded.assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_llm" / ("ios" if platform == "ios" else "")
    cache = _cache(folder, FEED_TEST)
    assert cache["schema"] == SCHEMA and cache["platform"] == platform
    steps = cache["runs"][0]["steps"]
    assert [s["tool"] for s in steps] == ["tap", "tap"] and not any(s["idempotent"] for s in steps)
    assert steps[0]["target"]["fingerprint"]["in"].count("Erin") >= 1 and steps[-1]["milestone"] == "Erin's post gone"
    assert steps[0]["effect"]["expect"] == {"visible": "Delete post by Erin?"} and steps[0]["effect"]["confirmed"]
    assert cache["checks"][0]["words"]["erin"] is False
    text = (folder / f"{FEED_TEST}.actions.json").read_text()
    assert text == json.dumps(cache, indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # stable, reviewable

    served = len(reference_server.requests)
    replayed = suite(f"--guistate-platform={platform}", "--guistate-llm=cache", "-k", "deletes")
    replayed.assert_outcomes(passed=1)
    assert len(reference_server.requests) == served  # not one request: the model was never asked
    row = summary_rows(pytester)[FEED_TEST]
    assert row["llm_tokens"] == 0
    assert row["llm_cache"]["hits"] == 3 and row["llm_cache"]["misses"] == 0 and row["llm_cache"]["hit_rate"] == 1.0
    assert deletes(pytester) == ["Erin"]
    assert (folder / f"{FEED_TEST}.actions.json").read_text() == text  # strict never rewrites


# drift -> (feed outcome, shop outcome, the miss message's words when it fails)
DRIFTS = {
    "moved": ("passed", "passed", ()),
    "new_row": ("passed", "passed", ()),
    "renamed": ("failed", "passed", ("no element like 'Delete' on screen (closest 'Remove'",)),
    "interstitial": ("failed", "failed", ("under a dialog the cached screen did not have ('Cookies')",
                                          "under a dialog the cached screen did not have ('Enjoying ShopA?')")),
    "removed_screen": ("failed", "failed", ("cache miss at step 1 'tap 'Delete'", "the cached effect did not show",
                                            "cache miss at step 9 'tap 'result_row'", "cached on 'shopb: ShopB'")),
}


@pytest.mark.parametrize("drift", list(DRIFTS))
def test_strict_replay_on_each_drift_hits_or_names_the_miss(suite, pytester: pytest.Pytester, drift: str) -> None:
    committed_caches(pytester)
    result = suite("--guistate-llm=cache", drift=drift)
    feed, shop, words = DRIFTS[drift]
    rows = summary_rows(pytester)
    assert (rows[FEED_TEST]["outcome"], rows[SHOP_TEST]["outcome"]) == (feed, shop), result.stdout.str()[-3000:]
    out = result.stdout.str()
    for phrase in words:
        assert phrase in out
    assert all(row["llm_tokens"] == 0 for row in rows.values())
    # never an action the goal did not ask for: at most the one delete of Erin, only ShopB's Phone Case
    assert deletes(pytester) in ([], ["Erin"])
    assert purchases(pytester) in ([], [("ShopB", "Phone Case")])
    if shop == "passed":
        assert purchases(pytester) == [("ShopB", "Phone Case")]  # new_row: not the sponsored "Phone Case Pro"
    if feed == "passed":
        assert deletes(pytester) == ["Erin"]


def test_fallback_finishes_the_goal_and_its_rewritten_cache_replays_at_zero_tokens(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    folder = committed_caches(pytester)
    before = _cache(folder, SHOP_TEST)
    fallback = suite("--guistate-llm=cache-fallback", drift="removed_screen")
    fallback.assert_outcomes(passed=2)
    # the live actor hears what the replay did, in its first request only (a hint on every request cost
    # more tokens than the live steps the fallback replaced)
    told = ["<handover>" in json.dumps(r.body) for r in reference_server.requests if r.path.endswith("/messages")]
    assert told and told[0] and not any(told[1:]), told
    first = json.dumps(reference_server.requests[0].body)
    assert "were replayed from the action cache" in first and "cache miss at step 9" in first
    assert deletes(pytester) == ["Erin"] and purchases(pytester) == [("ShopB", "Phone Case")]
    out = fallback.stdout.str()
    assert "guistate: action cache" in out and "action cache rewritten" in out
    rows = summary_rows(pytester)
    assert rows[SHOP_TEST]["llm_cache"]["live"] > 0 and rows[SHOP_TEST]["llm_cache"]["rewritten"]
    assert rows[SHOP_TEST]["llm_cache"]["hits"] == 8  # the shared part of the flow came from the cache
    assert rows[FEED_TEST]["llm_tokens"] == 0  # the missed step's action reached the goal: no model needed
    after = _cache(folder, SHOP_TEST)
    assert after["recorded"]["app_version"] == "removed_screen" and after != before

    served = len(reference_server.requests)
    strict = suite("--guistate-llm=cache", drift="removed_screen")
    strict.assert_outcomes(passed=2)
    assert len(reference_server.requests) == served
    assert all(row["llm_tokens"] == 0 and row["llm_cache"]["hit_rate"] == 1.0 for row in summary_rows(pytester).values())
    assert deletes(pytester) == ["Erin"] and purchases(pytester) == [("ShopB", "Phone Case")]


def test_a_non_idempotent_step_after_an_unverified_effect_is_not_replayed(suite, pytester: pytest.Pytester) -> None:
    folder = committed_caches(pytester)
    path = folder / f"{FEED_TEST}.actions.json"
    cache = json.loads(path.read_text())
    steps = cache["runs"][0]["steps"]
    wait = {"n": 2, "tool": "wait", "args": {"seconds": 0.2}, "name": "wait 0.2s", "idempotent": True,
            "screen": steps[1]["screen"], "target": None, "milestone": None,
            "effect": {"expect": None, "outcome": "ok", "verdict": "no change", "confirmed": False, "region": None,
                       "next_screen": {}}}
    steps.insert(1, wait)
    steps[2]["n"] = 3
    path.write_text(json.dumps(cache, indent=2, sort_keys=True))
    result = suite("--guistate-llm=cache", "-k", "deletes")
    result.assert_outcomes(failed=1)
    assert ("cache miss at step 3 'tap 'Delete' (in Delete post? · Delete post by Erin?)': the previous step's effect "
            "was not verified, so this non-idempotent step is not replayed") in result.stdout.str()
    assert deletes(pytester) == []  # the confirm was never tapped


def _damage(path: Path, how: str) -> str:
    """Spoil a cache file; returns the words its error must say."""
    text = path.read_text()
    if how == "schema":
        path.write_text(text.replace(SCHEMA, "guistate.actions/0"))
        return "has schema 'guistate.actions/0'; this guistate reads 'guistate.actions/1'"
    if how == "corrupt":
        path.write_text(text[: len(text) // 2])
        return "is not readable JSON"
    path.write_text(text.replace('"tool": "tap"', '"tool": "click"', 1))  # hand-edited
    return ".tool 'click' is not one of tap, type_text"


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_bad_cache_is_a_clear_error_and_never_a_silent_live_call(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer, platform: str) -> None:
    folder = committed_caches(pytester, platform)
    feed, shop = folder / f"{FEED_TEST}.actions.json", folder / f"{SHOP_TEST}.actions.json"
    if platform == "android":
        expected = {feed: _damage(feed, "schema"), shop: _damage(shop, "corrupt")}
    else:  # the Android cache where the iOS persona looks for its own; a hand-edited iOS one
        feed.write_text((folder.parent / feed.name).read_text())
        expected = {feed: "was recorded on platform 'android', this run is 'ios'", shop: _damage(shop, "hand_edited")}
    result = suite(f"--guistate-platform={platform}", "--guistate-llm=cache-fallback")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    for path, words in expected.items():
        assert f"action cache {path}" in out and words in out
    assert reference_server.requests == []  # the fallback did not quietly ask the model instead
    assert deletes(pytester) == [] and purchases(pytester) == []
