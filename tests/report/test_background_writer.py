"""The recorder's background writer (issue 6): the same journal and files as writing inline, in
event order, a bounded backlog, and a failed write reported as a warning, never lost silently."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.report.background import SerialWriter
from pytest_guistate.report.journal import JOURNAL_NAME, read_journal
from tests.helpers.scenario import run_failing

VOLATILE = {"wall", "duration_s", "started", "timestamp", "elapsed_s", "elapsed_ms", "ended", "created"}


def _stable(value: Any) -> Any:
    """A journal value without wall-clock fields (they differ between any two runs)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _events(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.suffix in (".png", ".webp", ".jpg")}


def test_background_writing_gives_the_journal_and_files_of_inline_writing(tmp_path: Path) -> None:
    inline_run, _ = run_failing(tmp_path / "inline", tier="full")
    background_run, _ = run_failing(tmp_path / "background", tier="full", background=True)
    assert background_run.recorder.background and not inline_run.recorder.background
    inline, background = (_events(run.recorder.folder) for run in (inline_run, background_run))
    assert [e["type"] for e in background] == [e["type"] for e in inline]
    assert _stable(background) == _stable(inline)
    files = _files(background_run.recorder.folder)
    assert files == _files(inline_run.recorder.folder)
    befores = [c for e in background if e["type"] == "step" for c in e["files"].get("crops_before") or [] if c]
    assert befores and all(name in files for name in befores)


def test_a_failed_write_is_a_warning_naming_it_and_later_steps_are_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.scenario import login_and_fail, start

    run = start(tmp_path, "full", background=True)
    original = run.recorder.frames.before_crops
    calls = {"n": 0}

    def broken_once(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(28, "No space left on device")
        return original(*args, **kwargs)

    monkeypatch.setattr(run.recorder.frames, "before_crops", broken_once)

    def run_to_the_end() -> None:
        with pytest.raises(Exception, match="Synced just now"):
            login_and_fail(run)
        run.recorder.drain()

    # reported on the test's thread as soon as the recorder is next called, not at the end
    with pytest.warns(GuistateWarning, match=r"ArtifactRecorder\.on_step raised OSError: .*No space left on device.*"
                                             r"its report will miss this event"):
        run_to_the_end()
    steps = read_journal(run.recorder.folder).steps
    assert calls["n"] > 1, "the writer went on after the failed job"
    assert [s["record"]["name"] for s in steps][-1] == "wait for sync"


def test_the_writer_runs_jobs_in_order_and_stays_at_most_one_step_behind() -> None:
    writer = SerialWriter(inline=False)
    done: list[str] = []
    gate = threading.Event()

    def slow_step() -> None:
        gate.wait(5)
        done.append("step 1")

    writer.submit("step 1", slow_step, step=True)
    writer.submit("state", done.append, "state after step 1")
    releaser = threading.Timer(0.05, gate.set)
    releaser.start()
    started = time.monotonic()
    writer.submit("step 2", done.append, "step 2", step=True)  # waits for step 1: one step behind at most
    assert done[:1] == ["step 1"]
    assert time.monotonic() - started >= 0.04
    assert writer.drain() == []
    assert done == ["step 1", "state after step 1", "step 2"]
    writer.close()
    releaser.join()


def test_errors_are_kept_for_the_owner_and_inline_mode_raises() -> None:
    writer = SerialWriter(inline=False)
    writer.submit("bad", lambda: 1 / 0)
    writer.submit("good", lambda: None)
    errors = writer.close()
    assert [(what, type(exc)) for what, exc in errors] == [("bad", ZeroDivisionError)]
    with pytest.raises(ZeroDivisionError):
        SerialWriter(inline=True).submit("bad", lambda: 1 / 0)
    with pytest.raises(ValueError, match="steps_behind"):
        SerialWriter(inline=False, steps_behind=0)
