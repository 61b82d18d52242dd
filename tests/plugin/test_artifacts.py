"""Per-test artifact folders, retention, the JSON run summary and JUnit properties (also under xdist)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

InnerRun = Callable[..., pytest.RunResult]

GREEN_AND_RED = """
import pytest

FEED = pytest.mark.guistate(app="com.guistate.feed")


def open_dialog(device, guistate):
    with guistate.step("open the delete dialog on Bob's post", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob")
    guistate.milestone("dialog open")


@FEED
def test_green(device, guistate):
    guistate.goal("Open Bob's delete dialog", plan=["dialog open"])
    open_dialog(device, guistate)


@FEED
def test_red(device, guistate):
    guistate.goal("Open and cancel Bob's delete dialog", plan=["dialog open", "dialog closed"])
    open_dialog(device, guistate)
    assert False, "red on purpose"


def test_without_guistate():
    pass
"""

GREEN = "test_tasks.py-test_green"
RED = "test_tasks.py-test_red"


def folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()


def journal(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("retain", "kept"), [("failure", {RED}), ("on", {GREEN, RED}), ("off", set())])
def test_retention_keeps_the_right_folders(
    inner: InnerRun, pytester: pytest.Pytester, retain: str, kept: set[str]
) -> None:
    pytester.makepyfile(test_tasks=GREEN_AND_RED)
    inner("--guistate=standard", f"--guistate-retain={retain}", "--guistate-artifacts=out/gui").assert_outcomes(
        passed=2, failed=1)
    root = pytester.path / "out" / "gui"
    assert folders(root) == kept
    assert not (pytester.path / "guistate-artifacts").exists(), "--guistate-artifacts was not honoured"
    for name in kept:
        folder = root / name
        assert (folder / "report.html").is_file()
        events = journal(folder)
        assert events[0]["type"] == "meta" and events[0]["nodeid"] == name.replace("-", "::", 1)
        finish = events[-1]
        assert finish["type"] == "finish"
        assert finish["outcome"] == ("failed" if name == RED else "passed")
    if RED in kept:
        html = (root / RED / "report.html").read_text(encoding="utf-8")
        assert "Open and cancel Bob&#39;s delete dialog" in html or "Open and cancel Bob's delete dialog" in html


def _junit_properties(path: Path) -> dict[str, dict[str, str]]:
    root = ET.parse(path).getroot()
    return {case.get("name", ""): {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
            for case in root.iter("testcase")}


def test_summary_json_and_junit_properties_agree(inner: InnerRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=GREEN_AND_RED)
    inner("--guistate=standard", "--guistate-summary=reports/summary.json", "--junitxml=junit.xml",
          "--guistate-artifacts=out").assert_outcomes(passed=2, failed=1)
    document = json.loads((pytester.path / "reports" / "summary.json").read_text(encoding="utf-8"))
    assert document["schema"] == "guistate.summary/2"
    assert document["workers"] == ["main"]
    tests = {t["nodeid"]: t for t in document["tests"]}
    assert set(tests) == {"test_tasks.py::test_green", "test_tasks.py::test_red"}  # only guistate tests
    green, red = tests["test_tasks.py::test_green"], tests["test_tasks.py::test_red"]
    assert (green["outcome"], green["tier"], green["steps"], green["milestones_done"], green["milestones_total"]) == (
        "passed", "standard", 1, 1, 1)
    assert (red["outcome"], red["tier"], red["steps"], red["milestones_done"], red["milestones_total"]) == (
        "failed", "standard", 1, 1, 2)
    assert red["artifacts"] is not None and Path(red["artifacts"]).name == RED
    assert green["artifacts"] is None  # not retained under the default retain=failure
    assert document["totals"]["tests"] == 2 and document["totals"]["failed"] == 1
    assert not (pytester.path / "reports" / "summary.json.parts").exists()

    props = _junit_properties(pytester.path / "junit.xml")
    assert props["test_without_guistate"] == {}
    for name, entry in (("test_green", green), ("test_red", red)):
        assert props[name]["guistate_tier"] == entry["tier"]
        assert props[name]["guistate_steps"] == str(entry["steps"])
        assert props[name]["guistate_milestones"] == f"{entry['milestones_done']}/{entry['milestones_total']}"
    assert Path(props["test_red"]["guistate_artifacts"]).name == RED
    assert "guistate_artifacts" not in props["test_green"]


def test_xdist_workers_merge_into_one_summary_and_never_share_a_folder(
    inner: InnerRun, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_tasks=GREEN_AND_RED)
    # --dist each runs every test on both workers: the same node id in two processes at once
    result = inner("-n", "2", "--dist", "each", "--guistate=standard", "--guistate-retain=on",
                   "--guistate-artifacts=out", "--guistate-summary=summary.json")
    result.assert_outcomes(passed=4, failed=2)
    document = json.loads((pytester.path / "summary.json").read_text(encoding="utf-8"))
    assert sorted(document["workers"]) == ["gw0", "gw1"]
    seen = sorted((t["nodeid"], t["worker"], t["outcome"]) for t in document["tests"])
    assert seen == [
        ("test_tasks.py::test_green", "gw0", "passed"),
        ("test_tasks.py::test_green", "gw1", "passed"),
        ("test_tasks.py::test_red", "gw0", "failed"),
        ("test_tasks.py::test_red", "gw1", "failed"),
    ]
    assert document["totals"] == {**document["totals"], "tests": 4, "failed": 2, "steps": 4}
    root = pytester.path / "out"
    assert folders(root) == {f"{GREEN}@gw0", f"{GREEN}@gw1", f"{RED}@gw0", f"{RED}@gw1"}
    for entry in document["tests"]:
        folder = Path(entry["artifacts"])
        folder = folder if folder.is_absolute() else pytester.path / folder
        assert folder.name.endswith(f"@{entry['worker']}")
        meta = journal(folder)[0]
        assert (meta["nodeid"], meta["worker"]) == (entry["nodeid"], entry["worker"])
