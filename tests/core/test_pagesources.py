"""The page-source corpus (tests/core/pagesources/): hand-written UiAutomator2 and XCUITest dumps
in the drivers' documented shapes, read into the same roles on both platforms (issue 11)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.detect import popup_title, refreshable_list
from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.oracle import VisualOracle
from pytest_guistate.core.uitree import UINode, UITree, parse_page_source

SOURCES = Path(__file__).parent / "pagesources"


def load(name: str, **kwargs: float) -> UITree:
    return parse_page_source((SOURCES / f"{name}.xml").read_text(encoding="utf-8"), **kwargs)  # type: ignore[arg-type]


def obs(tree: UITree) -> Observation:
    assert tree.width and tree.height
    return Observation(Frame.from_array(np.zeros((tree.height, tree.width, 3), np.uint8)), tree, "app")


def actionable(tree: UITree) -> list[tuple[str, str]]:
    return [(n.kind, n.label) for n in tree.actionable()]


def one(tree: UITree, label: str) -> UINode:
    found = [n for n in tree.nodes() if n.label == label]
    assert len(found) == 1, f"{label!r}: {[(n.kind, n.index_path) for n in found]}"
    return found[0]


def test_every_sample_is_small_and_says_its_platform_and_screen() -> None:
    files = sorted(SOURCES.glob("*.xml"))
    assert len(files) >= 14
    for path in files:
        assert path.stat().st_size < 8_000, f"{path.name}: keep corpus files a few KB"
        tree = parse_page_source(path.read_text(encoding="utf-8"))
        platform = path.name.partition("_")[0]
        assert tree.platform == platform, path.name
        assert tree.unit == ("pt" if platform == "ios" else "px")
        assert tree.screen_box == (Box(0, 0, 390, 844) if platform == "ios" else Box(0, 0, 1080, 2340))
        assert tree.actionable(), f"{path.name}: nothing actionable"


# -- settings screens with switches -----------------------------------------------------------
def test_ios_settings_switches_are_named_by_label_and_carry_state() -> None:
    tree = load("ios_settings")
    auto, smart, caps = one(tree, "Auto-Correction"), one(tree, "Smart Punctuation"), one(tree, "Enable Caps Lock")
    assert (auto.kind, auto.value, auto.checkable, auto.checked) == ("Switch", "0", True, False)
    assert smart.checked and smart.value == "1"
    assert not caps.enabled and caps.locator_id == "caps_lock"
    assert caps.has_id("caps_lock") and not caps.has_id("Enable Caps Lock")
    slider = one(tree, "Key Sound")
    assert slider.text == "Key Sound" and slider.value == "50%"  # a slider's value is its state, not its name
    light, dark = one(tree, "Light"), one(tree, "Dark")
    assert light.selected and not dark.selected
    assert {"General", "Keyboards", "Auto-Correction", "Smart Punctuation", "Light", "Dark", "Key Sound"} <= {
        label for _, label in actionable(tree)}
    screen = obs(tree)
    assert visible(id="caps_lock")(screen).ok
    evidence = visible("Auto-Correction")(screen).evidence
    assert evidence == "text 'Auto-Correction' (substring) visible as Switch 'Auto-Correction'"
    assert not visible("Predictive")(screen).ok and gone("Predictive")(screen).ok  # visible="false"


def test_android_settings_switch_state_is_checked() -> None:
    tree = load("android_settings")
    switches = [n for n in tree.nodes() if n.kind == "Switch"]
    assert [(s.checkable, s.checked, s.is_tappable) for s in switches] == [(True, False, False), (True, True, False)]
    rows = [n for n in tree.actionable() if n.kind == "LinearLayout"]
    assert len(rows) == 2 and all(r.is_tappable for r in rows)  # the row, not the switch, takes the tap
    assert one(tree, "Navigate up").is_tappable
    assert visible("Auto-correction", exact=True)(obs(tree)).ok


# -- nested lists ---------------------------------------------------------------------------
def test_ios_table_cells_buttons_and_offscreen_rows() -> None:
    tree = load("ios_list")
    assert actionable(tree) == [
        ("Button", "New post"), ("Table", "feed_list"), ("Cell", "post_alice"), ("Button", "Delete post by Alice"),
        ("Cell", "post_carol"), ("Button", "Delete post by Carol"), ("Button", "Home"), ("Button", "Profile")]
    carol = one(tree, "Delete post by Carol")
    assert carol.locator_id == "delete_carol" and carol.content_desc == "delete_carol"
    assert one(tree, "Home").selected  # a tab bar button's value "1" is its state
    screen = obs(tree)
    assert visible("Carol", exact=True)(screen).ok
    assert gone("Dan")(screen).ok and gone("Delete post by Dan")(screen).ok  # the cell below the screen
    table = refreshable_list(tree)
    assert table is not None and table.kind == "Table" and table.is_scrollable


def test_android_list_rows_and_refreshable_list() -> None:
    tree = load("android_list")
    assert ("ImageButton", "Delete post by Carol") in actionable(tree)
    listed = refreshable_list(tree)
    assert listed is not None and listed.locator_id == "list"
    assert one(tree, "Delete post by Carol").has_id("com.guistate.feed:id/delete")


def _changed(frame: np.ndarray, box: Box) -> np.ndarray:
    out = frame.copy()
    cv2.rectangle(out, (box.left, box.top), (box.right - 1, box.bottom - 1), (0, 0, 220), -1)
    return out


@pytest.mark.parametrize(("name", "scale", "expect"), [
    ("ios_list", 2.0, ("post_carol", Box(0, 526, 780, 766))),
    ("android_list", None, ("row", Box(0, 561, 1080, 891))),
])
def test_a_change_in_a_row_snaps_to_the_row_not_the_window(name: str, scale: float | None,
                                                           expect: tuple[str, Box]) -> None:
    tree = load(name, scale=scale) if scale else load(name)
    assert tree.width and tree.height and tree.unit == "px"
    body = one(tree, "New recipe up").bounds
    assert body is not None
    before = np.full((tree.height, tree.width, 3), 245, np.uint8)
    after = _changed(before, Box(body.left + 4, body.top + 4, body.left + 60, body.bottom - 4))
    result = VisualOracle().compare(Frame.from_array(before), Frame.from_array(after), tree)
    assert [(r.container, r.box) for r in result.regions] == [expect]
    assert result.crops and result.crops[0].box.contains(expect[1])


def test_ios_snap_never_picks_window_or_application() -> None:
    tree = load("ios_list")
    nav_title = next(n for n in tree.nodes() if n.kind == "StaticText" and n.label == "Feed").bounds
    assert nav_title is not None
    box = Box(nav_title.left + 1, nav_title.top + 1, nav_title.right - 1, nav_title.bottom - 1)
    container = tree.smallest_container(box, screen=tree.screen_box)
    assert container is not None and container.kind == "NavigationBar"
    kinds = {n.kind for n in tree.nodes() if n.is_container}
    assert not kinds & {"Application", "Window", "AppiumAUT"}
    assert {"Cell", "Other", "Table", "NavigationBar", "TabBar"} <= kinds


# -- system alerts ----------------------------------------------------------------------------
def test_ios_alert_takes_the_touches_and_names_the_popup() -> None:
    tree = load("ios_alert")
    assert actionable(tree) == [("ScrollView", "ScrollView"), ("Button", "Cancel"), ("Button", "Delete")]
    alert = tree.modal()
    assert alert is not None and alert.kind == "Alert"
    before = Observation(Frame.from_array(np.zeros((844, 390, 3), np.uint8)), load("ios_list"), "app")
    assert popup_title(before, obs(tree)) == "Delete post by Carol?"
    container = tree.smallest_container(Box(200, 455, 320, 490), screen=tree.screen_box)
    assert container is not None and container.kind == "ScrollView"
    assert refreshable_list(tree) is None  # the alert's button ScrollView is not a list to pull


def test_android_alert_buttons_and_popup() -> None:
    tree = load("android_alert")
    assert actionable(tree) == [("Button", "CANCEL"), ("Button", "DELETE")]
    modal = tree.modal()
    assert modal is not None and modal.locator_id == "parentPanel"
    assert popup_title(None, obs(tree)) == "Delete post by Carol?"


# -- on-screen keyboards ---------------------------------------------------------------------
def test_ios_keyboard_keys_are_not_actions_but_its_buttons_are() -> None:
    tree = load("ios_keyboard")
    assert actionable(tree) == [("SearchField", "Search products"), ("Button", "search"), ("Button", "Next keyboard")]
    field = one(tree, "Search products")
    assert field.is_editable and field.value == "head" and field.text == "Search products"
    assert visible("head", exact=True)(obs(tree)).ok  # a field's typed value is shown text
    keyboard = next(n for n in tree.nodes() if n.kind == "Keyboard")
    assert keyboard.is_container
    key = Box(45, 520, 78, 560)  # the "w" key's pop-up
    snapped = tree.smallest_container(key, screen=tree.screen_box)
    assert snapped is not None and snapped.kind in ("Other", "Keyboard")


def test_android_keyboard_window_is_not_actionable() -> None:
    tree = load("android_keyboard")
    assert actionable(tree) == [("EditText", "head"), ("TextView", "headphones")]
    assert "com.google.android.inputmethod.latin" in tree.packages()
    assert one(tree, "head").focused and one(tree, "head").value == "head"


# -- web views --------------------------------------------------------------------------------
def test_ios_webview_links_fields_and_accessible_groups() -> None:
    tree = load("ios_webview")
    assert actionable(tree) == [("Button", "Back"), ("TextField", "Search help"), ("Link", "Returns and refunds"),
                                ("Other", "Contact us")]
    web = next(n for n in tree.nodes() if n.kind == "WebView")
    assert web.is_container and not web.is_scrollable
    assert gone("Privacy")(obs(tree)).ok  # below the fold, visible="false"
    assert one(tree, "banner").is_container and not one(tree, "banner").is_tappable  # accessible="false"


def test_android_webview_nested_nodes() -> None:
    tree = load("android_webview")
    assert ("View", "Returns and refunds") in actionable(tree) and ("Button", "Contact us") in actionable(tree)
    assert refreshable_list(tree) is not None and refreshable_list(tree).kind == "WebView"  # type: ignore[union-attr]


# -- logins with a secure field ---------------------------------------------------------------
def test_ios_login_secure_field_is_a_password_and_named_without_its_value() -> None:
    tree = load("ios_login")
    secure = one(tree, "Password")
    assert secure.is_password and secure.is_editable and secure.locator_id == "password"
    assert tree.password_boxes() == [Box(24, 260, 366, 304)]
    assert secure.to_dict()["value"] == "" and secure.to_dict()["password"] is True
    user = one(tree, "username")  # label "" -> the accessibility id, not the typed address
    assert user.text == "alice@example.com" and user.value == "alice@example.com"
    assert ("Link", "Forgot password?") in actionable(tree)
    button = next(n for n in tree.nodes() if n.label == "Log In")  # the button, then its StaticText
    assert button.kind == "Button" and button.locator_id == "login_button"
    assert load("ios_login", scale=3.0).password_boxes() == [Box(72, 780, 1098, 912)]


def test_android_login_password_field() -> None:
    tree = load("android_login")
    assert [n.locator_id for n in tree.nodes() if n.is_password] == ["password"]
    assert tree.password_boxes() == [Box(63, 620, 1017, 760)]
    assert [n.locator_id for n in tree.nodes() if n.is_editable] == ["username", "password"]


# -- hostile and unicode text -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["ios_hostile", "android_hostile"])
def test_hostile_and_unicode_text_is_read_verbatim(name: str) -> None:
    tree = load(name)
    screen = obs(tree)
    assert visible('<img src=x onerror=alert(1)> & "quotes"', exact=True)(screen).ok
    assert visible("👋🏽 Zoë")(screen).ok and visible("مرحبا")(screen).ok
    assert visible("Reply \u200bnow", exact=True)(screen).ok and not visible("Reply now", exact=True)(screen).ok
    broken = one(tree, "Broken")
    assert broken.bounds is None and not broken.is_actionable and not broken.is_container


def test_ios_multiline_label_and_fractional_geometry() -> None:
    tree = load("ios_hostile")
    assert visible("line one\nline two", exact=True)(obs(tree)).ok
    cell = tree.root.children[0].children[0].children[0].children[3]
    assert cell.kind == "Cell" and cell.bounds == Box(0, 287, 390, 367)
    unnamed = [n for n in tree.nodes() if n.kind == "Button" and n.label == "Button"]
    assert len(unnamed) == 1 and unnamed[0].is_actionable  # no name/label: still a button to the actor


def test_ios_small_changes_in_two_cells_keep_their_cells_not_the_table() -> None:
    """Issue 33: the table is many times two small changes; each keeps its cell (a removed row,
    which changes every row below it, is still one change of the list: test_oracle.py)."""
    tree = load("ios_list", scale=2.0)
    assert tree.width and tree.height
    before = np.full((tree.height, tree.width, 3), 245, np.uint8)
    after = before
    for label in ("Morning run done", "New recipe up"):
        body = one(tree, label).bounds
        assert body is not None
        after = _changed(after, Box(body.left + 4, body.top + 4, body.left + 60, body.bottom - 4))
    result = VisualOracle().compare(Frame.from_array(before), Frame.from_array(after), tree)
    assert sorted(r.container or "" for r in result.regions) == ["post_alice", "post_carol"]


def test_ios_status_bar_band_is_ignored_above_the_navigation_bar() -> None:
    from pytest_guistate.core.oracle import status_bar_boxes

    tree = load("ios_list", scale=3.0)
    assert status_bar_boxes(tree, 1170, 2532) == [Box(0, 0, 1170, 141)]  # the nav bar starts at 47 pt
    alert = load("ios_alert", scale=3.0)  # no navigation bar on screen: the top 6.5%
    assert status_bar_boxes(alert, 1170, 2532) == [Box(0, 0, 1170, 165)]
    # Android, no bar named: the band above the app's first full-width node (its title at 84 px),
    # not the top 3% (70 px) that left the lower part of a real status bar in (issue 33)
    assert status_bar_boxes(load("android_list"), 1080, 2340) == [Box(0, 0, 1080, 84)]


def test_redaction_fills_the_ios_secure_field_in_screenshot_pixels() -> None:
    from pytest_guistate.report.redact import Redactor

    tree = load("ios_login", scale=3.0)
    img = np.full((2532, 1170, 3), 255, np.uint8)
    cv2.putText(img, "hunter22", (90, 860), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 4)  # as if not masked
    redactor = Redactor()
    redactor.observe(tree)
    out = cv2.imdecode(np.frombuffer(redactor.image(Frame.from_array(img).png), np.uint8), cv2.IMREAD_COLOR)
    field = out[780:912, 72:1098]
    assert (field == field[0, 0]).all() and tuple(field[0, 0]) != (255, 255, 255)  # one solid fill
    assert (out[1000:1100, 72:1098] == 255).all()  # the rest of the screen is kept
