"""The anchor timeline as a picture: steps along the time axis, anchors in lanes by type.

This module only does geometry (where each mark goes); `templates/timeline.svg.j2` draws it
with Jinja autoescaping, so titles that came from the app are escaped like any other text. The
same SVG is inlined in report.html and attached to Allure on failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ANCHOR_COLOURS", "LANES", "AnchorMark", "Arrow", "StepMark", "TimelineLayout", "layout_timeline"]

LANES = ("SUBGOAL", "STATE_CHANGE", "DEPENDENCY", "CONTEXT_INFO", "EXCEPTION", "FINISH")
ANCHOR_COLOURS = {
    "SUBGOAL": "#2e7d32",
    "STATE_CHANGE": "#1565c0",
    "DEPENDENCY": "#6a1b9a",
    "CONTEXT_INFO": "#00838f",
    "EXCEPTION": "#c62828",
    "FINISH": "#37474f",
}
OUTCOME_COLOURS = {
    "ok": "#66bb6a", "settled": "#9ccc65", "refreshed": "#ffca28", "retried": "#ffa726", "failed": "#e53935",
    "": "#bdbdbd",
}
LINK_DASH = {"prerequisite": "", "enables": "", "blocks": "6 3", "result_of": "2 3"}

STEP_DX = 30  # px between steps
LEFT = 120  # room for lane labels
LANE_DY = 74  # lane height: a 56 px thumbnail fits above each anchor dot
TOP = 24
THUMB = 52
THUMB_W = 80  # a thumbnail's widest drawn width, centred on its anchor
THUMB_MIN_W = 48  # narrower is unreadable: on a long test some thumbnails are dropped instead
THUMB_GAP = 4


@dataclass
class StepMark:
    index: int
    x: float
    y: float
    colour: str
    title: str
    outcome: str


@dataclass
class AnchorMark:
    id: str
    type: str
    x: float
    y: float
    colour: str
    title: str
    step: int | None
    thumb: str | None  # data URI of a small crop, drawn beside the dot


@dataclass
class Arrow:
    src: str
    dst: str
    type: str
    path: str  # SVG path data
    dash: str


@dataclass
class TimelineLayout:
    width: int
    height: int
    axis_y: float
    lanes: list[tuple[str, float, str]]  # (name, y, colour)
    steps: list[StepMark] = field(default_factory=list)
    anchors: list[AnchorMark] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    ticks: list[tuple[float, int]] = field(default_factory=list)
    thumb_w: float = THUMB_W  # as wide as the step spacing allows (THUMB_MIN_W..THUMB_W)

    @property
    def thumb_h(self) -> float:
        return round(self.thumb_w * 5 / 8, 1)


def _thumbs_without_overlap(anchors: list[AnchorMark], width: float) -> None:
    """Keep, per lane, only thumbnails that do not cover one another (thumbnails shrink to the step
    spacing down to THUMB_MIN_W; a long test puts anchors 30 px apart): an EXCEPTION's first, then
    left to right. An anchor whose thumbnail is dropped keeps its dot and title; its crops are in
    the step's detail."""
    placed: dict[float, list[tuple[float, float]]] = {}
    for mark in sorted((a for a in anchors if a.thumb), key=lambda a: (a.type != "EXCEPTION", a.x)):
        left, right = mark.x - width / 2, mark.x + width / 2
        lane = placed.setdefault(mark.y, [])
        if any(left < end + THUMB_GAP and start < right + THUMB_GAP for start, end in lane):
            mark.thumb = None
        else:
            lane.append((left, right))


def _x(step: int | None, first: int, dx: float = STEP_DX) -> float:
    return LEFT + ((step if step is not None else first - 1) - first + 1) * dx


def layout_timeline(
    steps: list[dict[str, Any]],
    anchors: list[dict[str, Any]],
    links: list[dict[str, Any]],
    thumbs: dict[str, str] | None = None,
) -> TimelineLayout:
    """Place steps (journal step records) and anchors (`Anchor.to_dict()`) on the picture.

    Anchors at the same step in the same lane are nudged right so none hides another; an anchor
    with no step (setup) sits left of step 0.
    """
    thumbs = thumbs or {}
    indices = [int(s.get("index", i)) for i, s in enumerate(steps)]
    indices += [int(a["step"]) for a in anchors if a.get("step") is not None]
    first = min(indices) if indices else 0
    last = max(indices) if indices else 0
    lane_y = {name: TOP + THUMB + i * LANE_DY for i, name in enumerate(LANES)}
    axis_y = TOP + THUMB + len(LANES) * LANE_DY - LANE_DY / 2
    dx = max(STEP_DX, min(96.0, 900.0 / (last - first + 3)))  # short tests get room for thumbnails
    width = int(LEFT + (last - first + 3) * dx + THUMB)
    layout = TimelineLayout(
        width=width, height=int(axis_y + 40), axis_y=axis_y,
        lanes=[(name, lane_y[name], ANCHOR_COLOURS[name]) for name in LANES],
        thumb_w=max(THUMB_MIN_W, min(THUMB_W, dx - THUMB_GAP)),
    )
    for i, step in enumerate(steps):
        index = int(step.get("index", i))
        outcome = str(step.get("outcome") or "")
        layout.steps.append(StepMark(index, _x(index, first, dx), axis_y, OUTCOME_COLOURS.get(outcome, "#bdbdbd"),
                                     f"step {index}: {step.get('name', '')} [{outcome or 'running'}]", outcome))
    every = max(1, (last - first + 1) // 25)
    layout.ticks = [(_x(i, first, dx), i) for i in range(first, last + 1) if (i - first) % every == 0]
    taken: dict[tuple[str, float], int] = {}
    positions: dict[str, AnchorMark] = {}
    for anchor in anchors:
        kind = str(anchor.get("type", "EXCEPTION"))
        lane = kind if kind in lane_y else "EXCEPTION"
        at = anchor.get("step")
        anchor_step = int(at) if at is not None else None
        x = _x(anchor_step, first, dx)
        slot = taken.get((lane, x), 0)
        taken[(lane, x)] = slot + 1
        mark = AnchorMark(
            id=str(anchor.get("id", "")), type=kind, x=x + slot * (dx * 0.45), y=lane_y[lane],
            colour=ANCHOR_COLOURS.get(kind, "#757575"),
            title=f"{anchor.get('id', '')} {kind}: {anchor.get('title', '')}" + (
                f" [{anchor['app']}]" if anchor.get("app") else ""),
            step=anchor_step, thumb=thumbs.get(str(anchor.get("id", ""))),
        )
        layout.anchors.append(mark)
        positions[mark.id] = mark
    _thumbs_without_overlap(layout.anchors, layout.thumb_w)
    for link in links:
        src, dst = positions.get(str(link.get("src"))), positions.get(str(link.get("dst")))
        if src is None or dst is None:
            continue
        kind = str(link.get("type", ""))
        # cause -> effect, as the DAG is oriented: result_of points back to its cause
        a, b = (dst, src) if kind == "result_of" else (src, dst)
        bend = -28 if a.y == b.y else 0
        mid_x, mid_y = (a.x + b.x) / 2, (a.y + b.y) / 2 + bend
        path = f"M{a.x:.1f},{a.y:.1f} Q{mid_x:.1f},{mid_y:.1f} {b.x:.1f},{b.y:.1f}"
        layout.arrows.append(Arrow(src.id, dst.id, kind, path, LINK_DASH.get(kind, "")))
    return layout
