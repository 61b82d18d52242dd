"""The CI merge gate's verdict: which tests block the merge, and the exit code that says it.

A run must not merge (exit 1) for a failed (or errored, killed) test, a test lost with its worker
(`crashed`) or never run because the run stopped early (`not_run`, report/run_ledger.py), progress
below `--min-progress`, more than `--max-stale` stale-screen episodes in a test, a triage label named
by `--fail-on`, more heals than `--max-heals`, the action cache's limits (`cache.py`), a shard problem
(`shards.py`: missing, unfinished, disagreeing), or with `--baseline` a regression against an earlier
run (`baseline.py`); and a run with no test at all. Exit 2 is bad usage or a summary that cannot be
read, exit 3 a baseline with no test in common with the run (it gates nothing: another rootdir?).
The command is `cli.py`, the output formats `formats.py`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_guistate.report.gate.baseline import Thresholds, compare
from pytest_guistate.report.gate.cache import cache_reasons
from pytest_guistate.report.gate.shards import Combined
from pytest_guistate.report.run_ledger import LOST_OUTCOMES
from pytest_guistate.report.summary import TestSummary

__all__ = ["EXIT_BLOCKED", "EXIT_NO_BASELINE_OVERLAP", "EXIT_PASS", "EXIT_USAGE", "GateResult", "GateRow", "evaluate",
           "gate_reasons"]

_BAD_OUTCOMES = ("failed", "error", "killed")
EXIT_PASS = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2
EXIT_NO_BASELINE_OVERLAP = 3


@dataclass
class GateRow:
    test: TestSummary
    reasons: list[str] = field(default_factory=list)  # the gate's own criteria
    regressions: list[str] = field(default_factory=list)  # against the baseline
    old: TestSummary | None = None  # the baseline's row for this test

    @property
    def blocked(self) -> bool:
        return bool(self.reasons or self.regressions)

    @property
    def why(self) -> list[str]:
        return [*self.reasons, *(f"regression: {r}" for r in self.regressions)]


@dataclass
class GateResult:
    rows: list[GateRow]
    baseline: str | None = None  # the baseline summary's path, when given
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # run-level blockers (shards.py)
    warnings: list[str] = field(default_factory=list)
    shards: list[str] = field(default_factory=list)  # shard names, when the run was sharded

    @property
    def blocked(self) -> list[GateRow]:
        return [row for row in self.rows if row.blocked]

    @property
    def exit_code(self) -> int:
        """0: the run may merge; 1: it may not (a blocking test, a run-level problem, or no tests at all)."""
        return EXIT_BLOCKED if self.blocked or self.problems or not self.rows else EXIT_PASS

    @property
    def verdict(self) -> str:
        problems = f"{len(self.problems)} run problem(s)" if self.problems else ""
        if not self.rows:
            return "the summary holds no tests; refusing to pass an empty run" + (f" ({problems})" if problems else "")
        if self.blocked:
            return f"{len(self.blocked)} of {len(self.rows)} test(s) block the merge" + (
                f", and {problems}" if problems else "")
        if problems:
            return f"{problems} block the merge ({len(self.rows)} test(s) pass)"
        return f"all {len(self.rows)} test(s) pass the gate"


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
