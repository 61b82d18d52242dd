"""Every file a report names exists (issue 15: the terminal and anchors.json said
`step004-crop0.png` while the file was `crops/step-0004-r0.png`): the journal, anchors.json,
report.html, the terminal's guistate section and the Allure results, from one real run at full
tier with a failing test (crops, before-crops, frames, the failed step's pair) and a passing one
(a refreshed step, its title in Allure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_guistate.report.html import report_model
from pytest_guistate.report.journal import read_journal

TESTS = """
import pytest
from pytest_guistate import gone

pytestmark = pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 4.0}, settle_timeout=1.0)


def test_delete_refreshed(device, guistate):
    guistate.goal("Delete Carol's post", plan=["dialog", ("gone", gone("Carol"))])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    guistate.milestone("dialog")
    with guistate.step("confirm", expect=gone("Carol"), idempotent=False):
        device.tap(id="android:id/button1")
    guistate.milestone("gone")


def test_wrong_button(device, guistate):
    guistate.goal("Delete Carol's post", plan=[("gone", gone("Carol"))])
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("confirm", expect=gone("Carol"), idempotent=False):
        device.tap(id="android:id/button2")  # Cancel, not Delete
"""


def _journal_files(folder: Path) -> list[str]:
    journal = read_journal(folder)
    named: list[str] = []
    for event in journal.steps:
        files = event.get("files") or {}
        named += list(files.get("crops") or []) + [f for f in files.get("crops_before") or [] if f]
        named += list((files.get("frames") or {}).values())
        record = event.get("record") or {}
        named += list(record.get("crops") or []) + list(record.get("frames") or [])
    for event in journal.anchors:
        named += list(event.get("files") or []) + list((event.get("anchor") or {}).get("crops") or [])
    return named


@pytest.mark.parametrize("tier", ["light", "full"])
def test_every_named_file_exists(inner, pytester: pytest.Pytester, tier: str) -> None:
    pytester.makepyfile(test_feed=TESTS)
    alluredir = pytester.path / "allure-results"
    artifacts = pytester.path / "artifacts"
    result = inner(f"--guistate={tier}", "--guistate-retain=on", f"--guistate-artifacts={artifacts}",
                   f"--alluredir={alluredir}", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    folders = sorted(p for p in artifacts.iterdir() if p.is_dir())
    assert len(folders) == 2
    checked = 0
    for folder in folders:
        named = _journal_files(folder)
        anchors = json.loads((folder / "anchors.json").read_text(encoding="utf-8"))
        named += [c for a in anchors["anchors"] for c in a.get("crops") or []]
        assert named or (tier == "light" and "refreshed" in folder.name), f"{folder.name}: nothing named at all"
        missing = sorted({n for n in named if not (folder / n).is_file()})
        assert missing == [], f"{folder.name}: named but not on disk: {missing}"
        assert report_model(read_journal(folder))["missing_files"] == [], folder.name
        checked += len(named)
    # the terminal section names crops relative to the failed test's folder
    [failed] = [f for f in folders if "wrong_button" in f.name]
    crop_lines = [line.split("crops:", 1)[1] for line in result.outlines if line.strip().startswith("crops:")]
    assert crop_lines, "the guistate section lists no crops"
    for line in crop_lines:
        for name in (n.strip() for n in line.split(",")):
            assert (failed / name).is_file(), f"the terminal names {name!r}, not in {failed}"
    # Allure: every attachment's file exists; the titles say what the plugin did
    results = [json.loads(p.read_text(encoding="utf-8")) for p in alluredir.glob("*-result.json")]
    sources: list[str] = []

    def walk(node: dict) -> None:
        sources.extend(a["source"] for a in node.get("attachments") or [])
        for step in node.get("steps") or []:
            walk(step)

    for test in results:
        walk(test)
    assert sources and all((alluredir / s).is_file() for s in sources)
    by_name = {t["name"]: t for t in results}
    titles = [s["name"] for s in by_name["test_delete_refreshed"]["steps"]]
    assert titles == ["[guistate 1] open the delete dialog", "[guistate 2] confirm — refreshed (pull-to-refresh)"]
    passed = [a["name"] for a in by_name["test_delete_refreshed"].get("attachments") or []]
    if tier == "full":  # a passed test gets the timeline at full (kept here: report.html too)
        assert passed[:3] == ["guistate report.html", "guistate timeline", "guistate progress"]
    else:
        assert passed == []
    failed_steps = by_name["test_wrong_button"]["steps"]
    assert failed_steps[-1]["attachments"][0]["name"] == "step 2 before | after"
    assert [a["name"] for a in by_name["test_wrong_button"]["attachments"]][:3] == [
        "guistate report.html", "guistate timeline", "guistate progress"]
    assert checked > 4
