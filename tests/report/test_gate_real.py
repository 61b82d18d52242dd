"""`guistate gate` on the summaries of real runs of example_suite (green) and example_failing (red).

Both suites run once per module as real pytest subprocesses from the repository root (as CI runs
them), with `--guistate-summary`; the gate is then run as the `guistate` command would be.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_guistate.report.gate.cli import gate_main

ROOT = Path(__file__).resolve().parents[2]
FAILING_FILE = "example_failing/test_expected_failures.py"


@dataclass
class RealRuns:
    suite: Path  # example_suite's summary (every test passes)
    failing: Path  # example_failing's summary (every test fails on purpose)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> RealRuns:
    out = tmp_path_factory.mktemp("real-runs")
    procs = []
    for folder in ("example_suite", "example_failing"):
        cmd = [sys.executable, "-m", "pytest", folder, "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               f"--guistate-summary={out / folder}.json", f"--guistate-artifacts={out / folder}-art",
               f"--guistate-memory={out / folder}.sqlite"]
        procs.append((folder, subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                               text=True)))
    for folder, proc in procs:
        log, _ = proc.communicate(timeout=300)
        expected = 0 if folder == "example_suite" else 1
        assert proc.returncode == expected, f"{folder} exited {proc.returncode}:\n{log[-3000:]}"
    return RealRuns(out / "example_suite.json", out / "example_failing.json")


def gate(*args: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = gate_main([str(a) for a in args], out=out)
    return code, out.getvalue()


def test_the_green_suite_passes_in_every_format(runs: RealRuns) -> None:
    tests = json.loads(runs.suite.read_text())["tests"]
    assert len(tests) == 9 and all(t["outcome"] == "passed" for t in tests)
    assert any(t["llm_tokens"] > 0 and t["llm_cost_usd"] > 0 for t in tests), "the LLM tests carry tokens and cost"
    code, markdown = gate(runs.suite, "--format", "markdown")
    assert code == 0 and markdown.startswith("### ✅ guistate gate: all 9 test(s) pass the gate")
    assert markdown.count("\n| test\\_") == 9 and "| ok |" in markdown
    code, github = gate(runs.suite, "--format", "github")
    assert code == 0 and "::error" not in github and github.rstrip().endswith("all 9 test(s) pass the gate")
    code, raw = gate(runs.suite, "--format", "json")
    document = json.loads(raw)
    assert (code, document["verdict"], document["exit_code"]) == (0, "pass", 0)
    assert {t["file"].split("/")[0] for t in document["tests"]} == {"example_suite"}


def test_the_failing_suite_is_annotated_on_its_failing_lines(runs: RealRuns) -> None:
    code, github = gate(runs.failing, "--format", "github")
    assert code == 1
    annotations = [line for line in github.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 3
    source = (ROOT / FAILING_FILE).read_text(encoding="utf-8").splitlines()
    expected = {"test_dropped_tap_cannot_be_confirmed": 'guistate.perform("confirm the delete"',
                "test_milestone_the_screen_contradicts": 'guistate.milestone("Carol\'s post gone")',
                "test_long_flow_fails_at_a_late_step": 'guistate.perform(f"report the post'}
    for line in annotations:
        match = re.fullmatch(r"::error file=([^,]+),line=(\d+),title=guistate gate%3A ([^,]+)::(.+)", line)
        assert match, line
        path, number, nodeid, message = match.groups()
        name = nodeid.rpartition("%3A%3A")[2]
        assert path == FAILING_FILE and nodeid.startswith(FAILING_FILE + "%3A%3A")
        assert expected[name] in source[int(number) - 1], f"{name}: line {number} is {source[int(number) - 1]!r}"
        assert message.startswith("outcome failed")
    code, prefixed = gate(runs.failing, "--format", "github", "--path-prefix", "mono/")
    assert f"file=mono/{FAILING_FILE}," in prefixed


def test_the_failing_suite_as_a_job_summary_escapes_app_text(runs: RealRuns) -> None:
    code, markdown = gate(runs.failing, "--format", "markdown", "--fail-on", "progress_hallucination")
    assert code == 1 and markdown.startswith("### ❌ guistate gate: 3 of 3 test(s) block the merge")
    rows = [line for line in markdown.splitlines() if line.startswith("| example")]
    assert len(rows) == 3 and all(row.count(" | ") == 12 for row in rows)  # 13 cells each: no cell broke the table
    assert "**block**: outcome failed; triage progress\\_hallucination" in markdown
    assert "<" not in markdown.replace("&lt;", "")


def test_a_run_against_itself_has_no_regressions(runs: RealRuns) -> None:
    code, text = gate(runs.suite, "--baseline", runs.suite)
    assert code == 0 and "regression" not in text and "->" not in text
    assert f"baseline: {runs.suite}" in text


def _main_branch(failing: Path, out: Path) -> Path:
    """The main branch's last run, when these tests still passed: the real rows with the outcome
    passed, half the steps, no stale episode, less LLM use; one test renamed (so one is new and one
    removed)."""
    document = json.loads(failing.read_text())
    main = copy.deepcopy(document)
    for test in main["tests"]:
        test.update(outcome="passed", steps=test["steps"] // 2 or 1, stale_episodes=0, triage=None,
                    llm_tokens=1000, llm_cost_usd=0.01)
    main["tests"][0]["nodeid"] += "_old_name"
    path = out / "main.json"
    path.write_text(json.dumps(main))
    new = copy.deepcopy(document)
    for test in new["tests"]:
        test.update(llm_tokens=2000, llm_cost_usd=0.012)  # +100% tokens, +20% cost
    newer = out / "new.json"
    newer.write_text(json.dumps(new))
    return path


def test_regressions_against_the_main_branch_show_old_to_new(runs: RealRuns, tmp_path: Path) -> None:
    main = _main_branch(runs.failing, tmp_path)
    new = tmp_path / "new.json"
    code, text = gate(new, "--baseline", main, "--allow-failed")
    assert code == 1
    long_flow = next(line for line in text.splitlines() if "test_long_flow_fails_at_a_late_step" in line)
    assert "passed -> failed" in long_flow and "4 -> 9" in long_flow and "0 -> 1" in long_flow
    assert "regression: passed before, failed now" in long_flow
    assert "regression: stale-screen episodes 0 -> 1" in long_flow
    assert "regression: steps 4 -> 9 (+125% > +50%)" in long_flow
    assert "regression: LLM tokens 1000 -> 2000 (+100% > +50%)" in long_flow
    assert "LLM cost" not in long_flow  # +20% is within the default ratio
    renamed = json.loads(runs.failing.read_text())["tests"][0]["nodeid"]
    assert f"new tests (not in the baseline): {renamed}" in text
    assert f"removed tests (only in the baseline): {renamed}_old_name" in text
    new_row = next(line for line in text.splitlines() if line.startswith(renamed + " "))
    assert "regression" not in new_row and new_row.rstrip().endswith("ok")  # new: listed, not a failure
    # thresholds are configurable and checks can be switched off
    code, text = gate(new, "--baseline", main, "--allow-failed", "--max-steps-ratio", "3", "--max-tokens-ratio", "2",
                      "--baseline-ignore", "outcome", "stale")
    assert code == 0, text
    code, markdown = gate(new, "--baseline", main, "--allow-failed", "--format", "markdown")
    assert code == 1 and "passed → failed" in markdown and "| 4 → 9 |" in markdown
    assert "- new tests (not in the baseline): " in markdown
    code, raw = gate(new, "--baseline", main, "--allow-failed", "--format", "json")
    rows = {t["nodeid"]: t for t in json.loads(raw)["tests"]}
    assert rows[renamed]["old"] is None and rows[renamed]["regressions"] == []
    long_id = next(n for n in rows if n.endswith("test_long_flow_fails_at_a_late_step"))
    assert rows[long_id]["old"]["outcome"] == "passed" and rows[long_id]["new"]["outcome"] == "failed"


@pytest.mark.parametrize(("content", "problem"), [
    (None, "no summary file at"),
    ("{not json", "is not valid JSON"),
    (json.dumps({"schema": "other/1", "tests": []}), "is not a guistate.summary/1 document"),
    (json.dumps({"schema": "guistate.summary/1", "tests": [{"nodeid": "x"}]}), "summary entry lacks ['outcome', 'tier']"),
])
def test_a_bad_summary_or_baseline_exits_2_naming_the_problem(
    runs: RealRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, problem: str
) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    for args in ([bad], [runs.suite, "--baseline", bad]):
        code, out = gate(*args)
        err = capsys.readouterr().err
        assert (code, out) == (2, "") and problem in err and "bad.json" in err, err


def test_usage_errors_exit_2(runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--format", "xml"], ["--max-steps-ratio", "0.5"], ["--baseline-ignore", "speed"]):
        with pytest.raises(SystemExit) as stop:
            gate(runs.suite, *args)
        assert stop.value.code == 2
    assert "--max-steps-ratio must be >= 1.0" in capsys.readouterr().err


def _ci_gate_yaml() -> list[dict[str, Any]]:
    text = (ROOT / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)]


def test_the_ci_gate_examples_are_yaml_that_publish_and_gate() -> None:
    github, gitlab = _ci_gate_yaml()[:2]  # the third is the sharded matrix recipe (tests/gate/test_readme_matrix.py)
    assert set(github.get("on", github.get(True))) == {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    steps = github["jobs"]["e2e"]["steps"]
    uploads = {s["with"]["name"] for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")}
    assert uploads == {"allure-report", "guistate-artifacts"}
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "pip install -e" in runs and "--guistate-summary=run.json" in runs and "--alluredir=" in runs
    assert "allure@3.18.0 generate" in runs
    gate_step = next(s for s in steps if s.get("name") == "gate")
    assert gate_step["if"] == "${{ !cancelled() }}"
    assert '--format markdown >> "$GITHUB_STEP_SUMMARY"' in gate_step["run"] and "--format github" in gate_step["run"]
    job = gitlab["e2e"]
    script = "\n".join(job["script"])
    assert "--guistate-summary=run.json" in script and "--format markdown > gate.md" in script
    assert job["artifacts"]["reports"]["junit"] == "junit.xml" and job["artifacts"]["when"] == "always"
    assert {"gate.md", "run.json", "guistate-artifacts/", "allure-report/"} <= set(job["artifacts"]["paths"])


def _bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, text=True, capture_output=True, timeout=120, check=False,
                          env={**os.environ, "PATH": path, **env})


def test_the_ci_gate_page_steps_run_on_real_summaries(runs: RealRuns, tmp_path: Path) -> None:
    """The gate lines of both CI examples, run by bash as the CI would, on the real summaries."""
    github, gitlab = _ci_gate_yaml()[:2]  # the third is the sharded matrix recipe (tests/gate/test_readme_matrix.py)
    gate_step = next(s for s in github["jobs"]["e2e"]["steps"] if s.get("name") == "gate")["run"]
    gitlab_gate = "\n".join(line for line in gitlab["e2e"]["script"] if "BASELINE" in line)
    for summary, expected in ((runs.suite, 0), (runs.failing, 1)):
        work = tmp_path / f"{summary.stem}-{expected}"
        (work / "baseline").mkdir(parents=True)
        shutil.copy(summary, work / "run.json")
        shutil.copy(summary, work / "baseline" / "run.json")  # the main branch's last run of the same suite
        shutil.copy(summary, work / "baseline.json")
        step_summary = work / "step-summary.md"
        done = _bash(gate_step, work, GITHUB_STEP_SUMMARY=str(step_summary))
        assert done.returncode == expected, done.stdout + done.stderr
        markdown = step_summary.read_text(encoding="utf-8")
        assert markdown.startswith("### ✅" if expected == 0 else "### ❌") and "- baseline: baseline/run.json" in markdown
        assert ("::error file=example_failing/" in done.stdout) == bool(expected)
        done = _bash(gitlab_gate, work)
        assert done.returncode == expected, done.stdout + done.stderr
        assert (work / "gate.md").read_text(encoding="utf-8").startswith("### ")
