"""What `guistate gate` prints, in the CI's own language: text, markdown, github, json (the verdict
and its exit code are decided in `verdict.py`; this module only says them).

- `text`: an aligned table for logs (old -> new where a baseline differs), then the verdict;
- `markdown`: the same for a job summary (`>> "$GITHUB_STEP_SUMMARY"`, a GitLab report or MR
  note); cells are escaped, so app text in a node id or a reason cannot inject markup;
- `github`: one `::error file=…,line=…,title=…::` workflow annotation per blocking test, on the
  line of the test file where it failed (else its `def`), then the text table for the log;
- `json`: everything above for tools (schema `guistate.gate/2`: /1 plus `problems`, `warnings`,
  `shards`; a usage error is `{"schema", "verdict": "error", "exit_code", "error"}`).

Run-level problems (a missing or unfinished shard, shard.py) block like a test and come first in
every format; warnings (a summary without its collected list) are said in every format too.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pytest_guistate.report.gate.baseline import healed
from pytest_guistate.report.gate.verdict import GateResult, GateRow
from pytest_guistate.report.summary import TestSummary

__all__ = ["FORMATS", "GATE_SCHEMA", "render", "render_error"]

GATE_SCHEMA = "guistate.gate/2"
FORMATS = ("text", "markdown", "github", "json")


def _cost(test: TestSummary) -> str:
    return "-" if test.llm_cost_usd is None else f"{test.llm_cost_usd:.4f}"


# column -> value of one summary row; "test" and "gate" are not compared with the baseline
COLUMNS: dict[str, Callable[[TestSummary], str]] = {
    "outcome": lambda t: t.outcome,
    "tier": lambda t: t.tier,
    "steps": lambda t: str(t.steps),
    "milestones": lambda t: f"{t.milestones_done}/{t.milestones_total}",
    "stale": lambda t: str(t.stale_episodes),
    "retries": lambda t: str(t.retries),
    "conflicts": lambda t: str(t.conflicts),
    "heals": lambda t: str(len(healed(t))),
    "tokens": lambda t: str(t.llm_tokens),
    "cost": _cost,
    "triage": lambda t: t.triage or "-",
}


def _cells(row: GateRow, arrow: str, shards: bool = False) -> list[str]:
    cells = [row.test.nodeid, *([row.test.shard or "-"] if shards else [])]
    for value in COLUMNS.values():
        new = value(row.test)
        old = value(row.old) if row.old is not None else new
        cells.append(new if old == new else f"{old}{arrow}{new}")
    return cells


def _header(result: GateResult) -> list[str]:
    return ["test", *(["shard"] if result.shards else []), *COLUMNS, "gate"]


def _text(result: GateResult) -> str:
    rows = [_header(result)]
    rows += [[*_cells(row, " -> ", bool(result.shards)), "BLOCK: " + "; ".join(row.why) if row.blocked else "ok"]
             for row in result.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for number, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += _changes(result, lambda s: s)
    lines.append(result.verdict if result.rows else f"guistate gate: {result.verdict}")
    return "\n".join(lines) + "\n"


def _run_notes(result: GateResult, quote: Callable[[str], str]) -> list[str]:
    return [f"BLOCK: {quote(p)}" for p in result.problems] + [f"WARNING: {quote(w)}" for w in result.warnings]


def _changes(result: GateResult, quote: Callable[[str], str], notes: bool = True) -> list[str]:
    lines = _run_notes(result, quote) if notes else []
    if result.shards:
        lines.append(f"shards: {', '.join(quote(s) for s in result.shards)}")
    if result.baseline is not None:
        lines.append(f"baseline: {quote(result.baseline)}")
        if result.added:
            lines.append("new tests (not in the baseline): " + ", ".join(quote(n) for n in result.added))
        if result.removed:
            lines.append("removed tests (only in the baseline): " + ", ".join(quote(n) for n in result.removed))
    return lines


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|~"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;",
                                                                       "\n": " ", "\r": " "})


def md(text: str) -> str:
    """Markdown-safe text: no table breaks, links, HTML or emphasis from app data."""
    return text.translate(_MD_SPECIAL)


def _markdown(result: GateResult) -> str:
    mark = "❌" if result.exit_code else "✅"
    lines = [f"### {mark} guistate gate: {md(result.verdict)}", ""]
    notes = _run_notes(result, md)
    if notes:
        lines += [f"- **{note.split(':', 1)[0]}**:{note.split(':', 1)[1]}" for note in notes] + [""]
    if result.rows:
        header = _header(result)
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in result.rows:
            cells = [md(cell) for cell in _cells(row, " \u2192 ", bool(result.shards))]  # old → new
            gate = "**block**: " + "; ".join(md(w) for w in row.why) if row.blocked else "ok"
            lines.append("| " + " | ".join([*cells, gate]) + " |")
        lines.append("")
    lines += [f"- {line}" for line in _changes(result, md, notes=False)]
    return "\n".join(lines).rstrip() + "\n"


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def _github(result: GateResult, path_prefix: str) -> str:
    lines = []
    for row in result.blocked:
        props = []
        if row.test.file:
            props.append(f"file={_property(path_prefix + row.test.file)}")
            line = row.test.fail_line or row.test.line
            if line:
                props.append(f"line={line}")
        shard = f" [shard {row.test.shard}]" if row.test.shard else ""
        props.append(f"title={_property('guistate gate' + shard + ': ' + row.test.nodeid)}")
        lines.append(f"::error {','.join(props)}::{_data('; '.join(row.why))}")
    lines += [f"::error title=guistate gate::{_data(problem)}" for problem in result.problems]
    lines += [f"::warning title=guistate gate::{_data(warning)}" for warning in result.warnings]
    if not result.rows:
        lines.append(f"::error title=guistate gate::{_data(result.verdict)}")
    return "\n".join(lines) + ("\n" if lines else "") + _text(result)


def _json(result: GateResult) -> str:
    document = {
        "schema": GATE_SCHEMA, "verdict": "fail" if result.exit_code else "pass", "exit_code": result.exit_code,
        "message": result.verdict, "baseline": result.baseline, "added": result.added, "removed": result.removed,
        "problems": result.problems, "warnings": result.warnings, "shards": result.shards,
        "tests": [{"nodeid": r.test.nodeid, "shard": r.test.shard, "file": r.test.file, "line": r.test.line, "fail_line": r.test.fail_line,
                   "blocked": r.blocked, "reasons": r.reasons, "regressions": r.regressions,
                   "new": r.test.to_dict(), "old": r.old.to_dict() if r.old is not None else None}
                  for r in result.rows],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render(result: GateResult, fmt: str, *, path_prefix: str = "") -> str:
    if fmt == "text":
        return _text(result)
    if fmt == "markdown":
        return _markdown(result)
    if fmt == "github":
        return _github(result, path_prefix)
    if fmt == "json":
        return _json(result)
    raise ValueError(f"unknown gate format {fmt!r}; known: {', '.join(FORMATS)}")


def render_error(message: str, code: int, fmt: str) -> str:
    """A usage error in the asked format: a job summary or a JSON consumer is never left with nothing."""
    if fmt == "markdown":
        return f"### \u274c guistate gate: error\n\n{md(message)}\n"
    if fmt == "github":
        return f"::error title=guistate gate::{_data(message)}\n"
    if fmt == "json":
        return json.dumps({"schema": GATE_SCHEMA, "verdict": "error", "exit_code": code, "error": message},
                          indent=2, ensure_ascii=False) + "\n"
    return f"guistate gate: {message}\n"
