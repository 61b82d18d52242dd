"""Shapes seen in genuine captured page sources (UiAutomator2 / `uiautomator dump`, Espresso,
recent WebDriverAgent, Mac2) that the hand-made corpus lacked; each fixture here is our own,
written in that shape."""

from __future__ import annotations

from pathlib import Path

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_mask import status_bar_boxes
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.llm.prompt import ImageScale, element_lines

SOURCES = Path(__file__).parent / "pagesources"


def load(name: str) -> UITree:
    return parse_page_source((SOURCES / f"{name}.xml").read_text(encoding="utf-8"))


def test_an_adb_uiautomator_dump_without_a_size_takes_its_screen_from_the_window() -> None:
    tree = load("android_dump")
    assert tree.platform == "android"
    assert tree.screen_box == Box(0, 0, 1080, 2340)
    title = tree.find_text("Éclairs & crème ☕")
    assert len(title) == 1 and title[0].kind == "TextView"
    assert [n.locator_id for n in tree.actionable()] == ["list", "row", "row"]


def test_an_espresso_source_has_its_screen_its_bars_and_no_hidden_buttons() -> None:
    tree = load("android_espresso")
    assert tree.platform == "android"
    assert tree.screen_box == Box(0, 0, 1080, 2340)
    assert [n.label for n in tree.actionable()] == ["Checkout"]  # "Undo" is visible="false", zero width
    bars = status_bar_boxes(tree, 1080, 2340)
    assert Box(0, 0, 1080, 84) in bars and Box(0, 2214, 1080, 2340) in bars


def test_a_webdriveragent_field_showing_its_placeholder_is_empty() -> None:
    tree = load("ios_placeholder")
    amount, memo, pin = (tree.by_id(name)[0] for name in ("amount", "memo", "pin"))
    assert (amount.text, amount.value, amount.label) == ("Amount", "", "amount")
    assert (memo.text, memo.value) == ("Rent", "Rent")  # typed: the value differs from the placeholder
    assert pin.is_password and pin.value == ""
    rows = {r["id"]: r for r in element_lines(tree, ImageScale.for_frame(390, 844, 1))}
    assert "value" not in rows[amount.index_path]
    # no `visible` attribute at all: everything is drawn, the keyboard's keys stay out of the prompt
    assert [n.label for n in tree.actionable()] == ["amount", "memo", "pin", "Save"]
    assert not any(r["kind"] == "Key" for r in rows.values())


MAC2 = """<?xml version="1.0" encoding="UTF-8"?>
<XCUIElementTypeApplication elementType="2" identifier="" title="Notes" enabled="false" x="0" y="0" width="0" height="0">
  <XCUIElementTypeWindow elementType="4" identifier="main" title="" enabled="true" x="500" y="200" width="400" height="300">
    <XCUIElementTypeButton elementType="9" identifier="_NS:17" label="" title="Sign in" enabled="true" x="540" y="420" width="80" height="24"/>
  </XCUIElementTypeWindow>
</XCUIElementTypeApplication>"""


def test_a_mac2_source_names_by_title_and_reaches_its_window() -> None:
    tree = parse_page_source(MAC2)
    assert tree.platform == "ios"
    assert tree.screen_box == Box(0, 0, 900, 500)  # the Application has no size; the window is off-origin
    button = next(n for n in tree.nodes() if n.kind == "Button")
    assert (button.label, button.content_desc, button.text) == ("Sign in", "_NS:17", "Sign in")
    assert tree.actionable() == [button]


TABS = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2340">
  <android.widget.HorizontalScrollView index="0" class="android.widget.HorizontalScrollView" scrollable="true" bounds="[0,84][1080,230]" displayed="true">
    <android.widget.LinearLayout index="0" class="android.widget.LinearLayout" bounds="[0,84][1620,230]" displayed="true">
      <android.widget.TextView index="0" class="android.widget.TextView" text="News" clickable="true" bounds="[0,84][540,230]" displayed="true"/>
      <android.widget.TextView index="1" class="android.widget.TextView" text="Sport" clickable="true" bounds="[540,84][1080,230]" displayed="true"/>
      <android.widget.TextView index="2" class="android.widget.TextView" text="Weather" clickable="true" bounds="[1080,84][1620,230]" displayed="true"/>
    </android.widget.LinearLayout>
  </android.widget.HorizontalScrollView>
</hierarchy>"""


def test_an_android_view_past_the_screen_edge_is_not_actionable() -> None:
    tree = parse_page_source(TABS)
    assert [n.label for n in tree.actionable()] == ["android.widget.HorizontalScrollView", "News", "Sport"]


GOING_ALERT = """<AppiumAUT>
  <XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Trips" enabled="true" visible="true" x="0" y="0" width="390" height="844">
    <XCUIElementTypeButton type="XCUIElementTypeButton" name="Book" label="Book" enabled="true" visible="true" x="20" y="700" width="350" height="50"/>
    <XCUIElementTypeAny type="XCUIElementTypeAny" enabled="true" visible="false" x="inf" y="inf" width="0" height="0"/>
    <XCUIElementTypeAlert type="XCUIElementTypeAlert" name="Allow?" label="Allow?" enabled="true" visible="true" x="0" y="0" width="0" height="0"/>
  </XCUIElementTypeApplication>
</AppiumAUT>"""


def test_an_alert_of_no_size_takes_no_touches_and_an_infinite_frame_has_no_box() -> None:
    tree = parse_page_source(GOING_ALERT)
    assert tree.modal() is None
    assert [n.label for n in tree.actionable()] == ["Book"]
    assert next(n for n in tree.nodes() if n.kind == "Any").bounds is None


def test_an_android_input_is_named_by_its_hint_and_a_hint_as_text_is_no_value() -> None:
    tree = load("android_hint")
    iban, reference, amount = (tree.by_id(name)[0] for name in ("iban", "reference", "amount"))
    assert (iban.label, iban.value) == ("IBAN", "")
    assert (reference.label, reference.value) == ("Reference", "")  # the hint reported as text
    assert (amount.label, amount.value) == ("42,00 €", "42,00 €")
    rows = {r["id"]: r for r in element_lines(tree, ImageScale.for_frame(1080, 2340, 2))}
    assert rows[iban.index_path]["hint"] == "IBAN" and "hint" not in rows[reference.index_path]
