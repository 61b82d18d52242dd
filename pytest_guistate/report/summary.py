"""The run summary for CI gates: one JSON per run, merged from xdist workers' part files.

Each worker (or the single process) appends its tests to a part file
`<summary>.parts/<worker>.json`; the controller (the process without `workerinput`) merges all
parts into `--guistate-summary=PATH` at session finish. Part files are written whole after every
test (write to a temp name, then `os.replace`), so a worker that dies keeps what it had.
The same figures go into JUnit XML as `<property>`s (`junit_properties`).

Since `guistate.summary/2` the document also says what the run collected and what finished
(`run_ledger.py`): a collected test without a final report gets a `crashed` or `not_run` row, and
the file is replaced by an incomplete marker (`complete: false`) when the run starts, so a run
killed before its end never leaves the previous run's summary behind for the gate to pass.
`read_run` reads both versions (a /1 document has no `collected` list; the gate warns).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_guistate.report.run_ledger import LOST_OUTCOMES, RunLedger
from pytest_guistate.support.filelock import LOCKS_AVAILABLE, open_lock_file, try_lock

__all__ = [
    "SUMMARY_SCHEMA",
    "SUMMARY_SCHEMAS",
    "SummaryBusy",
    "SummaryPart",
    "SummaryRun",
    "TestSummary",
    "junit_properties",
    "lock_summary",
    "merge_parts",
    "parts_dir",
    "read_run",
    "read_summary",
    "reset_parts",
    "summarize",
    "summary_totals",
    "write_document",
    "write_incomplete",
]

SUMMARY_SCHEMA = "guistate.summary/2"
SUMMARY_SCHEMAS = ("guistate.summary/1", SUMMARY_SCHEMA)  # what `read_run` accepts


@dataclass
class TestSummary:
    """One test's figures. `milestones_total` 0 means no plan was declared."""

    nodeid: str
    outcome: str  # passed | failed | error | skipped | killed | crashed | not_run (run_ledger.py)
    tier: str
    steps: int = 0
    milestones_done: int = 0
    milestones_total: int = 0
    stale_episodes: int = 0
    retries: int = 0
    conflicts: int = 0
    triage: str | None = None
    triage_evidence: list[str] = field(default_factory=list)
    llm_tokens: int = 0
    artifacts: str | None = None  # folder path when retained
    worker: str | None = None
    duration_s: float | None = None
    heals: list[dict[str, Any]] = field(default_factory=list)  # memory heals: locator, status, step, title
    llm_cost_usd: float | None = None  # None: no LLM call or no price known
    file: str | None = None  # the test's file, relative to where pytest was started (posix separators)
    line: int | None = None  # 1-based line of the test's `def`
    fail_line: int | None = None  # 1-based line of the test file the failure went through (CI annotations)
    reason: str | None = None  # why a crashed / not_run test has no final report
    shard: str | None = None  # the CI shard that ran it (--guistate-shard / GUISTATE_SHARD)
    llm_cache: dict[str, Any] | None = None  # action cache: hits, misses, live steps, hit rate (issue 21)

    __test__ = False  # not a pytest test class despite the name

    @property
    def progress(self) -> float:
        """Fraction of milestones done (1.0 when no plan was declared and the test passed)."""
        if self.milestones_total == 0:
            return 1.0 if self.outcome == "passed" else 0.0
        return self.milestones_done / self.milestones_total

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["progress"] = round(self.progress, 4)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestSummary:
        known = {f.name for f in fields(cls)}
        missing = {"nodeid", "outcome", "tier"} - set(data)
        if missing:
            raise ValueError(f"summary entry lacks {sorted(missing)}: {str(data)[:120]}")
        return cls(**{k: v for k, v in data.items() if k in known})


def _conflict_keys(states: Sequence[dict[str, Any]], anchors: Sequence[dict[str, Any]]) -> set[tuple[Any, Any]]:
    keys = {(c.get("milestone"), c.get("step")) for s in states for c in (s.get("focus") or {}).get("conflicts") or []}
    keys |= {((a.get("data") or {}).get("milestone"), a.get("step")) for a in anchors
             if (a.get("data") or {}).get("kind") == "conflict"}
    return keys


def summarize(
    nodeid: str,
    outcome: str,
    tier: str,
    steps: Sequence[dict[str, Any]],
    anchors: Sequence[dict[str, Any]],
    states: Sequence[dict[str, Any]],
    *,
    triage: dict[str, Any] | None = None,
    artifacts: Path | None = None,
    worker: str | None = None,
    llm_tokens: int = 0,
    duration_s: float | None = None,
) -> TestSummary:
    """Figures from journal-shaped dicts (`states` in order; the last is the final state)."""
    final = states[-1] if states else {}
    tracker = final.get("tracker") or {}
    return TestSummary(
        nodeid=nodeid, outcome=outcome, tier=tier, steps=len(steps),
        milestones_done=len(tracker.get("completed") or []),
        milestones_total=len(tracker.get("decomposition") or []),
        stale_episodes=sum(1 for s in steps if s.get("episode")),
        retries=sum(int(s.get("retries") or 0) for s in steps),
        conflicts=len(_conflict_keys([*states, *(s["state"] for s in steps if s.get("state"))], anchors)),
        triage=(triage or {}).get("label"), triage_evidence=list((triage or {}).get("evidence") or []),
        llm_tokens=llm_tokens, artifacts=str(artifacts) if artifacts else None, worker=worker,
        duration_s=None if duration_s is None else round(duration_s, 3),
    )


def junit_properties(summary: TestSummary) -> list[tuple[str, object]]:
    """`item.user_properties` entries (pytest writes them as JUnit XML `<property>`s)."""
    props: list[tuple[str, object]] = [
        ("guistate_tier", summary.tier),
        ("guistate_steps", summary.steps),
        ("guistate_milestones", f"{summary.milestones_done}/{summary.milestones_total}"),
        ("guistate_progress", round(summary.progress, 4)),
        ("guistate_stale_episodes", summary.stale_episodes),
        ("guistate_retries", summary.retries),
        ("guistate_conflicts", summary.conflicts),
        ("guistate_llm_tokens", summary.llm_tokens),
    ]
    if summary.heals:
        props.append(("guistate_heals", len(summary.heals)))
    if summary.triage:
        props.append(("guistate_triage", summary.triage))
    if summary.artifacts:
        props.append(("guistate_artifacts", summary.artifacts))
    return props


def parts_dir(summary_path: Path) -> Path:
    return summary_path.with_name(summary_path.name + ".parts")


class SummaryBusy(RuntimeError):
    """Another pytest run on this host is writing the same summary file."""


def lock_summary(summary_path: Path) -> int | None:
    """Controller, at session start: hold `<summary>.lock` for the run (the OS drops it at exit).

    Two runs given one `--guistate-summary` would merge and delete each other's part files and the
    last to finish would replace the other's summary; the second is refused instead (issue 14).
    Returns the descriptor to keep open; raises `SummaryBusy` naming the holder."""
    if not LOCKS_AVAILABLE:  # pragma: no cover - Windows: no lock, as before
        return None
    lock = summary_path.with_name(summary_path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = open_lock_file(lock)
    if not try_lock(fd):
        holder = os.read(fd, 64).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise SummaryBusy(f"{summary_path} is being written by another pytest run (pid {holder}) on this host; "
                          "give each concurrent run its own --guistate-summary (the artifacts dir may be shared)") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    return fd


def reset_parts(summary_path: Path) -> None:
    """Controller, at session start: drop part files a previous run left behind."""
    folder = parts_dir(summary_path)
    if folder.is_dir():
        for part in folder.glob("*.json"):
            part.unlink()


class SummaryPart:
    """One process's tests; `add` rewrites the part file atomically."""

    def __init__(self, summary_path: Path, worker: str | None) -> None:
        self.worker = worker or "main"
        self.path = parts_dir(summary_path) / f"{self.worker}.json"
        self.tests: list[TestSummary] = []

    def add(self, summary: TestSummary) -> None:
        self.tests.append(summary)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"schema": SUMMARY_SCHEMA, "worker": self.worker,
                                   "tests": [t.to_dict() for t in self.tests]}), encoding="utf-8")
        os.replace(tmp, self.path)


def summary_totals(tests: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "tests": len(tests),
        "failed": sum(1 for t in tests if t["outcome"] in ("failed", "error", "killed", *LOST_OUTCOMES)),
        "lost": sum(1 for t in tests if t["outcome"] in LOST_OUTCOMES),
        "steps": sum(t["steps"] for t in tests),
        "stale_episodes": sum(t["stale_episodes"] for t in tests),
        "retries": sum(t["retries"] for t in tests),
        "conflicts": sum(t["conflicts"] for t in tests),
        "llm_tokens": sum(t["llm_tokens"] for t in tests),
        "llm_cost_usd": round(sum(t.get("llm_cost_usd") or 0.0 for t in tests), 6),
        "healed": sum(1 for t in tests for h in t.get("heals") or [] if h.get("status") == "healed"),
        "false_heals_prevented": sum(1 for t in tests for h in t.get("heals") or []
                                     if h.get("status") == "false_heal_prevented"),
    }


def write_document(summary_path: Path, document: dict[str, Any]) -> None:
    """Whole or not at all: a reader never sees half a summary."""
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = summary_path.with_name(summary_path.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2), encoding="utf-8")
    os.replace(tmp, summary_path)


def write_incomplete(summary_path: Path, *, shard: str | None = None, collected: Sequence[str] | None = None) -> None:
    """Controller, at session start (and once collection is known): the marker of a run in progress.

    If the run dies before `merge_parts`, the gate reads this and refuses it, instead of the previous
    run's summary that would otherwise still sit at the same path."""
    write_document(summary_path, {
        "schema": SUMMARY_SCHEMA, "created": round(time.time(), 3), "complete": False, "shard": shard,
        "collected": None if collected is None else list(collected), "finished": {}, "workers": [],
        "totals": summary_totals([]), "tests": []})


def merge_parts(summary_path: Path, *, remove_parts: bool = True, ledger: RunLedger | None = None,
                shard: str | None = None) -> dict[str, Any]:
    """Controller side: merge every part file into `summary_path`; returns the written document.

    With the run's `ledger`, every collected test that has neither a part row nor a final report
    gets a `crashed` / `not_run` row naming why (without one, `collected` is null)."""
    folder = parts_dir(summary_path)
    tests: list[dict[str, Any]] = []
    workers: list[str] = []
    for part in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        data = json.loads(part.read_text(encoding="utf-8"))
        if data.get("schema") != SUMMARY_SCHEMA:
            raise ValueError(f"{part}: schema {data.get('schema')!r} is not {SUMMARY_SCHEMA}")
        workers.append(str(data.get("worker")))
        tests.extend(TestSummary.from_dict(t).to_dict() for t in data.get("tests") or [])
    name: Callable[[str], str] = str
    if ledger is not None:
        name = ledger.namer(t["nodeid"] for t in tests)  # collected ids as the rows name them (no raw secret)
        for nodeid, (outcome, reason) in ledger.lost(t["nodeid"] for t in tests).items():
            tests.append(TestSummary(nodeid=nodeid, outcome=outcome, tier="-", reason=reason,
                                     file=nodeid.split("::")[0]).to_dict())
    for test in tests:
        test["shard"] = shard
    tests.sort(key=lambda t: (t["nodeid"], str(t.get("worker"))))
    document = {"schema": SUMMARY_SCHEMA, "created": round(time.time(), 3), "complete": True, "shard": shard,
                "collected": [name(n) for n in ledger.collected] if ledger is not None else None,
                "finished": dict(sorted((name(n), o) for n, o in ledger.outcomes.items())) if ledger is not None else {},
                "stop_reason": ledger.stop_reason if ledger is not None else None,
                "workers_down": list(ledger.workers_down) if ledger is not None else [],
                "workers": workers, "totals": summary_totals(tests), "tests": tests}
    write_document(summary_path, document)
    if remove_parts and folder.is_dir():
        for part in folder.glob("*.json"):
            part.unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
    return document


@dataclass
class SummaryRun:
    """One summary file as the gate sees it (either schema version)."""

    path: Path
    schema: str
    tests: list[TestSummary]
    complete: bool = True
    shard: str | None = None
    collected: list[str] | None = None  # None: a /1 document, or written without a ledger
    finished: dict[str, str] = field(default_factory=dict)  # final pytest outcome of every finished test
    stop_reason: str | None = None
    problems: list[str] = field(default_factory=list)  # run-level blockers a merged summary carries

    __test__ = False


def read_run(path: Path) -> SummaryRun:
    """Read and check one summary; ValueError names the file and the problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no summary file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") not in SUMMARY_SCHEMAS:
        raise ValueError(f"{path} is not a guistate.summary/1 document, nor a {SUMMARY_SCHEMA} one")
    tests = data.get("tests") or []
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        raise ValueError(f"{path}: \"tests\" must be a list of objects")
    collected = data.get("collected")
    if collected is not None and not (isinstance(collected, list) and all(isinstance(c, str) for c in collected)):
        raise ValueError(f"{path}: \"collected\" must be a list of node ids")
    finished = data.get("finished") or {}
    problems = data.get("problems") or []
    if not isinstance(finished, dict) or not isinstance(problems, list):
        raise ValueError(f"{path}: \"finished\" must be an object and \"problems\" a list")  # noqa: TRY004
    shard = data.get("shard")
    try:
        rows = [TestSummary.from_dict(t) for t in tests]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return SummaryRun(path=path, schema=str(data["schema"]), tests=rows, complete=data.get("complete", True) is not False,
                      shard=None if shard is None else str(shard), collected=collected,
                      finished={str(k): str(v) for k, v in finished.items()},
                      stop_reason=data.get("stop_reason"), problems=[str(p) for p in problems])


def read_summary(path: Path) -> list[TestSummary]:
    return read_run(path).tests
