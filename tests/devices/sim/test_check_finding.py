"""Locator checks answered by a driver find give the tree's verdict (issue 24), on both personas,
through the stock Appium client: the find decides where it can, and declines (the check then reads
the page source) where only the tree can place what covers an element. And one meaning of `desc=`
on iOS (issue 25): the accessibility label or the name, for a tap, a find, exists and a check."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.core.checks import Check, gone, visible
from pytest_guistate.core.observation import Observation
from pytest_guistate.devices.device import Device

FEED, SHOP, GALLERY = "com.guistate.feed", "com.guistate.shopa", "com.guistate.gallery"
PERSONAS = {
    "android": {"platformName": "Android", "appium:automationName": "UiAutomator2"},
    "ios": {"platformName": "iOS", "appium:automationName": "XCUITest"},
}


def caps(platform: str, app: str, **extra: Any) -> dict[str, Any]:
    key = "appium:bundleId" if platform == "ios" else "appium:appPackage"
    return {**PERSONAS[platform], key: app, **extra}


def both_verdicts(device: Device, check: Check) -> tuple[bool, bool, bool]:
    """(the verdict on an observation the driver may answer by a find, the verdict on the same
    screen's page source, whether the find decided without a page source)."""
    device.known_screens = 0  # the find is on trial: a screen read before would be answered by its tree
    sources = device.page_source_calls
    by_find = device.observe()
    found = check(by_find).ok
    decided = by_find.finds == 1 and device.page_source_calls == sources
    by_tree = Observation(device.screenshot(), tree=device.ui_tree())
    return found, check(by_tree).ok, decided


QUERIES = [
    visible("Delete post?"), gone("Delete post?"), visible(desc="Delete post by Alice"), visible("Alice"),
    visible("Ali"), visible("Alice", exact=True), visible("Ali", exact=True), visible(id="delete"),
    visible(id="posts"), visible("Zed"), gone("Zed"), visible(text="Bob", desc="Delete post by Bob"),
    gone(id="delete"),
]


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_the_find_gives_the_trees_verdict_on_a_plain_screen(open_device: Any, platform: str) -> None:
    device = open_device(caps(platform, FEED))
    for check in QUERIES:
        found, tree, decided = both_verdicts(device, check)
        assert found == tree, check.description
        assert decided, f"{check.description}: nothing covers this screen, the find should decide"


def test_android_asks_for_a_text_or_a_description_in_one_request(open_device: Any, server: Any) -> None:
    """A text check without `desc=` matches a node's text or its description, as the tree's matcher
    does: one `-android uiautomator` request whose two `;`-joined selectors the server answers with
    their union, so a check that finds nothing (`gone`, a typo) costs one find, not two."""
    device = open_device(caps("android", FEED))
    for check, shown in ((visible("Delete post by Alice"), True), (gone("Delete post?"), True),
                         (visible("Alice"), True), (visible("Zed"), False)):
        mark = len(server.request_log())
        by_find = device.observe()
        result = check(by_find)
        finds = [r for r in server.request_log()[mark:] if r.path.endswith("/elements")]
        assert len(finds) == 1, check.description
        assert result.ok is shown, check.description
        assert result.ok == check(Observation(device.screenshot(), tree=device.ui_tree())).ok, check.description


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_behind_a_dialog(open_device: Any, platform: str) -> None:
    """iOS lists the feed beneath the alert: the tree leaves it out (a person reads the alert), and
    the find asks within the alert (class chains scoped to it). Android's dump is what the find searches."""
    device = open_device(caps(platform, FEED))
    device.tap(desc="Delete post by Bob")
    for check in (visible("Delete post?"), gone("Delete post?"), visible("Alice"), gone("Alice"),
                  visible(desc="Delete post by Carol"), visible("Zed")):
        found, tree, decided = both_verdicts(device, check)
        assert found == tree, check.description
        assert decided, check.description
    if platform == "ios":
        assert gone("Alice")(device.observe()).ok  # beneath the alert: not what a person sees


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_focused_field_hands_the_verdict_to_the_tree(open_device: Any, platform: str) -> None:
    """A focused element means a soft keyboard may be up, and what lies wholly under it is not
    visible: only the tree knows where the keyboard is, so the find declines."""
    device = open_device(caps(platform, SHOP, **{"guistate:faults": {"search_delay": 0}}))
    device.tap(id="search")
    for check in (visible(id="search"), visible("Zed")):
        found, tree, decided = both_verdicts(device, check)
        assert found == tree, check.description
        assert decided == (check.description == "text 'Zed' (substring) visible")  # nothing found: decided


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_rows_scrolled_off_screen(open_device: Any, platform: str) -> None:
    screen = {"width": 360, "height": 400, "scale": 3} if platform == "ios" else {"width": 1080, "height": 1200}
    device = open_device(caps(platform, GALLERY, **{"guistate:screen": screen}))
    names = [n.label for n in device.ui_tree().nodes() if n.kind in ("TextView", "StaticText")]
    device.swipe(device.size[0] // 2, device.size[1] * 3 // 4, device.size[0] // 2, device.size[1] // 4)
    seen = []
    for name in dict.fromkeys(names):
        for check in (visible(name, exact=True), gone(name, exact=True)):
            found, tree, _ = both_verdicts(device, check)
            assert found == tree, check.description
        seen.append(found)
    assert True in seen and False in seen  # some rows left the screen, some are still on it


def test_ios_desc_means_the_label_or_the_name_everywhere(open_device: Any) -> None:
    """`device.tap(desc=...)` matches the accessibility label; so do `find`, `exists` and a check,
    by a find and by the tree; the name (the accessibility id, "delete") matches too."""
    device = open_device(caps("ios", FEED))
    label = "Delete post by Alice"
    assert device.exists(desc=label) and device.find(desc=label).get_attribute("label") == label
    for check in (visible(desc=label), visible(desc=label, exact=True), visible(desc="delete", exact=True),
                  visible(desc="post by Alice")):
        found, tree, decided = both_verdicts(device, check)
        assert found and tree and decided, check.description
    tree = device.ui_tree()
    node = next(n for n in tree.nodes() if n.label == label)
    assert node.content_desc == "delete" and label in node.descriptions  # the name, and the label
    device.tap(desc=label)
    assert any(e["action"] == "open_dialog" and e["author"] == "Alice" for e in device.action_log())
    assert gone(desc=label, exact=True)(Observation(device.screenshot(), tree=device.ui_tree())).ok  # under the alert


def _open_and_cancel(device: Device, tier: str, *, expect: bool, pairs: int = 2) -> list[int]:
    """Page sources per step of open/cancel pairs through `TaskSession` over `device`."""
    from pytest_guistate.core.task_session import TaskSession
    from pytest_guistate.core.tiers import TierPolicy

    session = TaskSession(device, policy=TierPolicy.for_tier(tier))
    session.cycles.limit = 0  # a deliberate A-B loop
    cancel = {"id": "android:id/button2"} if device.platform == "android" else {"desc": "Cancel"}
    for i in range(pairs):
        session.perform(f"open {i}", lambda: device.tap(desc="Delete post by Bob"),
                        expect=visible("Delete post?") if expect else None)
        session.perform(f"cancel {i}", lambda: device.tap(**cancel),
                        expect=gone("Delete post?") if expect else None)
    assert all(record.outcome in ("ok", "settled") for record in session.steps)
    return [record.page_sources or 0 for record in session.steps]


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_page_sources_per_step(open_device: Any, platform: str) -> None:
    """Light: a locator expect costs no page source (the find decides, inside the iOS alert too).
    Standard: at most one per step (the after-tree, the next step's before-tree)."""
    light = _open_and_cancel(open_device(caps(platform, FEED)), "light", expect=True)
    assert light == [0, 0, 0, 0], light
    for expect in (True, False):
        standard = _open_and_cancel(open_device(caps(platform, FEED)), "standard", expect=expect)
        assert standard[0] <= 2 and all(n <= 1 for n in standard[1:]), (expect, standard)


@pytest.mark.parametrize("platform", ["android", "ios"])
def test_a_standard_step_whose_frames_did_not_change_reads_no_tree(open_device: Any, platform: str) -> None:
    from pytest_guistate.core.task_session import TaskSession
    from pytest_guistate.core.tiers import TierPolicy

    device = open_device(caps(platform, FEED))
    session = TaskSession(device, policy=TierPolicy.for_tier("standard"), reuse_window_s=60.0)
    first = session.perform("look", lambda: None, expect=visible("Alice"))
    again = session.perform("look again", lambda: None, expect=gone("Delete post?"))
    assert (first.verdict, again.verdict) == ("no_change", "no_change")
    assert first.page_sources == 1 and again.page_sources == 0  # the first before-tree, then none
