"""The identity rule per kind of element and the lookalike pick of a heal (`llm/cache/identity.py`), and a
target re-found by the locator that named it alone (`replay._named_alone`), on fingerprints and element rows
as the recorder and the actor see them (fast: no sim)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree import UITree, parse_page_source
from pytest_guistate.llm.cache.cachefile import CachedStep, best_target, fingerprint, state_after
from pytest_guistate.llm.cache.identity import carries, differs, identity, pick_lookalike
from pytest_guistate.llm.cache.record import target_of
from pytest_guistate.llm.cache.replay import CacheThresholds
from pytest_guistate.llm.cache.replay import _target as replay_target

# (fingerprint, its identity label, the rule that chose it) -- as recorded on the sim's apps
KINDS = [
    ({"kind": "Button", "text": "Delete", "desc": "Delete post by Erin", "in": "Avatar of Erin · Erin · Three days"},
     "Delete", "own label"),
    ({"kind": "Switch", "text": "OFF", "rid": "switch_widget", "in": "Dark mode · Off"}, "Dark mode", "bound label"),
    ({"kind": "Switch", "text": "Dark mode", "in": "Dark mode, Off · Dark mode · Off"}, "Dark mode", "own label"),  # iOS
    ({"kind": "CheckBox", "desc": "Remember me", "in": "Sign in · Remember me"}, "Remember me", "accessibility label"),
    ({"kind": "ImageButton", "desc": "Cart, 1 items", "in": "ShopA"}, "Cart, 1 items", "accessibility label"),
    ({"kind": "ViewGroup", "desc": "Beach 2026-09-06 Travel", "rid": "photo", "in": "Beach · 2026-09-06  Travel"},
     "Beach", "first label"),
    ({"kind": "Cell", "text": "Beach 2026-09-06 Travel", "rid": "photo", "in": "Beach · 2026-09-06  Travel"},
     "Beach", "first label"),  # iOS: a cell's label joins its parts
]


@pytest.mark.parametrize(("print_", "label", "how"), KINDS)
def test_each_kind_of_element_is_named_by_its_rule(print_: dict[str, Any], label: str, how: str) -> None:
    found = identity(print_)
    assert (found.label, found.how) == (label, how)


@pytest.mark.parametrize(("cached", "current", "differ"), [
    ("Dark mode", "Battery saver", True),
    ("Add to cart", "Add to bag", False),  # the same action renamed
    ("Delete", "Remove", True),
    ("Travel (0)", "Travel (2)", False),  # a count is no identity
    ("OFF", "ON", False),  # only state words: nothing to compare
])
def test_identities_differ_only_when_they_share_no_word(cached: str, current: str, differ: bool) -> None:
    a, b = identity({"kind": "Button", "text": cached}), identity({"kind": "Button", "text": current})
    assert differs(a, b) is differ


def _tile(n: int, label: str, category: str, top: int = 0) -> tuple[dict[str, Any], UINode]:
    path = f"0/{n}"
    node = UINode(cls="android.view.ViewGroup", index_path=path, bounds=Box(0, top + n * 300, 300, top + n * 300 + 280))
    row = {"id": path, "kind": "ViewGroup", "rid": "photo", "desc": f"{label} 2026-01-0{n} {category}",
           "in": f"{label} · 2026-01-0{n}  {category}"}
    return row, node


def _screen(*tiles: tuple[dict[str, Any], UINode]) -> tuple[list[dict[str, Any]], dict[str, UINode]]:
    return [row for row, _ in tiles], {node.index_path: node for _, node in tiles}


BEACH = {"kind": "ViewGroup", "rid": "photo", "desc": "Beach 2026-01-01 Travel", "in": "Beach · 2026-01-01  Travel"}


def test_a_heal_onto_a_tile_of_another_name_is_refused_naming_both() -> None:
    tiles = [_tile(1, "Sunset", "Travel"), _tile(2, "Mountains", "Travel"), _tile(3, "Dog", "Pets")]
    rows, nodes = _screen(*tiles)
    pick = pick_lookalike(rows, nodes, BEACH, tiles[0][1])
    assert not pick.ok and pick.reason == "cached 'Beach' element; the memory found 'Sunset' (3 lookalike(s) of 'photo')"


def test_lookalikes_nothing_in_the_cache_tells_apart_are_ambiguous() -> None:
    tiles = [_tile(n, "Photo", "Misc") for n in range(1, 5)]  # four tiles named alike, no neighbour words
    rows, nodes = _screen(*tiles)
    cached = {"kind": "ViewGroup", "rid": "photo", "in": "Photo"}
    pick = pick_lookalike(rows, nodes, cached, tiles[1][1])
    assert not pick.ok and pick.reason == "ambiguous: 4 lookalikes of 'photo', nothing in the cache tells them apart"


def _delete(n: int, author: str, text: str) -> tuple[dict[str, Any], UINode]:
    path = f"1/{n}/3"
    node = UINode(cls="android.widget.Button", index_path=path, bounds=Box(900, n * 250, 1000, n * 250 + 80))
    return {"id": path, "kind": "Button", "rid": "action_remove", "text": "Delete", "desc": f"Remove {author}'s post",
            "in": f"Avatar of {author} · {author} · {text}"}, node


ERIN = {"kind": "Button", "rid": "delete", "text": "Delete", "desc": "Delete post by Erin",
        "in": "Avatar of Erin · Erin · Three days of hiking an…"}


def test_the_cached_neighbours_pick_the_one_row_the_memory_must_have_found() -> None:
    rows, nodes = _screen(_delete(1, "Dave", "Board game night on Friday"), _delete(2, "Erin", "Three days of hiking an…"),
                          _delete(3, "Frank", "Coffee tasting notes"))
    assert pick_lookalike(rows, nodes, ERIN, nodes["1/2/3"]).ok
    wrong = pick_lookalike(rows, nodes, ERIN, nodes["1/3/3"])
    assert not wrong.ok and "the cached neighbours pick the one in 'Avatar of Erin" in wrong.reason


def test_a_row_gone_from_the_screen_is_not_picked_by_a_stray_word() -> None:
    """Erin's row is not on screen; another row shares one of her words ("days"): not enough to pick it."""
    rows, nodes = _screen(_delete(1, "Dave", "Two days of rain"), _delete(2, "Frank", "Coffee tasting notes"))
    pick = pick_lookalike(rows, nodes, ERIN, nodes["1/1/3"])
    assert not pick.ok and pick.reason.startswith("ambiguous: 2 lookalikes of 'action_remove'")


# -- the rules the user drifts of `test_cache_releases.py` found missing -------------------------------------------
def test_a_candidate_that_says_nothing_of_what_it_is_carries_no_named_identity() -> None:
    """A switch whose label moved to a heading outside its row: its row says only "Off"."""
    dark = identity({"kind": "Switch", "text": "OFF", "in": "Dark mode · Off"})
    unnamed = identity({"kind": "Switch", "text": "OFF", "in": "Off"})
    assert not differs(dark, unnamed)  # the old rule let it through: nothing to compare
    assert not carries(dark, unnamed)
    assert carries(dark, identity({"kind": "Switch", "text": "ON", "in": "DARK MODE · On"}))
    assert carries(identity({"kind": "Switch", "text": "OFF"}), unnamed)  # nothing was named: nothing to prove


def test_a_lookalike_without_words_is_never_healed_onto() -> None:
    tiles = [_tile(1, "Beach", "Travel"), _tile(2, "Mountains", "Travel")]
    rows, nodes = _screen(*tiles)
    rows[1] = {**rows[1], "desc": "", "in": ""}  # a tile that says nothing of what it shows
    pick = pick_lookalike(rows, nodes, BEACH, tiles[1][1])
    assert not pick.ok and pick.reason.startswith("cached 'Beach' element; the memory found ''")


def _settings(*rows: tuple[str, bool, int]) -> UITree:
    """A Settings screen: one row per (label, switch on, top), each a label and a switch."""
    nodes = "".join(
        f'<node index="{n}" class="android.widget.LinearLayout" bounds="[0,{top}][1080,{top + 180}]" clickable="true">'
        f'<node index="0" class="android.widget.TextView" text="{label}" bounds="[48,{top + 30}][800,{top + 96}]"/>'
        f'<node index="1" class="android.widget.Switch" text="{"ON" if on else "OFF"}" checkable="true" '
        f'checked="{str(on).lower()}" clickable="true" resource-id="android:id/switch_widget" '
        f'bounds="[872,{top + 58}][1032,{top + 122}]"/></node>' for n, (label, on, top) in enumerate(rows))
    return parse_page_source('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0" width="1080" height="2400">'
                             '<node index="0" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
                             f'{nodes}</node></hierarchy>')


def _switch(tree: UITree, label: str) -> UINode:
    return next(n for n in tree.nodes() if n.kind == "Switch" and any(
        s.text == label for s in next(p for p in tree.nodes() if n in p.children).children))


def test_a_switch_keeps_its_state_in_the_cache_and_is_read_again_after_the_step() -> None:
    before = _settings(("Wi-Fi", True, 300), ("Dark mode", False, 480))
    switch = _switch(before, "Dark mode")
    print_ = fingerprint(before, switch)
    assert print_["checked"] is False and print_["in"] == "Dark mode"
    assert state_after(_settings(("Wi-Fi", True, 300), ("Dark mode", True, 480)), switch, print_) is True
    # another setting in its place is no state of this one
    assert state_after(_settings(("Wi-Fi", True, 300), ("Battery saver", True, 480)), switch, print_) is None
    button = fingerprint(before, next(n for n in before.nodes() if n.kind == "LinearLayout"))
    assert "checked" not in button and state_after(before, switch, button) is None


def test_switches_told_apart_only_by_their_place_are_a_tie() -> None:
    """'Dark mode' under Keyboard and under Display: the same row words, kind and id."""
    tree = _settings(("Wi-Fi", True, 300), ("Dark mode", False, 480), ("Dark mode", False, 1900))  # which one?
    cached = fingerprint(_settings(("Wi-Fi", True, 300), ("Dark mode", False, 480)),
                         _switch(_settings(("Wi-Fi", True, 300), ("Dark mode", False, 480)), "Dark mode"))
    match = best_target(tree, cached)
    assert match.score - match.runner_up > CacheThresholds().margin  # the margin alone took the one in the old place
    assert match.told_apart_by_place_only()
    single = best_target(_settings(("Wi-Fi", True, 300), ("Dark mode", False, 1900)), cached)
    assert not single.told_apart_by_place_only()  # Wi-Fi's row has other words: not a tie


def _feed(*posts: tuple[str, str], icon: bool = False) -> UITree:
    """A Feed screen: one row per (author, text), each with its Delete button (`icon`: an icon button with its
    accessibility label only, as in the drift suite's `icon_delete` release)."""
    rows = []
    for n, (author, text) in enumerate(posts):
        top = 300 + 240 * n
        delete = ('class="android.widget.ImageButton" text="" resource-id="com.guistate.feed:id/trash"' if icon else
                  'class="android.widget.Button" text="Delete" resource-id="com.guistate.feed:id/delete"')
        rows.append(
            f'<node index="{n}" class="android.widget.LinearLayout" bounds="[0,{top}][1080,{top + 230}]">'
            f'<node index="0" class="android.widget.TextView" text="{author}" resource-id="com.guistate.feed:id/author" '
            f'bounds="[48,{top + 20}][700,{top + 80}]"/>'
            f'<node index="1" class="android.widget.TextView" text="{text}" resource-id="com.guistate.feed:id/text" '
            f'bounds="[48,{top + 90}][840,{top + 150}]"/>'
            f'<node index="2" {delete} content-desc="Delete post by {author}" clickable="true" '
            f'bounds="[860,{top + 152}][1032,{top + 226}]"/></node>')
    return parse_page_source('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0" width="1080" height="2400">'
                             '<node index="0" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
                             f'{"".join(rows)}</node></hierarchy>')


POSTS = (("Alice", "Trying sourdough again"), ("Bob", "Anyone tried the new ramen place"), ("Carol", "Sunset from the pier"))


def _recorded_delete(author: str) -> CachedStep:
    tree = _feed(*POSTS)
    node = next(n for n in tree.nodes() if f"Delete post by {author}" in n.descriptions)
    return CachedStep(1, "tap", {}, "tap", False, {"labels": []}, target_of(tree, node), {})


def test_a_target_its_fingerprint_no_longer_trusts_is_found_by_the_locator_that_named_it_alone() -> None:
    """`icon_delete`: every row's Delete became an icon button (text, id and kind changed): the fingerprint
    scores under the threshold, but `desc="Delete post by Bob"`, the locator that named the button alone when
    recorded (and that `guistate export-test` writes), still names one element, in Bob's row."""
    step = _recorded_delete("Bob")
    assert step.target is not None and step.target["unique"] == ["desc"]
    tree = _feed(*POSTS, icon=True)
    assert best_target(tree, step.fingerprint).score < CacheThresholds().target  # the fingerprint alone misses
    match, problem = replay_target(tree, step, CacheThresholds())
    assert problem == "" and match.node is not None and tuple(match.node.descriptions) == ("Delete post by Bob",)
    assert match.via.startswith("found by its recorded desc='Delete post by Bob'")
    # Bob posts again: the locator names two, which is no proof of either (nothing is acted on)
    match, problem = replay_target(_feed(("Bob", "Second post: closed today"), *POSTS, icon=True), step,
                                   CacheThresholds())
    assert "its recorded desc='Delete post by Bob' names 2 elements" in problem
    # Bob's post was replaced by another of his: the label names one button, but its row is not the recorded one
    match, problem = replay_target(_feed(POSTS[0], ("Bob", "Selling my old bike, cheap"), POSTS[2], icon=True), step,
                                   CacheThresholds())
    assert "names an element whose row is not the cached one" in problem
    # a cache recorded before `unique`: no locator is known to have named it alone, so a miss as before
    old = CachedStep(1, "tap", {}, "tap", False, {"labels": []},
                     {k: v for k, v in (step.target or {}).items() if k != "unique"}, {})
    assert replay_target(tree, old, CacheThresholds())[1].startswith("no element like 'Delete'")
