"""`guistate cache list|show|stale` and the gate's cache options, on the example suite's committed caches
and hand-made summaries (fast: no sim)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from pytest_guistate.llm.cache.cachefile import CacheError, best_target, load_cache
from pytest_guistate.llm.cache.cli import cache_main
from pytest_guistate.report.gate.cache import cache_reasons
from pytest_guistate.report.gate.cli import gate_main
from tests.cache.conftest import EXAMPLE, FEED_TEST, SHOP_TEST

CACHES = EXAMPLE / "cassettes" / "test_llm"


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cache_main(list(argv), out), out.getvalue()


def test_list_shows_every_cache_with_its_platform_steps_and_last_hit_rate(tmp_path: Path) -> None:
    summary = tmp_path / "s.json"
    summary.write_text(json.dumps({"tests": [{"nodeid": f"test_llm.py::{SHOP_TEST}", "outcome": "passed", "tier": "light",
                                              "llm_cache": {"path": str(CACHES / f"{SHOP_TEST}.actions.json"),
                                                            "hit_rate": 0.75, "misses": 1, "live": 3,
                                                            "first_miss": "cache miss at step 9 'tap ...'"}}]}))
    code, out = _run("list", str(CACHES), "--summary", str(summary))
    assert code == 0
    shop = next(line for line in out.splitlines() if line.startswith(str(CACHES / f"{SHOP_TEST}.actions.json")))
    assert " android " in shop and " 12 " in shop and shop.rstrip().endswith("0.75")
    assert any(line.startswith(str(CACHES / "ios" / f"{FEED_TEST}.actions.json")) for line in out.splitlines())
    code, out = _run("stale", str(CACHES), "--summary", str(summary))
    assert code == 1 and "hit rate 0.75, 3 live step(s)" in out and "cache miss at step 9" in out


def test_show_prints_the_plan_a_reviewer_reads() -> None:
    code, out = _run("show", str(CACHES / f"{SHOP_TEST}.actions.json"))
    assert code == 0
    assert "run 1: Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop" in out
    assert "back remembering price_shopa=" in out
    assert " ! 10. tap 'Add to cart'" in out  # a purchase: never repeated


def test_a_broken_cache_is_named_by_the_cli(tmp_path: Path) -> None:
    broken = tmp_path / "x.actions.json"
    broken.write_text("{")
    code, _ = _run("show", str(broken))
    assert code == 2
    with pytest.raises(CacheError, match=f"action cache {broken} is not readable JSON"):
        load_cache(broken)


def test_gate_blocks_live_steps_and_a_low_hit_rate(tmp_path: Path) -> None:
    strict = {"hit_rate": 1.0, "live": 0}
    fallback = {"hit_rate": 0.5, "live": 4, "first_miss": "cache miss at step 2 ..."}
    assert cache_reasons(strict, max_live=0, min_hit_rate=1.0) == []
    assert cache_reasons(fallback, max_live=0, min_hit_rate=0.9) == [
        "4 LLM step(s) needed the live actor > 0 (cache miss at step 2 ...)", "action cache hit rate 0.50 < 0.90"]
    assert cache_reasons({"hit_rate": None, "live": 9}, max_live=0) == []  # not a cache-mode run
    summary = tmp_path / "s.json"
    rows = [{"nodeid": "t.py::a", "outcome": "passed", "tier": "light", "llm_cache": strict},
            {"nodeid": "t.py::b", "outcome": "passed", "tier": "light", "llm_cache": fallback}]
    summary.write_text(json.dumps({"schema": "guistate.summary/1", "tests": rows}))
    assert gate_main([str(summary)], io.StringIO()) == 0
    out = io.StringIO()
    assert gate_main([str(summary), "--max-cache-live", "0"], out) == 1
    assert "needed the live actor" in out.getvalue()


def test_an_instance_target_is_not_confused_with_its_neighbour_row(tmp_path: Path) -> None:
    """The Feed's Delete buttons all say "Delete": the neighbours ("in") pick Erin's, with a margin."""
    from pytest_guistate.devices.sim.phone import Phone
    from tests.helpers.direct_screen import DirectScreen

    cache = load_cache(shutil.copy(CACHES / f"{FEED_TEST}.actions.json", tmp_path / "c.actions.json"))
    fingerprint = cache.runs[0].steps[0].target["fingerprint"]  # type: ignore[index]
    phone = Phone(app_package="com.guistate.feed", seed=0)
    try:
        tree = DirectScreen(phone).observe().tree
        match = best_target(tree, fingerprint)
        assert match.node is not None and "Erin" in match.node.content_desc
        assert match.score >= 0.95 and match.runner_up < match.score - 0.1
    finally:
        phone.close()


def test_a_written_cache_is_scrubbed_like_a_cassette(tmp_path: Path) -> None:
    """A password the actor typed reaches the cache file only as the redactor's placeholder."""
    from pytest_guistate.llm.cache.cachefile import ActionCache, CachedRun, CachedStep, write_cache
    from pytest_guistate.report.redact import Redactor

    redactor = Redactor()
    redactor.add_secret("correct-horse")
    step = CachedStep(n=1, tool="type_text", args={"text": "correct-horse"}, name='type_text "•••"', idempotent=False,
                      screen={"app": "com.guistate.settings", "labels": ["Password"], "title": "settings", "hash": ""})
    cache = ActionCache("test_login", "android", [CachedRun("Log in", [step], {"success": True, "summary": "ok"})])
    path = tmp_path / "test_login.actions.json"
    assert write_cache(path, cache, redactor.scrub)
    assert "correct-horse" not in path.read_text() and load_cache(path).runs[0].steps[0].tool == "type_text"
    assert not write_cache(path, cache, redactor.scrub)  # unchanged: the file is left as it is
