"""The LLM actor's element list on both platforms: iOS buttons and cells appear with their labels."""

from __future__ import annotations

from pathlib import Path

from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.llm.prompt import ImageScale, element_lines

SOURCES = Path(__file__).parent / "pagesources"


def rows(name: str, scale: float | None = None) -> list[dict[str, object]]:
    tree: UITree = parse_page_source((SOURCES / f"{name}.xml").read_text(encoding="utf-8"), scale=scale)
    assert tree.width and tree.height
    return element_lines(tree, ImageScale.for_frame(tree.width, tree.height, 1.0))


def test_ios_buttons_and_cells_are_listed_with_their_labels() -> None:
    listed = rows("ios_list", scale=3.0)
    taps = [(r["kind"], r.get("text"), r.get("rid")) for r in listed if r.get("tap")]
    assert taps == [("Button", "New post", "compose"), ("Cell", None, "post_alice"),
                    ("Button", "Delete post by Alice", "delete_alice"), ("Cell", None, "post_carol"),
                    ("Button", "Delete post by Carol", "delete_carol"), ("Button", "Home", None),
                    ("Button", "Profile", None)]
    carol = next(r for r in listed if r.get("rid") == "delete_carol")
    assert carol["at"] == [990, 1029, 1122, 1113]  # pixels of the shown image (scale 3, divisor 1)
    assert carol["in"] == "Carol · New recipe up"  # the row it belongs to
    assert not any(r.get("text") == "Dan" for r in listed)  # the off-screen row
    assert any(r["kind"] == "Table" and r.get("scroll") for r in listed)


def test_ios_switch_row_names_the_setting_and_states_it() -> None:
    listed = rows("ios_settings")
    auto = next(r for r in listed if r.get("text") == "Auto-Correction")
    assert auto["kind"] == "Switch" and auto["checked"] is False and auto.get("tap") is True
    assert not any(r.get("text") == "0" for r in listed)
    caps = next(r for r in listed if r.get("text") == "Enable Caps Lock")
    assert caps["rid"] == "caps_lock" and caps["disabled"] is True
    slider = next(r for r in listed if r.get("text") == "Key Sound")
    assert slider["value"] == "50%"


def test_ios_keyboard_keys_are_left_out_and_fields_marked_editable() -> None:
    listed = rows("ios_keyboard")
    assert not any(r["kind"] == "Key" for r in listed)
    field = next(r for r in listed if r["kind"] == "SearchField")
    assert field["edit"] is True and field["text"] == "Search products" and field["value"] == "head"
    assert [r.get("text") for r in listed if r["kind"] == "Button"] == ["search", "Next keyboard"]


def test_ios_secure_field_row_never_carries_its_value() -> None:
    listed = rows("ios_login")
    secure = next(r for r in listed if r["kind"] == "SecureTextField")
    assert secure["text"] == "Password" and secure["edit"] is True and "value" not in secure
    assert "•" not in "".join(str(v) for r in listed for v in r.values())


def test_ios_alert_rows_are_the_alert_buttons() -> None:
    listed = rows("ios_alert")
    assert [r.get("text") for r in listed if r.get("tap")] == ["Cancel", "Delete"]


def test_android_rows_keep_their_format() -> None:
    listed = rows("android_list")
    carol = next(r for r in listed if r.get("desc") == "Delete post by Carol")
    assert carol == {"id": "0/1/0/1/3", "kind": "ImageButton", "desc": "Delete post by Carol", "rid": "delete",
                     "at": [930, 790, 1038, 870], "tap": True, "in": "Carol · New recipe up"}
    row = next(r for r in listed if r["kind"] == "ViewGroup")
    assert row == {"id": "0/1/0/0", "kind": "ViewGroup", "rid": "row", "at": [0, 231, 1080, 561], "tap": True,
                   "in": "Alice · Morning run done"}
