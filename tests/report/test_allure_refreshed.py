"""Allure (issue 23): a passing step that needed a refresh gets the before | after side-by-side with
its regions drawn, first among its attachments, as a failed step does; not only separate crops."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from tests.helpers.inner_run import run_inprocess

TEST = """
import pytest
from pytest_guistate import gone


@pytest.mark.guistate(app="com.guistate.feed", faults={"refresh_delay": 30})
def test_delete_refreshed(device, guistate):
    with guistate.step("open the delete dialog", expect="Delete post by Carol?"):
        device.tap(desc="Delete post by Carol")
    with guistate.step("confirm", expect=gone("Carol"), idempotent=False):
        device.tap(id="android:id/button1")
"""


@pytest.mark.parametrize("tier", ["standard", "full"])
def test_a_refreshed_step_opens_on_its_side_by_side(pytester: pytest.Pytester, tier: str) -> None:
    pytester.makepyfile(test_feed=TEST)
    result = run_inprocess(pytester, "-p", "no:cacheprovider", f"--guistate={tier}", "--guistate-retain=on",
                           "--guistate-artifacts=art", "--alluredir=allure")
    result.assert_outcomes(passed=1)
    [test] = [json.loads(p.read_text(encoding="utf-8")) for p in (pytester.path / "allure").glob("*-result.json")]
    refreshed = test["steps"][1]
    assert "refreshed" in refreshed["name"], refreshed["name"]
    first = refreshed["attachments"][0]
    assert first["name"] == "step 2 before | after" and first["type"] == "image/png"
    with Image.open(pytester.path / "allure" / first["source"]) as image:
        width, height = image.size
        pixels = image.convert("RGB")
        red = sum(1 for x in range(0, width, 3) for y in range(0, height, 3)
                  if pixels.getpixel((x, y))[0] > 200 and pixels.getpixel((x, y))[1] < 80)
    assert tier == "standard" or width > 1.8 * height * 1080 / 2400, (width, height)  # two frames wide
    assert red > 0, "the changed regions are drawn on the pair"
    names = [a["name"] for a in refreshed["attachments"]]
    assert "step 2 region 0 after" in names  # the crops stay, after the pair
