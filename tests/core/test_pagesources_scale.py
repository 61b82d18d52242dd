"""Units, size and hostile shapes of page sources: points -> pixels, 5k-node and very deep trees."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UITreeError, parse_page_source

SOURCES = Path(__file__).parent / "pagesources"
IOS_LOGIN = (SOURCES / "ios_login.xml").read_text(encoding="utf-8")


def test_scale_turns_points_into_screenshot_pixels() -> None:
    points = parse_page_source(IOS_LOGIN)
    pixels = parse_page_source(IOS_LOGIN, scale=3.0)
    assert (points.unit, points.scale, points.screen_box) == ("pt", 1.0, Box(0, 0, 390, 844))
    assert (pixels.unit, pixels.scale, pixels.screen_box) == ("px", 3.0, Box(0, 0, 1170, 2532))
    for a, b in zip(points.nodes(), pixels.nodes(), strict=True):
        assert (a.bounds is None) == (b.bounds is None)
        if a.bounds is not None:
            assert b.bounds == a.bounds.scale(3.0)


def test_rescale_and_fit_to_after_parsing() -> None:
    tree = parse_page_source(IOS_LOGIN)
    assert tree.fit_to(1170) is tree and (tree.unit, tree.width, tree.height, tree.scale) == ("px", 1170, 2532, 3.0)
    assert tree.fit_to(390).width == 1170  # already pixels: unchanged
    assert tree.password_boxes() == [Box(72, 780, 1098, 912)]
    half = parse_page_source(IOS_LOGIN).rescale(2.0)
    assert half.screen_box == Box(0, 0, 780, 1688)
    same = parse_page_source(IOS_LOGIN).rescale(1.0)
    assert same.unit == "px" and same.screen_box == Box(0, 0, 390, 844)


def test_fractional_points_scale_from_the_exact_values() -> None:
    xml = ('<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" x="0" y="0" width="390" '
           'height="844"><XCUIElementTypeButton type="XCUIElementTypeButton" label="OK" x="10.5" y="20.4" '
           'width="33.3" height="10.2"/></XCUIElementTypeApplication></AppiumAUT>')
    button = parse_page_source(xml, scale=3.0).root.children[0].children[0]
    assert button.bounds == Box(32, 61, 131, 92)  # round(10.5*3), round(20.4*3), round(43.8*3), round(30.6*3)


def test_android_scale_keeps_android_rules() -> None:
    xml = (SOURCES / "android_login.xml").read_text(encoding="utf-8")
    tree = parse_page_source(xml, scale=0.5)
    assert tree.platform == "android" and tree.screen_box == Box(0, 0, 540, 1170)
    assert tree.password_boxes() == [Box(32, 310, 508, 380)]


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_bad_scale_is_refused_with_a_clear_error(bad: float) -> None:
    with pytest.raises(UITreeError, match="scale must be > 0"):
        parse_page_source(IOS_LOGIN, scale=bad)
    with pytest.raises(ValueError, match="scale factor must be > 0"):
        parse_page_source(IOS_LOGIN).rescale(bad)


def test_infinite_or_garbage_geometry_is_no_geometry() -> None:
    xml = ('<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" x="0" y="0" width="390" '
           'height="844"><XCUIElementTypeButton type="XCUIElementTypeButton" label="A" x="inf" y="0" width="1" '
           'height="1"/><XCUIElementTypeButton type="XCUIElementTypeButton" label="B" x="nan" y="0" width="1" '
           'height="1"/></XCUIElementTypeApplication></AppiumAUT>')
    for scale in (None, 3.0):
        tree = parse_page_source(xml, scale=scale)
        assert [n.bounds for n in tree.root.children[0].children] == [None, None]
        assert tree.actionable() == []


def _huge_ios(rows: int) -> str:
    cells = "".join(
        f'<XCUIElementTypeCell type="XCUIElementTypeCell" name="row{i}" enabled="true" visible="{str(i < 13).lower()}" '
        f'accessible="false" x="0" y="{100 + 60 * i}" width="390" height="60" index="{i}">'
        f'<XCUIElementTypeOther type="XCUIElementTypeOther" enabled="true" visible="true" accessible="false" x="0" '
        f'y="{100 + 60 * i}" width="390" height="60" index="0">'
        f'<XCUIElementTypeStaticText type="XCUIElementTypeStaticText" value="Item {i}" name="Item {i}" '
        f'label="Item {i}" enabled="true" visible="true" accessible="true" x="16" y="{110 + 60 * i}" width="200" '
        f'height="20" index="0"/>'
        f'<XCUIElementTypeButton type="XCUIElementTypeButton" name="del{i}" label="Delete item {i}" enabled="true" '
        f'visible="{str(i < 13 or i % 2 == 0).lower()}" accessible="true" x="330" y="{110 + 60 * i}" width="44" height="40" index="1"/>'
        "</XCUIElementTypeOther></XCUIElementTypeCell>"
        for i in range(rows)
    )
    return ('<?xml version="1.0" encoding="UTF-8"?><AppiumAUT><XCUIElementTypeApplication '
            'type="XCUIElementTypeApplication" name="Big" label="Big" x="0" y="0" width="390" height="844">'
            '<XCUIElementTypeTable type="XCUIElementTypeTable" x="0" y="100" width="390" height="744">'
            f"{cells}</XCUIElementTypeTable></XCUIElementTypeApplication></AppiumAUT>")


def test_a_5000_node_ios_tree_parses_with_its_roles() -> None:
    xml = _huge_ios(1300)  # 4 nodes a row + root, app, table = 5203 nodes
    started = time.perf_counter()
    tree = parse_page_source(xml, scale=3.0)
    took = time.perf_counter() - started
    assert sum(1 for _ in tree.nodes()) == 5203
    actionable = tree.actionable()
    # the table and the on-screen rows' cells and buttons: rows 0-12 (y < 844 pt) are marked visible; every
    # other button below is marked visible too (WebDriverAgent's flag is not always right) but
    # lies below the 844-pt screen
    assert len(actionable) == 1 + 13 * 2
    assert [n.label for n in actionable[-2:]] == ["row12", "Delete item 12"]
    assert took < 30  # a sanity bound on a shared 2-core machine, not a benchmark


def test_a_very_deep_tree_does_not_recurse() -> None:
    depth = 5000
    xml = ('<AppiumAUT>' + '<XCUIElementTypeOther type="XCUIElementTypeOther" x="0" y="0" width="390" height="844">'
           * depth + '<XCUIElementTypeButton type="XCUIElementTypeButton" label="Deep" x="1" y="1" width="9" height="9"/>'
           + '</XCUIElementTypeOther>' * depth + '</AppiumAUT>')
    tree = parse_page_source(xml)
    deep = tree.find(lambda n: n.label == "Deep")
    assert len(deep) == 1 and deep[0].depth == depth + 1 and deep[0].is_actionable
    assert tree.screen_box is None  # no XCUIElementTypeApplication / Window: the source does not say


def test_hostile_xml_is_refused_with_the_reason() -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
            '<AppiumAUT><XCUIElementTypeApplication label="&lol2;"/></AppiumAUT>')
    with pytest.raises(UITreeError, match="unsafe XML"):
        parse_page_source(bomb)
    with pytest.raises(UITreeError, match="malformed page source XML"):
        parse_page_source("<AppiumAUT><XCUIElementTypeApplication></AppiumAUT>")
