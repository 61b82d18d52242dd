"""Run summary (merged across workers), JUnit properties and the `guistate gate` exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_guistate.report.gate.cli import gate_main
from pytest_guistate.report.summary import (
    SUMMARY_SCHEMA,
    SummaryPart,
    TestSummary,
    junit_properties,
    merge_parts,
    parts_dir,
    reset_parts,
)


def _t(nodeid: str, outcome: str = "passed", **kw: object) -> TestSummary:
    return TestSummary(nodeid=nodeid, outcome=outcome, tier="standard", **kw)  # type: ignore[arg-type]


def test_summary_of_the_failed_sim_run(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, done, _ = failed_run
    s = done.summary
    assert (s.outcome, s.tier, s.steps) == ("failed", "full", len(run.session.steps))
    assert (s.milestones_done, s.milestones_total) == (2, 3)
    assert s.stale_episodes == run.session.episodes and s.retries == run.session.retries
    assert s.triage == "stale_screen_repetition" and s.artifacts == str(done.folder)
    props = dict(junit_properties(s))
    assert props["guistate_milestones"] == "2/3" and props["guistate_triage"] == "stale_screen_repetition"
    assert props["guistate_llm_tokens"] == 0


def test_parts_from_workers_merge_into_one_document(tmp_path: Path) -> None:
    path = tmp_path / "out" / "summary.json"
    reset_parts(path)
    gw0, gw1 = SummaryPart(path, "gw0"), SummaryPart(path, "gw1")
    gw0.add(_t("b.py::t", steps=3, retries=1))
    gw1.add(_t("a.py::t", "failed", steps=5, stale_episodes=2, triage="goal_drift"))
    gw0.add(_t("c.py::t", steps=1))
    document = merge_parts(path)
    assert json.loads(path.read_text()) == document
    assert document["schema"] == SUMMARY_SCHEMA and sorted(document["workers"]) == ["gw0", "gw1"]
    assert [t["nodeid"] for t in document["tests"]] == ["a.py::t", "b.py::t", "c.py::t"]
    assert document["totals"] == {"tests": 3, "failed": 1, "lost": 0, "steps": 9, "stale_episodes": 2, "retries": 1,
                                  "conflicts": 0, "llm_tokens": 0, "llm_cost_usd": 0.0, "healed": 0,
                                  "false_heals_prevented": 0}
    assert not parts_dir(path).exists()


def _summary(tmp_path: Path, *tests: TestSummary) -> Path:
    path = tmp_path / "summary.json"
    part = SummaryPart(path, None)
    for test in tests:
        part.add(test)
    merge_parts(path)
    return path


def test_gate_passes_a_green_run_and_prints_a_table(tmp_path: Path) -> None:
    path = _summary(tmp_path, _t("a.py::t", milestones_done=3, milestones_total=3))
    out = io.StringIO()
    assert gate_main([str(path), "--min-progress", "0.9"], out=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:3] == ["test", "outcome", "tier"] and "a.py::t" in lines[2] and "3/3" in lines[2]
    assert lines[-1] == "all 1 test(s) pass the gate"


@pytest.mark.parametrize(("args", "test", "reason"), [
    ([], _t("a", "failed"), "outcome failed"),
    (["--min-progress", "0.8"], _t("a", milestones_done=1, milestones_total=2), "progress 0.50 < 0.80"),
    (["--max-stale", "1"], _t("a", stale_episodes=2), "2 stale episodes > 1"),
    (["--fail-on", "goal_drift", "--allow-failed"], _t("a", "failed", triage="goal_drift"), "triage goal_drift"),
])
def test_gate_blocks_with_the_reason(tmp_path: Path, args: list[str], test: TestSummary, reason: str) -> None:
    path = _summary(tmp_path, test, _t("ok"))
    out = io.StringIO()
    assert gate_main([str(path), *args], out=out) == 1
    assert f"BLOCK: {reason}" in out.getvalue() and "1 of 2 test(s) block the merge" in out.getvalue()


def test_gate_allow_failed_lets_a_known_failure_through(tmp_path: Path) -> None:
    path = _summary(tmp_path, _t("a", "failed", triage="environment"))
    assert gate_main([str(path), "--allow-failed", "--fail-on", "goal_drift"], out=io.StringIO()) == 0


def test_gate_refuses_unreadable_and_empty_summaries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gate_main([str(tmp_path / "missing.json")], out=io.StringIO()) == 2
    assert "no summary file" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema": SUMMARY_SCHEMA, "tests": []}))
    assert gate_main([str(empty)], out=io.StringIO()) == 1
    with pytest.raises(SystemExit):
        gate_main([str(empty), "--fail-on", "bogus_label"], out=io.StringIO())
