"""The end of one test's record: finish event, triage, final JSON and HTML, then retention.

Called once per test by the runtime after `TaskSession.finish()` (which fed the recorder the
final state and anchor graph through `on_finish`). Order matters for a reader killed midway:
the journal gets its `finish` line and is fsync'd first; the derived files follow.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.report.artifacts import Retain, discard_folder, should_retain
from pytest_guistate.report.diskio import ArtifactWriteError, replace_file, write_file
from pytest_guistate.report.html import render_report, render_timeline_svg, report_model, thumbs_carried
from pytest_guistate.report.journal import read_journal
from pytest_guistate.report.names import relabel
from pytest_guistate.report.pages import REPORT_NAME, TIMELINE_NAME
from pytest_guistate.report.recorder import ArtifactRecorder
from pytest_guistate.report.summary import TestSummary, summarize
from pytest_guistate.report.triage import Triage, triage

__all__ = ["FAILED_OUTCOMES", "FinishedTest", "finalize"]

FAILED_OUTCOMES = ("failed", "error", "killed")


@dataclass
class FinishedTest:
    """What the runtime needs after a test: the summary row and, when kept, the files."""

    summary: TestSummary
    triage: Triage | None
    folder: Path | None  # None when not retained (deleted)
    report: Path | None
    timeline_svg: str  # the picture, also for Allure (text, not a file, so it survives deletion); "" when
    # the folder is gone and no Allure adapter takes it (`finalize(timeline=False)`)
    anchors_json: str
    progress_text: str
    write_error: ArtifactWriteError | None = None  # a refused write not yet raised in the test: raise it now
    report_model: dict[str, Any] | None = None  # what report.html was rendered from, for a copy elsewhere (Allure)


class _Writes:
    """Finishing goes on after a refused write (every file that still fits is written); the first
    error the test has not seen yet is handed back to be raised, later ones become warnings."""

    def __init__(self, recorder: ArtifactRecorder) -> None:
        self.recorder = recorder
        self.error: ArtifactWriteError | None = None

    def run(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except ArtifactWriteError as exc:
            if self.recorder.write_error is None and self.error is None:
                self.error = self.recorder.write_error = exc
            elif exc is not self.recorder.write_error:
                warnings.warn(GuistateWarning(f"guistate: {exc}"), stacklevel=3)


def _progress_text(state: dict[str, Any]) -> str:
    tracker = state.get("tracker") or {}
    lines = [f"goal: {(state.get('summary') or {}).get('goal', '')}"]
    lines += [f"  [x] {name}" for name in tracker.get("completed") or []]
    if tracker.get("current"):
        lines.append(f"  [>] {tracker['current']}")
    lines += [f"  [ ] {name}" for name in tracker.get("remaining") or []]
    return "\n".join(lines)


def finalize(
    recorder: ArtifactRecorder,
    *,
    outcome: str,
    error: str | None = None,
    retain: Retain | str = Retain.FAILURE,
    root: Path | None = None,
    llm_tokens: int = 0,
    duration_s: float | None = None,
    worker: str | None = None,
    timeline: bool = True,
) -> FinishedTest:
    """Close the journal, triage a failure, write state.json/anchors.json/report.html, apply retention.

    `timeline=False` (no Allure adapter takes the picture): a test whose folder is not kept builds no
    report model and no timeline, since nothing would show them (issue 38: work at the end of every
    passing test, on its critical path)."""
    failed = outcome in FAILED_OUTCOMES
    keep = should_retain(retain, failed=failed)
    writes = _Writes(recorder)
    if keep:  # the images of steps that passed were left unencoded until now (issue 42)
        writes.run(recorder.write_deferred)
    else:
        recorder.drop_deferred()
    writes.run(recorder.flush_extra)
    redact = recorder.redactor.scrub
    error_text = redact(error) if error else None
    state = recorder.state or {}
    anchors = recorder.anchors or {"anchors": recorder.anchor_list, "links": []}
    label = (triage(recorder.steps, anchors.get("anchors") or [], state, error_text, conflicts=recorder.conflicts)
             if failed else None)
    writes.run(recorder.journal.write, "finish", {
        "outcome": outcome, "error": error_text, "state": state, "anchors": anchors,
        "triage": label.to_dict() if label else None, "llm_tokens": llm_tokens,
    })
    recorder.journal.close(sync=keep)  # a folder not kept is deleted below: no power cut to guard it against
    writes.run(recorder.close_writer)
    folder = relabel(recorder, root=root, worker=worker)  # a secret learnt during the test leaves the name
    journal = read_journal(folder)
    states = [e["state"] for e in journal.states] + ([state] if state else [])
    model = report_model(journal) if keep or timeline else None
    svg = render_timeline_svg(model) if model is not None else ""  # its thumbnails are the crop files
    # what leaves the folder (Allure's timeline, the only picture of a passed test not kept) carries them
    carried = (render_timeline_svg({**model, "thumbs": thumbs_carried(model["thumbs"], folder)})
               if model is not None and timeline else svg)
    anchors_json = json.dumps(anchors, indent=2, ensure_ascii=False, default=repr)
    summary = summarize(
        str(journal.meta.get("nodeid", "")), outcome, recorder.tier, recorder.steps, anchors.get("anchors") or [],
        states, triage=label.to_dict() if label else None, artifacts=folder if keep else None, worker=worker,
        llm_tokens=llm_tokens, duration_s=duration_s,
    )
    report = None
    if keep:
        writes.run(write_file, folder / "state.json", json.dumps(state, indent=2, ensure_ascii=False))
        writes.run(write_file, folder / "anchors.json", anchors_json)
        writes.run(write_file, folder / TIMELINE_NAME, svg)
        report = folder / REPORT_NAME
        writes.run(replace_file, report, render_report(journal, model=model))  # never a torn report.html
        if not report.is_file():
            report = None
    else:
        discard_folder(folder, root)
    return FinishedTest(summary, label, folder if keep else None, report, carried, anchors_json, _progress_text(state),
                        writes.error, model if report is not None else None)
