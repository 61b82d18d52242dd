"""Issue 11's three bugs on an XCUITest page source, each pinned by a test (they failed before the fix)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import parse_page_source

SOURCES = Path(__file__).parent / "pagesources"


def _ios_settings():  # type: ignore[no-untyped-def]
    return parse_page_source((SOURCES / "ios_settings.xml").read_text(encoding="utf-8"))


def test_ios_buttons_cells_and_switches_are_actionable() -> None:
    tree = _ios_settings()
    kinds = {n.cls.removeprefix("XCUIElementType") for n in tree.actionable()}
    assert {"Button", "Cell", "Switch", "Slider", "Table"} <= kinds
    labels = {n.label for n in tree.actionable()}
    assert {"General", "Keyboards", "Auto-Correction", "Light", "Dark"} <= labels
    assert "Predictive" not in labels  # visible="false": scrolled off the table


def test_ios_screen_size_comes_from_the_application_element() -> None:
    tree = _ios_settings()
    assert (tree.width, tree.height) == (390, 844)
    obs = Observation(Frame.from_array(np.zeros((844, 390, 3), np.uint8)), tree, "com.apple.Preferences")
    # a cell scrolled below the 844-pt screen (and marked visible="false") is not on screen
    assert not visible("Predictive")(obs).ok
    assert gone("Predictive")(obs).ok


def test_offscreen_ios_node_still_marked_visible_is_not_on_screen() -> None:
    xml = (SOURCES / "ios_settings.xml").read_text(encoding="utf-8").replace(
        'visible="false" accessible="true" x="16" y="900"', 'visible="true" accessible="true" x="16" y="900"')
    tree = parse_page_source(xml)
    obs = Observation(Frame.from_array(np.zeros((844, 390, 3), np.uint8)), tree, "com.apple.Preferences")
    assert not visible("Predictive")(obs).ok  # y=900 pt is below the 844-pt screen


def test_ios_label_is_label_not_value() -> None:
    tree = _ios_settings()
    switch = tree.find(lambda n: n.attrs.get("name") == "Auto-Correction" and "Switch" in n.cls)[0]
    assert switch.label == "Auto-Correction"
    assert switch.text == "Auto-Correction"
    obs = Observation(Frame.from_array(np.zeros((844, 390, 3), np.uint8)), tree, "com.apple.Preferences")
    assert "'Auto-Correction'" in visible("Auto-Correction")(obs).evidence
