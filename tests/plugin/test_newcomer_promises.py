"""What a newcomer reading README.md and docs/ meets, as written: the places where the code and the pages
disagreed once, each held here so it cannot drift back.

- README's tier table: `off` keeps the journal's steps and outcomes, nothing visual;
- docs/ci-gate.md: the JUnit XML properties a test case carries are the ones the page lists;
- docs/reports.md: the triage labels are every label `report/triage.py` gives;
- docs/troubleshooting.md: a budget or a loop limit set by the marker is named as the marker's in its failure;
- docs/simulated-phone.md: `guistate:appVersion` `"2"` (a caps.json string) is version 2;
- docs/llm-steps.md: `python -m pytest_guistate.llm.reference.rerecord` runs pytest cleanly (no assert-rewrite
  warning, since the plugin was already imported by the command itself);
- README.md's hooks: every type a hook receives or returns is importable from `pytest_guistate`;
- docs/appium.md: a marker's `app=` on a browser session is an error saying so, not a blank page.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_guistate.report.triage import LABELS

ROOT = Path(__file__).resolve().parents[2]


def section(page: Path, heading: str) -> str:
    """The text of one `## heading` of a page, up to the next heading of any level."""
    text = page.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#|\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"{page.name} has no heading {heading!r}"
    return match.group(1)


FAILING_FEED_TEST = """
import pytest

@pytest.mark.guistate(app="com.guistate.feed")
def test_fails_after_a_step(device, guistate):
    guistate.goal("open the dialog", plan=["dialog"])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    assert False, "a failing assertion after a good step"
"""


def test_off_keeps_the_journals_steps_and_outcomes_and_nothing_visual(
        pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    readme_row = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                      if line.startswith("| off |"))
    assert "the journal's steps and outcomes only" in readme_row, readme_row
    pytester.makepyfile(test_off=FAILING_FEED_TEST)
    inner("-q", "--guistate=off", "--guistate-artifacts=art").assert_outcomes(failed=1)
    folder = pytester.path / "art" / "test_off.py-test_fails_after_a_step"
    events = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    assert events[0]["tier"] == "off"
    steps = [e["record"] for e in events if e["type"] == "step"]
    assert [(s["name"], s["outcome"]) for s in steps] == [("open the delete dialog", "ok")]
    assert all(not s["regions"] and not s["crops"] and not s["frames"] for s in steps), steps
    assert not (folder / "crops").exists() and not (folder / "frames").exists()
    assert json.loads((folder / "anchors.json").read_text(encoding="utf-8"))["anchors"] == []


def test_junit_properties_are_the_ones_ci_gate_md_lists(
        pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    listed = set(re.findall(r"`(guistate_\w+)`", section(ROOT / "docs" / "ci-gate.md",
                                                          "The run summary and `guistate gate`")))
    assert "guistate_tier" in listed and "guistate_triage" in listed, listed
    pytester.makepyfile(test_junit=FAILING_FEED_TEST)
    inner("-q", "--junitxml=junit.xml", "--guistate-artifacts=art").assert_outcomes(failed=1)
    case = next(ET.parse(pytester.path / "junit.xml").iter("testcase"))
    seen = {p.get("name") for p in case.iter("property")}
    assert seen <= listed, f"properties the page does not list: {seen - listed}"
    # a failed, kept test has every listed property but heals (none were needed)
    assert listed - {"guistate_heals"} <= seen, f"listed but not written: {listed - {'guistate_heals'} - seen}"


def test_reports_md_names_every_triage_label() -> None:
    named = set(re.findall(r"`([a-z_]+)`", section(ROOT / "docs" / "reports.md", "Triage labels")))
    assert set(LABELS) <= named, f"triage labels docs/reports.md does not name: {set(LABELS) - named}"


BUDGETS = """
import time
import pytest

@pytest.mark.guistate(app="com.guistate.feed", timeout=0.3)
def test_marker_budget(device, guistate):
    time.sleep(3)

def test_option_budget(device, guistate):
    time.sleep(3)

@pytest.mark.guistate(app="com.guistate.feed", tier="standard", cycle_limit=4, timeout=0)
def test_marker_cycle_limit(device, guistate):
    guistate.goal("never done", plan=["x"])
    for i in range(4):
        with guistate.step(f"open {i}", expect="Delete post by Carol?"):
            device.tap(desc="Delete post by Carol")
        with guistate.step(f"cancel {i}", expect="Carol"):
            device.tap(id="android:id/button2")
"""


def test_a_limit_set_by_the_marker_is_named_as_the_markers(
        pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    """The failure names where its limit was set: a user who wrote `timeout=` has no ini key to look for."""
    pytester.makepyfile(test_limits=BUDGETS)
    result = inner("-q", "--guistate-test-timeout=0.3", "-p", "no:randomly")
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    assert "test_limits.py::test_marker_budget exceeded its 0.3 s budget (marker timeout=)" in out, out
    assert "test_limits.py::test_option_budget exceeded its 0.3 s budget (guistate_test_timeout)" in out, out
    assert re.search(r"CycleDetected: step \d+ 'cancel \d': the screens went round in a loop .* \(limit 4 steps, "
                     r"marker cycle_limit=\)", out), out


def test_app_version_written_as_a_string_is_that_version(
        pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    """A caps.json says `"guistate:appVersion": "2"`; it used to be refused with "must be 1, 2 ..., got '2'"."""
    pytester.makepyfile(test_version="""
        import pytest

        def feed(version):
            caps = {"guistate:appVersion": version}
            return pytest.param(version, marks=pytest.mark.guistate(app="com.guistate.feed", caps=caps))

        @pytest.mark.parametrize("version", [feed(2), feed("2"), feed(1), feed("1")])
        def test_version(device, version):
            restyled = device.exists(id="com.guistate.feed:id/action_remove")
            assert restyled == (int(version) == 2)
    """)
    inner("-q").assert_outcomes(passed=4)


def test_rerecord_runs_pytest_against_the_reference_server_without_warnings(pytester: pytest.Pytester) -> None:
    """Run from the checkout as docs/llm-steps.md says: the package imported from there by the command itself
    used to make the in-process pytest warn `PytestAssertRewriteWarning` on every re-record."""
    test = pytester.makepyfile(test_env="""
        import os

        def test_env(request):
            assert os.environ["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
            assert request.config.getoption("guistate_llm") == "record"
    """)
    result = subprocess.run([sys.executable, "-m", "pytest_guistate.llm.reference.rerecord", str(test),
                             f"--rootdir={pytester.path}", "-p", "no:cacheprovider", "-q"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "1 passed" in out, out
    assert "PytestAssertRewriteWarning" not in out, out


def test_every_type_a_hook_receives_or_returns_is_importable_from_the_package() -> None:
    """README.md's hooks: "the types are importable from `pytest_guistate`" - the hookspecs' own type imports
    (Screen, Transition, StepRecord and Device were not)."""
    import ast

    import pytest_guistate
    from pytest_guistate import hookspecs

    tree = ast.parse(Path(hookspecs.__file__).read_text(encoding="utf-8"))
    named = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and (node.module or "").startswith("pytest_guistate.") for alias in node.names}
    assert {"Observation", "Device", "Redaction"} <= named, named
    missing = sorted(n for n in named if n not in pytest_guistate.__all__ or not hasattr(pytest_guistate, n))
    assert not missing, f"hook types not importable from pytest_guistate: {missing}"


def test_a_marker_app_on_a_browser_session_is_an_error_saying_so(
        pytester: pytest.Pytester, inner: Callable[..., pytest.RunResult]) -> None:
    """docs/appium.md: the chromium driver ignores `appium:appPackage`, so README's example run against a browser
    session failed later with "no element ... on screen: 'android.widget.ScrollView'". The capabilities are
    refused before a session opens, so the sim stands in for the Appium server here."""
    pytester.makepyfile(test_browser="""
        import pytest

        @pytest.mark.guistate(app="com.guistate.feed")
        def test_app_in_a_browser(device):
            pass
    """)
    (pytester.path / "caps.json").write_text(json.dumps({"browserName": "chrome"}), encoding="utf-8")
    result = inner("-q", "--guistate-caps=caps.json")
    result.assert_outcomes(errors=1)
    expected = ("*@pytest.mark.guistate(app='com.guistate.feed') names an app, but this is a browser session "
                "(browserName 'chrome'), which has no apps: open the page in the test with device.open_url(url)*")
    result.stdout.fnmatch_lines([expected])
