"""Where each step of an LLM run came from, said per step (issue 21 item 4): the journal's step record,
the live terminal line and Allure (a step parameter `cache`) carry `hit`, `miss` or `live`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.llm.reference.server import ReferenceServer
from tests.cache.conftest import FEED_TEST, SHOP_TEST, committed_caches, purchases

pytestmark = pytest.mark.slow


def _journal_steps(folder: Path, test: str) -> list[dict[str, Any]]:
    [journal] = [p for p in folder.glob(f"*{test}*/journal.jsonl")]
    events = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
    return [e["record"] for e in events if e["type"] == "step"]


def _allure_cache_params(folder: Path, test: str) -> list[tuple[str, str]]:
    [result] = [json.loads(p.read_text("utf-8")) for p in folder.glob("*-result.json")
                if json.loads(p.read_text("utf-8"))["name"] == test]
    return [(step["name"], param["value"]) for step in result.get("steps", [])
            for param in step.get("parameters", []) if param["name"] == "cache"]


def test_a_strict_replay_marks_every_step_a_hit(suite, pytester: pytest.Pytester) -> None:
    committed_caches(pytester)
    result = suite("--guistate-llm=cache", "-k", "deletes", "--guistate-artifacts=art", "--guistate-retain=on",
                   "--alluredir=allure")
    result.assert_outcomes(passed=1)
    steps = _journal_steps(pytester.path / "art", FEED_TEST)
    assert [s.get("cache") for s in steps] == ["hit", "hit"], [s["name"] for s in steps]
    params = _allure_cache_params(pytester.path / "allure", FEED_TEST)
    assert [value for _, value in params] == ["hit", "hit"]
    assert all(name.endswith("[cache]") for name, _ in params)


def test_a_fallback_marks_the_replayed_steps_hits_and_the_actors_live(
        suite, pytester: pytest.Pytester, reference_server: ReferenceServer) -> None:
    committed_caches(pytester)
    result = suite("--guistate-llm=cache-fallback", "-k", "cheaper", "--guistate-artifacts=art",
                   "--guistate-retain=on", "--alluredir=allure", drift="removed_screen")
    result.assert_outcomes(passed=1)
    assert purchases(pytester) == [("ShopB", "Phone Case")]
    marks = [s.get("cache") for s in _journal_steps(pytester.path / "art", SHOP_TEST)]
    hits = marks.count("hit")
    assert hits == 8 and marks[:hits] == ["hit"] * hits, marks  # the shared start of the flow came from the cache
    assert marks[hits:] and set(marks[hits:]) <= {"live", "miss"} and "live" in marks, marks
    assert [value for _, value in _allure_cache_params(pytester.path / "allure", SHOP_TEST)] == marks


def test_a_strict_replay_never_imports_the_sdk(pytester: pytest.Pytester) -> None:
    """A run of hits talks to no model, so it does not pay the SDK's ~1 s import inside its tests
    (`llm/sdk.py`); asked in a fresh interpreter, where nothing else imported it."""
    from tests.cache.conftest import CONFTEST, EXAMPLE

    for name in ("test_llm.py", "sim_apps.py"):
        (pytester.path / name).write_text((EXAMPLE / name).read_text("utf-8"), encoding="utf-8")
    committed_caches(pytester)
    pytester.makeconftest(CONFTEST + '''

def pytest_sessionfinish(session):
    import sys
    Path("sdk.txt").write_text(str("anthropic" in sys.modules))
''')
    pytester.makeini("[pytest]\nguistate_llm_updater = off\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--guistate-memory=off", "--guistate-llm=cache")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "sdk.txt").read_text() == "False"
