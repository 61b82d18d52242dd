"""Tokens and wall time of the example suite's two LLM tests: live vs cassette vs action cache vs fallback.

For app version 1 and each drift of it (`guistate:appVersion`, `devices/sim/apps/drift.py`), the two tests
(`example_suite/test_llm.py`: delete Erin's post; compare Phone Case in two shops and buy in the cheaper)
run in a fresh copy of the suite with its committed cassettes and caches, once per mode:
  live      --guistate-llm=anthropic against the local reference server (real SDK, real HTTP)
  cassette  --guistate-llm=replay (the committed exchanges; diverges on a drift by design)
  cache     --guistate-llm=cache (strict: no model; a miss fails)
  fallback  --guistate-llm=cache-fallback (the live actor from the first miss; the reference server)
and, on version 1, the same two tests written as scripted steps (`guistate.perform` with locators): the
baseline the issue's 1.1x target is measured against. Tokens and per-test duration come from the run
summary (`llm_tokens`, `duration_s`: the test's call phase, not pytest's start-up).

Timing is wall time on a shared machine: expect noise, compare ratios within one run.

Run: python benchmarks/cache_bench.py [--versions 1 renamed ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_guistate.devices.sim.apps.drift import DRIFTS
from pytest_guistate.llm.reference.server import ReferenceServer

EXAMPLE = Path(__file__).resolve().parents[1] / "example_suite"
MODES = {"live": "anthropic", "cassette": "replay", "cache": "cache", "fallback": "cache-fallback"}
TESTS = {"test_actor_deletes_one_post_and_an_ai_check_confirms_it": "feed delete",
         "test_actor_buys_in_the_cheaper_shop": "two-shop purchase"}

SCRIPTED = '''
import pytest
from sim_apps import dialog_button

from pytest_guistate import gone, visible


@pytest.mark.guistate(app="com.guistate.feed")
def test_scripted_feed_delete(device, guistate):
    guistate.goal("Delete the post by Erin", plan=[("Erin's post gone", gone("Erin"))])
    guistate.perform("tap Delete on Erin's post", lambda: device.tap(desc="Delete post by Erin"),
                     expect=visible("Delete post by Erin?"), idempotent=False)
    guistate.perform("confirm", lambda: device.tap(id=dialog_button(device, "Delete")), expect=gone("Delete post by Erin?"),
                     idempotent=False)
    assert [e["author"] for e in device.action_log() if e["action"] == "delete_post"] == ["Erin"]


def _price(device, guistate, shop):
    guistate.perform(f"search in {shop}", lambda: device.type("Phone Case", id="search"), idempotent=False)
    guistate.perform("tap Search", lambda: device.tap(id="search_button"), expect=visible(id="price"))
    return float(device.find(id="price").text.lstrip("$"))


@pytest.mark.guistate(app="com.guistate.shopa")
def test_scripted_two_shop_purchase(device, guistate):
    guistate.goal("Compare the price of Phone Case in ShopA and ShopB and buy it in the cheaper shop")
    a = _price(device, guistate, "ShopA")
    guistate.perform("back to the launcher", device.back, idempotent=False)
    guistate.perform("open ShopB", lambda: device.tap(text="ShopB"), expect=visible("Search"))
    b = _price(device, guistate, "ShopB")
    cheaper = "ShopA" if a < b else "ShopB"
    guistate.perform("back to the launcher", device.back, idempotent=False)
    guistate.perform(f"open {cheaper}", lambda: device.tap(text=cheaper), expect=visible("Search"))
    guistate.perform("open Phone Case", lambda: device.tap(id="result_row"), expect=visible("Add to cart"))
    guistate.perform("add to cart", lambda: device.tap(id="add_to_cart"), idempotent=False)
    guistate.perform("open the cart", lambda: device.tap(desc="Cart, 1 items"), expect=visible("Checkout"))
    guistate.perform("check out", lambda: device.tap(id="checkout"), idempotent=False)
    bought = [(e["shop"], e["product"]) for e in device.action_log() if e["action"] == "add_to_cart"]
    assert bought == [(cheaper, "Phone Case")]
'''


def _suite(folder: Path) -> None:
    for name in ("test_llm.py", "sim_apps.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    shutil.copytree(EXAMPLE / "cassettes", folder / "cassettes")
    (folder / "test_scripted.py").write_text(SCRIPTED)
    (folder / "pytest.ini").write_text("[pytest]\nguistate_llm_updater = off\n")


def _run(folder: Path, version: str, args: list[str], env: dict[str, str]) -> dict[str, dict[str, Any]]:
    caps = folder / "caps.json"
    caps.write_text(json.dumps({"guistate:appVersion": int(version) if version.isdigit() else version}))
    summary = folder / "summary.json"
    summary.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--guistate-memory=off",
                    f"--guistate-caps={caps}", f"--guistate-summary={summary}", *args], cwd=folder, env=env,
                   capture_output=True, text=True, timeout=900, check=False)
    rows = json.loads(summary.read_text())["tests"] if summary.exists() else []
    return {row["nodeid"].rpartition("::")[2]: row for row in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=["1", *DRIFTS])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    with ReferenceServer() as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-bench-cache", "ANTHROPIC_BASE_URL": server.url}
        scripted: dict[str, float] = {}
        with tempfile.TemporaryDirectory(prefix="cache-bench-") as tmp:
            base = Path(tmp) / "scripted"
            base.mkdir()
            _suite(base)
            rows = _run(base, "1", ["test_scripted.py"], env)
            scripted = {"feed delete": rows.get("test_scripted_feed_delete", {}).get("duration_s") or 0.0,
                        "two-shop purchase": rows.get("test_scripted_two_shop_purchase", {}).get("duration_s") or 0.0}
            print(f"scripted steps (v1): feed delete {scripted['feed delete']:.2f}s, "
                  f"two-shop purchase {scripted['two-shop purchase']:.2f}s", flush=True)
            print(f"{'version':<15} {'test':<18} {'mode':<9} {'outcome':<8} {'tokens':>7} {'time s':>7} {'vs scripted':>11} "
                  f"{'hit rate':>8}", flush=True)
            for version in args.versions:
                for mode, flag in MODES.items():
                    folder = Path(tmp) / f"{version}-{mode}"
                    folder.mkdir()
                    _suite(folder)
                    rows = _run(folder, version, ["test_llm.py", f"--guistate-llm={flag}"], env)
                    for test, label in TESTS.items():
                        row = rows.get(test, {})
                        cache = row.get("llm_cache") or {}
                        seconds = float(row.get("duration_s") or 0.0)
                        ratio = seconds / scripted[label] if scripted.get(label) else 0.0
                        entry = {"version": version, "test": label, "mode": mode, "outcome": row.get("outcome", "?"),
                                 "tokens": row.get("llm_tokens", 0), "seconds": seconds, "vs_scripted": round(ratio, 2),
                                 "hit_rate": cache.get("hit_rate"), "live_steps": cache.get("live")}
                        results.append(entry)
                        rate = "-" if entry["hit_rate"] is None else f"{entry['hit_rate']:.2f}"
                        print(f"{version:<15} {label:<18} {mode:<9} {entry['outcome']:<8} {entry['tokens']:>7} "
                              f"{seconds:>7.2f} {ratio:>10.2f}x {rate:>8}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps({"scripted": scripted, "runs": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
