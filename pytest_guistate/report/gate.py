"""`guistate gate SUMMARY...`: the CI merge gate over a run summary (or one per CI shard).

Prints one row per test and exits 1 when the run must not merge: a failed (or errored, killed)
test, a test lost with its worker (`crashed`) or never run because the run stopped early
(`not_run`, run_ledger.py), progress below `--min-progress`, more than `--max-stale` stale-screen
episodes in a test, a triage label named by `--fail-on`, more heals than `--max-heals`, a shard
problem (shards.py: missing, unfinished, disagreeing), or with `--baseline` a regression against
an earlier run (`baseline.py`). Exit 2 for bad usage or a summary that cannot be read, exit 3 for
a baseline with no test in common with the run (it gates nothing: another rootdir?). Usage errors
are printed in the format asked for, so a job summary or a JSON consumer still gets one.
The output formats are `gate_format.py`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pytest_guistate.report.baseline import CHECKS, Thresholds, compare
from pytest_guistate.report.cache_gate import add_cache_options, cache_reasons
from pytest_guistate.report.gate_format import FORMATS, GateResult, GateRow, render, render_error
from pytest_guistate.report.run_ledger import LOST_OUTCOMES
from pytest_guistate.report.shards import Combined, combine, expected_shards
from pytest_guistate.report.summary import TestSummary, read_run, read_summary
from pytest_guistate.report.triage import LABELS

__all__ = ["EXIT_NO_BASELINE_OVERLAP", "evaluate", "gate_main", "gate_reasons"]

_BAD_OUTCOMES = ("failed", "error", "killed")
EXIT_USAGE = 2
EXIT_NO_BASELINE_OVERLAP = 3


class GateUsageError(Exception):
    """Bad arguments: reported in the asked format, exit 2 (argparse would only print to stderr)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise GateUsageError(f"{message} (see guistate gate --help)")


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
    if test.outcome in LOST_OUTCOMES:  # a lost test is no failed test: --allow-failed does not pass it
        reasons.append(f"{test.outcome}: {test.reason or 'no final report'}"
                       + (f" (shard {test.shard})" if test.shard else ""))
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


def evaluate(tests: Sequence[TestSummary] | Combined, args: argparse.Namespace,
             baseline: Sequence[TestSummary] | None = None, baseline_path: str | None = None) -> GateResult:
    """Apply the gate's criteria (and the baseline's, when given) to every test of the run."""
    combined = tests if isinstance(tests, Combined) else Combined(tests=list(tests))
    comparison = compare(baseline, combined.tests, _thresholds(args)) if baseline is not None else None
    rows = []
    for test in combined.tests:
        reasons = gate_reasons(test, min_progress=args.min_progress, max_stale=args.max_stale,
                               fail_on=args.fail_on, allow_failed=args.allow_failed, max_heals=args.max_heals)
        reasons += combined.blockers.get(test.nodeid, [])
        reasons += cache_reasons(test.llm_cache, max_live=getattr(args, "max_cache_live", None),
                                 min_hit_rate=getattr(args, "min_cache_hit_rate", None))
        old = comparison.old.get(test.nodeid) if comparison is not None else None
        found = comparison.regressions.get(test.nodeid, []) if comparison is not None else []
        rows.append(GateRow(test, reasons, list(found), old))
    result = GateResult(rows, baseline=baseline_path, problems=list(combined.problems),
                        warnings=list(combined.warnings), shards=_shard_names(combined))
    if comparison is not None:
        result.added, result.removed = comparison.added, comparison.removed
    return result


def _shard_names(combined: Combined) -> list[str]:
    """The shards the file names, else those its rows name (a merged summary)."""
    names = [s.name for s in combined.shards if s.name]
    return names or sorted({t.shard for t in combined.tests if t.shard})


def _thresholds(args: argparse.Namespace) -> Thresholds:
    return Thresholds(steps_ratio=args.max_steps_ratio, tokens_ratio=args.max_tokens_ratio,
                      cost_ratio=args.max_cost_ratio, ignore=frozenset(args.baseline_ignore))


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
