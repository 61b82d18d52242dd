"""Allure: steps, crops, labels and failure attachments in the result files; a no-op without --alluredir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import pytest
from tests.helpers.scenario import start, login_and_fail
from pytest_guistate.report.allure_adapter import AllureAdapter
from pytest_guistate.report.finish import finalize

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    item.stash.setdefault(KEY, {{}})[report.when] = report
    return report

KEY = pytest.StashKey[dict]()

@pytest.fixture
def run(request, tmp_path):
    adapters = []
    def more(recorder):
        adapter = AllureAdapter.for_pluginmanager(request.config.pluginmanager, recorder)
        adapters.extend([adapter] if adapter else [])
        return adapters
    root = tmp_path / "artifacts"
    run = start(root, tier="standard", nodeid=request.node.nodeid, more_listeners=more)
    yield run
    call = request.node.stash.get(KEY, {{}}).get("call")
    failed = call is None or call.failed
    outcome = "failed" if failed else "passed"
    run.session.finish(outcome, None)
    done = finalize(run.recorder, outcome=outcome, error=str(call.longrepr) if failed else None,
                    retain="failure", root=root)
    for adapter in adapters:
        adapter.finish(done, goal=run.session.goal_text, tier="standard", failed=failed)
    request.config.stash.setdefault(RESULTS, []).append((done, len(adapters)))

RESULTS = pytest.StashKey[list]()
"""

TEST = """
from tests.helpers.scenario import login_and_fail

def test_login_then_sync(run):
    login_and_fail(run)
"""


def _results(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in folder.glob("*-result.json")]


def test_steps_crops_labels_and_failure_attachments_reach_allure(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner=TEST)
    alluredir = pytester.path / "allure-results"
    result = pytester.runpytest_inprocess(f"--alluredir={alluredir}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    [test] = _results(alluredir)
    assert test["status"] == "failed"
    assert test["description"].startswith("Sign in and enable dark mode <img src=x")  # Allure escapes it
    labels = {(label["name"], label["value"]) for label in test["labels"]}
    assert ("guistate_tier", "standard") in labels and ("guistate_triage", "stale_screen_repetition") in labels
    steps = test["steps"]
    names = [s["name"] for s in steps]
    # the title says what the plugin did (issue 15), not only a parameter
    assert names[0] == "[guistate 1] tap the email field"
    assert names[-1] == "[guistate 7] wait for sync — failed after settle"
    assert "correct-horse" not in json.dumps(test)
    assert steps[-1]["status"] == "failed" and "Synced just now" in steps[-1]["statusDetails"]["message"]
    login = steps[4]
    crop_names = [a["name"] for a in login["attachments"]]
    assert "step 5 region 0 before" in crop_names and "step 5 region 0 after" in crop_names
    for attachment in login["attachments"]:
        data = (alluredir / attachment["source"]).read_bytes()
        assert attachment["type"] == "image/png" and data.startswith(b"\x89PNG")
    # the failed step opens on its before | after pair, regions drawn: one image, twice a frame wide
    pair = steps[-1]["attachments"][0]
    assert pair["name"] == "step 7 before | after" and pair["type"] == "image/png"
    from PIL import Image
    with Image.open(alluredir / pair["source"]) as image:
        width, height = image.size
    assert width > 1.8 * height * 1080 / 2400, (width, height)
    # test-level attachments in the order a person opens them
    assert [a["name"] for a in test["attachments"]][:3] == [
        "guistate report.html", "guistate timeline", "guistate progress"]
    attached = {a["name"]: a for a in test["attachments"]}
    assert {"guistate timeline", "guistate progress", "guistate anchors", "guistate report.html",
            "guistate triage"} <= set(attached)
    assert attached["guistate timeline"]["type"] == "image/svg+xml"
    svg = (alluredir / attached["guistate timeline"]["source"]).read_text()
    assert svg.startswith("<svg") and "anchor-SUBGOAL" in svg
    assert "[>] synced" in (alluredir / attached["guistate progress"]["source"]).read_text()
    anchors = json.loads((alluredir / attached["guistate anchors"]["source"]).read_text())
    assert anchors["schema"] == "guistate.anchors/1"


def test_without_alluredir_nothing_of_allure_runs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner=TEST)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert not list(pytester.path.rglob("*-result.json"))
