"""The baseline comparison and the gate's output formats, row by row (the real runs are test_gate_real.py)."""

from __future__ import annotations

import json

import pytest

from pytest_guistate.report.gate.baseline import Thresholds, compare, regressions
from pytest_guistate.report.gate.formats import md, render
from pytest_guistate.report.gate.verdict import GateResult, GateRow
from pytest_guistate.report.summary import TestSummary


def _t(nodeid: str = "t.py::t", outcome: str = "passed", **kw: object) -> TestSummary:
    return TestSummary(nodeid=nodeid, outcome=outcome, tier="standard", **kw)  # type: ignore[arg-type]


HEAL = {"locator": "id=add_to_cart", "status": "healed", "step": 3, "title": "healed"}


@pytest.mark.parametrize(("old", "new", "expected"), [
    (_t(), _t(outcome="failed"), ["passed before, failed now"]),
    (_t(outcome="failed"), _t(outcome="failed"), []),  # failing before: the gate's own rule, not a regression
    (_t(), _t(heals=[HEAL]), ["needs a locator heal: 0 -> 1 healed (id=add_to_cart)"]),
    (_t(heals=[{**HEAL, "status": "false_heal_prevented"}]), _t(), []),
    (_t(stale_episodes=1), _t(stale_episodes=2), ["stale-screen episodes 1 -> 2"]),
    (_t(stale_episodes=2), _t(stale_episodes=0), []),
    (_t(steps=10), _t(steps=15), []),  # exactly +50% is allowed
    (_t(steps=10), _t(steps=16), ["steps 10 -> 16 (+60% > +50%)"]),
    (_t(steps=0), _t(steps=30), []),  # no ratio to an empty baseline
    (_t(llm_tokens=1000), _t(llm_tokens=1600), ["LLM tokens 1000 -> 1600 (+60% > +50%)"]),
    (_t(llm_cost_usd=0.02), _t(llm_cost_usd=0.05), ["LLM cost 0.02 USD -> 0.05 USD (+150% > +50%)"]),
    (_t(llm_cost_usd=None), _t(llm_cost_usd=0.05), []),
    (_t(), _t(outcome="skipped", steps=99), []),
])
def test_each_regression_rule(old: TestSummary, new: TestSummary, expected: list[str]) -> None:
    assert regressions(old, new) == expected


def test_thresholds_are_configurable_and_checks_can_be_ignored() -> None:
    old, new = _t(steps=10, llm_tokens=100), _t(outcome="error", steps=25, llm_tokens=300, stale_episodes=1)
    assert len(regressions(old, new)) == 4
    loose = Thresholds(steps_ratio=3.0, tokens_ratio=3.0, ignore=frozenset({"outcome", "stale"}))
    assert regressions(old, new, loose) == []
    with pytest.raises(ValueError, match="steps_ratio must be >= 1.0"):
        Thresholds(steps_ratio=0.9)
    with pytest.raises(ValueError, match="unknown baseline check"):
        Thresholds(ignore=frozenset({"speed"}))


def test_compare_lists_new_and_removed_tests_without_failing_them() -> None:
    result = compare([_t("a"), _t("b", steps=2)], [_t("b", steps=9), _t("c", outcome="failed")])
    assert (result.added, result.removed) == (["c"], ["a"])
    assert list(result.regressions) == ["b"] and list(result.old) == ["b"]


def test_markdown_escapes_app_text_in_cells() -> None:
    hostile = "t.py::test[<img src=x onerror=alert(1)>|*bold*`code`]"
    assert md(hostile) == "t.py::test\\[&lt;img src=x onerror=alert(1)&gt;\\|\\*bold\\*\\`code\\`\\]"
    result = GateResult([GateRow(_t(hostile, outcome="failed"), ["outcome failed"])])
    table = render(result, "markdown").splitlines()
    row = next(line for line in table if line.startswith("| t.py"))
    assert row.count(" | ") == 12 and "<img" not in row


def test_github_annotations_escape_their_properties_and_data() -> None:
    test = _t("t.py::test[a,b:c]", outcome="failed", file="tests/t.py", line=3, fail_line=7)
    result = GateResult([GateRow(test, ["outcome failed", "100% sure\nsecond line"])])
    first = render(result, "github").splitlines()[0]
    assert first == ("::error file=tests/t.py,line=7,title=guistate gate%3A t.py%3A%3Atest[a%2Cb%3Ac]::"
                     "outcome failed; 100%25 sure%0Asecond line")
    no_file = GateResult([GateRow(_t(outcome="failed"), ["outcome failed"])])
    assert render(no_file, "github").splitlines()[0] == "::error title=guistate gate%3A t.py%3A%3At::outcome failed"
    empty = render(GateResult([]), "github")
    assert empty.startswith("::error title=guistate gate::the summary holds no tests")


def test_json_carries_everything_for_tools() -> None:
    old, new = _t(steps=2), _t(outcome="failed", steps=5, file="t.py", line=1)
    result = GateResult([GateRow(new, ["outcome failed"], ["passed before, failed now"], old)], baseline="main.json",
                        added=["x"], removed=["y"])
    document = json.loads(render(result, "json"))
    assert document["schema"] == "guistate.gate/2" and (document["verdict"], document["exit_code"]) == ("fail", 1)
    [row] = document["tests"]
    assert row["reasons"] == ["outcome failed"] and row["regressions"] == ["passed before, failed now"]
    assert (row["old"]["steps"], row["new"]["steps"], row["file"], row["line"]) == (2, 5, "t.py", 1)
    assert (document["added"], document["removed"], document["baseline"]) == (["x"], ["y"], "main.json")
