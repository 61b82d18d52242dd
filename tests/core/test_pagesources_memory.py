"""The cross-run memory on iOS trees: a search field heals by role when its placeholder is
rewritten, and heal regions are the iOS buttons and fields (not only Android's clickable nodes)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.memory import Locator, MemoryStore, learn_patch
from pytest_guistate.memory.regions import actionable_regions, editable_nodes, is_editable
from pytest_guistate.memory.role import heal_by_role

SOURCES = Path(__file__).parent / "pagesources"
APP = "com.guistate.shopa"
SCALE = 2.0


def _tree(label: str) -> UITree:
    xml = (SOURCES / "ios_keyboard.xml").read_text(encoding="utf-8").replace("Search products", label)
    return parse_page_source(xml, scale=SCALE)


def _screen(tree: UITree, placeholder: str) -> Observation:
    assert tree.width and tree.height
    img = np.full((tree.height, tree.width, 3), 255, np.uint8)
    field = next(n for n in tree.nodes() if n.kind == "SearchField").bounds
    assert field is not None
    cv2.rectangle(img, (field.left, field.top), (field.right - 1, field.bottom - 1), (232, 232, 236), -1)
    cv2.rectangle(img, (field.left, field.top), (field.right - 1, field.bottom - 1), (120, 120, 128), 3)
    cv2.putText(img, placeholder, (field.left + 24, field.bottom - 22), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (90, 90, 90), 2)
    return Observation(Frame.from_array(img), tree, APP)


def test_ios_search_field_heals_by_role_after_its_placeholder_is_rewritten(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.sqlite")
    v1 = _screen(_tree("Search products"), "Search products")
    field = next(n for n in v1.tree.nodes() if n.kind == "SearchField")  # type: ignore[union-attr]
    assert field.bounds is not None and is_editable(field.cls)
    learned = learn_patch(store, v1, field.bounds, locator=Locator("desc", "Search products"), app=APP,
                          app_version="1")
    assert learned.new_variant, learned.reason
    v2 = _screen(_tree("What are you looking for?"), "What are you looking for?")
    match = heal_by_role(store.patches(), v2, APP)
    assert match.target is not None, match.reason
    assert match.target.node is not None and match.target.node.label == "What are you looking for?"
    assert "only text input" in match.reason


def test_ios_heal_regions_are_buttons_and_fields() -> None:
    tree = parse_page_source((SOURCES / "ios_login.xml").read_text(encoding="utf-8"), scale=SCALE)
    size = (tree.width or 0, tree.height or 0)
    labels = [t.node.label for t in actionable_regions(tree, size) if t.node is not None]
    assert labels == ["username", "Password", "Log In", "Forgot password?"]
    assert [n.kind for n in editable_nodes(tree, size)] == ["TextField", "SecureTextField"]


def test_ios_alert_limits_heal_regions_to_its_buttons() -> None:
    tree = parse_page_source((SOURCES / "ios_alert.xml").read_text(encoding="utf-8"))
    regions = actionable_regions(tree, (390, 844))
    assert [t.node.label for t in regions if t.node is not None] == ["Cancel", "Delete"]
    assert all(Box(60, 349, 330, 495).contains(t.box) for t in regions)
