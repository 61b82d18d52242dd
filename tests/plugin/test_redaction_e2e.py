"""A password typed into a password field never reaches a saved file, end to end through the plugin.

The test types it with a plain `device.type(...)` (no `guistate.secret`): the device notices the
password field and registers the value before it is typed. The inner test then fails, at tier
full with every artifact retained, so the journal, state, anchors, HTML report, summary and JUnit
XML all exist to be searched.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

InnerRun = Callable[..., pytest.RunResult]

SECRET = "correct-horse"

LOGIN_THEN_FAIL = """
import pytest


@pytest.mark.guistate(app="com.guistate.settings")
def test_login_then_fail(device, guistate):
    guistate.goal("Sign in and turn Wi-Fi off",
                  plan=[("signed in", "Signed in as qa@example.com"), "Wi-Fi off"])
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
    guistate.milestone("signed in")
    guistate.remember("credentials", "qa@example.com:correct-horse")
    assert device.exists(text="Wi-Fi is off"), "correct-horse did not turn Wi-Fi off"
"""


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_a_typed_password_reaches_no_artifact(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_login=LOGIN_THEN_FAIL)
    result = inner("--guistate=full", "--guistate-retain=on", "--guistate-artifacts=art",
                   "--guistate-summary=art/summary.json", "--junitxml=art/junit.xml")
    result.assert_outcomes(failed=1)
    root = pytester.path / "art"
    files = files_under(root)
    names = {p.name for p in files}
    assert {"journal.jsonl", "state.json", "anchors.json", "report.html", "summary.json", "junit.xml"} <= names
    assert any(p.parent.name == "frames" for p in files), "tier full keeps frames: they must exist to be checked"

    journal = (root / "test_login.py-test_login_then_fail" / "journal.jsonl").read_text(encoding="utf-8")
    # not vacuous: the records do hold the steps, the user name and the remembered fact
    assert "type the password" in journal and "qa@example.com" in journal and "credentials" in journal

    leaks = [str(p.relative_to(root)) for p in files if p.name != "junit.xml" and SECRET.encode() in p.read_bytes()]
    assert leaks == [], f"the password reached saved artifacts: {leaks}"

    # redaction scrubs the secret, not the figures around it
    row = json.loads((root / "summary.json").read_text(encoding="utf-8"))["tests"][0]
    assert (row["outcome"], row["tier"], row["steps"], row["milestones_done"], row["milestones_total"]) == (
        "failed", "full", 3, 1, 2)


def test_the_guistate_section_does_not_show_the_secret(inner: InnerRun, pytester: pytest.Pytester) -> None:
    """Terminal logs and JUnit XML are saved by CI too. pytest's own traceback shows the test's
    source (which holds the literal); the section the plugin adds must not repeat the secret."""
    pytester.makepyfile(test_login=LOGIN_THEN_FAIL)
    result = inner("--guistate=light", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    failure = ET.parse(pytester.path / "junit.xml").getroot().find(".//failure")
    assert failure is not None and failure.text is not None
    section = re.split(r"^-+ guistate -+$", failure.text, flags=re.MULTILINE)[-1]
    assert "facts: credentials = " in section
    assert SECRET not in section, f"the guistate failure section shows the secret:\n{section}"


GOAL_NAMES_THE_PASSWORD = """
import pytest


@pytest.mark.guistate(app="com.guistate.settings")
def test_goal_holds_the_password(device, guistate):
    guistate.goal("Sign in as qa@example.com with the password correct-horse")
    guistate.perform("type the e-mail", lambda: device.type("qa@example.com", id="username"), idempotent=False)
    guistate.perform("type the password", lambda: device.type("correct-horse", id="password"), idempotent=False)
    guistate.perform("tap Log in", lambda: device.tap(id="login"), expect="Signed in as", idempotent=False)
"""


def test_a_goal_line_written_before_its_password_was_typed_is_scrubbed(inner: InnerRun,
                                                                       pytester: pytest.Pytester) -> None:
    """Issue 32: the goal's text reached the journal before typing registered the password; the finish
    rewrites the journal with what the redactor knows then, so no saved file keeps it."""
    pytester.makepyfile(test_goal=GOAL_NAMES_THE_PASSWORD)
    result = inner("--guistate-retain=on", "--guistate-artifacts=art", "--guistate-summary=art/summary.json")
    result.assert_outcomes(passed=1)
    root = pytester.path / "art"
    journal = (root / "test_goal.py-test_goal_holds_the_password" / "journal.jsonl").read_text(encoding="utf-8")
    assert "Sign in as qa@example.com with the password [redacted]" in journal  # the goal line, scrubbed
    leaks = [str(p.relative_to(root)) for p in files_under(root) if SECRET.encode() in p.read_bytes()]
    assert leaks == [], f"the password reached saved artifacts: {leaks}"
