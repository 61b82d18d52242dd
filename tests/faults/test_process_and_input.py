"""A killed test process keeps its journal and its report can be rebuilt; bad input is named (issue 14)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from pytest_guistate.report.html import report_model
from pytest_guistate.report.journal import read_journal

from .conftest import SECRET

KILLED = '''
import os
import signal

import pytest
from pytest_guistate import gone

SECRET = "hunter2-never-in-logs"


@pytest.mark.guistate(app="com.guistate.feed")
def test_killed(device, guistate):
    guistate.secret(SECRET)
    guistate.goal("Open and cancel Bob's delete dialog", plan=["dialog open", "dialog closed"])
    with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    with guistate.step("cancel the dialog", expect=gone("Delete post by Bob?")):
        device.back()
    os.kill(os.getpid(), signal.SIGKILL)
'''


def test_sigkill_mid_test_keeps_the_journal_and_the_report_rebuilds(run_inner, pytester) -> None:
    out = run_inner(KILLED, "--guistate-device=sim", subprocess=True, timeout=90)
    assert out.result.ret != 0
    folder = out.folders()[0]
    lines = (folder / "journal.jsonl").read_text("utf-8").splitlines()
    events = [json.loads(line) for line in lines[:-1]]  # a kill may tear the last line only
    try:
        events.append(json.loads(lines[-1]))
    except ValueError:
        pass
    steps = [e["record"]["name"] for e in events if e["type"] == "step"]
    assert steps[:1] == ["open the delete dialog"], "the writer is at most one step behind"
    assert not any(e["type"] == "finish" for e in events)
    rebuilt = subprocess.run([sys.executable, "-m", "pytest_guistate.cli", "report", str(folder)],
                             capture_output=True, text=True, timeout=60, check=False)
    assert rebuilt.returncode == 0, rebuilt.stderr
    html = (folder / "report.html").read_text("utf-8")
    assert "open the delete dialog" in html
    out.assert_no_secret()
    assert SECRET not in rebuilt.stdout + rebuilt.stderr
    out.record((), message=f"killed; journal valid up to step {len(steps)}, `guistate report` rebuilt report.html")


def test_sigkill_keeps_what_the_retention_says_of_each_finished_step(run_inner) -> None:
    """Issue 42 (docs/reports.md "What is written when"): killed under `--guistate-retain=on`, every
    finished step's crops and frames are on disk but the one being written; under the default
    `failure`, a step that passed is journaled (its images waited for the outcome the kill never
    gave) and the rebuilt report shows it without naming a missing file."""
    for retain in ("on", "failure"):
        out = run_inner(KILLED, "--guistate-device=sim", "--guistate=full", f"--guistate-retain={retain}",
                        subprocess=True, timeout=90)
        assert out.result.ret != 0
        folder = out.folders()[0]
        events = []
        for line in (folder / "journal.jsonl").read_text("utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass  # a kill may tear the last line only
        [first, *_] = [e for e in events if e["type"] == "step"]
        assert first["record"]["name"] == "open the delete dialog"
        if retain == "on":
            files = [*first["files"]["crops"], *first["files"]["frames"].values()]
            assert files and all((folder / rel).is_file() for rel in files)
        else:
            assert first["files"].get("deferred") and first["files"]["crops"] == []
        rebuilt = subprocess.run([sys.executable, "-m", "pytest_guistate.cli", "report", str(folder)],
                                 capture_output=True, text=True, timeout=60, check=False)
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert report_model(read_journal(folder))["missing_files"] == []
        shutil.rmtree(folder)  # the next run's folder is the only one


@pytest.mark.parametrize(("args", "names"), [
    (("--guistate-command-timeout=soon",), "--guistate-command-timeout: 'soon' is not a number of seconds"),
    (("--guistate-command-timeout=0",), "--guistate-command-timeout: must be > 0 seconds, got '0'"),
    (("-o", "guistate_session_timeout=-1"), "ini guistate_session_timeout: must be > 0 seconds, got '-1'"),
    (("--guistate-caps=caps.json",), "--guistate-caps: caps.json is not valid JSON"),
    (("-o", "guistate_cycle_limit=x"), "ini guistate_cycle_limit: 'x' is not an integer"),
], ids=["timeout word", "timeout zero", "session timeout negative", "caps invalid JSON", "cycle limit"])
def test_bad_input_is_named(run_inner, pytester, args: tuple[str, ...], names: str) -> None:
    pytester.path.joinpath("caps.json").write_text('{"platformName": "Android",', encoding="utf-8")
    out = run_inner("def test_nothing():\n    pass\n", *args)
    assert out.result.ret != 0
    assert names in out.text
    out.record((), message=names)


def test_an_unknown_marker_keyword_is_named(run_inner) -> None:
    out = run_inner('''
import pytest


@pytest.mark.guistate(timout=5)
def test_typo():
    pass
''', "--guistate-device=sim")
    out.result.assert_outcomes(passed=1)
    assert "unknown keyword(s) timout; known: tier, app" in out.text
    out.record((), message="PytestConfigWarning: unknown keyword(s) timout; known: tier, app, ...")
