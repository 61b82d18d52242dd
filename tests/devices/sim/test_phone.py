"""The simulated phone: tree/pixel consistency, page source, noise, faults and ground truth."""

from __future__ import annotations

import pytest
from lxml import etree

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.devices.sim.apps.feed import HOSTILE_TEXT
from pytest_guistate.devices.sim.model import AppState, SimError
from pytest_guistate.devices.sim.phone import ManualClock, Phone
from tests.devices.sim.simhelpers import (
    changed_outside,
    diff_box,
    frame,
    make_phone,
    node,
    rgb_at,
    tap_key,
    truth_boxes,
)

FEED = "com.guistate.feed"


def test_capabilities_configure_screen_seed_app_and_faults() -> None:
    caps = {"appium:appPackage": FEED, "guistate:seed": 3, "guistate:screen": {"width": 540, "height": 1200},
            "guistate:faults": {"refresh_delay": 1.5}, "guistate:clock": "frozen"}
    phone = Phone.from_capabilities(caps, clock=ManualClock())
    assert (phone.width, phone.height) == (540, 1200)
    assert frame(phone).shape == (1200, 540, 3)
    assert node(phone, "system/status_bar").bounds == Box(0, 0, 540, 36)
    assert phone.current_package() == FEED and phone.faults.refresh_delay == 1.5
    assert phone.seed == 3 and phone.frozen


@pytest.mark.parametrize("caps", [
    {"appium:appPackage": "com.example.missing"},
    {"guistate:clock": "sundial"},
    {"guistate:screen": {"width": 10, "height": 20}},
    {"guistate:faults": {"refresh_delay": -1}},
    {"guistate:faults": {"teleport": True}},
    {"guistate:seed": "zero"},
])
def test_bad_capabilities_are_refused_with_invalid_argument(caps: dict) -> None:
    with pytest.raises(SimError) as info:
        Phone.from_capabilities(caps)
    assert info.value.w3c_error == "invalid argument"


def test_default_screen_is_the_launcher_and_icons_open_apps() -> None:
    phone, _ = make_phone(package=None)
    assert phone.current_package() == "com.android.launcher3"
    tap_key(phone, "launcher/app/com.guistate.settings")
    assert phone.current_package() == "com.guistate.settings"
    phone.back()
    assert phone.current_package() == "com.android.launcher3"
    assert phone.app_state("com.guistate.settings") == AppState.RUNNING_IN_BACKGROUND
    assert phone.app_state(FEED) == AppState.NOT_RUNNING
    assert phone.app_state("com.example.none") == AppState.NOT_INSTALLED


def test_terminate_resets_app_state() -> None:
    phone, _ = make_phone(faults={"refresh_delay": 0})
    tap_key(phone, "feed/post/p1/delete")
    tap_key(phone, "feed/dialog/delete")
    assert phone.find_key("feed/post/p1") is None
    assert phone.terminate_app(FEED) is True
    assert phone.current_package() == "com.android.launcher3"
    assert phone.terminate_app(FEED) is False
    phone.activate_app(FEED)
    assert phone.find_key("feed/post/p1") is not None  # a fresh process with fresh data
    with pytest.raises(SimError):
        phone.activate_app("com.example.none")


def test_every_node_is_inside_the_screen_and_its_parent() -> None:
    phone, _ = make_phone()
    screen = Box(0, 0, phone.width, phone.height)

    def check(n, parent: Box) -> None:  # type: ignore[no-untyped-def]
        assert screen.contains(n.bounds) and parent.contains(n.bounds), (n.key, n.bounds, parent)
        for child in n.children:
            check(child, n.bounds)

    check(phone.root(), screen)
    assert len({n.key for n in phone.root().walk()}) == len(list(phone.root().walk()))


def test_button_pixels_are_inside_the_button_bounds() -> None:
    phone, _ = make_phone()
    image = frame(phone)
    button = node(phone, "feed/post/p2/delete").bounds
    assert rgb_at(image, button.left + 12, button.top + button.height // 2) == (211, 47, 47)
    assert rgb_at(image, button.left - 6, button.top + button.height // 2) == (255, 255, 255)
    assert rgb_at(image, button.right + 4, button.top + button.height // 2) == (255, 255, 255)
    bar = node(phone, "com.guistate.feed/appbar").bounds
    assert rgb_at(image, bar.right - 5, bar.bottom - 5) == (25, 118, 210)


def test_dialog_appears_in_tree_pixels_and_ground_truth_alike() -> None:
    phone, _ = make_phone()
    before = frame(phone)
    tap_key(phone, "feed/post/p3/delete")
    after = frame(phone)
    dialog = node(phone, "feed/dialog").bounds
    truth = phone.ground_truth()
    assert truth["changed"] is True
    assert truth["regions"] == [dialog.as_list()]
    assert node(phone, "system/clock").bounds.as_list() in truth["noise"]
    changed = diff_box(before, after)
    assert changed is not None and dialog.expand(12).contains(changed)
    assert changed_outside(before, after, truth_boxes(truth, margin=12)) == 0
    assert rgb_at(after, dialog.left + 20, dialog.top + dialog.height // 2) == (255, 255, 255)


@pytest.mark.parametrize("refresh_delay", [0.0, 1.0])
def test_pixel_changes_stay_inside_ground_truth_after_a_delete(refresh_delay: float) -> None:
    phone, clock = make_phone(faults={"refresh_delay": refresh_delay})
    tap_key(phone, "feed/post/p2/delete")
    before = frame(phone)
    tap_key(phone, "feed/dialog/delete")
    clock.advance(refresh_delay + 0.1)
    after = frame(phone)
    truth = phone.ground_truth()
    assert truth["changed"] and changed_outside(before, after, truth_boxes(truth, margin=12)) == 0


def test_tap_on_nothing_changes_nothing() -> None:
    phone, _ = make_phone()
    before = phone.screenshot_png()
    phone.tap(500, 150)  # the app bar title is not clickable
    assert phone.ground_truth() == {"changed": False, "regions": [],
                                    "noise": [node(phone, "system/clock").bounds.as_list()], "animating": False}
    assert phone.screenshot_png() == before
    assert phone.action_log()[-1]["target"] is None


def test_page_source_is_uiautomator2_style_and_parses() -> None:
    phone, _ = make_phone()
    xml = phone.page_source()
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<hierarchy index=\"0\"")
    doc = etree.fromstring(xml.encode())
    assert doc.tag == "hierarchy" and doc.get("width") == "1080" and doc.get("height") == "2400"
    button = doc.xpath("//android.widget.Button[@resource-id='com.guistate.feed:id/delete']")[0]
    for attribute in ("index", "package", "class", "text", "resource-id", "content-desc", "checkable", "checked",
                      "clickable", "enabled", "focusable", "focused", "long-clickable", "password", "scrollable",
                      "selected", "bounds", "displayed"):
        assert button.get(attribute) is not None, attribute
    assert button.get("clickable") == "true" and button.get("package") == FEED
    tree = parse_page_source(xml)
    assert any(n.resource_id == "com.android.systemui:id/status_bar" for n in tree.nodes())
    assert doc.xpath("//androidx.recyclerview.widget.RecyclerView")[0].get("scrollable") == "true"


def test_hostile_post_text_is_escaped_and_round_trips() -> None:
    phone, _ = make_phone()
    xml = phone.page_source()
    assert HOSTILE_TEXT not in xml and "&lt;img src=x onerror=alert(1)&gt;" in xml
    texts = etree.fromstring(xml.encode()).xpath("//*[@resource-id='com.guistate.feed:id/text']/@text")
    assert HOSTILE_TEXT in texts


def test_find_xpath_maps_hits_to_nodes_and_refuses_non_elements() -> None:
    phone, _ = make_phone()
    hits = phone.find_xpath("//android.widget.Button[@text='Delete']")
    assert hits and all(n.key.endswith("/delete") for n in hits)
    assert [n.key for n in hits] == [n.key for n in phone.root().walk() if n.cls == "android.widget.Button"]
    assert phone.find_xpath("/hierarchy")[0] is phone.root()
    assert "data-key" not in phone.page_source() and "feed/post" not in phone.page_source()
    for bad, why in (("count(//*)", "selects a float"), ("//*[", "not valid XPath"), ("//@text", "non-element")):
        with pytest.raises(SimError) as info:
            phone.find_xpath(bad)
        assert info.value.w3c_error == "invalid selector"
        assert info.value.message.startswith(f'Cannot evaluate results for XPath expression "{bad}": ')
        assert why in info.value.message


def test_password_is_never_exposed() -> None:
    phone, _ = make_phone(package="com.guistate.settings")
    phone.type_text("settings/password", "correct-horse")
    field = node(phone, "settings/password")
    assert field.password and field.text == "\u2022" * len("correct-horse")
    assert "correct-horse" not in phone.page_source()
    assert "correct-horse" not in repr(phone.action_log())
    with pytest.raises(SimError) as info:
        phone.type_text("settings/login", "x")
    assert info.value.w3c_error == "invalid element state"
    with pytest.raises(SimError) as stale:
        phone.type_text("feed/post/p1/text", "x")
    assert stale.value.w3c_error == "stale element reference"


def test_status_clock_ticks_and_only_the_clock_pixels_change() -> None:
    phone, clock = make_phone()
    first_text, first = node(phone, "system/clock").text, frame(phone)
    clock.advance(1.0)
    second_text, second = node(phone, "system/clock").text, frame(phone)
    assert first_text != second_text
    changed = diff_box(first, second)
    assert changed is not None and node(phone, "system/clock").bounds.contains(changed)
    assert phone.screenshot_png() is phone.screenshot_png()  # cached while nothing changes


def test_frozen_clock_gives_identical_frames() -> None:
    phone, clock = make_phone(package="com.guistate.settings", frozen=True)
    tap_key(phone, "settings/username")
    first = phone.screenshot_png()
    clock.advance(5.27)
    assert node(phone, "system/clock").text == "12:00:00"
    assert phone.screenshot_png() == first


def test_cursor_blinks_inside_the_focused_edittext() -> None:
    phone, clock = make_phone(package="com.guistate.settings")
    tap_key(phone, "settings/username")
    phone.type_text("settings/username", "qa")
    field = node(phone, "settings/username")
    assert field.focused
    on = frame(phone)
    clock.advance(0.6)  # one 530 ms half period later
    off = frame(phone)
    changed = diff_box(on, off)
    assert changed is not None and field.bounds.contains(changed) and changed.width <= 8
    assert changed.as_list() in phone.ground_truth()["noise"]


def test_drop_tap_rate_loses_taps_silently_and_deterministically() -> None:
    phone, _ = make_phone(faults={"drop_tap_rate": 1.0})
    tap_key(phone, "feed/post/p1/delete")
    assert phone.find_key("feed/dialog") is None
    assert [e["action"] for e in phone.action_log()] == ["open_app"]
    assert len(phone.dropped()) == 1 and phone.ground_truth()["changed"] is False
    outcomes = []
    for _ in range(2):
        p, _ = make_phone(faults={"drop_tap_rate": 0.5, "seed": 7})
        for _ in range(12):
            p.tap(500, 150)
        outcomes.append(len(p.dropped()))
    assert outcomes[0] == outcomes[1] and 0 < outcomes[0] < 12


def test_popup_appears_after_the_nth_action_and_wait_dismisses_it() -> None:
    phone, _ = make_phone()
    phone.set_faults({"popup_at_action": 2})
    phone.tap(500, 150)
    assert phone.find_key("system/anr") is None
    phone.tap(500, 150)
    assert node(phone, "system/anr/title").text == "Feed isn't responding"
    assert node(phone, "system/anr").package == "android"
    tap_key(phone, "system/anr/wait")
    assert phone.find_key("system/anr") is None
    assert phone.current_package() == FEED
    assert "anr_wait" in [e["action"] for e in phone.action_log()]


def test_popup_swallows_taps_underneath_and_close_app_kills_the_app() -> None:
    phone, _ = make_phone(faults={"popup_at_action": 1})
    phone.tap(500, 150)
    assert node(phone, "system/anr").bounds.top > node(phone, "feed/post/p1/delete").bounds.bottom
    tap_key(phone, "feed/post/p1/delete")  # outside the modal pop-up: swallowed
    assert phone.find_key("feed/dialog") is None
    assert phone.action_log()[-1]["target"] is None
    tap_key(phone, "system/anr/close")
    assert phone.current_package() == "com.android.launcher3"
    assert phone.app_state(FEED) == AppState.NOT_RUNNING


def test_set_faults_refuses_unknown_keys_and_bad_values() -> None:
    phone, _ = make_phone()
    for bad in ({"nope": 1}, {"drop_tap_rate": 2}, {"animation_ms": 1.5}, {"popup_at_action": 0}):
        with pytest.raises(SimError) as info:
            phone.set_faults(bad)
        assert info.value.w3c_error == "invalid argument"
    phone.set_faults({"search_delay": 0.1})
    assert phone.faults.search_delay == 0.1


def test_transition_animation_shows_intermediate_frames() -> None:
    phone, clock = make_phone(package=None, faults={"animation_ms": 300})
    tap_key(phone, "launcher/app/com.guistate.feed")
    assert phone.ground_truth()["animating"] is True
    mid = frame(phone)
    clock.advance(0.35)
    final = frame(phone)
    assert phone.ground_truth()["animating"] is False
    changed = diff_box(mid, final)
    assert changed is not None and changed.top >= node(phone, "system/status_bar").bounds.bottom


def test_scaled_screen_keeps_tree_and_pixels_consistent() -> None:
    phone, _ = make_phone(width=720, height=1600)
    image = frame(phone)
    button = node(phone, "feed/post/p1/delete").bounds
    assert rgb_at(image, button.left + 8, button.top + button.height // 2) == (211, 47, 47)
    assert node(phone, "com.guistate.feed/appbar").bounds.top == 48


def test_closed_phone_refuses_calls() -> None:
    phone, _ = make_phone()
    phone.close()
    with pytest.raises(SimError) as info:
        phone.root()
    assert info.value.w3c_error == "invalid session id"
