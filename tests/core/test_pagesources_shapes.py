"""Real-driver shapes the corpus lacked (tests/core/pagesources/shapes/ and the disabled samples):
disabled controls, the soft keyboard on both platforms, an iPad, landscape on both platforms and
a Chrome WebView. Each fixture is our own, written in the shape the driver produces (see
docs/pagesources.md for where each shape was read)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.oracle_mask import status_bar_boxes
from pytest_guistate.core.uitree import UINode, UITree, parse_page_source
from pytest_guistate.core.uitree_platform import ios_label, is_ime_package
from pytest_guistate.llm.prompt import ImageScale, element_lines
from pytest_guistate.memory.regions import actionable_regions

SOURCES = Path(__file__).parent / "pagesources"


def load(name: str, scale: float | None = None) -> UITree:
    return parse_page_source((SOURCES / f"{name}.xml").read_text(encoding="utf-8"), scale=scale)


def obs(tree: UITree) -> Observation:
    assert tree.width and tree.height
    return Observation(Frame.from_array(np.zeros((tree.height, tree.width, 3), np.uint8)), tree, "app")


def labels(nodes: list[UINode]) -> list[str]:
    return [n.label for n in nodes]


def rows_of(tree: UITree, divisor: float = 1) -> list[dict[str, object]]:
    assert tree.width and tree.height
    return element_lines(tree, ImageScale.for_frame(tree.width, tree.height, divisor), limit=10_000)


def snapped(tree: UITree, inside: Box) -> list[tuple[str | None, Box]]:
    """What the oracle makes of a change drawn inside `inside` (a few pixels in from its edges)."""
    assert tree.width and tree.height
    before = np.full((tree.height, tree.width, 3), 245, np.uint8)
    after = before.copy()
    cv2.rectangle(after, (inside.left + 4, inside.top + 4), (inside.right - 5, inside.bottom - 5), (0, 0, 220), -1)
    result = VisualOracle().compare(Frame.from_array(before), Frame.from_array(after), tree)
    return [(r.container, r.box) for r in result.regions]


# -- disabled controls ------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "button", "field"), [
    ("android_disabled", "Create account", "Invite code (closed)"),
    ("ios_disabled", "Create Account", "Invite code"),
])
def test_a_disabled_control_is_seen_but_not_actionable(name: str, button: str, field: str) -> None:
    tree = load(name)
    disabled = [n for n in tree.nodes() if n.label in (button, field) and n.is_control]
    assert len(disabled) == 2 and not any(n.enabled or n.is_actionable for n in disabled)
    assert not {button, field} & set(labels(tree.actionable()))
    assert {button, field} <= set(labels(tree.controls()))
    screen = obs(tree)
    assert visible(button, exact=True)(screen).ok and not gone(button, exact=True)(screen).ok
    # the healer never lands on it either
    assert tree.width and tree.height
    targets = {t.node.label for t in actionable_regions(tree, (tree.width, tree.height)) if t.node is not None}
    assert button not in targets and field not in targets and targets
    # the actor is shown it, marked disabled (the same row as before the rule, so cassettes still match)
    rows = {r["id"]: r for r in rows_of(tree)}
    node = next(n for n in disabled if n.label == button)
    assert rows[node.index_path]["disabled"] is True and rows[node.index_path]["tap"] is True


def test_a_disabled_container_does_not_disable_its_enabled_children() -> None:
    xml = (SOURCES / "android_disabled.xml").read_text(encoding="utf-8").replace(
        'class="android.widget.LinearLayout" text="" resource-id="" checkable="false" checked="false" '
        'clickable="false" enabled="true"',
        'class="android.widget.LinearLayout" text="" resource-id="" checkable="false" checked="false" '
        'clickable="false" enabled="false"', 1)
    assert 'enabled="false"' in xml
    tree = parse_page_source(xml)
    assert "I accept the terms" in labels(tree.actionable())  # Android's enabled is per view


# -- the soft keyboard ------------------------------------------------------------------------
def test_gboard_keys_leave_actionable_and_the_prompt_its_action_key_stays() -> None:
    tree = load("shapes/android_gboard")
    keyboard = tree.keyboard()
    assert keyboard is not None and keyboard.package == "com.google.android.inputmethod.latin"
    assert tree.keyboard_box == Box(0, 1431, 1080, 2214)  # not the IME root spanning the screen
    reachable = tree.actionable()
    keys = [n for n in reachable if n.keyboard]
    assert [(n.label, n.locator_id) for n in keys] == [("Search", "key_pos_ime_action")]
    assert not {"q", "w", "Shift", "Delete", "Space", "Back", "Open features menu"} & set(labels(reachable))
    # the list runs on under the keyboard (adjustPan): rows wholly beneath it take no tap
    rows = [n for n in reachable if n.locator_id == "row"]
    assert len(rows) == 6 and all(n.bounds is not None and n.bounds.top < 1431 for n in rows)
    lines = rows_of(tree)
    assert not any(r.get("desc") in ("q", "w", "Shift") or r.get("text") == "headset" for r in lines)
    assert lines[-1] == {"id": "keyboard", "kind": "Keyboard", "at": [0, 1431, 1080, 2214]}
    assert tree.by_index_path("keyboard") is None  # a tap on it is refused as an unknown element
    assert any(r.get("rid") == "key_pos_ime_action" and r.get("tap") for r in lines)
    assert visible("head", exact=True)(obs(tree)).ok  # the field's text is still on screen


@pytest.mark.parametrize("package", ["com.samsung.android.honeyboard", "com.android.inputmethod.latin",
                                     "com.touchtype.swiftkey"])
def test_other_keyboards_are_keyboards_too(package: str) -> None:
    xml = (SOURCES / "shapes/android_gboard.xml").read_text(encoding="utf-8").replace(
        'package="com.google.android.inputmethod.latin"', f'package="{package}"')
    tree = parse_page_source(xml)
    assert is_ime_package(package) and tree.keyboard_box == Box(0, 1431, 1080, 2214)
    assert not any(n.package == package and n.label in ("q", "Shift") for n in tree.actionable())


HIDDEN_IME = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2340">
  <android.widget.FrameLayout index="0" package="com.guistate.notes" class="android.widget.FrameLayout" clickable="false" enabled="true" bounds="[0,0][1080,2340]" displayed="true">
    <android.widget.Button index="0" package="com.guistate.notes" class="android.widget.Button" text="Save" clickable="true" enabled="true" bounds="[40,2000][1040,2140]" displayed="true"/>
  </android.widget.FrameLayout>
  <android.widget.FrameLayout index="1" package="com.google.android.inputmethod.latin" class="android.widget.FrameLayout" clickable="false" enabled="true" bounds="[0,136][1080,2340]" displayed="true">
    <android.widget.FrameLayout index="0" package="com.google.android.inputmethod.latin" class="android.widget.FrameLayout" resource-id="com.google.android.inputmethod.latin:id/keyboard_holder" clickable="false" enabled="true" bounds="[0,2208][1080,2208]" displayed="true"/>
    <android.widget.ImageView index="1" package="com.google.android.inputmethod.latin" class="android.widget.ImageView" resource-id="android:id/input_method_nav_back" content-desc="Back" clickable="true" enabled="true" bounds="[52,2208][244,2340]" displayed="true"/>
  </android.widget.FrameLayout>
</hierarchy>"""


def test_an_ime_window_of_no_keyboard_hides_nothing() -> None:
    tree = parse_page_source(HIDDEN_IME)
    assert tree.keyboard() is not None and tree.keyboard_box is None
    assert labels(tree.actionable()) == ["Save"]
    assert not any(r["kind"] == "Keyboard" for r in rows_of(tree))


def test_the_ios_keyboard_area_is_known_in_points_and_pixels() -> None:
    tree = load("ios_keyboard")
    assert tree.keyboard_box == Box(0, 508, 390, 844)
    assert load("ios_keyboard", scale=3.0).keyboard_box == Box(0, 1524, 1170, 2532)
    lines = rows_of(tree)
    assert lines[-1]["kind"] == "Keyboard" and lines[-1]["at"] == [0, 508, 390, 844]
    assert not any(r["kind"] == "Key" for r in lines)
    assert {"search", "Next keyboard"} <= {str(r.get("text")) for r in lines if r.get("tap")}


def test_an_ios_cell_under_the_keyboard_takes_no_tap() -> None:
    cells = "".join(
        f'<XCUIElementTypeCell type="XCUIElementTypeCell" name="result_{i}" enabled="true" visible="true" '
        f'accessible="false" x="0" y="{180 + 100 * i}" width="390" height="100" index="{2 + i}"/>' for i in range(6))
    xml = (SOURCES / "ios_keyboard.xml").read_text(encoding="utf-8").replace(
        "      </XCUIElementTypeOther>\n    </XCUIElementTypeWindow>", cells + "</XCUIElementTypeOther></XCUIElementTypeWindow>", 1)
    tree = parse_page_source(xml)
    reachable = [n.locator_id for n in tree.actionable() if n.kind == "Cell"]
    assert reachable == ["result_0", "result_1", "result_2", "result_3"]  # 480-580 pokes above the keys; 580+ is under


# -- Mac2: the title is the label, in one place -------------------------------------------------
def test_mac2_title_is_the_label_everywhere() -> None:
    assert ios_label({"title": "Sign in"}) == "Sign in" and ios_label({"label": "A", "title": "B"}) == "A"
    xml = """<XCUIElementTypeApplication elementType="2" identifier="" title="Notes" x="0" y="0" width="800" height="600">
      <XCUIElementTypeCell elementType="75" identifier="" title="" x="0" y="40" width="800" height="30">
        <XCUIElementTypeOther elementType="1" identifier="" title="Row title" x="0" y="40" width="800" height="30"/>
      </XCUIElementTypeCell>
    </XCUIElementTypeApplication>"""
    tree = parse_page_source(xml)
    inner = next(n for n in tree.nodes() if n.kind == "Other")
    assert inner.label == "Row title" and inner.text == "Row title"
    assert not inner.content_view  # a titled view is not the Cell's anonymous content view


# -- an iPad ----------------------------------------------------------------------------------
def test_an_ipad_split_view_in_points_and_at_scale_two() -> None:
    points = load("shapes/ios_ipad")
    assert (points.unit, points.screen_box) == ("pt", Box(0, 0, 1024, 1366))
    tree = load("shapes/ios_ipad").fit_to(2048)
    assert (tree.unit, tree.scale, tree.screen_box) == ("px", 2.0, Box(0, 0, 2048, 2732))
    assert load("shapes/ios_ipad", scale=2.0).screen_box == tree.screen_box
    reachable = labels(tree.actionable())
    assert reachable[:2] == ["Edit", "sidebar"] and {"Inbox", "Trash", "mail_3", "Compose", "Filter"} <= set(reachable)
    assert status_bar_boxes(tree, 2048, 2732) == [Box(0, 0, 2048, 48)]  # the 24-pt status bar, above both bars
    # a change in a row of either column snaps to that row, not to the column or the window
    subject = next(n for n in tree.nodes() if n.label == "Re: the test").bounds
    drafts = next(n for n in tree.nodes() if n.kind == "StaticText" and n.label == "Drafts").bounds
    assert subject is not None and drafts is not None
    assert snapped(tree, subject) == [("mail_1", Box(640, 340, 2048, 532))]
    assert snapped(tree, drafts) == [("Drafts", Box(0, 236, 640, 324))]


# -- landscape --------------------------------------------------------------------------------
def test_an_android_landscape_source_reaches_past_its_reported_width() -> None:
    tree = load("shapes/android_landscape")
    assert tree.root.attrs["rotation"] == "1" and tree.root.attrs["width"] == "2208"
    assert tree.screen_box == Box(0, 0, 2340, 1080)  # the navigation bar window on the right is on screen
    assert labels([n for n in tree.actionable() if n.package != "com.android.systemui"]) == [
        "Pause", "35.0", "Exit full screen"]
    assert not any(r.get("desc") in ("Back", "Home") for r in rows_of(tree))  # systemui's bar is not the task
    seek = next(n for n in tree.nodes() if n.kind == "SeekBar").bounds
    assert seek is not None
    assert snapped(tree, seek) == [("controls", Box(0, 900, 2208, 1080))]


def test_an_ios_landscape_source_is_wider_than_high() -> None:
    tree = load("shapes/ios_landscape", scale=3.0)
    assert tree.screen_box == Box(0, 0, 2532, 1170)
    assert load("shapes/ios_landscape").fit_to(2532).scale == 3.0
    cells = [n.locator_id for n in tree.actionable() if n.kind == "Cell"]
    assert cells == [f"city_{i}" for i in range(9)]  # city_8 pokes in at the bottom edge
    screen = obs(tree)
    assert visible("Kyiv", exact=True)(screen).ok and visible("Back", exact=True)(screen).ok
    oslo = next(n for n in tree.nodes() if n.label == "Oslo").bounds
    assert oslo is not None
    assert snapped(tree, oslo) == [("city_1", Box(0, 228, 2532, 360))]


def test_an_ios_landscape_navigation_bar_at_the_top_is_not_masked_as_a_status_bar() -> None:
    tree = load("shapes/ios_landscape", scale=3.0)  # an iPhone in landscape shows no status bar
    [band] = status_bar_boxes(tree, 2532, 1170)
    assert band.top == 0 and band.height <= 1, band  # the navigation bar's title stays compared


# -- a Chrome WebView -------------------------------------------------------------------------
def test_a_chrome_webview_names_by_html_id_and_keeps_the_fold() -> None:
    tree = load("shapes/android_webview_chrome")
    web = next(n for n in tree.nodes() if n.kind == "WebView")
    page = web.children[0]
    assert page.is_scrollable and page.is_container and page.text == "Contact support"
    assert [n.locator_id for n in tree.actionable() if n.is_editable] == ["email", "message"]
    assert labels(tree.actionable()) == ["Contact support", "Your email", "Message", "Read the FAQ"]
    send = tree.by_id("send")[0]
    assert not send.is_actionable and send in tree.controls()  # `<button disabled>`
    screen = obs(tree)
    assert gone("Privacy policy")(screen).ok and visible("Read the FAQ", exact=True)(screen).ok
    field = tree.by_id("message")[0].bounds
    assert field is not None
    # the page covers most of the screen: a change in a field is its own region (grown by the
    # oracle's margin, 12 px), not the page
    assert snapped(tree, field) == [(None, Box(46, 624, 1034, 976).expand(12))]


def test_an_ipad_popover_takes_the_touches_and_its_dismiss_region_stays() -> None:
    tree = load("shapes/ios_ipad_popover", scale=2.0)
    modal = tree.modal()
    assert modal is not None and modal.kind == "Popover"
    assert labels(tree.actionable()) == ["dismiss popup", "ScrollView", "Unread", "Flagged", "To: Me"]
    assert "Compose" not in labels(tree.controls())  # beneath the popover: a tap there only closes it
    lines = rows_of(tree)
    assert [r.get("text") for r in lines if r.get("tap")] == ["dismiss popup", "Unread", "Flagged", "To: Me"]
    assert visible("Compiler notes", exact=True)(obs(tree)).ok  # the screen beneath is still shown
    flagged = next(n for n in tree.nodes() if n.label == "Flagged").bounds
    assert flagged is not None
    assert snapped(tree, flagged) == [("ScrollView", Box(1400, 2248, 2040, 2600))]
