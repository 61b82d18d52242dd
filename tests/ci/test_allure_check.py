"""The checks of `.ci/allure.sh` (`.ci/allure_check.py`) can fail: a green Allure job means something.

The real Allure 3 CLI runs only in `.ci/allure.sh` (it needs npm). Here the checker reads small
reports laid out as Allure 3's awesome plugin writes them (`data/test-results/*.json`,
`data/attachments/<id><ext>`), complete or with one thing missing, and JUnit XML files.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><text>&lt;img src=x onerror=alert(1)&gt;</text></svg>'
HTML = b"<!DOCTYPE html><html><body>report the post &lt;img src=x onerror=alert(1)&gt; as spam</body></html>"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("allure_check", ROOT / ".ci" / "allure_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through sys.modules
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


class FakeReport:
    """An Allure 3 awesome report with the three expected failures and one passed test."""

    def __init__(self, root: Path, failures: dict[str, str]) -> None:
        self.root = root
        self.count = 0
        (root / "data" / "test-results").mkdir(parents=True)
        (root / "data" / "attachments").mkdir(parents=True)
        (root / "index.html").write_text("<html></html>")
        self.results: dict[str, dict[str, Any]] = {}
        for name, kind in failures.items():
            self.results[name] = self.test(name, failed=True, last_step_failed=kind == "StepFailed")
        self.results["test_passes"] = self.test("test_passes", failed=False)

    def attachment(self, name: str, content_type: str, ext: str, body: bytes) -> dict[str, Any]:
        self.count += 1
        ident = f"att{self.count}"
        (self.root / "data" / "attachments" / f"{ident}{ext}").write_bytes(body)
        return {"type": "attachment", "link": {"id": ident, "ext": ext, "name": name, "contentType": content_type}}

    def test(self, name: str, *, failed: bool, last_step_failed: bool = False) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        for index in (1, 2):
            failed_step = last_step_failed and index == 2
            pair = [self.attachment(f"step {index} before | after", "image/png", ".png", PNG)] if failed_step else []
            steps.append({"name": f"[guistate {index}] tap" + (" — failed after settle and refresh" if failed_step
                                                                 else ""),
                          "status": "failed" if failed_step else "passed", "type": "step",
                          "parameters": [{"name": "outcome", "value": "failed" if failed_step else "ok"}],
                          "steps": [*pair,
                                    self.attachment(f"step {index} region 0 before", "image/png", ".png", PNG),
                                    self.attachment(f"step {index} region 0 after", "image/png", ".png", PNG)]})
        labels = [{"name": "guistate_tier", "value": "full"}]
        if failed:
            labels.append({"name": "guistate_triage", "value": "progress_hallucination"})
            steps.append(self.attachment("guistate report.html", "text/html", ".html", HTML))
        steps.append(self.attachment("guistate timeline", "image/svg+xml", ".svg", SVG))  # full tier: passed too
        steps.append(self.attachment("guistate progress", "text/plain", ".txt", b"progress: 0/1"))
        if failed:
            steps.append(self.attachment("guistate anchors", "application/json", ".json", b'{"anchors": []}'))
        return {"id": name, "name": name, "status": "failed" if failed else "passed", "labels": labels,
                "descriptionHtml": "<p>goal</p>", "steps": steps}

    def write(self) -> Path:
        for name, result in self.results.items():
            path = self.root / "data" / "test-results" / f"{name}.json"
            path.write_text(json.dumps(result), encoding="utf-8")
        return self.root

    def top_attachment(self, test: str, name: str) -> dict[str, Any]:
        return next(s for s in self.results[test]["steps"] if s.get("link", {}).get("name") == name)

    def file_of(self, entry: dict[str, Any]) -> Path:
        link = entry["link"]
        return self.root / "data" / "attachments" / f"{link['id']}{link['ext']}"


@pytest.fixture
def report(tmp_path: Path, check: ModuleType) -> FakeReport:
    return FakeReport(tmp_path / "allure-report", check.EXPECTED_FAILURES)


def test_a_complete_report_passes(check: ModuleType, report: FakeReport) -> None:
    problems, summary = check.check_report(report.write())
    assert problems.items == []
    assert "FAILED (expected) test_long_flow_fails_at_a_late_step: 2 steps, 5 crops, 4 test attachments" in summary


def test_a_missing_timeline_is_named(check: ModuleType, report: FakeReport) -> None:
    steps = report.results["test_dropped_tap_cannot_be_confirmed"]["steps"]
    steps.remove(report.top_attachment("test_dropped_tap_cannot_be_confirmed", "guistate timeline"))
    problems, _ = check.check_report(report.write())
    assert [p for p in problems.items if "no test-level attachment 'guistate timeline'" in p]
    assert all("test_dropped_tap_cannot_be_confirmed" in p for p in problems.items)


def test_titles_the_pair_and_the_attachment_order_are_checked(check: ModuleType, report: FakeReport) -> None:
    name = "test_dropped_tap_cannot_be_confirmed"
    steps = report.results[name]["steps"]
    failed = steps[1]
    failed["steps"].pop(0)  # no before | after pair
    failed["name"] = "[guistate 2] tap"  # the title hides the failure
    steps[0]["parameters"] = [{"name": "outcome", "value": "refreshed"}]  # refreshed, title does not say
    html = report.top_attachment(name, "guistate report.html")
    steps.remove(html)
    steps.append(html)  # report.html last instead of first
    problems, _ = check.check_report(report.write())
    assert any("does not open on its before | after image" in p for p in problems.items)
    assert any("has no '— failed' title" in p for p in problems.items)
    assert any("was refreshed but its title does not say so" in p for p in problems.items)
    assert any("test attachments in the order" in p for p in problems.items)
    assert all(name in p for p in problems.items)


def test_a_passed_full_tier_test_without_its_timeline_is_named(check: ModuleType, report: FakeReport) -> None:
    report.results["test_passes"]["steps"].remove(report.top_attachment("test_passes", "guistate timeline"))
    problems, _ = check.check_report(report.write())
    assert any("test_passes: passed at tier full" in p for p in problems.items)


def test_a_crop_without_its_file_or_not_a_png_is_named(check: ModuleType, report: FakeReport) -> None:
    first_step = report.results["test_passes"]["steps"][0]
    report.file_of(first_step["steps"][0]).unlink()
    report.file_of(first_step["steps"][1]).write_bytes(b"GIF89a")
    problems, _ = check.check_report(report.write())
    assert any("'step 1 region 0 before' has no file" in p for p in problems.items)
    assert any("'step 1 region 0 after' is not a PNG" in p for p in problems.items)


def test_hostile_text_unescaped_in_report_html_is_named(check: ModuleType, report: FakeReport) -> None:
    name = "test_long_flow_fails_at_a_late_step"
    report.file_of(report.top_attachment(name, "guistate report.html")).write_bytes(
        b"<html><body><img src=x onerror=alert(1)></body></html>")
    problems, _ = check.check_report(report.write())
    assert any("contains the hostile text unescaped" in p for p in problems.items)
    assert any("does not show the hostile post text" in p for p in problems.items)


def test_a_script_in_the_timeline_svg_is_named(check: ModuleType, report: FakeReport) -> None:
    name = "test_milestone_the_screen_contradicts"
    report.file_of(report.top_attachment(name, "guistate timeline")).write_bytes(
        b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    problems, _ = check.check_report(report.write())
    assert any("the timeline SVG contains" in p and "script" in p for p in problems.items)


def test_a_step_failure_whose_last_step_passed_and_a_failed_pass_are_named(check: ModuleType,
                                                                          report: FakeReport) -> None:
    report.results["test_long_flow_fails_at_a_late_step"]["steps"][1]["status"] = "passed"
    report.results["test_passes"]["status"] = "broken"
    problems, _ = check.check_report(report.write())
    assert any("last guistate step is not marked failed" in p for p in problems.items)
    assert any("test_passes: status 'broken'" in p for p in problems.items)


def _junit(path: Path, cases: dict[str, str]) -> Path:
    body = []
    for name, outcome in cases.items():
        inner = ""
        if outcome.startswith("failed:"):
            kind = outcome.split(":", 1)[1]
            inner = f'<failure message="pytest_guistate.core.errors.{kind}: step 2 failed">trace</failure>'
        elif outcome == "error":
            inner = '<error message="fixture failed">trace</error>'
        body.append(f'<testcase classname="m" name="{name}">{inner}</testcase>')
    path.write_text(f'<testsuites><testsuite name="pytest">{"".join(body)}</testsuite></testsuites>')
    return path


def test_junit_accepts_exactly_the_expected_split(check: ModuleType, tmp_path: Path) -> None:
    suite = _junit(tmp_path / "suite.xml", {"test_a": "passed", "test_b": "passed"})
    failing = _junit(tmp_path / "failing.xml", {n: f"failed:{k}" for n, k in check.EXPECTED_FAILURES.items()})
    problems, summary = check.check_junit(suite, failing)
    assert problems.items == []
    assert summary == "example_suite: 2 run, 2 passed; example_failing: 3 run, 3 failed"


def test_junit_names_a_wrong_failure_kind_an_error_and_a_failing_example(check: ModuleType, tmp_path: Path) -> None:
    suite = _junit(tmp_path / "suite.xml", {"test_a": "passed", "test_b": "failed:StepFailed"})
    cases = {n: f"failed:{k}" for n, k in check.EXPECTED_FAILURES.items()}
    cases["test_dropped_tap_cannot_be_confirmed"] = "failed:AssertionError"
    cases["test_long_flow_fails_at_a_late_step"] = "error"
    problems, _ = check.check_junit(suite, _junit(tmp_path / "failing.xml", cases))
    assert "example_suite::test_b should pass, got failed:StepFailed" in problems.items
    assert ("example_failing::test_dropped_tap_cannot_be_confirmed should fail with StepFailed, "
            "got failed:AssertionError") in problems.items
    assert "example_failing::test_long_flow_fails_at_a_late_step should fail with StepFailed, got error" \
        in problems.items
