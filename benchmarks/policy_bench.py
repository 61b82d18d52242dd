"""Issue 28: the reference policy over the goal table (tests/llm/goal_table.py), one row per goal.

Each goal runs through the real Appium client against the sim over HTTP (both personas) and the real
`anthropic` SDK against the local reference server, without faults. A row: whether the ground truth
(`device.action_log()`) shows exactly the goal's effects and the run ended as it should ("ok"), how
it ended, steps run, model calls, tokens (input + cache + output, the server's `usage`), wall time
(noisy on a shared machine), and the effects the log shows.

Run: python benchmarks/policy_bench.py [--json OUT] [--only ID ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_guistate.devices.sim import SimServer
from pytest_guistate.llm.reference.server import ReferenceServer
from tests.llm.goal_table import CASES, effects, run_case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    parser.add_argument("--only", nargs="*", default=[], help="case ids to run (default: all)")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    print(f"{'goal':<28} {'persona':<8} {'ok':<3} {'outcome':<10} {'steps':>5} {'calls':>5} {'tokens':>7} "
          f"{'wall s':>6}  effects (action log)")
    with SimServer() as sim, ReferenceServer() as server:
        for case in CASES:
            if args.only and case.id not in args.only:
                continue
            start = time.perf_counter()
            outcome = run_case(case, sim.url, server.url)
            wall = time.perf_counter() - start
            shown = "; ".join(" ".join(e) for e in effects(outcome.log)) or "-"
            row = {"goal": case.goal, "id": case.id, "persona": case.platform, "ok": not outcome.problems,
                   "problems": outcome.problems, "outcome": outcome.result.outcome, "steps": outcome.steps,
                   "calls": len(outcome.result.turns), "tokens": outcome.tokens, "wall_s": round(wall, 2),
                   "effects": shown, "summary": outcome.result.summary}
            rows.append(row)
            print(f"{case.id:<28} {case.platform:<8} {'y' if row['ok'] else 'n':<3} {row['outcome']:<10} "
                  f"{row['steps']:>5} {row['calls']:>5} {row['tokens']:>7} {wall:>6.1f}  {shown[:90]}")
    ok = sum(r["ok"] for r in rows)
    print(f"{ok}/{len(rows)} goals as expected ({sum(not c.success for c in CASES if c.id in {r['id'] for r in rows})}"
          f" of them expected give-ups); tokens {sum(r['tokens'] for r in rows)}, steps {sum(r['steps'] for r in rows)}")
    for r in rows:
        if not r["ok"]:
            print(f"  {r['id']}: {r['problems']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
