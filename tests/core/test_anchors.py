"""The anchor DAG: typed anchors, typed links, cycles refused in cause -> effect orientation."""

from __future__ import annotations

import json

import pytest

from pytest_guistate.core.anchors import (
    ANCHOR_SCHEMA,
    AnchorGraph,
    AnchorType,
    LinkType,
)


def test_add_link_and_serialise() -> None:
    seen = []
    graph = AnchorGraph(on_add=seen.append)
    s1 = graph.add(AnchorType.SUBGOAL, "logged in", step_index=2, app="com.shop")
    s2 = graph.add("SUBGOAL", "cart filled", step_index=5)  # type: ignore[arg-type]
    graph.link(s1, s2, LinkType.ENABLES)
    data = graph.to_dict()
    assert data["schema"] == ANCHOR_SCHEMA == "guistate.anchors/1"
    assert [a["id"] for a in data["anchors"]] == ["a1", "a2"]
    assert data["links"] == [{"src": "a1", "dst": "a2", "type": "enables"}]
    assert seen == [s1, s2]
    json.dumps(data)  # JSON-safe
    assert graph.last(1) == [s2] and graph.last(0) == []
    assert graph.of_type(AnchorType.SUBGOAL) == [s1, s2]


def test_cycles_are_refused_including_result_of_orientation() -> None:
    graph = AnchorGraph()
    a, b, c = (graph.add(AnchorType.SUBGOAL, name) for name in "abc")
    graph.link(a, b, LinkType.ENABLES)
    graph.link(b, c, "prerequisite")
    with pytest.raises(ValueError, match="cycle"):
        graph.link(c, a, LinkType.BLOCKS)
    # "a result_of c" means c caused a: c -> a, which closes a -> b -> c -> a
    with pytest.raises(ValueError, match="cycle"):
        graph.link(a, c, LinkType.RESULT_OF)
    # "c result_of a" is the same direction as the existing chain: allowed
    graph.link(c, a, LinkType.RESULT_OF)
    assert len(graph.links) == 3


def test_link_errors_name_the_problem() -> None:
    graph = AnchorGraph()
    a = graph.add(AnchorType.FINISH, "end")
    with pytest.raises(ValueError, match="itself"):
        graph.link(a, a, LinkType.RESULT_OF)
    with pytest.raises(ValueError, match="unknown anchor 'a9'"):
        graph.link(a, "a9", LinkType.ENABLES)
    with pytest.raises(ValueError):
        graph.link(a, a, "causes")
    with pytest.raises(KeyError, match="known"):
        graph["zz"]


def test_line_is_plain_text() -> None:
    graph = AnchorGraph()
    anchor = graph.add(AnchorType.DEPENDENCY, "recall 'price'", step_index=7, app="com.shop.b", detail="12.50")
    line = anchor.line()
    assert "DEPENDENCY" in line and "step 7" in line and "[com.shop.b]" in line
    assert "\x1b" not in line
