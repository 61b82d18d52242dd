"""Timeline thumbnails never cover one another (issue 23): a long test puts anchors 30 px apart, and
an 80 px thumbnail per anchor made an unreadable stack. Per lane only thumbnails with room are
drawn, a failure's first; every anchor keeps its dot."""

from __future__ import annotations

from itertools import pairwise

from pytest_guistate.report.timeline import THUMB_MIN_W, layout_timeline

THUMB = "data:image/png;base64,iVBORw0KGgo="


def _layout(count: int, failing_at: int):  # type: ignore[no-untyped-def]
    steps = [{"index": i, "name": f"step {i}", "outcome": "ok"} for i in range(1, count + 1)]
    anchors = [{"id": f"a{i}", "type": "STATE_CHANGE", "step": i, "title": f"screen {i}"} for i in range(1, count + 1)]
    anchors.append({"id": "x1", "type": "EXCEPTION", "step": failing_at, "title": "step failed"})
    anchors.append({"id": "x0", "type": "EXCEPTION", "step": failing_at - 1, "title": "stale screen"})
    thumbs = {a["id"]: THUMB for a in anchors}
    return layout_timeline(steps, anchors, [], thumbs)


def test_no_two_thumbnails_in_a_lane_overlap_on_a_long_test() -> None:
    layout = _layout(60, failing_at=40)
    assert len(layout.anchors) == 62, "every anchor keeps its dot"
    drawn = [a for a in layout.anchors if a.thumb]
    for lane in {a.y for a in drawn}:
        boxes = sorted((a.x - layout.thumb_w / 2, a.x + layout.thumb_w / 2) for a in drawn if a.y == lane)
        assert all(left >= previous_right for (_, previous_right), (left, _) in pairwise(boxes)), boxes
    assert layout.thumb_w >= THUMB_MIN_W, "a thumbnail stays readable"
    state_changes = [a for a in drawn if a.type == "STATE_CHANGE"]
    assert 10 <= len(state_changes) < 60, "as many as fit, not none and not all"


def test_the_failure_keeps_its_thumbnail_over_its_neighbour() -> None:
    layout = _layout(60, failing_at=40)
    by_id = {a.id: a for a in layout.anchors}
    assert by_id["x0"].thumb or by_id["x1"].thumb
    assert sum(1 for key in ("x0", "x1") if by_id[key].thumb) == 1, "neighbours 30 px apart: one thumbnail"


def test_a_short_test_keeps_every_thumbnail_narrowed_to_its_spacing() -> None:
    for count in (6, 10):
        layout = _layout(count, failing_at=count - 1)
        assert all(a.thumb for a in layout.anchors if a.type == "STATE_CHANGE"), count
        xs = sorted(a.x for a in layout.anchors if a.type == "STATE_CHANGE")
        assert min(b - a for a, b in pairwise(xs)) >= layout.thumb_w, count
