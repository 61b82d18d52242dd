"""The "guistate" failure section as a user meets it: in the terminal and in JUnit XML.

One inner run (tier standard, so anchors are recorded) holds the three ways a guistate test fails
(plain assert, `StepFailed` inside a step, `assert_complete()`), a passing test and a failing
test that only uses `device`; each must show exactly the section it should.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

InnerRun = Callable[..., pytest.RunResult]

INNER = """
import pytest

FEED = pytest.mark.guistate(app="com.guistate.feed")


@FEED
def test_plain_assert(device, guistate):
    guistate.goal("Open Bob's delete dialog and cancel it",
                  plan=["dialog open", "dialog closed", "Bob still listed"])
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")
    assert device.exists(text="Nobody"), "no post by Nobody"


@pytest.mark.guistate(app="com.guistate.feed", settle_timeout=0.3)
def test_step_fails(device, guistate):
    guistate.goal("Open Bob's delete dialog", plan=["dialog open", "dialog closed"])
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Nobody?"):
        device.tap(desc="Delete post by Bob")


@FEED
def test_incomplete(device, guistate):
    guistate.goal("Open and close Bob's delete dialog", plan=["dialog open", "dialog closed"])
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")
    guistate.assert_complete()


@FEED
def test_passes(device, guistate):
    guistate.goal("Open Bob's delete dialog", plan=["dialog open"])
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")


@FEED
def test_device_only(device):
    device.tap(desc="Delete post by Bob")
    assert device.exists(text="Nobody"), "device-only failure"
"""

_TEST_HEADER = re.compile(r"^_{3,} (test_\w+) _{3,}$")
_SECTION_HEADER = re.compile(r"^-{3,} guistate -{3,}$")
_ANY_SECTION = re.compile(r"^-{3,} .+ -{3,}$")  # "Captured stdout call", "generated xml file", ...
_END = re.compile(r"^(_{3,} test_|={3,})")


def terminal_sections(lines: list[str]) -> dict[str, str | None]:
    """Per failed test in the FAILURES block: the text of its "guistate" section, or None."""
    sections: dict[str, str | None] = {}
    current: str | None = None
    body: list[str] | None = None
    for line in lines:
        header = _TEST_HEADER.match(line)
        if header or _END.match(line):
            current = header.group(1) if header else None
            body = None
            if current is not None:
                sections[current] = None
        elif current is None:
            continue
        elif _SECTION_HEADER.match(line):
            body = []
        elif _ANY_SECTION.match(line):
            body = None  # a later section (captured output) is not part of ours
        elif body is not None:
            body.append(line)
            sections[current] = "\n".join(body).strip()
    return sections


def junit_failures(path: Path) -> dict[str, str | None]:
    """testcase name -> the text of its <failure> element (None when it passed)."""
    root = ET.parse(path).getroot()
    result: dict[str, str | None] = {}
    for case in root.iter("testcase"):
        failure = case.find("failure")
        result[case.get("name", "")] = None if failure is None else (failure.text or "")
    return result


def junit_section(failure_text: str) -> str | None:
    lines = failure_text.splitlines()
    for i, line in enumerate(lines):
        if _SECTION_HEADER.match(line):
            rest = lines[i + 1:]
            end = next((j for j, text in enumerate(rest) if _ANY_SECTION.match(text)), len(rest))
            return "\n".join(rest[:end]).strip()
    return None


def test_failure_section_in_terminal_and_junit(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=INNER)
    result = inner("--guistate=standard", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=4)
    sections = terminal_sections(result.outlines)
    assert set(sections) == {"test_plain_assert", "test_step_fails", "test_incomplete", "test_device_only"}

    plain = sections["test_plain_assert"]
    assert plain is not None, "a plain assert in a guistate test must carry the guistate section"
    plain_lines = plain.splitlines()
    assert plain_lines[0] == "guistate test_tasks.py::test_plain_assert (tier standard)"
    assert "goal: Open Bob's delete dialog and cancel it" in plain_lines
    assert "progress: 1/3 milestones" in plain_lines
    assert "  [x] dialog open (declared)" in plain_lines
    assert "  [>] dialog closed  <- current" in plain_lines
    assert "  [ ] Bob still listed" in plain_lines
    assert ('last step 1 "open the delete dialog on Bob\'s post": ok, verdict changed, action ran 1 time(s)'
            in plain_lines)
    anchors_at = next(i for i, line in enumerate(plain_lines) if line.startswith("anchors (last "))
    anchor_lines = plain_lines[anchors_at + 1:]
    assert any("STATE_CHANGE" in line and "dialog 'Delete post?' opened" in line for line in anchor_lines)
    assert any("SUBGOAL" in line and "dialog open" in line for line in anchor_lines)

    failed_step = sections["test_step_fails"]
    assert failed_step is not None
    assert "progress: 0/2 milestones" in failed_step
    assert "  [>] dialog open  <- current" in failed_step
    assert "  [ ] dialog closed" in failed_step
    assert 'last step 1 "open the delete dialog on Bob\'s post": failed, verdict changed' in failed_step
    assert "  expected: text 'Delete post by Nobody?' (substring) visible" in failed_step
    assert "stale-screen episodes: 1" in failed_step
    assert re.search(r"EXCEPTION +step 1 +step \"open the delete dialog on Bob's post\" failed", failed_step)
    # the StepFailed message itself explains the recovery it tried (settle, refresh) before failing
    result.stdout.fnmatch_lines(["*StepFailed: step 1 \"open the delete dialog on Bob's post\" failed*",
                                 "*settled, refreshed*the action ran 1 time(s)*"])

    incomplete = sections["test_incomplete"]
    assert incomplete is not None
    assert "goal: Open and close Bob's delete dialog" in incomplete
    assert "  [x] dialog open (declared)" in incomplete
    assert "  [>] dialog closed  <- current" in incomplete
    result.stdout.fnmatch_lines(["*ProgressIncomplete: task not complete*", "*current: dialog closed*"])

    assert sections["test_device_only"] is None, "a test without the guistate fixture has no task to show"
    assert "test_passes" not in sections

    failures = junit_failures(pytester.path / "junit.xml")
    assert failures["test_passes"] is None
    for name in ("test_plain_assert", "test_step_fails", "test_incomplete"):
        text = failures[name]
        assert text is not None
        assert junit_section(text) == sections[name], f"{name}: JUnit XML must carry the same guistate section"
    device_only = failures["test_device_only"]
    assert device_only is not None and "device-only failure" in device_only
    assert junit_section(device_only) is None
