"""`guistate gate SUMMARY`: the CI merge gate over a run summary.

Prints one row per test and exits 1 when the run must not merge: a failed (or errored, killed)
test, progress below `--min-progress`, more than `--max-stale` stale-screen episodes in a test,
or a triage label named by `--fail-on`. Exit 2 for a summary that cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pytest_guistate.report.summary import TestSummary, read_summary
from pytest_guistate.report.triage import LABELS

__all__ = ["gate_main", "gate_reasons"]

_BAD_OUTCOMES = ("failed", "error", "killed")


def gate_reasons(
    test: TestSummary,
    *,
    min_progress: float | None = None,
    max_stale: int | None = None,
    fail_on: Sequence[str] = (),
    allow_failed: bool = False,
    max_heals: int | None = None,
) -> list[str]:
    """Why this test blocks the merge ([] when it does not)."""
    reasons = []
    if test.outcome in _BAD_OUTCOMES and not allow_failed:
        reasons.append(f"outcome {test.outcome}")
    if min_progress is not None and test.milestones_total and test.progress < min_progress:
        reasons.append(f"progress {test.progress:.2f} < {min_progress:.2f}")
    if max_stale is not None and test.stale_episodes > max_stale:
        reasons.append(f"{test.stale_episodes} stale episodes > {max_stale}")
    healed = [h for h in test.heals if h.get("status") == "healed"]
    if max_heals is not None and len(healed) > max_heals:
        reasons.append(f"{len(healed)} locator(s) healed by memory > {max_heals}: "
                       + ", ".join(str(h.get("locator")) for h in healed))
    if test.triage and test.triage in fail_on:
        reasons.append(f"triage {test.triage}")
    return reasons


def _table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        out.write("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() + "\n")
        if number == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")


def gate_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="guistate gate", description="CI merge gate over a guistate run summary")
    parser.add_argument("summary", type=Path, metavar="SUMMARY", help="the --guistate-summary JSON")
    parser.add_argument("--min-progress", type=float, default=None, metavar="F",
                        help="fail a test whose milestones done/total is below F (0..1)")
    parser.add_argument("--max-stale", type=int, default=None, metavar="N",
                        help="fail a test with more than N stale-screen episodes")
    parser.add_argument("--fail-on", nargs="+", default=[], metavar="LABEL", choices=LABELS,
                        help=f"fail a test triaged with one of these labels ({', '.join(LABELS)})")
    parser.add_argument("--max-heals", type=int, default=None, metavar="N",
                        help="fail a test with more than N locators healed by memory (0 refuses any healed run)")
    parser.add_argument("--allow-failed", action="store_true",
                        help="do not block on failed tests by themselves (only the other criteria)")
    args = parser.parse_args(argv)
    if args.min_progress is not None and not 0.0 <= args.min_progress <= 1.0:
        parser.error(f"--min-progress must be within 0..1, got {args.min_progress}")
    try:
        tests = read_summary(args.summary)
    except ValueError as exc:
        print(f"guistate gate: {exc}", file=sys.stderr)
        return 2
    rows = [["test", "outcome", "tier", "steps", "milestones", "stale", "retries", "conflicts", "heals", "triage",
             "gate"]]
    blocked = 0
    for test in tests:
        reasons = gate_reasons(test, min_progress=args.min_progress, max_stale=args.max_stale,
                               fail_on=args.fail_on, allow_failed=args.allow_failed, max_heals=args.max_heals)
        blocked += bool(reasons)
        rows.append([test.nodeid, test.outcome, test.tier, str(test.steps),
                     f"{test.milestones_done}/{test.milestones_total}", str(test.stale_episodes), str(test.retries),
                     str(test.conflicts), str(len(test.heals)), test.triage or "-", "BLOCK: " + "; ".join(reasons) if reasons else "ok"])
    _table(rows, out)
    verdict = f"{blocked} of {len(tests)} test(s) block the merge" if blocked else f"all {len(tests)} test(s) pass the gate"
    out.write(verdict + "\n")
    if not tests:
        out.write("guistate gate: the summary holds no tests; refusing to pass an empty run\n")
        return 1
    return 1 if blocked else 0
