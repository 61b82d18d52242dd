"""One gate over many CI shards: combine summaries and say what makes the whole run untrustworthy (issue 27).

Each shard of a CI matrix writes its own `--guistate-summary` (with `--guistate-shard` or
`$GUISTATE_SHARD` naming it). Combined, the run fails closed:

- a declared shard (`--expect-shards N` or names) whose summary is missing;
- a summary of a run that never finished (`complete: false`: pytest was killed);
- two summaries claiming one shard name;
- a collected test with neither a row nor a final report (a `crashed` row naming its shard);
- one test reported by two shards with different outcomes (one row, blocked, naming both).

A test reported by several shards with the same outcome is listed once. `guistate summary merge`
writes the combination as one summary (its problems travel in `problems`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.report.summary import SUMMARY_SCHEMA, SummaryRun, TestSummary, summary_totals, write_document

__all__ = ["Combined", "ShardInfo", "combine", "expected_shards", "write_merged"]

# worst first: the row kept when shards disagree
_SEVERITY = {"crashed": 0, "not_run": 1, "killed": 2, "error": 3, "failed": 4, "passed": 5, "skipped": 6}


@dataclass
class ShardInfo:
    name: str
    file: str
    tests: int
    collected: int | None
    complete: bool


@dataclass
class Combined:
    """The run as one: rows (each node id once across shards), run-level problems, warnings."""

    tests: list[TestSummary]
    shards: list[ShardInfo] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # block the merge, whatever the tests say
    warnings: list[str] = field(default_factory=list)  # said loudly, do not block
    blockers: dict[str, list[str]] = field(default_factory=dict)  # nodeid -> reasons from combining
    collected: list[str] | None = None
    finished: dict[str, str] = field(default_factory=dict)


def expected_shards(values: Sequence[str] | None) -> tuple[int | None, list[str]]:
    """`--expect-shards 3` (one positive integer: a count) or `--expect-shards a b c` (names)."""
    if not values:
        return None, []
    if len(values) == 1 and values[0].isdigit():
        count = int(values[0])
        if count < 1:
            raise ValueError(f"--expect-shards: a count must be >= 1, got {values[0]}")
        return count, []
    if len(set(values)) != len(values):
        raise ValueError(f"--expect-shards: a shard is named twice in {list(values)}")
    return len(values), list(values)


def _shard_name(run: SummaryRun, several: bool) -> str:
    return run.shard if run.shard else (run.path.name if several else "")


def combine(runs: Sequence[SummaryRun], *, expect_count: int | None = None,
            expect_names: Sequence[str] = ()) -> Combined:
    several = len(runs) > 1 or expect_count is not None
    result = Combined(tests=[])
    by_name: dict[str, list[str]] = {}
    collected: list[str] = []
    seen_collected: set[str] = set()
    any_uncollected = False
    rows: dict[str, list[TestSummary]] = {}
    for run in runs:
        name = _shard_name(run, several)
        label = f"{run.path}" + (f" (shard {name})" if name and name != run.path.name else "")
        by_name.setdefault(name, []).append(str(run.path))
        result.shards.append(ShardInfo(name, str(run.path), len(run.tests),
                                       None if run.collected is None else len(run.collected), run.complete))
        result.problems.extend(f"{label}: {p}" for p in run.problems)
        if not run.complete:
            result.problems.append(f"{label}: the run never finished its summary (pytest was killed or is still "
                                   f"running); its {len(run.collected or [])} collected test(s) are not vouched for")
        if run.collected is None:
            any_uncollected = True
            result.warnings.append(f"{label} ({run.schema}) does not list the tests it collected: a test lost with "
                                   "a crashed worker or process cannot be detected in it")
        if several and not run.shard:
            result.warnings.append(f"{run.path} names no shard (--guistate-shard / $GUISTATE_SHARD); "
                                   "its file name stands in")
        reported = {t.nodeid for t in run.tests}
        for nodeid in run.collected or []:
            if nodeid not in seen_collected:
                seen_collected.add(nodeid)
                collected.append(nodeid)
            if nodeid not in reported and nodeid not in run.finished and run.complete:
                run.tests.append(TestSummary(nodeid=nodeid, outcome="crashed", tier="-", file=nodeid.split("::")[0],
                                             reason="collected but never reported in its summary"))
        for nodeid, outcome in run.finished.items():
            result.finished.setdefault(nodeid, outcome)
        for test in run.tests:
            if name and not test.shard:
                test.shard = name
            rows.setdefault(test.nodeid, []).append(test)
    for name, files in sorted(by_name.items()):
        if name and len(files) > 1:
            result.problems.append(f"shard {name} has {len(files)} summaries ({', '.join(files)}): "
                                   "one per shard, or name them apart")
    names = [n for n in by_name if n]
    missing = [n for n in expect_names if n not in by_name]
    if missing:
        result.problems.append(f"missing shard(s) {', '.join(missing)}: no summary among "
                               f"{', '.join(str(r.path) for r in runs) or 'the files given'}")
    unexpected = [n for n in names if expect_names and n not in expect_names]
    if unexpected:
        result.problems.append(f"unexpected shard(s) {', '.join(unexpected)} (declared: {', '.join(expect_names)})")
    if expect_count is not None and not expect_names and len(runs) != expect_count:
        result.problems.append(f"expected {expect_count} shard summaries, got {len(runs)} "
                               f"({', '.join(names) or 'none named'}): a shard is missing or was uploaded twice")
    result.tests = _one_row_each(rows, result.blockers, several)
    result.collected = None if any_uncollected else collected
    return result


def _one_row_each(rows: dict[str, list[TestSummary]], blockers: dict[str, list[str]], several: bool) -> list[TestSummary]:
    """Within one summary a node id may repeat (`--dist each`); across shards it is listed once."""
    out: list[TestSummary] = []
    for nodeid in sorted(rows):
        group = rows[nodeid]
        shards = {t.shard for t in group}
        if not several or len(shards) <= 1:
            out.extend(group)
            continue
        outcomes = {t.outcome for t in group}
        worst = min(group, key=lambda t: _SEVERITY.get(t.outcome, 0))
        if len(outcomes) > 1:
            told = ", ".join(f"{t.outcome} in shard {t.shard}" for t in group)
            blockers.setdefault(nodeid, []).append(f"reported twice with different outcomes: {told}")
        out.append(worst)
    return out


def write_merged(path: Path, combined: Combined) -> dict[str, Any]:
    """`guistate summary merge`: the combination as one summary (problems kept, so the gate still blocks)."""
    tests = [t.to_dict() for t in combined.tests]
    problems = [*combined.problems,
                *(f"{nodeid}: {why}" for nodeid, reasons in sorted(combined.blockers.items()) for why in reasons)]
    document = {"schema": SUMMARY_SCHEMA, "created": round(time.time(), 3), "complete": True, "shard": None,
                "shards": [vars(s) for s in combined.shards], "collected": combined.collected,
                "finished": dict(sorted(combined.finished.items())), "problems": problems,
                "warnings": combined.warnings, "workers": [], "totals": summary_totals(tests), "tests": tests}
    write_document(path, document)
    return document

