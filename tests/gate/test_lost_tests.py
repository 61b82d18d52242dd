"""Issue 22 items 1 and 9: a run that lost a test never passes the gate (real xdist, a real SIGKILL)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_guistate.report.gate.cli import gate_main
from tests.gate.conftest import InnerRun

FEED = '''
import os
import signal

import pytest

FEED = pytest.mark.guistate(app="com.guistate.feed")


def open_dialog(device, guistate):
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
'''

KILLED = FEED + '''

@FEED
def test_green(device, guistate):
    open_dialog(device, guistate)


@FEED
def test_killed(device, guistate):
    open_dialog(device, guistate)
    os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-test: no report, no summary row


def test_plain():
    pass
'''


def _gate(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = gate_main(list(args), out=out)
    return code, out.getvalue()


def test_a_worker_killed_mid_test_is_a_crashed_row_that_blocks_the_gate(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_killed=KILLED)
    result = inner("-n", "2", "--guistate=standard", "--guistate-summary=run.json", "--guistate-artifacts=out")
    result.assert_outcomes(passed=2, failed=1)  # xdist's own "worker crashed" report
    document = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert document["schema"] == "guistate.summary/2" and document["complete"] is True
    assert sorted(document["collected"]) == ["test_killed.py::test_green", "test_killed.py::test_killed",
                                            "test_killed.py::test_plain"]
    assert document["finished"] == {"test_killed.py::test_green": "passed", "test_killed.py::test_plain": "passed"}
    rows = {t["nodeid"]: t for t in document["tests"]}
    killed = rows["test_killed.py::test_killed"]
    assert killed["outcome"] == "crashed" and "crashed while running" in killed["reason"]
    assert document["totals"]["lost"] == 1 and document["totals"]["failed"] == 1

    path = str(pytester.path / "run.json")
    code, text = _gate(path)
    assert code == 1 and "test_killed.py::test_killed" in text and "crashed" in text
    assert text.splitlines()[-1] == "1 of 2 test(s) block the merge"
    code, text = _gate(path, "--allow-failed")  # a lost test is not a failed test: it blocks anyway
    assert code == 1 and "crashed while running" in text
    code, text = _gate(path, "--format", "github")
    assert code == 1 and text.startswith("::error file=test_killed.py,title=guistate gate%3A test_killed.py%3A%3Atest_killed::")
    code, text = _gate(path, "--format", "json")
    blocked = [t for t in json.loads(text)["tests"] if t["blocked"]]
    assert [t["nodeid"] for t in blocked] == ["test_killed.py::test_killed"]
    assert blocked[0]["reasons"][0].startswith("crashed: worker")
    code, text = _gate(path, "--format", "markdown")
    assert code == 1 and "test\\_killed.py::test\\_killed" in text and "**block**: crashed" in text


STOPPED = FEED + '''

@FEED
def test_a_red(device, guistate):
    open_dialog(device, guistate)
    assert False, "red on purpose"


@FEED
def test_b_never_run(device, guistate):
    open_dialog(device, guistate)


def test_c_plain_never_run():
    pass


@pytest.mark.slow_to_select
def test_d_deselected():
    pass
'''


def test_tests_left_by_x_block_naming_why_and_deselected_ones_do_not(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_stopped=STOPPED)
    pytester.makeini("[pytest]\nmarkers =\n    slow_to_select: deselected in this test\n")
    inner("-x", "-m", "not slow_to_select", "--guistate=standard", "--guistate-summary=run.json",
          "--guistate-artifacts=out").assert_outcomes(failed=1, deselected=1)
    document = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert document["collected"] == ["test_stopped.py::test_a_red", "test_stopped.py::test_b_never_run",
                                     "test_stopped.py::test_c_plain_never_run"]  # -m deselection is no loss
    assert document["stop_reason"] == "stopping after 1 failures"
    rows = {t["nodeid"]: t for t in document["tests"]}
    for name in ("test_b_never_run", "test_c_plain_never_run"):
        row = rows[f"test_stopped.py::{name}"]
        assert (row["outcome"], row["reason"]) == ("not_run", "not run: the run stopped early (stopping after 1 failures)")
    code, text = _gate(str(pytester.path / "run.json"), "--allow-failed")
    assert code == 1 and "not_run: not run: the run stopped early" in text and "test_d_deselected" not in text


def test_a_summary_left_by_a_killed_run_is_refused_not_the_last_good_one(
    inner: InnerRun, pytester: pytest.Pytester
) -> None:
    """The controller itself dies: only the incomplete marker written at session start is there."""
    pytester.makepyfile(test_ok="def test_ok(guistate):\n    pass\n", conftest='''
import os, signal

def pytest_runtest_teardown(item):
    os.kill(os.getpid(), signal.SIGKILL)
''')
    summary = pytester.path / "run.json"
    summary.write_text(json.dumps({"schema": "guistate.summary/2", "complete": True, "collected": ["test_ok.py::test_ok"],
                                   "tests": [{"nodeid": "test_ok.py::test_ok", "outcome": "passed", "tier": "light"}]}))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--guistate-summary=run.json", timeout=120)
    assert result.ret == -9  # SIGKILL
    document = json.loads(summary.read_text(encoding="utf-8"))
    assert document["complete"] is False and document["collected"] == ["test_ok.py::test_ok"]
    for fmt in ("text", "json"):
        code, text = _gate(str(summary), "--format", fmt)
        assert code == 1 and "never finished its summary" in text


def _write(path: Path, document: dict[str, object]) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


ROW = {"nodeid": "t.py::a", "outcome": "passed", "tier": "light"}


def test_an_old_summary_without_collected_tests_passes_with_a_loud_warning_in_every_format(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.json", {"schema": "guistate.summary/1", "tests": [ROW]})
    code, text = _gate(old)
    assert code == 0 and "WARNING: " in text and "does not list the tests it collected" in text
    code, text = _gate(old, "--format", "github")
    assert code == 0 and "::warning title=guistate gate::" in text
    code, text = _gate(old, "--format", "markdown")
    assert code == 0 and "- **WARNING**:" in text
    code, text = _gate(old, "--format", "json")
    assert code == 0 and "cannot be detected" in json.loads(text)["warnings"][0]


def test_a_collected_test_with_no_row_and_no_final_report_is_crashed(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", {"schema": "guistate.summary/2", "complete": True,
                                          "collected": ["t.py::a", "t.py::b", "t.py::plain"],
                                          "finished": {"t.py::a": "passed", "t.py::plain": "passed"}, "tests": [ROW]})
    code, text = _gate(path, "--format", "json")
    document = json.loads(text)
    assert code == 1 and [t["nodeid"] for t in document["tests"] if t["blocked"]] == ["t.py::b"]
    assert document["tests"][1]["reasons"] == ["crashed: collected but never reported in its summary"]


def test_a_baseline_with_no_test_in_common_is_its_own_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _write(tmp_path / "run.json", {"schema": "guistate.summary/2", "collected": ["t.py::a"], "tests": [ROW]})
    other = _write(tmp_path / "base.json", {"schema": "guistate.summary/1",
                                            "tests": [{**ROW, "nodeid": "sub/t.py::a"}]})
    code, text = _gate(run, "--baseline", other)
    assert (code, text) == (3, "") and "has no test in common with the run" in capsys.readouterr().err
    code, text = _gate(run, "--baseline", other, "--format", "json")
    assert code == 3 and json.loads(text)["exit_code"] == 3 and "no test in common" in json.loads(text)["error"]
    code, text = _gate(run, "--baseline", other, "--format", "markdown")
    assert code == 3 and text.startswith("### ❌ guistate gate: error") and "no test in common" in text


@pytest.mark.parametrize("fmt", ["markdown", "json", "github"])
def test_usage_errors_are_printed_in_the_asked_format(tmp_path: Path, fmt: str) -> None:
    run = _write(tmp_path / "run.json", {"schema": "guistate.summary/2", "collected": ["t.py::a"], "tests": [ROW]})
    for args in (["--min-progress", "2"], ["--fail-on", "bogus_label"], ["--expect-shards", "0"]):
        out = io.StringIO()
        with pytest.raises(SystemExit) as stop:
            gate_main([run, "--format", fmt, *args], out=out)
        assert stop.value.code == 2 and out.getvalue(), args
        if fmt == "json":
            assert json.loads(out.getvalue())["verdict"] == "error"
    code, text = _gate(str(tmp_path / "missing.json"), "--format", fmt)
    assert code == 2 and "no summary file at" in text


def test_ctrl_c_leaves_the_running_and_the_queued_tests_blocking_as_not_run(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_interrupted='''
def test_a(guistate):
    raise KeyboardInterrupt  # as Ctrl-C would


def test_b(guistate):
    pass
''')
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--guistate-summary=run.json", no_reraise_ctrlc=True)
    document = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    rows = {t["nodeid"]: (t["outcome"], t["reason"]) for t in document["tests"]}
    assert rows == {"test_interrupted.py::test_a": ("not_run", "stopped while running: KeyboardInterrupt"),
                    "test_interrupted.py::test_b": ("not_run", "not run: the run stopped early (KeyboardInterrupt)")}
    assert _gate(str(pytester.path / "run.json"))[0] == 1
    inner("--collect-only", "--guistate-summary=run.json")  # collects only: nothing is lost, nothing passes
    assert json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["tests"] == []
