"""The run-level index: `index.html` in the artifacts dir, one row per test, linking each viewer.

Written by the controller at session end and by `guistate report --run DIR`. Its rows come from
what is on disk and needs no live objects: every kept test folder's journal (meta and finish
events), plus, for tests whose folder was not kept (`--guistate-retain=failure` deletes passed
tests), the run summary (`--guistate-summary`) and the rows the process itself finished. A
folder's journal wins over a summary row for the same test. Jinja2 autoescaped like report.html.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_guistate.report.diskio import replace_file
from pytest_guistate.report.journal import JOURNAL_NAME, JournalError, read_journal
from pytest_guistate.report.pages import REPORT_NAME, environment, error_lines

__all__ = ["INDEX_NAME", "IndexRow", "rows_from_folders", "rows_from_summary", "write_index"]

INDEX_NAME = "index.html"
_ORDER = {"failed": 0, "error": 1, "killed": 2, "skipped": 4, "passed": 5}


@dataclass
class IndexRow:
    """One test in the index; `report` is the viewer's path relative to the index (None: not kept)."""

    nodeid: str
    outcome: str
    tier: str
    steps: int = 0
    milestones_done: int = 0
    milestones_total: int = 0
    triage: str | None = None
    heals: int = 0
    llm_tokens: int = 0
    report: str | None = None
    folder: str | None = None
    worker: str | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _heal_count(anchors: Iterable[dict[str, Any]]) -> int:
    return sum(1 for a in anchors if isinstance(a.get("data"), dict) and a["data"].get("kind") == "heal")


def _error_head(error: str | None) -> str:
    """The first line of the assertion message, short."""
    lines = error_lines(error)
    head = lines[0] if lines else ""
    return head if len(head) <= 200 else head[:199] + "\u2026"


def row_from_folder(folder: Path, root: Path) -> IndexRow:
    """One kept test folder -> its row (a journal without finish is a killed test)."""
    journal = read_journal(folder)
    finish = journal.finish or {}
    state = journal.last_state or {}
    tracker = state.get("tracker") or {}
    plan = journal.goal.get("plan") or tracker.get("decomposition") or []
    triage = finish.get("triage") if isinstance(finish.get("triage"), dict) else None
    report = folder / REPORT_NAME
    return IndexRow(
        nodeid=str(journal.meta.get("nodeid", folder.name)), outcome=str(finish.get("outcome") or "killed"),
        tier=str(journal.meta.get("tier", "")), steps=len(journal.steps),
        milestones_done=len(tracker.get("completed") or []), milestones_total=len(plan),
        triage=triage.get("label") if triage else None, heals=_heal_count(journal.anchor_dicts()),
        llm_tokens=int(finish.get("llm_tokens") or 0),
        report=report.relative_to(root).as_posix() if report.is_file() else None,
        folder=folder.relative_to(root).as_posix(), worker=journal.meta.get("worker"),
        error=_error_head(finish.get("error")),
    )


def rows_from_folders(root: Path) -> tuple[list[IndexRow], list[str]]:
    """Rows of every test folder under `root`, and the problems of folders that could not be read."""
    rows, problems = [], []
    for journal in sorted(root.glob(f"*/{JOURNAL_NAME}")):
        try:
            rows.append(row_from_folder(journal.parent, root))
        except (JournalError, OSError, ValueError) as exc:
            problems.append(f"{journal.parent.name}: {exc}")
    return rows, problems


def rows_from_summary(tests: Iterable[dict[str, Any]]) -> list[IndexRow]:
    """Rows from `guistate.summary/1` test entries (or `TestSummary.to_dict()`), without viewer links."""
    rows = []
    for test in tests:
        rows.append(IndexRow(
            nodeid=str(test.get("nodeid", "")), outcome=str(test.get("outcome", "")), tier=str(test.get("tier", "")),
            steps=int(test.get("steps") or 0), milestones_done=int(test.get("milestones_done") or 0),
            milestones_total=int(test.get("milestones_total") or 0), triage=test.get("triage"),
            heals=len(test.get("heals") or []), llm_tokens=int(test.get("llm_tokens") or 0),
            worker=test.get("worker"),
        ))
    return rows


def read_summary_tests(path: Path) -> list[dict[str, Any]]:
    """The `tests` of a summary JSON; a clear error for anything else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the run summary {path}: {exc}") from exc
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("guistate.summary/"):
        raise ValueError(f"{path} is not a guistate run summary (no guistate.summary schema)")
    return [t for t in data.get("tests") or [] if isinstance(t, dict)]


def merge_rows(folder_rows: list[IndexRow], other_rows: Iterable[IndexRow]) -> list[IndexRow]:
    """Folder rows, plus the other rows of tests without a folder; failures first, then by node id."""
    seen = {r.nodeid for r in folder_rows}
    rows = list(folder_rows)
    for row in other_rows:
        if row.nodeid in seen:
            continue
        seen.add(row.nodeid)
        rows.append(row)
    return sorted(rows, key=lambda r: (_ORDER.get(r.outcome, 3), r.nodeid, r.folder or ""))


def write_index(root: Path, extra: Iterable[IndexRow] = (), *, title: str = "") -> Path:
    """Write `root/index.html` from the folders under `root` and the `extra` rows."""
    folder_rows, problems = rows_from_folders(root)
    rows = merge_rows(folder_rows, extra)
    totals = {
        "tests": len(rows), "failed": sum(r.outcome in ("failed", "error", "killed") for r in rows),
        "passed": sum(r.outcome == "passed" for r in rows), "steps": sum(r.steps for r in rows),
        "heals": sum(r.heals for r in rows), "llm_tokens": sum(r.llm_tokens for r in rows),
    }
    html = environment().get_template("index.html.j2").render(
        rows=rows, totals=totals, problems=problems, title=title or root.name)
    root.mkdir(parents=True, exist_ok=True)
    target = root / INDEX_NAME
    # two runs sharing the dir each write it (from every folder there): replaced whole, never torn
    replace_file(target, html)
    return target
