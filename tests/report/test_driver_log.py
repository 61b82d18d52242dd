"""`--guistate-driver-log=FILE` (issue 23): the report shows the lines an Appium server log gained
while the test ran, scrubbed like every other text, and nothing written before the test."""

from __future__ import annotations

import json

import pytest

from tests.helpers.inner_run import run_inprocess

TEST = """
import pytest


@pytest.mark.guistate(app="com.guistate.feed")
def test_feed(device, guistate, pytestconfig):
    log = pytestconfig.rootpath / "appium.log"
    with log.open("a") as out:
        out.write("[HTTP] --> POST /session/abc/element {using: id}\\n")
        out.write("[HTTP] <-- POST /session/abc/element 200 12 ms - password s3cret-value\\n")
    guistate.secret("s3cret-value")
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
"""


def test_the_named_appium_log_is_shown_from_the_test_start(pytester: pytest.Pytester) -> None:
    (pytester.path / "appium.log").write_text("[Appium] an older line of another test\n", encoding="utf-8")
    pytester.makepyfile(test_feed=TEST)
    result = run_inprocess(pytester, "-p", "no:cacheprovider", "--guistate=standard", "--guistate-retain=on",
                           "--guistate-artifacts=art", "--guistate-driver-log=appium.log")
    result.assert_outcomes(passed=1)
    [folder] = [p for p in (pytester.path / "art").iterdir() if p.is_dir()]
    events = [json.loads(line) for line in (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    [log] = [e for e in events if e["type"] == "driver_log"]
    assert log["source"].endswith("appium.log")
    assert log["lines"][0].startswith("[HTTP] --> POST /session/abc/element")
    assert not any("older line" in line for line in log["lines"])
    assert "s3cret-value" not in json.dumps(log) and "[redacted]" in log["lines"][1]
    assert events[-1]["type"] == "finish"
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert 'id="driver-log"' in page and "POST /session/abc/element 200 12 ms" in page and "s3cret-value" not in page
