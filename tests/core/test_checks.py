"""Checks: what `expect=` and milestone checks evaluate, with evidence a failure can quote."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_guistate.core.checks import (
    Check,
    CheckResult,
    all_of,
    as_check,
    frame_check,
    gone,
    visible,
)
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import parse_page_source

XML = """<hierarchy width="100" height="200">
  <node class="android.widget.FrameLayout" bounds="[0,0][100,200]">
    <node class="android.widget.TextView" text="Total: 12.50" resource-id="com.shop:id/total" bounds="[0,10][100,30]"/>
    <node class="android.widget.Button" content-desc="Buy now" bounds="[0,40][100,60]"/>
    <node class="android.widget.TextView" text="Hidden" displayed="false" bounds="[0,70][100,90]"/>
    <node class="android.widget.TextView" text="Offscreen" bounds="[0,300][100,320]"/>
  </node>
</hierarchy>"""


@pytest.fixture()
def obs() -> Observation:
    img = np.zeros((200, 100, 3), np.uint8)
    img[0:5, 0:5] = (0, 0, 255)
    return Observation(Frame.from_array(img), parse_page_source(XML), "com.shop")


def test_visible_matches_text_substring_and_reports_where(obs: Observation) -> None:
    result = visible("12.50")(obs)
    assert result.ok and result.box == Box(0, 10, 100, 30)
    assert "Total: 12.50" in result.evidence
    assert not visible("12.50", exact=True)(obs).ok
    assert visible("Total: 12.50", exact=True)(obs).ok


def test_visible_by_id_and_desc_and_text_falls_back_to_desc(obs: Observation) -> None:
    assert visible(id="total")(obs).ok
    assert visible(id="com.shop:id/total")(obs).ok
    assert not visible(id="other")(obs).ok
    assert visible(desc="Buy")(obs).ok
    assert visible("Buy now")(obs).ok  # text= also looks at content-desc


def test_hidden_and_offscreen_nodes_are_not_visible(obs: Observation) -> None:
    assert not visible("Hidden")(obs).ok
    assert not visible("Offscreen")(obs).ok
    assert gone("Offscreen")(obs).ok


def test_gone_names_the_node_still_there(obs: Observation) -> None:
    result = gone("Total")(obs)
    assert not result.ok
    assert "still visible at [0,10][100,30]" in result.evidence
    assert gone("Nope")(obs).ok


def test_no_tree_fails_with_a_reason() -> None:
    observation = Observation(Frame.from_array(np.zeros((10, 10, 3), np.uint8)), None)
    for check in (visible("x"), gone("x")):
        result = check(observation)
        assert not result.ok and "no accessibility tree" in result.evidence


def test_frame_check_on_pixels(obs: Observation) -> None:
    red = frame_check(lambda f: bool(f.bgr[0, 0, 2] == 255), "top-left pixel is red")
    assert red(obs).ok
    blue = frame_check(lambda f: bool(f.bgr[0, 0, 0] == 255), "top-left pixel is blue")
    result = blue(obs)
    assert not result.ok and result.evidence == "top-left pixel is blue: no"
    with pytest.raises(ValueError):
        frame_check(lambda f: True, "")
    with pytest.raises(TypeError, match="returned int"):
        frame_check(lambda f: 1, "bad")(obs)  # type: ignore[arg-type, return-value]


def test_as_check_normalises_every_form(obs: Observation) -> None:
    assert as_check("Buy now")(obs).ok
    assert as_check(lambda o: o.package == "com.shop")(obs).ok
    custom = as_check(lambda o: CheckResult(False, "custom says no", None))
    assert custom(obs).evidence == "custom says no"
    both = as_check(["Total", gone("Nope")])
    assert both(obs).ok
    failing = all_of("Total", "Missing")
    result = failing(obs)
    assert not result.ok and "'Missing'" in result.evidence
    existing = visible("x")
    assert as_check(existing) is existing


def test_bad_checks_are_refused_clearly(obs: Observation) -> None:
    with pytest.raises(TypeError, match="not a check"):
        as_check(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        as_check("")
    with pytest.raises(ValueError):
        visible()
    with pytest.raises(TypeError, match="must return bool or CheckResult"):
        Check("weird", lambda o: "yes")(obs)  # type: ignore[arg-type, return-value]


# -- "visible" is what a person sees (issue 24: the rule a driver find must match) ---------------
SOURCES = Path(__file__).parent / "pagesources"


def _observed(xml: str) -> Observation:
    tree = parse_page_source(xml)
    assert tree.width and tree.height
    return Observation(Frame.from_array(np.zeros((tree.height, tree.width, 3), np.uint8)), tree, "app")


def test_beneath_an_ios_alert_is_not_visible_inside_it_is() -> None:
    observation = _observed((SOURCES / "ios_alert.xml").read_text(encoding="utf-8"))
    assert visible("This cannot be undone.")(observation).ok and visible("Cancel", exact=True)(observation).ok
    assert visible("Delete post by Carol?", exact=True)(observation).ok  # the alert's own title
    assert gone("Feed", exact=True)(observation).ok  # the screen beneath: WebDriverAgent lists it, a person does not read it
    assert gone(desc="Delete post by Carol", exact=True)(observation).ok  # the row's button beneath


def test_wholly_under_the_soft_keyboard_is_not_visible() -> None:
    rows = "".join(
        f'<XCUIElementTypeStaticText type="XCUIElementTypeStaticText" label="Result {i}" enabled="true" '
        f'visible="true" accessible="true" x="0" y="{380 + 100 * i}" width="390" height="40"/>' for i in range(4))
    xml = (SOURCES / "ios_keyboard.xml").read_text(encoding="utf-8").replace(
        "      </XCUIElementTypeOther>\n    </XCUIElementTypeWindow>", rows + "</XCUIElementTypeOther></XCUIElementTypeWindow>", 1)
    observation = _observed(xml)  # the keyboard starts at y=508 pt
    assert visible("Result 0")(observation).ok and visible("Result 1")(observation).ok  # 480-520: pokes above the keys
    assert gone("Result 2")(observation).ok and gone("Result 3")(observation).ok


@pytest.mark.parametrize("name", ["android_disabled", "ios_disabled"])
def test_a_disabled_control_is_still_visible(name: str) -> None:
    observation = _observed((SOURCES / f"{name}.xml").read_text(encoding="utf-8"))
    disabled = [n for n in observation.tree.nodes() if not n.enabled and n.label] if observation.tree else []
    assert disabled and all(visible(n.label, exact=True)(observation).ok for n in disabled)
