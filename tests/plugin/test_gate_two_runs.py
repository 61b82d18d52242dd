"""`guistate gate SUMMARY --baseline OLD` on the summaries of two real runs of one suite that differ.

The inner suite runs on the embedded sim twice (`GATE_RUN=1`, then `2`, like main and a pull
request). In the second run one test takes twice its steps, one meets a list that redraws late
(a stale-screen episode), one fails, one is renamed and one stays the same. The gate, with the first
summary as its baseline, must find exactly those regressions, show `old -> new` in the cells of
every format, list the renamed test as new and removed, and exit 1 (0 once the checks are off).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_guistate.report.gate.cli import gate_main

InnerRun = Callable[..., pytest.RunResult]

SUITE = '''
import os

import pytest

from pytest_guistate import gone

RUN = int(os.environ["GATE_RUN"])
FEED = "com.guistate.feed"


def open_and_cancel(device, guistate, author):
    with guistate.step(f"open the delete dialog on {author}'s post", expect=f"Delete post by {author}?"):
        device.tap(desc=f"Delete post by {author}")
    with guistate.step("cancel", expect=gone(f"Delete post by {author}?")):
        device.tap(id="android:id/button2")


@pytest.mark.guistate(app=FEED)
def test_steady(device, guistate):
    guistate.goal("Look at Bob's post", plan=["looked"])
    open_and_cancel(device, guistate, "Bob")
    guistate.milestone("looked")


@pytest.mark.guistate(app=FEED)
def test_longer(device, guistate):
    guistate.goal("Look at the posts", plan=["looked"])
    open_and_cancel(device, guistate, "Bob")
    if RUN == 2:  # the flow now needs a detour: twice the steps
        open_and_cancel(device, guistate, "Dave")
    guistate.milestone("looked")


@pytest.mark.guistate(app=FEED, faults={"refresh_delay": 1.5} if RUN == 2 else {})
def test_delete(device, guistate):
    guistate.goal("Delete Carol's post", plan=[("Carol's post gone", gone("Carol"))])
    with guistate.step("open the delete dialog on Carol's post", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("confirm the delete", expect=gone("Carol"), idempotent=False):
        device.tap(id="android:id/button1")
    guistate.milestone("Carol's post gone")


@pytest.mark.guistate(app=FEED)
def test_breaks(device, guistate):
    guistate.goal("Look at Erin's post", plan=["looked"])
    open_and_cancel(device, guistate, "Erin")
    assert RUN == 1, "the app changed under the test"
    guistate.milestone("looked")


if RUN == 1:
    def test_old_name(device, guistate):
        guistate.goal("Nothing", plan=[])
else:
    def test_new_name(device, guistate):
        guistate.goal("Nothing", plan=[])
'''


def gate(*args: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = gate_main([str(a) for a in args], out=out)
    return code, out.getvalue()


def test_the_gate_finds_what_got_worse_between_two_real_runs(
    inner: InnerRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_shop=SUITE)
    summaries = {}
    for run, outcomes in ((1, {"passed": 5}), (2, {"passed": 4, "failed": 1})):
        monkeypatch.setenv("GATE_RUN", str(run))
        summaries[run] = pytester.path / f"run{run}.json"
        inner("--guistate=standard", f"--guistate-summary={summaries[run]}", f"--guistate-artifacts=art{run}"
              ).assert_outcomes(**outcomes)
    old, new = summaries[1], summaries[2]
    steps = {t["nodeid"].rpartition("::")[2]: t["steps"] for t in json.loads(new.read_text())["tests"]}
    assert steps["test_longer"] == 4 and steps["test_steady"] == 2

    code, text = gate(new, "--baseline", old)
    assert code == 1
    rows = {line.split()[0].rpartition("::")[2]: line for line in text.splitlines() if line.startswith("test_shop.py")}
    assert set(rows) == {"test_steady", "test_longer", "test_delete", "test_breaks", "test_new_name"}
    assert rows["test_steady"].rstrip().endswith("ok") and " -> " not in rows["test_steady"]
    assert " 2 -> 4 " in rows["test_longer"] and "regression: steps 2 -> 4 (+100% > +50%)" in rows["test_longer"]
    assert " 0 -> 1 " in rows["test_delete"] and "regression: stale-screen episodes 0 -> 1" in rows["test_delete"]
    assert "passed -> failed" in rows["test_breaks"]
    assert "BLOCK: outcome failed; regression: passed before, failed now" in rows["test_breaks"]
    assert rows["test_new_name"].rstrip().endswith("ok")
    assert "new tests (not in the baseline): test_shop.py::test_new_name" in text
    assert "removed tests (only in the baseline): test_shop.py::test_old_name" in text
    assert text.rstrip().endswith("3 of 5 test(s) block the merge")

    code, markdown = gate(new, "--baseline", old, "--format", "markdown")
    assert code == 1 and markdown.startswith("### ❌ guistate gate: 3 of 5 test(s) block the merge")
    cells = {line.split(" | ")[0].rpartition("::")[2]: line for line in markdown.splitlines()
             if line.startswith("| test")}
    assert "| 2 → 4 |" in cells["test\\_longer"] and "| 0 → 1 |" in cells["test\\_delete"]
    assert "| passed → failed |" in cells["test\\_breaks"] and cells["test\\_steady"].endswith("| ok |")
    assert "**block**: regression: steps 2 → 4" not in markdown  # reasons keep their own words
    assert "**block**: regression: steps 2 -> 4 (+100% > +50%)" in markdown.replace("&gt;", ">")
    assert "- removed tests (only in the baseline): test\\_shop.py::test\\_old\\_name" in markdown

    code, github = gate(new, "--baseline", old, "--format", "github")
    annotations = [line for line in github.splitlines() if line.startswith("::error ")]
    assert code == 1 and len(annotations) == 3
    source = (pytester.path / "test_shop.py").read_text(encoding="utf-8").splitlines()
    found = {}
    for line in annotations:
        match = re.fullmatch(r"::error file=test_shop.py,line=(\d+),title=guistate gate%3A test_shop.py%3A%3A(\w+)::(.+)",
                             line)
        assert match, line
        found[match.group(2)] = (source[int(match.group(1)) - 1].strip(), match.group(3).replace("%25", "%"))
    assert found["test_breaks"] == ('assert RUN == 1, "the app changed under the test"',
                                    "outcome failed; regression: passed before, failed now")
    # a test that did not fail is annotated on its `def`, not on its decorator (pytest's own line)
    assert found["test_longer"] == ("def test_longer(device, guistate):", "regression: steps 2 -> 4 (+100% > +50%)")
    assert found["test_delete"][1] == "regression: stale-screen episodes 0 -> 1"

    # the checks switched off (and failures allowed): the same two runs may merge
    code, text = gate(new, "--baseline", old, "--baseline-ignore", "steps", "stale", "outcome", "--allow-failed")
    assert code == 0 and text.rstrip().endswith("all 5 test(s) pass the gate") and "2 -> 4" in text
