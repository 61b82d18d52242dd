"""`guistate gate SUMMARY...`: the CI merge gate over a run summary (or one per CI shard).

Prints one row per test (`formats.py`) and exits with the verdict's code (`verdict.py`: 0 merge,
1 refused, 2 usage, 3 a baseline with nothing in common). Usage errors are printed in the format
asked for, so a job summary or a JSON consumer still gets one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from pytest_guistate.report.gate.baseline import CHECKS
from pytest_guistate.report.gate.cache import add_cache_options
from pytest_guistate.report.gate.formats import FORMATS, render, render_error
from pytest_guistate.report.gate.shards import combine, expected_shards
from pytest_guistate.report.gate.verdict import EXIT_NO_BASELINE_OVERLAP, EXIT_USAGE, evaluate
from pytest_guistate.report.summary import read_run, read_summary
from pytest_guistate.report.triage import LABELS

__all__ = ["gate_main"]


class GateUsageError(Exception):
    """Bad arguments: reported in the asked format, exit 2 (argparse would only print to stderr)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise GateUsageError(f"{message} (see guistate gate --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="guistate gate", description="CI merge gate over a guistate run summary (or one per CI shard)",
        epilog="exit codes: 0 the run may merge; 1 the gate refuses it (a blocking, crashed or not-run test, a "
               "regression, a missing or unfinished shard, or no tests at all); 2 usage error or a summary that "
               "cannot be read; 3 the baseline has no test in common with the run")
    parser.add_argument("summaries", type=Path, nargs="+", metavar="SUMMARY",
                        help="the --guistate-summary JSON; several: one per CI shard, gated as one run")
    parser.add_argument("--expect-shards", nargs="+", default=None, metavar="N|NAME",
                        help="the shards that must be there: a count (3) or their names (1 2 3); a missing one blocks")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default), markdown (job summary), github (workflow annotations), json")
    parser.add_argument("--path-prefix", default="", metavar="DIR/",
                        help="prepended to test files in github annotations (pytest ran in a subfolder)")
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
    add_cache_options(parser)
    base = parser.add_argument_group("baseline (regressions against an earlier run, e.g. the main branch's last)")
    base.add_argument("--baseline", type=Path, default=None, metavar="OLD_SUMMARY",
                      help="fail tests that got worse than in this summary")
    base.add_argument("--max-steps-ratio", type=float, default=1.5, metavar="R",
                      help="fail a test taking more than R times its baseline steps (default 1.5 = +50%%)")
    base.add_argument("--max-tokens-ratio", type=float, default=1.5, metavar="R",
                      help="fail a test using more than R times its baseline LLM tokens (default 1.5)")
    base.add_argument("--max-cost-ratio", type=float, default=1.5, metavar="R",
                      help="fail a test costing more than R times its baseline LLM cost (default 1.5)")
    base.add_argument("--baseline-ignore", nargs="+", default=[], choices=CHECKS, metavar="CHECK",
                      help=f"switch baseline checks off ({', '.join(CHECKS)})")
    return parser


def _asked_format(argv: Sequence[str]) -> str:
    """The --format of a command line that may not parse (so its error can still be rendered in it)."""
    fmt = "text"
    for index, arg in enumerate(argv):
        if arg == "--format" and index + 1 < len(argv):
            fmt = argv[index + 1]
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
    return fmt if fmt in FORMATS else "text"


def _fail(message: str, code: int, fmt: str, out: TextIO) -> int:
    print(f"guistate gate: {message}", file=sys.stderr)
    if fmt != "text":
        out.write(render_error(message, code, fmt))
    return code


def gate_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    fmt = _asked_format(argv)
    try:
        args = _parser().parse_args(argv)
        count, names = _check(args)
        runs = [read_run(path) for path in args.summaries]
        baseline = read_summary(args.baseline) if args.baseline is not None else None
    except GateUsageError as exc:  # as argparse would: SystemExit(2), but the message in the asked format too
        raise SystemExit(_fail(str(exc), EXIT_USAGE, fmt, out)) from None
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE, fmt, out)
    combined = combine(runs, expect_count=count, expect_names=names)
    if baseline is not None and combined.tests and not {t.nodeid for t in baseline} & {t.nodeid for t in combined.tests}:
        return _fail(f"the baseline {args.baseline} has no test in common with the run ({len(baseline)} vs "
                     f"{len(combined.tests)} test(s)): was it recorded from another rootdir or suite? "
                     "It would gate nothing", EXIT_NO_BASELINE_OVERLAP, fmt, out)
    result = evaluate(combined, args, baseline, str(args.baseline) if args.baseline is not None else None)
    out.write(render(result, args.format, path_prefix=args.path_prefix))
    return result.exit_code


def _check(args: argparse.Namespace) -> tuple[int | None, list[str]]:
    """Values argparse cannot check; returns the expected shards (count, names)."""
    if args.min_progress is not None and not 0.0 <= args.min_progress <= 1.0:
        raise GateUsageError(f"--min-progress must be within 0..1, got {args.min_progress}")
    for option in ("max_steps_ratio", "max_tokens_ratio", "max_cost_ratio"):
        if getattr(args, option) < 1.0:
            raise GateUsageError(f"--{option.replace('_', '-')} must be >= 1.0 (1.5 allows +50%), "
                                 f"got {getattr(args, option)}")
    try:
        return expected_shards(args.expect_shards)
    except ValueError as exc:
        raise GateUsageError(str(exc)) from None
