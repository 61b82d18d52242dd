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

Then the drifts a user's app makes (issue 32; `tests/cache/drift_suite.py`, monkeypatched from the inner
suite's conftest): a replaced Settings row, lookalike Gallery tiles, Bob's post below the Feed's first
screen, a late redraw, and a price drift (`guistate:seed` 9: ShopA is cheaper). Each is recorded live on
the undrifted apps with the memory on, then run live, strict and fallback on the drift; `acted` is the
phone's ground truth (what was toggled, selected, deleted or bought), `wrong act` an action the goal did not
mean, `false pass` a pass without the goal's effect.

Then seventeen releases of the Settings and Feed apps nobody here defined in the sim
(`drift_suite.RELEASE_TESTS`, on each persona of `--platforms`): switches swapped, a row above, a label in
capitals, with other spacing and punctuation, or in German, Dark mode already on, disabled or behind a confirm
dialog, "Dark mode" twice in two sections (near and far from its old place), its label a heading outside its
row, ids renamed, a check box for the switch, a new tab; the Feed's list reversed, an icon-only Delete, a
second post by Bob above his old one. Recorded once on the old release, each release's test replays its own
copy of the cache, one inner session per mode.

Timing is wall time on a shared machine: expect noise, compare ratios within one run.

Run: python benchmarks/cache_bench.py [--versions 1 renamed ...] [--user-drifts-only] [--platforms android ios]
     [--json OUT]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cache.drift_suite import DRIFT_CONFTEST, DRIFT_TESTS, FEED_RELEASES, RELEASE_TESTS, SETTINGS_DRIFTS, SHOP
from tests.cache.drift_suite import TESTS as DRIFT_SUITE

EXAMPLE = ROOT / "example_suite"
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


# drift -> (extra pytest arguments, the test it concerns, what the goal means on the drifted app)
USER_DRIFTS: dict[str, tuple[list[str], str, str]] = {
    "replaced_row": ([], DRIFT_TESTS["replaced_row"], "nothing (no Dark mode)"),
    "lookalike_tiles": ([], DRIFT_TESTS["lookalike_tiles"], "nothing (no Beach)"),
    "below_the_fold": ([], DRIFT_TESTS["below_the_fold"], "delete_post Bob/p2"),
    "late_redraw": ([], DRIFT_TESTS["late_redraw"], "delete_post Bob/p2"),
    "price_seed_9": (["--guistate-caps=caps.json"], SHOP, "add_to_cart ShopA"),
}
_ACTS = ("toggle", "select_photo", "move_to_album", "delete_post", "add_to_cart")


def _acted(folder: Path, test: str) -> str:
    """What the phone says the run did: the actions that change something, in order."""
    path = folder / "logs" / f"{test}.json"
    entries = json.loads(path.read_text()) if path.exists() else []
    def what(e: dict[str, Any]) -> str:
        if e["action"] == "delete_post":  # which of an author's posts: Bob may post twice
            return f"{e.get('author')}/{e.get('post_id')}"
        return str(e.get("setting") or e.get("label") or e.get("author") or e.get("shop")
                   or "+".join(e.get("labels") or []))

    return ", ".join(f"{e['action']} {what(e)}".strip() for e in entries if e["action"] in _ACTS) or "nothing"


# Releases of the Settings and Feed apps (`drift_suite.RELEASE_TESTS`): what the goal means on each. "nothing
# (already on)": the goal holds with nothing to do; any other "nothing (...)": the goal cannot be reached there.
RELEASE_MEANT: dict[str, str] = {**{f"test_dark_mode[{r}]": "toggle dark_mode" for r in SETTINGS_DRIFTS},
                                 "test_dark_mode[already_on]": "nothing (already on)",
                                 "test_dark_mode[disabled]": "nothing (Dark mode disabled)",
                                 **{f"test_bob[{r}]": "delete_post Bob/p2" for r in FEED_RELEASES}}


def _judged(acted: str, meant: str, outcome: str) -> tuple[bool, bool]:
    """(a wrong action: one the goal did not mean, a false pass: passed without the goal's effect). `meant`
    is the action and why in brackets; "nothing (already on)" is the only "nothing" a pass may have done."""
    action = meant.partition(" (")[0]
    wrong = acted not in ("nothing", action)
    false_pass = outcome == "passed" and (acted != action or action == "nothing" and meant != "nothing (already on)")
    return wrong, false_pass


def _row(drift: str, test: str, mode: str, row: dict[str, Any], acted: str, meant: str) -> dict[str, Any]:
    """One table row: printed, and returned for `--json`."""
    cache = row.get("llm_cache") or {}
    outcome = row.get("outcome", "?")
    wrong, false_pass = _judged(acted, meant, outcome)
    entry = {"drift": drift, "test": test, "mode": mode, "outcome": outcome,
             "tokens": row.get("llm_tokens", 0), "seconds": float(row.get("duration_s") or 0.0),
             "hit_rate": cache.get("hit_rate"), "live_steps": cache.get("live"), "acted": acted,
             "meant": meant, "wrong_action": wrong, "false_pass": false_pass, "first_miss": cache.get("first_miss")}
    rate = "-" if entry["hit_rate"] is None else f"{entry['hit_rate']:.2f}"
    live = "-" if entry["live_steps"] is None else str(entry["live_steps"])
    print(f"{drift:<24} {mode:<9} {outcome:<8} {entry['tokens']:>7} {entry['seconds']:>7.2f} "
          f"{rate:>8} {live:>5} {'YES' if wrong else 'no':>9} {'YES' if false_pass else 'no':>10}  "
          f"{acted} ({meant})", flush=True)
    return entry


_HEADER = (f"{'drift':<24} {'mode':<9} {'outcome':<8} {'tokens':>7} {'time s':>7} {'hit rate':>8} {'live':>5} "
           f"{'wrong act':>9} {'false pass':>10}  acted (meant)")


def _pytest(folder: Path, env: dict[str, str], *args: str) -> dict[str, dict[str, Any]]:
    """Run the inner suite in `folder` with its own memory; the summary's rows by test name."""
    summary = folder / "summary.json"
    summary.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--guistate-memory={folder / 'memory.sqlite'}", f"--guistate-summary={summary}", *args],
                   cwd=folder, env=env, capture_output=True, text=True, timeout=900, check=False)
    rows = json.loads(summary.read_text())["tests"] if summary.exists() else []
    return {row["nodeid"].rpartition("::")[2]: row for row in rows}


def releases(env: dict[str, str], tmp: Path, platform: str) -> list[dict[str, Any]]:
    """The Settings and Feed releases: recorded once on the old release (memory on), each release's test
    replaying its own copy of that cache; one inner session per mode, every release in it."""
    base = tmp / f"releases-{platform}"
    base.mkdir()
    (base / "conftest.py").write_text(DRIFT_CONFTEST)
    (base / "test_releases.py").write_text(RELEASE_TESTS)
    (base / "pytest.ini").write_text("[pytest]\nguistate_llm_updater = off\n")
    persona = f"--guistate-platform={platform}"
    recorded = _pytest(base, env, persona, "--guistate-llm=anthropic", "-k", "none")
    folder = base / "cassettes" / "test_releases" / ("ios" if platform == "ios" else "")
    for test, names in (("test_dark_mode", SETTINGS_DRIFTS), ("test_bob", FEED_RELEASES)):
        for name in names:
            shutil.copy(folder / f"{test}_none.actions.json", folder / f"{test}_{name}.actions.json")
    print(f"\nreleases on {platform} (recorded live on the old release: "
          + ", ".join(f"{t} {r.get('outcome')} {r.get('llm_tokens')} tokens" for t, r in recorded.items()) + ")",
          flush=True)
    print(_HEADER, flush=True)
    by_mode: dict[str, tuple[dict[str, dict[str, Any]], Path]] = {}
    for mode in ("live", "cache", "fallback"):
        run = tmp / f"releases-{platform}-{mode}"
        shutil.copytree(base, run)
        shutil.rmtree(run / "logs", ignore_errors=True)
        by_mode[mode] = (_pytest(run, env, persona, f"--guistate-llm={MODES[mode]}", "-k", "not none"), run)
    results: list[dict[str, Any]] = []
    for test, meant in RELEASE_MEANT.items():
        for mode, (rows, run) in by_mode.items():
            name = f"{platform}:{test.removeprefix('test_')}"
            results.append(_row(name, test, mode, rows.get(test, {}), _acted(run, test), meant))
    return results


def user_drifts(env: dict[str, str], tmp: Path) -> list[dict[str, Any]]:
    """Record the drift suite once (memory on), then each drift x live / strict / fallback."""
    base = tmp / "user-base"
    base.mkdir()
    (base / "conftest.py").write_text(DRIFT_CONFTEST)
    (base / "test_apps.py").write_text(DRIFT_SUITE)
    (base / "pytest.ini").write_text("[pytest]\nguistate_llm_updater = off\n")
    (base / "caps.json").write_text(json.dumps({"guistate:seed": 9}))

    recorded = _pytest(base, env, "--guistate-llm=anthropic")
    print("\nuser drifts (recorded live on the undrifted apps: "
          + ", ".join(f"{t} {r.get('outcome')} {r.get('llm_tokens')} tokens" for t, r in recorded.items()) + ")",
          flush=True)
    print(_HEADER, flush=True)
    results: list[dict[str, Any]] = []
    for drift, (extra, test, meant) in USER_DRIFTS.items():
        for mode in ("live", "cache", "fallback"):
            folder = tmp / f"user-{drift}-{mode}"
            shutil.copytree(base, folder)
            shutil.rmtree(folder / "logs", ignore_errors=True)
            rows = _pytest(folder, env, f"--guistate-llm={MODES[mode]}", f"--drift={drift}", "-k", test, *extra)
            results.append(_row(drift, test, mode, rows.get(test, {}), _acted(folder, test), meant))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=["1", *DRIFTS])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--user-drifts-only", action="store_true", help="only the drifts made from a conftest")
    parser.add_argument("--platforms", nargs="+", default=["android", "ios"], choices=["android", "ios"],
                        help="the personas the Settings and Feed releases run on")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    drifted: list[dict[str, Any]] = []
    with ReferenceServer() as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-bench-cache", "ANTHROPIC_BASE_URL": server.url}
        scripted: dict[str, float] = {}
        with tempfile.TemporaryDirectory(prefix="cache-bench-") as tmp:
            if args.user_drifts_only:
                args.versions = []
            drifted = user_drifts(env, Path(tmp))
            for platform in args.platforms:
                drifted += releases(env, Path(tmp), platform)
            if not args.versions:
                return _write(args.json, scripted, results, drifted)
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
    return _write(args.json, scripted, results, drifted)


def _write(path: Path | None, scripted: dict[str, float], results: list[dict[str, Any]],
           drifted: list[dict[str, Any]]) -> int:
    if path is not None:
        path.write_text(json.dumps({"scripted": scripted, "runs": results, "user_drifts": drifted}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
