"""A replayed cached step heals its target through the cross-run memory (issue 21, "find the target
through the memory (heal when needed)"): the example suite's two LLM tests are recorded on app
version 1 with the memory on (a memory file in the inner suite), so each passed tap teaches the
memory its element's look; then the strict mode replays them on a drifted app.

* version 2 (the restyle, issue 7): the Feed's Delete is an outlined pill with a new id and
  description, so the cache's fingerprint no longer trusts it (closest 'Delete', 0.63) and seven
  rows show it alike; the memory finds Erin's by its look, pinned to her row by the neighbour
  words, and the cached expectation (her confirm dialog) accepts it: a hit, marked healed. The
  Shop's search screen is redrawn whole, so its first step is a named miss on the screen itself.
* `renamed`: the Feed's button says "Remove": no remembered look of "Delete" matches, a named miss.
* `interstitial`: a target under a dialog the cached screen did not have is never healed.

What really happened is read from the phone's action log (`deletes`, `purchases`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import FEED_TEST, SHOP_TEST, action_log, deletes, purchases, summary_rows

pytestmark = pytest.mark.slow


def _record_with_memory(suite, pytester: pytest.Pytester) -> str:
    """Record both tests live (the reference server) on version 1; the memory option to reuse."""
    memory = f"--guistate-memory={pytester.path / 'memory.sqlite'}"
    suite(memory, "--guistate-llm=anthropic").assert_outcomes(passed=2)
    assert deletes(pytester) == ["Erin"] and purchases(pytester) == [("ShopB", "Phone Case")]
    return memory


def _journal_steps(folder: Path, test: str) -> list[dict[str, Any]]:
    [journal] = list(folder.glob(f"*{test}*/journal.jsonl"))
    events = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
    return [e["record"] for e in events if e["type"] == "step"]


def test_a_restyled_target_is_healed_by_its_remembered_look_and_hits(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    memory = _record_with_memory(suite, pytester)
    served = len(reference_server.requests)
    result = suite(memory, "--guistate-llm=cache", "--guistate-artifacts=art", "--guistate-retain=on",
                   "--alluredir=allure", drift=2)
    out = result.stdout.str()
    rows = summary_rows(pytester)
    assert rows[FEED_TEST]["outcome"] == "passed", out[-3000:]
    assert len(reference_server.requests) == served and all(r["llm_tokens"] == 0 for r in rows.values())

    # the Feed: step 1 hit through the memory, step 2 (the dialog, unchanged) and the AI check by fingerprint
    feed = rows[FEED_TEST]["llm_cache"]
    assert (feed["hits"], feed["misses"], feed["hit_rate"]) == (3, 0, 1.0)
    [healed] = feed["healed"]
    assert healed.startswith("step 1 'tap 'Delete'") and "healed: 'Delete' found by its remembered look at (" in healed
    marks = [s.get("cache", "") for s in _journal_steps(pytester.path / "art", FEED_TEST)]
    assert marks[0].startswith("hit (healed: 'Delete' found by its remembered look at (") and marks[1:] == ["hit"]
    assert f"{FEED_TEST}: action cache step 1" in out  # the terminal summary names the healed step
    [heal] = rows[FEED_TEST]["heals"]  # the memory confirmed the heal (the new look is now a variant)
    assert heal["status"] == "healed" and heal["locator"] == "id=delete" and heal["score"] >= 0.8
    allure = [json.loads(p.read_text("utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    [feed_allure] = [r for r in allure if r["name"] == FEED_TEST]
    params = [p["value"] for s in feed_allure["steps"] for p in s.get("parameters", []) if p["name"] == "cache"]
    assert params[0] == marks[0]

    # ground truth: the healed tap opened Erin's dialog, the confirm deleted her post and nothing else happened
    log = action_log(pytester, FEED_TEST)
    assert [e["action"] for e in log] == ["open_app", "tap", "open_dialog", "tap", "delete_post"]
    assert log[1]["target"].startswith("feed/post/") and log[1]["target"].endswith("/delete")  # a row's Delete
    assert log[2]["author"] == "Erin" and log[3]["target"] == "feed/dialog/delete"  # Erin's row, not a neighbour's
    assert deletes(pytester) == ["Erin"]

    # the Shop's restyled search screen is not the cached one: a named miss before any action, no purchase
    assert rows[SHOP_TEST]["outcome"] == "failed"
    assert ("cache miss at step 1 'type 'Phone Case' into 'search'': the screen is not the one the step acted on"
            in out)
    assert purchases(pytester) == []


@pytest.mark.parametrize("drift", ["renamed", "interstitial"])
def test_a_target_the_memory_cannot_find_is_a_named_miss(suite, pytester: pytest.Pytester,
                                                          reference_server: ReferenceServer, drift: str) -> None:
    memory = _record_with_memory(suite, pytester)
    result = suite(memory, "--guistate-llm=cache", "-k", "deletes", drift=drift)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    if drift == "renamed":  # "Remove" does not look like "Delete": the memory says so, nothing is tapped
        assert ("no element like 'Delete' on screen (closest 'Remove', 0.43); memory: no variant of 'delete' "
                "matched above 0.8") in out
    else:  # the cookie notice covers the row: no heal is even tried
        assert "under a dialog the cached screen did not have ('Cookies')" in out and "; memory:" not in out
    assert summary_rows(pytester)[FEED_TEST]["llm_tokens"] == 0
    assert deletes(pytester) == []
    assert "heals" not in summary_rows(pytester)[FEED_TEST] or not summary_rows(pytester)[FEED_TEST]["heals"]


def test_without_the_memory_the_restyled_target_stays_a_named_miss(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    _record_with_memory(suite, pytester)
    result = suite("--guistate-memory=off", "--guistate-llm=cache", "-k", "deletes", drift=2)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "cache miss at step 1 'tap 'Delete'" in out and "no element like 'Delete' on screen (closest 'Delete'" in out
    assert "; memory:" not in out and "healed" not in out
    assert summary_rows(pytester)[FEED_TEST]["llm_tokens"] == 0
    assert deletes(pytester) == []


def test_a_heal_whose_cached_effect_does_not_show_is_a_miss_and_never_repeated(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    memory = _record_with_memory(suite, pytester)
    path = pytester.path / "cassettes" / "test_llm" / f"{FEED_TEST}.actions.json"
    cache = json.loads(path.read_text())
    cache["runs"][0]["steps"][0]["effect"]["expect"] = {"visible": "Delete post by Bob?"}  # not what the tap does
    path.write_text(json.dumps(cache, indent=2, sort_keys=True))
    result = suite(memory, "--guistate-llm=cache", "-k", "deletes", "--guistate-artifacts=art", "--guistate-retain=on",
                   drift=2)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the healed target 'Delete' at (" in out and "did not give the cached effect (false heal prevented)" in out
    [heal] = summary_rows(pytester)[FEED_TEST]["heals"]
    assert heal["status"] == "false_heal_prevented"
    assert [s.get("cache") for s in _journal_steps(pytester.path / "art", FEED_TEST)] == ["miss (false heal prevented)"]
    taps = [e for e in action_log(pytester, FEED_TEST) if e["action"] == "tap"]
    assert len(taps) == 1 and deletes(pytester) == []  # tapped once, never again, nothing deleted
