"""Tokens and milliseconds per `guistate.query` (issue 46): live (the real SDK against the local reference
server over HTTP) and replayed from the action cache (strict: no model), on the sim's Shop, Gallery, Feed
and Settings screens.

Each question of `QUESTIONS` is asked live on seed 1 (`TestLLM.query`: settle, prompt with the screenshot and
the element list, one `report_answer` call, verification), the passing queries are written to an action cache,
then the same questions are read again strictly on seed 2 (every price moved) and the value is checked against
the phone's ground truth (`shop_prices`, the apps' own state). `ms` is wall time per query, including the
settled observation both modes take; the reference server answers in well under a millisecond of policy, so
the live column is the plugin's and the SDK's cost, not a model's latency (a real model adds seconds).

Timing is wall time on a shared machine: expect noise, compare the two columns of one run.

Run: python benchmarks/query_bench.py [--repeat N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.core.values import shape_of
from pytest_guistate.devices.sim.apps.shop import PRODUCTS, shop_prices
from pytest_guistate.devices.sim.phone import Phone
from pytest_guistate.llm.client import LLMSettings, Mode
from pytest_guistate.llm.facade import open_llm
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.helpers.direct_screen import DirectScreen


class Item(TypedDict):
    name: str
    price: float


def _shop(seed: int) -> tuple[Phone, DirectScreen, TaskSession]:
    clock = VirtualClock()
    phone = Phone(app_package="com.guistate.shopa", seed=seed, clock=clock)
    screen = DirectScreen(phone)
    session = TaskSession(screen, name="query-bench", clock=clock)
    screen.tap_text("Search")
    session.observe(settled=True)
    return phone, screen, session


Truth = Callable[[int], Any]
QUESTIONS: list[tuple[str, Any, Truth]] = [
    ("the price of Phone Case", float, lambda seed: shop_prices(seed)["Phone Case"][0]),
    ("the price of Smart Watch", str, lambda seed: f"${shop_prices(seed)['Smart Watch'][0]:.2f}"),
    ("how many items are in the cart", int, lambda seed: 0),
    ("the names of the products", list[str], lambda seed: [name for name, _, _ in PRODUCTS]),
    (
        "the name and price of each product",
        list[Item],
        lambda seed: [{"name": name, "price": shop_prices(seed)[name][0]} for name, _, _ in PRODUCTS],
    ),
]


def _run(mode: Mode, seed: int, folder: Path) -> list[dict[str, Any]]:
    phone, screen, session = _shop(seed)
    llm = open_llm(
        LLMSettings(mode=mode, timeout_s=30.0, updater="off"),
        session,
        screen,
        test_file=folder / "test_bench.py",
        test_name="test_queries",
    )
    rows = []
    try:
        for question, tp, truth in QUESTIONS:
            used = llm.client.ledger.used if llm.client is not None else 0
            started = time.perf_counter()
            value = llm.query(question, shape_of(tp)).value
            ms = (time.perf_counter() - started) * 1000
            tokens = (llm.client.ledger.used if llm.client is not None else 0) - used
            rows.append(
                {
                    "question": question,
                    "type": shape_of(tp).name,
                    "ms": round(ms, 1),
                    "tokens": tokens,
                    "right": value == truth(seed),
                }
            )
        llm.close(passed=True)
    finally:
        phone.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode (the median is printed)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    results: dict[str, list[list[dict[str, Any]]]] = {"live": [], "replay": []}
    with ReferenceServer() as server, tempfile.TemporaryDirectory() as tmp:
        os.environ.update({"ANTHROPIC_API_KEY": "sk-ant-bench-0000", "ANTHROPIC_BASE_URL": server.url})
        for _ in range(args.repeat):
            folder = Path(tmp) / f"run{len(results['live'])}"
            results["live"].append(_run(Mode.ANTHROPIC, 1, folder))
            served = len(server.requests)
            results["replay"].append(_run(Mode.CACHE, 2, folder))
            assert len(server.requests) == served, "the strict replay asked the model"
    print(f"{'question':38} {'type':36} {'live ms':>8} {'tokens':>7} {'replay ms':>9} {'tokens':>6} right")
    summary = []
    for i, (question, tp, _) in enumerate(QUESTIONS):
        live = sorted(r[i]["ms"] for r in results["live"])[len(results["live"]) // 2]
        replay = sorted(r[i]["ms"] for r in results["replay"])[len(results["replay"]) // 2]
        tokens = results["live"][0][i]["tokens"]
        replay_tokens = max(r[i]["tokens"] for r in results["replay"])
        right = all(r[i]["right"] for runs in results.values() for r in runs)
        summary.append(
            {
                "question": question,
                "live_ms": live,
                "live_tokens": tokens,
                "replay_ms": replay,
                "replay_tokens": replay_tokens,
                "right": right,
            }
        )
        print(
            f"{question:38} {shape_of(tp).name:36} {live:8.1f} {tokens:7d} {replay:9.1f} {replay_tokens:6d} "
            f"{'y' if right else 'NO'}"
        )
    live_ms = sum(s["live_ms"] for s in summary) / len(summary)
    replay_ms = sum(s["replay_ms"] for s in summary) / len(summary)
    tokens = sum(s["live_tokens"] for s in summary) / len(summary)
    print(
        f"per query: live {live_ms:.1f} ms and {tokens:.0f} tokens; replay {replay_ms:.1f} ms and 0 tokens "
        f"({live_ms / replay_ms:.1f}x faster); values right on both seeds: "
        f"{sum(s['right'] for s in summary)}/{len(summary)}"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0 if all(s["right"] for s in summary) else 1


if __name__ == "__main__":
    raise SystemExit(main())
