"""Checks for .ci/allure.sh: the expected pass/fail split and what the Allure 3 report holds.

    python .ci/allure_check.py junit SUITE_XML FAILING_XML     # exactly the expected tests failed
    python .ci/allure_check.py report REPORT_DIR                # steps, crops, timeline, report.html

Allure 3 ("awesome" report) writes one JSON per test under `data/test-results/`; steps and
attachments are a tree in `steps` (attachment entries have `type: "attachment"` and a `link`
whose file is `data/attachments/<id><ext>`). Test-level attachments are the attachment entries
at the top of that tree. Every problem is collected and printed; the exit code is 1 if any.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The contract of example_failing/: every test there fails, with this guistate verdict.
EXPECTED_FAILURES = {
    "test_dropped_tap_cannot_be_confirmed": "StepFailed",
    "test_milestone_the_screen_contradicts": "MilestoneNotVisible",
    "test_long_flow_fails_at_a_late_step": "StepFailed",
}
EXPECTED_TRIAGE = {"test_milestone_the_screen_contradicts": "progress_hallucination"}
HOSTILE = "<img src=x onerror=alert(1)>"
HOSTILE_ESCAPED = "&lt;img src=x onerror=alert(1)&gt;"
FAILURE_ATTACHMENTS = {  # name -> content type, attached by the adapter to a failed test
    "guistate timeline": "image/svg+xml",
    "guistate report.html": "text/html",
    "guistate progress": "text/plain",
    "guistate anchors": "application/json",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# test-level attachments, in the order a person opens them (issue 15); at tier full passed tests get them too
LEADING = ["guistate report.html", "guistate timeline", "guistate progress"]
RECOVERED = ("settled", "refreshed", "retried")  # a step outcome the title must say


@dataclass
class Problems:
    items: list[str] = field(default_factory=list)

    def need(self, ok: bool, message: str) -> bool:
        if not ok:
            self.items.append(message)
        return ok


# -- JUnit XML --------------------------------------------------------------------------------
def _cases(path: Path) -> dict[str, str]:
    """test name -> passed | failed:<exception class> | error | skipped."""
    root = ET.parse(path).getroot()
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        failure, error, skipped = case.find("failure"), case.find("error"), case.find("skipped")
        if error is not None:
            outcomes[name] = "error"
        elif failure is not None:
            message = failure.get("message", "")
            outcomes[name] = "failed:" + message.split(":", 1)[0].rsplit(".", 1)[-1]
        elif skipped is not None:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    return outcomes


def check_junit(suite_xml: Path, failing_xml: Path) -> tuple[Problems, str]:
    problems = Problems()
    suite = _cases(suite_xml)
    problems.need(bool(suite), f"{suite_xml}: no test ran in example_suite")
    for name, outcome in sorted(suite.items()):
        problems.need(outcome == "passed", f"example_suite::{name} should pass, got {outcome}")
    failing = _cases(failing_xml)
    problems.need(set(failing) == set(EXPECTED_FAILURES),
                  f"example_failing ran {sorted(failing)}, expected exactly {sorted(EXPECTED_FAILURES)}")
    for name, kind in EXPECTED_FAILURES.items():
        got = failing.get(name, "missing")
        problems.need(got == f"failed:{kind}", f"example_failing::{name} should fail with {kind}, got {got}")
    summary = f"example_suite: {len(suite)} run, {sum(o == 'passed' for o in suite.values())} passed; " \
              f"example_failing: {len(failing)} run, {sum(o.startswith('failed') for o in failing.values())} failed"
    return problems, summary


# -- the generated report ---------------------------------------------------------------------
@dataclass
class Attachment:
    name: str
    content_type: str
    path: Path
    step: str | None  # the guistate step it belongs to, None for a test-level attachment


def _walk(entries: list[dict[str, Any]], report: Path, step: str | None,
          steps: list[dict[str, Any]], attachments: list[Attachment]) -> None:
    for entry in entries:
        if entry.get("type") == "attachment":
            link = entry["link"]
            attachments.append(Attachment(link.get("name", ""), link.get("contentType", ""),
                                          report / "data" / "attachments" / f"{link['id']}{link.get('ext', '')}", step))
            continue
        inner = step
        if str(entry.get("name", "")).startswith("[guistate "):
            steps.append(entry)
            inner = entry["name"]
        _walk(entry.get("steps") or [], report, inner, steps, attachments)


def _check_test(result: dict[str, Any], report: Path, problems: Problems, *, failed: bool) -> dict[str, int]:
    name = result["name"]
    steps: list[dict[str, Any]] = []
    attachments: list[Attachment] = []
    _walk(result.get("steps") or [], report, None, steps, attachments)
    where = f"report: {name}"
    problems.need(result.get("status") == ("failed" if failed else "passed"),
                  f"{where}: status {result.get('status')!r}")
    problems.need(bool(steps), f"{where}: no '[guistate N] ...' steps")
    labels = {label["name"]: label["value"] for label in result.get("labels", [])}
    problems.need(labels.get("guistate_tier") == "full", f"{where}: label guistate_tier is {labels.get('guistate_tier')!r}")
    problems.need(bool(result.get("descriptionHtml")), f"{where}: no description (the goal)")
    for attachment in attachments:
        problems.need(attachment.path.is_file() and attachment.path.stat().st_size > 0,
                      f"{where}: attachment {attachment.name!r} has no file {attachment.path}")
    crops = [a for a in attachments if a.step is not None and a.content_type == "image/png"]
    for crop in crops:
        if crop.path.is_file():
            problems.need(crop.path.read_bytes()[:8] == PNG_MAGIC, f"{where}: {crop.name!r} is not a PNG")
    for step in steps:
        params = {p.get("name"): p.get("value") for p in step.get("parameters") or []}
        outcome = params.get("outcome")
        if outcome in RECOVERED:
            problems.need(f"— {outcome}" in step["name"], f"{where}: step {step['name']!r} was {outcome} but its title "
                                                           "does not say so")
        if outcome == "failed":
            problems.need("— failed" in step["name"], f"{where}: failed step {step['name']!r} has no '— failed' title")
            first = next((e for e in step.get("steps") or [] if e.get("type") == "attachment"), None)
            link = (first or {}).get("link") or {}
            problems.need(str(link.get("name", "")).endswith("before | after") and link.get("contentType") == "image/png",
                          f"{where}: failed step {step['name']!r} does not open on its before | after image "
                          f"(first attachment {link.get('name')!r})")
            if link.get("id"):
                pair = report / "data" / "attachments" / f"{link['id']}{link.get('ext', '')}"
                problems.need(pair.is_file() and pair.read_bytes()[:8] == PNG_MAGIC,
                              f"{where}: the before | after image of {step['name']!r} is not a PNG file")
        mine = [c.name for c in crops if c.step == step["name"]]
        problems.need(any(n.endswith(" after") for n in mine), f"{where}: step {step['name']!r} has no after-crop")
        problems.need(any(n.endswith(" before") for n in mine), f"{where}: step {step['name']!r} has no before-crop")
    top = {a.name: a for a in attachments if a.step is None}
    order = [a.name for a in attachments if a.step is None and a.name.startswith("guistate ")]
    if not failed:
        # tier full: the timeline and the progress (report.html only when the folder is kept)
        wanted = [n for n in LEADING if n in top] if "guistate report.html" in top else LEADING[1:]
        problems.need(order[:len(wanted)] == wanted, f"{where}: passed at tier full, test attachments {order}, "
                                                     f"expected {wanted} first")
        problems.need("guistate anchors" not in top, f"{where}: a passed test got the failure-only attachments")
        return {"steps": len(steps), "crops": len(crops), "test attachments": len(top)}
    problems.need(order[:3] == LEADING, f"{where}: test attachments in the order {order}, expected {LEADING} first")

    problems.need("guistate_triage" in labels, f"{where}: no guistate_triage label")
    if name in EXPECTED_TRIAGE:
        problems.need(labels.get("guistate_triage") == EXPECTED_TRIAGE[name],
                      f"{where}: triage {labels.get('guistate_triage')!r}, expected {EXPECTED_TRIAGE[name]!r}")
    if EXPECTED_FAILURES.get(name) == "StepFailed":
        problems.need(steps[-1].get("status") == "failed" if steps else False,
                      f"{where}: the last guistate step is not marked failed")
    for wanted, content_type in FAILURE_ATTACHMENTS.items():
        got = top.get(wanted)
        if problems.need(got is not None, f"{where}: no test-level attachment {wanted!r} (got {sorted(top)})"):
            assert got is not None
            problems.need(got.content_type == content_type, f"{where}: {wanted!r} is {got.content_type!r}")
    _check_bodies(name, top, problems)
    return {"steps": len(steps), "crops": len(crops), "test attachments": len(top)}


def _check_bodies(name: str, top: dict[str, Attachment], problems: Problems) -> None:
    """The failure attachments parse, and hostile app text stays text in them."""
    where = f"report: {name}"
    timeline, page, anchors = top.get("guistate timeline"), top.get("guistate report.html"), top.get("guistate anchors")
    if timeline is not None and timeline.path.is_file():
        try:
            svg = ET.fromstring(timeline.path.read_bytes())
            problems.need(svg.tag.endswith("svg"), f"{where}: the timeline's root is {svg.tag!r}, not <svg>")
            active = [el.tag for el in svg.iter() if el.tag.rsplit("}", 1)[-1] in ("script", "img", "foreignObject")]
            problems.need(not active, f"{where}: the timeline SVG contains {active}")
            if name == "test_long_flow_fails_at_a_late_step":
                problems.need(HOSTILE_ESCAPED in timeline.path.read_text(encoding="utf-8"),
                              f"{where}: the timeline SVG does not show the hostile post text")
        except ET.ParseError as exc:
            problems.need(False, f"{where}: the timeline SVG does not parse: {exc}")
    if anchors is not None and anchors.path.is_file():
        try:
            json.loads(anchors.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            problems.need(False, f"{where}: the anchors JSON does not parse: {exc}")
    if page is not None and page.path.is_file():
        html = page.path.read_text(encoding="utf-8")
        problems.need("<html" in html[:2000].lower(), f"{where}: report.html has no <html> element")
        problems.need(HOSTILE not in html, f"{where}: report.html contains the hostile text unescaped")
        if name == "test_long_flow_fails_at_a_late_step":
            problems.need(HOSTILE_ESCAPED in html, f"{where}: report.html does not show the hostile post text")


def check_report(report: Path) -> tuple[Problems, str]:
    problems = Problems()
    results_dir = report / "data" / "test-results"
    if not problems.need(results_dir.is_dir(), f"{results_dir} is missing: not an Allure 3 awesome report?"):
        return problems, ""
    problems.need((report / "index.html").is_file(), f"{report}/index.html is missing")
    results = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(results_dir.glob("*.json"))]
    by_name = {r["name"]: r for r in results}
    problems.need(len(by_name) == len(results), "report: two test results share a name")
    lines = []
    for name in EXPECTED_FAILURES:
        if problems.need(name in by_name, f"report: no test result for {name}"):
            counts = _check_test(by_name[name], report, problems, failed=True)
            lines.append(f"  FAILED (expected) {name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    passed = [r for r in results if r["name"] not in EXPECTED_FAILURES]
    problems.need(bool(passed), "report: no example_suite test in the report")
    totals = {"steps": 0, "crops": 0}
    for result in passed:
        counts = _check_test(result, report, problems, failed=False)
        totals = {k: totals[k] + counts[k] for k in totals}
    lines.append(f"  passed {len(passed)} example_suite tests: {totals['steps']} steps, {totals['crops']} crops")
    attachments = list((report / "data" / "attachments").glob("*"))
    lines.append(f"  report data: {len(results)} test results, {len(attachments)} attachment files "
                 f"({sum(p.suffix == '.png' for p in attachments)} PNG, {sum(p.suffix == '.svg' for p in attachments)} SVG, "
                 f"{sum(p.suffix == '.html' for p in attachments)} HTML)")
    return problems, "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "junit":
        problems, summary = check_junit(Path(argv[1]), Path(argv[2]))
    elif len(argv) == 2 and argv[0] == "report":
        problems, summary = check_report(Path(argv[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if problems.items:
        print(f"allure_check {argv[0]}: {len(problems.items)} problem(s):", file=sys.stderr)
        for item in problems.items:
            print(f"  - {item}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
