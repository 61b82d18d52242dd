"""The whole plugin against real Appium 3 + Chromium, as a user runs it: the `device` and
`guistate` fixtures, refresh-before-retry on the stale web Feed, then the HTML report and the
Allure results (issue 6: "crops and the anchor timeline land in the report and in Allure").

The inner run leases the outer run's server under its own device entry (a distinct capability
makes a distinct lease), so it never waits for the device the outer run holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from lxml import html as lxml_html

from pytest_guistate.devices.web_feed import FeedServer
from pytest_guistate.report.journal import read_journal

pytestmark = pytest.mark.appium

INNER = """
from pytest_guistate import gone


def test_delete_alice_on_a_stale_list(device, guistate):
    device.open_url({page!r})
    guistate.goal("Delete Alice's post", plan=["confirm dialog open", ("post gone", gone("Alice", exact=True))])
    with guistate.step("open the delete dialog", expect="Delete post?"):
        device.tap("Delete")
    guistate.milestone("confirm dialog open")
    with guistate.step("confirm", expect=gone("Alice", exact=True), idempotent=False):
        device.tap(id="confirm_delete")
    guistate.milestone("post gone")
    guistate.assert_complete()
    deletes = [e["post_id"] for e in device.action_log() if e["action"] == "delete_post"]
    assert deletes == ["p1"], deletes  # refreshed, never re-tapped: the next post survives
"""


def test_a_stale_real_screen_is_refreshed_and_reported_in_html_and_allure(
    pytester: pytest.Pytester, feed_server: FeedServer, inner_device: Callable[[int], tuple[str, ...]],
) -> None:
    device_options = inner_device(120)
    pytester.makepyfile(INNER.format(page=feed_server.page_url(delay_ms=60_000, refresh_ms=400)))
    alluredir = pytester.path / "allure-results"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--guistate=full", *device_options, "--guistate-retain=on", f"--guistate-artifacts={pytester.path / 'artifacts'}", f"--alluredir={alluredir}",
    )
    result.assert_outcomes(passed=1)

    [folder] = [p.parent for p in (pytester.path / "artifacts").rglob("report.html")]
    page = lxml_html.fromstring((folder / "report.html").read_text(encoding="utf-8"))
    rows = page.xpath("//div[contains(@class, 'detail')]")
    assert [r.get("data-step") for r in rows] == ["1", "2"]
    anchors = json.loads((folder / "anchors.json").read_text())["anchors"]
    stale = [a for a in anchors if a["data"].get("kind") == "stale_screen"]
    assert stale and stale[0]["step"] == 2, [a["title"] for a in anchors]
    assert {"SUBGOAL", "FINISH"} <= {a["type"] for a in anchors}
    [step2] = [e for e in read_journal(folder).steps if e["record"]["index"] == 2]
    crops = [folder / rel for rel in [*step2["files"]["crops"], *step2["files"]["crops_before"]] if rel]
    # issue 44: stored once by content, as lossless WebP (Allure's copies below are PNG)
    assert crops and all(c.read_bytes()[8:12] == b"WEBP" for c in crops)

    [test] = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    assert test["status"] == "passed"
    steps = test["steps"]
    assert [s["name"] for s in steps] == ["[guistate 1] open the delete dialog",
                                         "[guistate 2] confirm — refreshed (pull-to-refresh)"]
    assert {p["name"]: p["value"] for p in steps[1]["parameters"]}["outcome"] == "refreshed"
    names = [a["name"] for a in steps[1]["attachments"]]
    assert "step 2 region 0 after" in names and "step 2 region 0 before" in names
    for attachment in steps[1]["attachments"]:
        assert (alluredir / attachment["source"]).read_bytes().startswith(b"\x89PNG")
    assert ("guistate_tier", "full") in {(label["name"], label["value"]) for label in test["labels"]}
