"""`guistate summary merge SHARD.json... -o RUN.json`: one summary out of a CI matrix's shard summaries.

The same combination as `guistate gate` over several files (shards.py), written down: every test
once, the collected lists joined, and every problem found (a missing or unfinished shard, a test
reported twice with different outcomes) kept in `problems`, so gating the merged file still blocks.
Exit 0 when written (even with problems: the gate decides), 2 on bad usage or an unreadable input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_guistate.report.gate.shards import combine, expected_shards, write_merged
from pytest_guistate.report.summary import read_run

__all__ = ["summary_main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guistate summary", description="work with --guistate-summary files")
    sub = parser.add_subparsers(dest="command", required=True)
    merge = sub.add_parser("merge", help="merge shard summaries into one (problems kept for the gate)")
    merge.add_argument("summaries", type=Path, nargs="+", metavar="SUMMARY")
    merge.add_argument("-o", "--output", type=Path, required=True, metavar="RUN_JSON")
    merge.add_argument("--expect-shards", nargs="+", default=None, metavar="N|NAME",
                       help="a count (3) or the shard names (1 2 3); a missing one becomes a problem")
    return parser


def summary_main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(list(argv))
    try:
        count, names = expected_shards(args.expect_shards)
        runs = [read_run(path) for path in args.summaries]
    except ValueError as exc:
        print(f"guistate summary: {exc}", file=sys.stderr)
        return 2
    if args.output.resolve() in {path.resolve() for path in args.summaries}:
        print(f"guistate summary: {args.output} is also an input; write the merge elsewhere", file=sys.stderr)
        return 2
    combined = combine(runs, expect_count=count, expect_names=names)
    document = write_merged(args.output, combined)
    print(f"merged {len(runs)} summaries ({', '.join(s.name or s.file for s in combined.shards)}) into {args.output}: "
          f"{document['totals']['tests']} test(s), {document['totals']['lost']} lost, "
          f"{len(document['problems'])} problem(s)")
    for problem in document["problems"]:
        print(f"  problem: {problem}")
    return 0
