"""The UI tree journaled per step: bounded, password text never, repeats referenced, interned for the page."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_guistate.core.uitree import parse_page_source
from pytest_guistate.report.journal import read_journal
from pytest_guistate.report.viewer_tree import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT,
    compact_tree,
    highlight,
    intern_trees,
    tree_key,
)
from tests.helpers.scenario import PASSWORD, run_failing


def _page(rows: int, text: str = "row") -> str:
    items = "".join(f'<node class="android.widget.TextView" text="{text} {i}" bounds="[0,{i * 10}][100,{i * 10 + 10}]"/>'
                    for i in range(rows))
    return (f'<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][100,5000]">{items}'
            '<node class="android.widget.EditText" password="true" text="hunter2" resource-id="app:id/pw" '
            'bounds="[0,0][100,10]"/></node></hierarchy>')


def test_compact_tree_is_bounded_and_never_holds_a_password() -> None:
    compact = compact_tree(parse_page_source(_page(3, "x" * 500)))
    assert compact is not None
    text = json.dumps(compact)
    assert "hunter2" not in text and '"f": "p"' in text  # the node is kept, flagged, without its text
    assert all(len(n.get("t", "")) <= MAX_TEXT for n in compact["n"]["k"][0]["k"])
    big = compact_tree(parse_page_source(_page(MAX_NODES * 2)))
    assert big is not None
    kept = len(intern_trees({"k": big})["nodes"])
    assert kept <= MAX_NODES and big["omitted"] == MAX_NODES * 2 + 3 - MAX_NODES


def test_highlight_is_the_smallest_node_around_the_region() -> None:
    compact = compact_tree(parse_page_source(_page(5)))
    assert highlight(compact, [[10, 22, 50, 28]]) == ["0/2"]  # inside row 2 only
    assert highlight(compact, [[0, 0, 100, 5000]]) == []  # a full-screen change points at no node
    assert highlight(compact, []) == []


def test_equal_subtrees_are_stored_once() -> None:
    one = compact_tree(parse_page_source(_page(50)))
    two = compact_tree(parse_page_source(_page(50).replace("row 7", "row seven")))
    assert one is not None and two is not None and tree_key(one) != tree_key(two)
    table = intern_trees({"a": one, "b": two})
    assert len(table["nodes"]) == 53 + 3  # 53 nodes of one tree, + the changed leaf and its two ancestors


def test_the_journal_has_each_steps_tree_without_the_password(tmp_path: Path) -> None:
    _, done = run_failing(tmp_path)
    assert done.folder is not None
    journal = read_journal(done.folder)
    keys = [e.get("tree_key") for e in journal.steps]
    assert all(keys) and len(keys) == 7
    trees = [e for e in journal.steps if "tree" in e]
    assert len(trees) < len(keys)  # typing the password changes no visible text: same tree, referenced
    assert PASSWORD not in (done.folder / "journal.jsonl").read_text()


def test_light_tier_keeps_the_tree_of_the_failed_step_only(tmp_path: Path) -> None:
    _, done = run_failing(tmp_path, tier="light")
    assert done.folder is not None
    steps = read_journal(done.folder).steps
    assert [e["record"]["index"] for e in steps if "tree" in e] == [7]


def test_a_deep_tree_is_cut_at_max_depth_and_the_rest_counted() -> None:
    depth = 1000
    xml = ('<hierarchy>' + '<node class="android.widget.FrameLayout" bounds="[0,0][10,10]">' * depth
           + '</node>' * depth + '</hierarchy>')
    compact = compact_tree(parse_page_source(xml))
    assert compact is not None
    levels, node = 1, compact["n"]
    while node.get("k"):
        node, levels = node["k"][0], levels + 1
    assert levels == MAX_DEPTH
    assert compact["omitted"] == depth + 1 - MAX_DEPTH  # the hierarchy root is a level too
    tree_key(compact)  # json of the cut tree does not recurse too deep
    intern_trees({"k": compact})
