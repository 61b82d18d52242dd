"""The extension hooks (hookspecs.py) through a user's conftest: anchor detectors and redactors.

Each inner run is the real plugin on the embedded sim: the conftest's implementation must change
what reaches anchors.json, report.html, the journal, the terminal section and Allure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

InnerRun = Callable[..., pytest.RunResult]

BANNER_DETECTOR = """
from pytest_guistate import DetectedAnchor


def pytest_guistate_detect_anchors(step, before, after, transition, record, item):
    # the app's own "are you sure" dialog, treated as a banner this project wants on its timeline
    if after is None or after.tree is None:
        return None
    nodes = after.tree.find_text("Delete post by Carol?")
    if not nodes:
        return None
    return [DetectedAnchor("confirm banner shown", detail=f"seen after step {step}: {record.name}",
                           box=nodes[0].bounds, data={"banner": "confirm"})]
"""

SECOND_DETECTOR = """
from pytest_guistate import DetectedAnchor


def pytest_guistate_detect_anchors(step, before, after, transition, record, item):
    return [DetectedAnchor(f"context of step {step}", type="CONTEXT_INFO")] if step == 1 else []
"""

FEED_TEST = """
import pytest


@pytest.mark.guistate(app="com.guistate.feed")
def test_banner(device, guistate):
    guistate.goal("Keep Carol's post", plan=["dialog seen", "post kept"])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    guistate.milestone("dialog seen")
    assert False, "stop here"
"""


def _folder(root: Path) -> Path:
    [folder] = [p for p in root.iterdir() if p.is_dir() and p.name.startswith("test_feed")]
    return folder


def test_a_conftest_detector_places_and_links_its_anchors(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BANNER_DETECTOR)
    pytester.makepyfile(second_detector=SECOND_DETECTOR, test_feed=FEED_TEST)
    pytester.syspathinsert()
    result = inner("-p", "second_detector", "--guistate=standard", "--guistate-retain=on",
                   "--guistate-artifacts=art", "--alluredir=allure")
    result.assert_outcomes(failed=1)
    folder = _folder(pytester.path / "art")
    graph = json.loads((folder / "anchors.json").read_text(encoding="utf-8"))
    by_title = {a["title"]: a for a in graph["anchors"]}
    banner = by_title["confirm banner shown"]
    assert (banner["type"], banner["step"]) == ("EXCEPTION", 1)
    assert banner["app"] == "com.guistate.feed" and banner["data"]["banner"] == "confirm"
    assert banner["data"]["kind"] == "detected" and len(banner["data"]["box"]) == 4
    assert banner["data"]["milestone"] == "dialog seen"  # placed like a built-in EXCEPTION: on the current milestone
    # every implementation's anchors are used, not just the first
    assert by_title["context of step 1"]["type"] == "CONTEXT_INFO"
    # linked like the built-ins: the exception blocks the milestone it happened under
    subgoal = by_title["dialog seen"]
    assert {"src": banner["id"], "dst": subgoal["id"], "type": "blocks"} in graph["links"]
    # its crop is the step's crop that shows the dialog, written (and redacted) with the step
    journal = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    [event] = [e for e in journal if e["type"] == "anchor" and e["anchor"]["title"] == "confirm banner shown"]
    assert banner["crops"] and event["anchor"]["crops"] == banner["crops"]
    step = next(e for e in journal if e["type"] == "step")
    assert banner["id"] in step["record"]["anchors"]
    assert all((folder / rel).is_file() for rel in step["files"]["names"].values())
    assert "confirm banner shown" in (folder / "report.html").read_text(encoding="utf-8")
    assert "confirm banner shown" in (folder / "timeline.svg").read_text(encoding="utf-8")
    # the terminal failure section (and so JUnit XML) lists it among the last anchors
    result.stdout.fnmatch_lines(["*EXCEPTION*step 1*confirm banner shown*"])
    allure_text = "".join(p.read_text(encoding="utf-8", errors="replace")
                          for p in (pytester.path / "allure").iterdir() if p.suffix in (".json", ".svg", ".txt"))
    assert "confirm banner shown" in allure_text, "the Allure timeline/anchors attachments miss the detected anchor"


def test_a_detector_that_raises_is_a_warning_not_a_failure(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
def pytest_guistate_detect_anchors(step, before, after, transition, record, item):
    raise RuntimeError("detector bug")
""")
    pytester.makepyfile(test_feed=FEED_TEST.replace('assert False, "stop here"', "pass"))
    result = inner("--guistate=standard", "-W", "always::pytest_guistate.GuistateWarning")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*anchor detector raised RuntimeError: detector bug*step 1*are missing*"])


def test_a_detector_returning_a_milestone_is_refused_by_name(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
from pytest_guistate import DetectedAnchor


def pytest_guistate_detect_anchors(step, before, after, transition, record, item):
    return [DetectedAnchor("done!", type="SUBGOAL")]
""")
    pytester.makepyfile(test_feed=FEED_TEST.replace('assert False, "stop here"', "pass"))
    result = inner("--guistate=standard", "-W", "always::pytest_guistate.GuistateWarning")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*not SUBGOAL (milestones and the finish belong to the progress tracker)*"])


def test_on_a_failed_step_the_failure_stays_the_last_anchor(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BANNER_DETECTOR)
    pytester.makepyfile(test_feed="""
import pytest


@pytest.mark.guistate(app="com.guistate.feed", settle_timeout=0.3)
def test_banner(device, guistate):
    guistate.goal("Keep Carol's post", plan=["post kept"])
    with guistate.step("open the dialog, expecting something else", expect="Never shown", idempotent=False):
        device.tap(desc="Delete post by Carol")
""")
    result = inner("--guistate=standard", "--guistate-retain=on", "--guistate-artifacts=art")
    result.assert_outcomes(failed=1)
    graph = json.loads((_folder(pytester.path / "art") / "anchors.json").read_text(encoding="utf-8"))
    kinds = [(a["data"].get("kind"), a["id"]) for a in graph["anchors"] if a["type"] == "EXCEPTION"]
    order = [kind for kind, _ in kinds]
    # the step's failure stays its last anchor: what the timeline and triage read as the cause
    assert order.index("detected") < order.index("step_failed") == len(order) - 1
    assert {a["step"] for a in graph["anchors"] if a["type"] == "EXCEPTION"} == {1}
