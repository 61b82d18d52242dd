"""The visual oracle on real recorded transitions, judged by what a person sees (pixel truth) and, as a
second opinion, against truth taken from the apps' own trees.

Run: ``python benchmarks/real_transitions.py PATH [--out DIR] [--worst N] [--apps A,B] [--repeat N] [--holdout]
[--no-light] [--pixels-only]`` (PATH: ``../shared/realtrans`` or any folder laid out the same way).

Pixel truth (docs/oracle.md, issue 43; the data set's README): the visible-change mask is the RGB
distance (sum of the three channels) above 90 against every 1-px shift of the other frame, both
ways, the status and navigation bars left out, a 2x2 opening, thin upright bars (a text cursor) left
out. Per pair: nothing visible (< 0.001% of the content) / visibly changed (>= 0.003%); false changes,
missed changes (set aside when the transient shapes the oracle names hold the change), seen recall
(the mask inside the regions and named transient shapes grown by 8 px; "regions only" without the
shapes), regions per change, far too big. The standard call and the tree-less (light) call are
printed, the latter also once a tree taught `StatusBars` the bars; ``--no-light`` skips them.
PATH is a folder laid out as a DroidBot-derived transition set: ``manifest_all.jsonl`` (one JSON object
a line: ``id``, ``app``, ``before`` / ``after`` each with ``screen`` (an image), ``xml`` (UiAutomator2-style
page source) and ``activity``; paths relative to PATH). Nothing of it is kept in the repository: the
project's tests never need it (docs/oracle.md).

The oracle is called as the standard and full tiers call it (`StepLoop._compare` with `step_trees`):
the after-tree for snapping, the before-tree on demand, the steady keyboard ignored, the status bar from
the tree. Figures, with the definitions of the data set's README:
- truth: nodes keyed by class + resource-id + text + content-desc + bounds (+ checked / selected) in one
  tree and not the other; the leaf-most such nodes' boxes, clipped to the screen, status bar dropped;
- screen change: the activity changed, or the truth covers > 60% of the screen, or exactly one tree holds
  only a dialog / popup window (its root covers < 85% of the screen); local change: the rest; clean local:
  a local change whose pixels differ outside the status bar, outside system UI;
- per clean local change: pixel recall (truth area inside the regions' union), pixel precision (regions'
  area inside the truth grown by 24 px), whole-screen crop (no region, or regions >= 85% of the screen);
- per screen change: judged changed with regions > 60% of the screen;
- the compare's median ms on decoded frames (one OpenCV thread, the frames' pixels already in memory);
- a naive baseline on the same pairs: absdiff > 25 on a 5x5-blurred grey, dilated, connected components.
With ``--holdout`` the figures are leave-one-app-out: the OracleConfig fields chosen on data (``--grid``,
by default snap_growth, raw_margin, row_max_fraction) are chosen for each app on the other apps alone,
and that app is judged with them; the table gives each app's held-out figures, the pooled held-out
figures and the worst apps. (Module constants not in OracleConfig, the scrollbar's shape for one, were
chosen on all apps; the docs say which.)
With ``--pixels-only`` the same pairs are judged a second time with the oracle as the light tier calls
it when no check read a tree (`StepLoop._compare` with `pixels_only`): no after-tree, no before-tree, no
steady keyboard, the status bar from `StatusBars` with nothing learnt (the platform's top band); the
regions stay raw. Its table follows the first, with the same truth, classes and definitions. (A row
later gives it once a tree read earlier taught `StatusBars` the bars, the navigation bar too.) Then, per
step, whether pixels only is "as good" as snapped (a clean local change: recall and precision both within
0.05 of snapped, not a whole-screen crop; a screen change: judged changed, or snapped did not judge it so
either), how often signals computable before any tree is read go with "as good" (the regions' count,
their share of the frame, a screen-level region, `pixels_place` at several fractions), and a rule held
out leave-one-app-out: each app gets, from a small grid (`pixels_place`'s fraction, a compact local
change's count and share), the rule that skips most trees on the other apps while each half of it is
as good on >= 90% of the judged steps it skips there and the figures with it stay within 0.02 of
always snapped; the table gives always snapped, always pixels only, the rule at `pixels_place`'s
default on all apps, and the pooled held-out rule, with the share of steps whose tree it skips.
The "screen" is the area the trees cover (a recorder may leave black rows under it: minicap on a phone
whose screenshot is taller than the content); frames are given to the oracle whole, as a device sends them.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import (
    PIXELS_PLACE_FRACTION,
    Transition,
    VisualOracle,
    covered_area,
    pixels_place,
)
from pytest_guistate.core.oracle_mask import StatusBars, steady_keyboard
from pytest_guistate.core.oracle_types import OracleConfig
from pytest_guistate.core.uinode import UINode
from pytest_guistate.core.uitree import UITree, parse_page_source

SCREEN_CHANGE = 0.6  # truth above this share of the screen: a new screen
WHOLE_SCREEN = 0.85  # regions at or above this share: a whole-screen crop
DIALOG_ONLY = 0.85  # a tree whose root covers less than this is a dialog / popup window alone
GROW_PX = 24  # truth grown by this for precision
NAIVE_THRESHOLD = 25
SYSTEM_UI = "com.android.systemui"
_BAR_IDS = ("status_bar", "statusBarBackground")


@dataclass
class Pair:
    id: str
    app: str
    before: np.ndarray
    after: np.ndarray
    before_bytes: bytes
    after_bytes: bytes
    before_tree: UITree
    after_tree: UITree
    before_activity: str
    after_activity: str
    screen: Box


@dataclass
class Judged:
    pair: Pair
    cls: str  # "clean local" | "local, not clean" | "screen change"
    truth: list[Box]
    regions: list[Box]
    naive: list[Box]
    transition: Transition
    ms: float
    recall: float = 0.0
    precision: float = 0.0
    whole: bool = False
    naive_recall: float = 0.0
    naive_precision: float = 0.0
    judged_changed: bool = False
    why: list[str] = field(default_factory=list)
    visible: Visible | None = None  # the pixel truth
    seen_recall: float = float("nan")  # visibly changed pairs: the mask's share inside the regions
    far_too_big: bool = False
    false_change: bool = False  # nothing visible, yet judged changed with a region
    missed: bool = False  # visibly changed, yet no region or no_change (and not set aside, named)
    set_aside: bool = False  # visibly changed, no region, the change inside the transient shapes it names
    seen_strict: float = float("nan")  # seen recall of the regions alone (no transient shape counted)


# -- truth ------------------------------------------------------------------------------------------


def _key(node: UINode) -> tuple[object, ...]:
    bounds = tuple(node.bounds.as_list()) if node.bounds is not None else None
    return (node.cls, node.resource_id, node.text, node.content_desc, bounds, node.checked, node.selected)


def _changed_leaves(tree: UITree, other_keys: set[tuple[object, ...]]) -> list[UINode]:
    """The leaf-most nodes of `tree` whose key is not in the other tree."""
    out: list[UINode] = []

    def visit(node: UINode) -> bool:
        below = False
        for child in node.children:
            below = visit(child) or below
        changed = node is not tree.root and node.bounds is not None and _key(node) not in other_keys
        if changed and not below:
            out.append(node)
        return changed or below

    visit(tree.root)
    return out


def status_band(trees: Iterable[UITree], screen: Box, shade: bool = False) -> Box | None:
    """The status bar as the trees name it (systemui's bar or an app's statusBarBackground; in the
    notification shade, with `shade`, systemui's header band at the top, whose clock is the status bar's)."""
    bars = [n.bounds for t in trees for n in t.nodes() if n.bounds is not None and not n.bounds.is_empty
            and (n.resource_id.endswith(_BAR_IDS) or shade and n.package == SYSTEM_UI)
            and n.bounds.top <= 0 and n.bounds.height < 0.1 * screen.height]
    return Box.union_all(bars)


def truth_boxes(before: UITree, after: UITree, screen: Box, bar_px: int) -> list[Box]:
    keys_before = {_key(n) for n in before.nodes()}
    keys_after = {_key(n) for n in after.nodes()}
    band = status_band((before, after), screen) or Box(0, 0, screen.width, bar_px)
    boxes: list[Box] = []
    for tree, other in ((before, keys_after), (after, keys_before)):
        for node in _changed_leaves(tree, other):
            assert node.bounds is not None
            if node.resource_id.endswith(_BAR_IDS):
                continue
            box = node.bounds.intersection(screen)
            if box.is_empty or band.contains(box):
                continue
            boxes.append(box)
    return boxes


def union_area(boxes: Sequence[Box], shape: tuple[int, int]) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    for box in boxes:
        mask[max(box.top, 0):max(box.bottom, 0), max(box.left, 0):max(box.right, 0)] = 1
    return mask


def dialog_only(tree: UITree, screen: Box) -> bool:
    tops = [c.bounds for c in tree.root.children if c.bounds is not None and not c.bounds.is_empty]
    cover = Box.union_all(tops)
    return cover is not None and cover.intersection(screen).area < DIALOG_ONLY * screen.area


def is_system_ui(pair: Pair) -> bool:
    return any(a.startswith(SYSTEM_UI) for a in (pair.before_activity, pair.after_activity)) or any(
        n.package == SYSTEM_UI and n.bounds is not None and n.bounds.height > 0.1 * pair.screen.height
        for t in (pair.before_tree, pair.after_tree) for n in t.nodes())


# -- pixel truth (the judge: what a person sees) -----------------------------------------------------

VISIBLE_DISTANCE = 90  # summed |dB| + |dG| + |dR| above this against every 1-px shift: a visible change
NOTHING_VISIBLE = 0.00001  # the mask under this share of the content: nothing visible (about 20 px at 1080x1920)
VISIBLY_CHANGED = 0.00003  # at or above this share: visibly changed (between the two: too faint to judge)
SEEN_GROW = 8  # the regions grown by this for seen recall
CURSOR_WIDTH, CURSOR_HEIGHTS = 8, (20, 140)  # an upright bar this thin and this tall: a blinking text cursor
FAR_BOX, FAR_TIMES, FAR_CONTENT = 0.2, 3.0, 0.5  # far too big: box < 20% of the content, regions > 3x it and > 50%
FEW_REGIONS = 3  # regions per change counted as "few"
SET_ASIDE = 0.9  # no region, yet this share of the mask inside the transient shapes the oracle names: set aside
_NAV_IDS = ("navigationBarBackground", "navigation_bar")


def _unmatched(image: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Pixels of `image` whose colour is in none of the nine 1-px shifts of `other` (uint8 0/1)."""
    height, width = image.shape[:2]
    padded = cv2.copyMakeBorder(other, 1, 1, 1, 1, cv2.BORDER_REPLICATE)
    weights = np.ones((1, 3), np.float32)
    best: np.ndarray | None = None
    for dy, dx in itertools.product((0, 1, 2), repeat=2):
        shifted = padded[dy:dy + height, dx:dx + width]
        distance = cv2.transform(cv2.absdiff(image, shifted), weights)
        best = distance if best is None else cv2.min(best, distance)
    assert best is not None
    return (best > VISIBLE_DISTANCE).astype(np.uint8)


def system_bars(pair: Pair) -> list[Box]:
    """The status bar and the navigation bar, for the pixel truth: the bars either tree names; else the
    status bar measured as the band above the app's first full-width row (<= 10% of the screen; with
    no such row, the top 3%), the navigation bar as the band under the full-width windows (<= 10%)."""
    screen = pair.screen
    trees = (pair.before_tree, pair.after_tree)
    named = status_band(trees, screen, shade=True)
    bars = [named] if named is not None else []
    if named is None:
        tops = [n.bounds.top for t in trees for n in t.nodes() if n.bounds is not None and not n.bounds.is_empty
                and 0 < n.bounds.top <= 0.1 * screen.height and n.bounds.width >= 0.9 * screen.width
                and n.package != SYSTEM_UI]
        bars.append(Box(0, 0, screen.width, min(tops) if tops else round(0.03 * screen.height)))
    navs = [n.bounds.intersection(screen) for t in trees for n in t.nodes() if n.bounds is not None
            and n.resource_id.endswith(_NAV_IDS) and n.bounds.top >= screen.height // 2]
    bars += [b for b in navs if not b.is_empty]
    if not navs:
        windows = [c.bounds for t in trees for c in t.root.children if c.bounds is not None
                   and c.bounds.width >= 0.98 * screen.width and c.bounds.top <= 0.1 * screen.height]
        bottom = max((b.bottom for b in windows), default=screen.bottom)
        if screen.bottom - 0.1 * screen.height <= bottom < screen.bottom:
            bars.append(Box(0, bottom, screen.width, screen.bottom))
    return bars


@dataclass
class Visible:
    """The pixel truth of one pair: its visible-change mask (bit-packed, content rows only) and figures."""

    mask: np.ndarray  # packbits of the content's mask, rows 0..screen.bottom
    shape: tuple[int, int]
    pixels: int
    box: Box | None
    content: int  # pixels of the content (the screen without its bars)
    bars: list[Box]

    @property
    def share(self) -> float:
        return self.pixels / float(max(1, self.content))

    @property
    def kind(self) -> str:
        if self.share < NOTHING_VISIBLE:
            return "nothing visible"
        return "visibly changed" if self.share >= VISIBLY_CHANGED else "faint"

    def unpacked(self) -> np.ndarray:
        return np.unpackbits(self.mask, count=self.shape[0] * self.shape[1]).reshape(self.shape)


def visible_change(pair: Pair) -> Visible:
    """The visible-change mask (the data set's README, "Pixel truth"): RGB distance > 90 against every
    1-px shift of the other frame, both ways; the bars out; a 2x2 opening; thin upright bars (a text
    cursor) out."""
    screen = pair.screen
    before = np.ascontiguousarray(pair.before[:screen.bottom, :screen.right])
    after = np.ascontiguousarray(pair.after[:screen.bottom, :screen.right])
    mask = _unmatched(after, before) | _unmatched(before, after)
    bars = system_bars(pair)
    for bar in bars:
        mask[max(bar.top, 0):max(bar.bottom, 0), max(bar.left, 0):max(bar.right, 0)] = 0
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    low, high = CURSOR_HEIGHTS
    for index in range(1, count):
        w, h = stats[index, cv2.CC_STAT_WIDTH], stats[index, cv2.CC_STAT_HEIGHT]
        if w <= CURSOR_WIDTH and low <= h <= high:
            x, y = stats[index, cv2.CC_STAT_LEFT], stats[index, cv2.CC_STAT_TOP]
            roi = labels[y:y + h, x:x + w] == index
            mask[y:y + h, x:x + w][roi] = 0
    points = cv2.findNonZero(mask)
    box = Box.from_xywh(*(int(v) for v in cv2.boundingRect(points))) if points is not None else None
    bar_px = int(union_area(bars, mask.shape).sum())
    return Visible(np.packbits(mask), mask.shape, int(cv2.countNonZero(mask)), box, screen.area - bar_px, bars)


def seen_scores(visible: Visible, regions: Sequence[Box]) -> tuple[float, bool]:
    """(seen recall: the mask's share inside the regions grown by `SEEN_GROW`, far too big)."""
    shape = visible.shape
    area = union_area([r.expand(SEEN_GROW) for r in regions], shape)
    recall = float((visible.unpacked() & area).sum()) / visible.pixels if visible.pixels else 1.0
    far = False
    if visible.box is not None and visible.box.area < FAR_BOX * visible.content:
        covered = int(union_area(regions, shape).sum())
        far = covered > FAR_TIMES * visible.box.area and covered > FAR_CONTENT * visible.content
    return recall, far


# -- the two contestants ----------------------------------------------------------------------------


def decoded(data: bytes, pixels: np.ndarray, source: str) -> Frame:
    frame = Frame(png=data, source=source)
    frame._bgr = pixels  # already decoded: the budget's "decoded frames"
    return frame


Mode = Literal["snapped", "pixels", "pixels, bars learnt"]


def run_oracle(oracle: VisualOracle, pair: Pair, mode: Mode = "snapped") -> tuple[Transition, float]:
    """"snapped": as `StepLoop._compare` at standard / full: after-tree, before-tree on demand, steady
    keyboard. "pixels": as it calls it at light with no tree read: no tree either side, the status bar
    from `StatusBars` with nothing learnt (the top band). "pixels, bars learnt": the same once light
    has read a tree at this size (a check's, a failure's): the bars it names, the navigation bar too,
    learnt from the before-tree, which stands for that earlier tree (the bars do not move)."""
    before = decoded(pair.before_bytes, pair.before, f"{pair.id} before")
    after = decoded(pair.after_bytes, pair.after, f"{pair.id} after")
    width, height = after.size
    bars = StatusBars()
    if mode == "pixels, bars learnt":
        bars.boxes(pair.before_tree, width, height)
    started = time.perf_counter()
    if mode == "snapped":
        ignore = steady_keyboard(pair.before_tree, pair.after_tree)
        transition = oracle.compare(before, after, pair.after_tree, ignore=ignore,
                                    before_tree=lambda: pair.before_tree)
    else:
        transition = oracle.compare(before, after, None, before_tree=lambda: None,
                                    status_bars=bars.boxes(None, width, height))
    return transition, (time.perf_counter() - started) * 1000.0


def naive_boxes(before: np.ndarray, after: np.ndarray, dilate_px: int = 9) -> list[Box]:
    grey_b = cv2.GaussianBlur(cv2.cvtColor(before, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    grey_a = cv2.GaussianBlur(cv2.cvtColor(after, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, mask = cv2.threshold(cv2.absdiff(grey_b, grey_a), NAIVE_THRESHOLD, 255, cv2.THRESH_BINARY)
    mask = cv2.dilate(mask, np.ones((dilate_px, dilate_px), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    return [Box.from_xywh(int(x), int(y), int(w), int(h)) for x, y, w, h, area in stats[1:count] if area >= 16]


# -- loading ----------------------------------------------------------------------------------------


def load(root: Path, manifest: str, apps: set[str] | None) -> list[Pair]:
    path = root / manifest
    if not path.is_file():
        raise SystemExit(f"{path}: no manifest (expected one JSON object a line; see this script's docstring)")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pairs: list[Pair] = []
    for row in rows:
        if apps and row["app"] not in apps:
            continue
        images = []
        for side in ("before", "after"):
            data = (root / row[side]["screen"]).read_bytes()
            pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            if pixels is None:
                raise SystemExit(f"{row['id']}: {row[side]['screen']} is not an image OpenCV can read")
            images.append((data, pixels))
        trees = [parse_page_source((root / row[side]["xml"]).read_text()) for side in ("before", "after")]
        height, width = images[1][1].shape[:2]
        pairs.append(Pair(row["id"], row["app"], images[0][1], images[1][1], images[0][0], images[1][0],
                          trees[0], trees[1], row["before"].get("activity") or "", row["after"].get("activity") or "",
                          Box(0, 0, width, height)))
    # the screen is what the windows cover: per frame size, the most common bottom of a tree's top-level
    # windows (a dialog-only tree or a web view reaching past the screen says nothing of it)
    for size in {(p.screen.width, p.screen.height) for p in pairs}:
        same = [p for p in pairs if (p.screen.width, p.screen.height) == size]
        bottoms = Counter(min(p.screen.height, b.bottom) for p in same for t in (p.before_tree, p.after_tree)
                          for b in [Box.union_all(c.bounds for c in t.root.children if c.bounds is not None)] if b)
        if bottoms:
            covered = bottoms.most_common(1)[0][0]
            for pair in same:
                pair.screen = Box(0, 0, pair.screen.width, min(pair.screen.height, covered))
    return pairs


# -- judging ----------------------------------------------------------------------------------------


def _scores(truth: Sequence[Box], regions: Sequence[Box], screen: Box) -> tuple[float, float, float]:
    shape = (screen.height, screen.width)
    clipped = [r.intersection(screen) for r in regions]
    truth_mask = union_area(truth, shape)
    region_mask = union_area(clipped, shape)
    grown = union_area([t.expand(GROW_PX) for t in truth], shape)
    truth_px = int(truth_mask.sum())
    region_px = int(region_mask.sum())
    recall = float((truth_mask & region_mask).sum()) / truth_px if truth_px else 1.0
    precision = float((grown & region_mask).sum()) / region_px if region_px else 0.0
    return recall, precision, region_px / float(screen.area)


def judge(pair: Pair, oracle: VisualOracle, bar_px: int, repeat: int,
          naive: list[Box] | None = None, mode: Mode = "snapped", visible: Visible | None = None) -> Judged:
    """One pair judged; `naive` passes the baseline's boxes when they were computed already (a grid);
    `mode`: how the oracle is called (`run_oracle`); the truth and the classes are the same in every mode."""
    screen = pair.screen
    truth = truth_boxes(pair.before_tree, pair.after_tree, screen, bar_px)
    transition, ms = run_oracle(oracle, pair, mode)
    times = [ms] + [run_oracle(oracle, pair, mode)[1] for _ in range(repeat - 1)]
    regions = [r.box for r in transition.regions]
    naive = naive_boxes(pair.before, pair.after) if naive is None else naive
    truth_share = float(union_area(truth, (screen.height, screen.width)).sum()) / screen.area
    activity_changed = pair.before_activity != pair.after_activity
    dialogs = dialog_only(pair.before_tree, screen) != dialog_only(pair.after_tree, screen)
    band = status_band((pair.before_tree, pair.after_tree), screen) or Box(0, 0, screen.width, bar_px)
    if activity_changed or truth_share > SCREEN_CHANGE or dialogs:
        cls = "screen change"
    else:
        below = [b for b in naive if not band.contains(b) and b.intersects(screen)]
        clean = bool(truth) and bool(below) and not is_system_ui(pair)
        cls = "clean local" if clean else "local, not clean"
    judged = Judged(pair, cls, truth, regions, naive, transition, statistics.median(times))
    judged.recall, judged.precision, share = _scores(truth, regions, screen)
    judged.whole = not regions or share >= WHOLE_SCREEN
    judged.naive_recall, judged.naive_precision, _ = _scores(truth, naive, screen)
    judged.judged_changed = transition.verdict == "changed" and share > SCREEN_CHANGE
    if activity_changed:
        judged.why.append("activity")
    if dialogs:
        judged.why.append("dialog window")
    if truth_share > SCREEN_CHANGE:
        judged.why.append(f"truth {truth_share:.0%}")
    judged.visible = visible = visible_change(pair) if visible is None else visible
    changed = transition.verdict == "changed" and bool(regions)
    named = [t.box for t in transition.transients]
    if visible.kind == "nothing visible":
        judged.false_change = changed
    elif visible.kind == "visibly changed":
        judged.seen_strict, judged.far_too_big = seen_scores(visible, regions)
        judged.seen_recall = seen_scores(visible, [*regions, *named])[0] if named else judged.seen_strict
        unmatched = not regions or transition.verdict == "no_change"
        judged.set_aside = unmatched and bool(named) and seen_scores(visible, named)[0] >= SET_ASIDE
        judged.missed = unmatched and not judged.set_aside
    return judged


# -- reporting --------------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else float("nan")


def breakdown(judged: Sequence[Judged]) -> dict[str, dict[str, float]]:
    """Figures overall, per tree-truth class, per pixel-truth kind and per app."""
    rows: dict[str, dict[str, float]] = {"ALL": figures(judged)}
    for cls in ("clean local", "local, not clean", "screen change"):
        rows[f"class: {cls}"] = figures([j for j in judged if j.cls == cls])
    for kind in ("nothing visible", "faint", "visibly changed"):
        rows[f"pixels: {kind}"] = figures([j for j in judged if j.visible is not None and j.visible.kind == kind])
    for app in sorted({j.pair.app for j in judged}):
        rows[app] = figures([j for j in judged if j.pair.app == app])
    return rows


def figures(judged: Sequence[Judged]) -> dict[str, float]:
    clean = [j for j in judged if j.cls == "clean local"]
    screens = [j for j in judged if j.cls == "screen change"]
    quiet = [j for j in judged if j.visible is not None and j.visible.kind == "nothing visible"]
    seen = [j for j in judged if j.visible is not None and j.visible.kind == "visibly changed"]
    return {
        "nothing visible": len(quiet),
        "false changes": sum(j.false_change for j in quiet),
        "visibly changed": len(seen),
        "missed": sum(j.missed for j in seen),
        "set aside": sum(j.set_aside for j in seen),
        "seen recall": _mean(j.seen_recall for j in seen),
        "seen, regions only": _mean(j.seen_strict for j in seen),
        f"<={FEW_REGIONS} regions": _mean(float(len(j.regions) <= FEW_REGIONS) for j in seen),
        "regions, mean": _mean(len(j.regions) for j in seen),
        "far too big": sum(j.far_too_big for j in seen),
        "pairs": len(judged),
        "clean local": len(clean),
        "recall": _mean(j.recall for j in clean),
        "precision": _mean(j.precision for j in clean),
        "whole-screen crops": _mean(float(j.whole) for j in clean),
        "naive recall": _mean(j.naive_recall for j in clean),
        "naive precision": _mean(j.naive_precision for j in clean),
        "screen changes": len(screens),
        "judged changed": _mean(float(j.judged_changed) for j in screens),
        "median ms": statistics.median(j.ms for j in judged) if judged else float("nan"),
    }


PIXEL_COLUMNS = ["pairs", "nothing visible", "false changes", "visibly changed", "missed", "set aside",
                 "seen recall", "seen, regions only", f"<={FEW_REGIONS} regions", "regions, mean", "far too big",
                 "median ms"]
TREE_COLUMNS = ["pairs", "clean local", "recall", "precision", "whole-screen crops", "naive recall",
                "naive precision", "screen changes", "judged changed", "median ms"]


def table(rows: dict[str, dict[str, float]], columns: Sequence[str] = TREE_COLUMNS) -> str:
    head = f"{'':44s}" + "".join(f"{c[:11]:>12s}" for c in columns)
    lines = [head]
    for name, values in rows.items():
        cells = []
        for c in columns:
            v = values[c]
            cells.append(f"{v:12d}" if isinstance(v, int) else f"{v:12.2f}")
        lines.append(f"{name[:44]:44s}" + "".join(cells))
    return "\n".join(lines)


def draw(judged: Judged, out: Path, rank: int) -> Path:
    """before | after, truth in green, the oracle's regions in red (raw boxes thin), naive in blue."""
    pair = judged.pair
    h = pair.screen.height
    panels = []
    for image in (pair.before[:h].copy(), pair.after[:h].copy()):
        for box in judged.naive:
            cv2.rectangle(image, (box.left, box.top), (box.right, box.bottom), (255, 120, 0), 2)
        for box in judged.truth:
            cv2.rectangle(image, (box.left, box.top), (box.right, box.bottom), (0, 200, 0), 6)
        for region in judged.transition.regions:
            cv2.rectangle(image, (region.box.left, region.box.top), (region.box.right, region.box.bottom),
                          (0, 0, 255), 4)
            cv2.rectangle(image, (region.raw.left, region.raw.top), (region.raw.right, region.raw.bottom),
                          (0, 0, 160), 1)
        panels.append(image)
    if judged.visible is not None:  # the visible-change mask, magenta, on the after panel
        seen = judged.visible.unpacked()[:h].astype(bool)
        panels[1][seen] = (panels[1][seen] // 2 + np.array([127, 0, 127], np.uint8))
    picture = np.hstack([panels[0], np.full((h, 12, 3), 255, np.uint8), panels[1]])
    text = (f"{pair.id} seen={judged.seen_recall:.2f} n={len(judged.regions)} {judged.cls} R={judged.recall:.2f} "
            f"{judged.transition.verdict} {[r.container for r in judged.transition.regions][:3]}")
    cv2.putText(picture, text[:110], (10, h - 20), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 255), 2)
    picture = cv2.resize(picture, None, fx=0.4, fy=0.4, interpolation=cv2.INTER_AREA)
    target = out / f"{rank:02d}_{pair.id.replace('/', '_')}.png"
    cv2.imwrite(str(target), picture)
    return target


def badness(judged: Judged) -> float:
    """How badly the pixel truth judges a pair (missed and false changes first), else the tree truth's."""
    if judged.missed or judged.false_change:
        return 10.0
    if judged.visible is not None and judged.visible.kind == "visibly changed":
        return (2 * (1 - judged.seen_recall) + 3 * float(judged.far_too_big)
                + 0.2 * max(0, len(judged.regions) - FEW_REGIONS))
    return -1.0


def config_with(settings: Sequence[str]) -> OracleConfig:
    """The default OracleConfig with FIELD=VALUE overrides (for tuning on one half of the apps)."""
    fields = {f.name: f.type for f in dataclasses.fields(OracleConfig)}
    changes: dict[str, object] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in fields:
            raise SystemExit(f"--set {setting}: OracleConfig has no field {name!r} (fields: {', '.join(fields)})")
        kind = {"int": int, "float": float, "bool": lambda v: v.lower() in ("1", "true", "yes")}.get(str(fields[name]))
        changes[name] = kind(value) if kind else value
    return dataclasses.replace(OracleConfig(), **changes)


DEFAULT_GRID = ("snap_growth=2,4,8", "raw_margin=6,12,24", "row_max_fraction=0.1,0.15,0.2")


def objective(values: dict[str, float]) -> float:
    """What a choice of settings is judged by on the apps it may see, by pixel truth: seen recall and
    the share of changes with few regions, less the shares of false, missed and far-too-big ones."""
    quiet, seen = max(1, int(values["nothing visible"])), max(1, int(values["visibly changed"]))
    parts = (values["seen recall"], values[f"<={FEW_REGIONS} regions"], -values["false changes"] / quiet,
             -values["missed"] / seen, -values["far too big"] / seen)
    return sum(0.0 if math.isnan(v) else v for v in parts)


def holdout(pairs: Sequence[Pair], grid: Sequence[str], bar_px: int, base: Sequence[str],
            visible: dict[str, Visible] | None = None) -> dict[str, dict[str, float]]:
    """Leave-one-app-out: each app judged with the grid point that scored best on the other apps.
    The default settings win ties, so a choice away from them is one the other apps asked for."""
    axes: list[tuple[str, list[str]]] = []
    for item in grid:
        name, _, values = item.partition("=")
        axes.append((name, [v for v in values.split(",") if v]))
    defaults = OracleConfig()
    points = [tuple(zip([a[0] for a in axes], combo)) for combo in itertools.product(*(a[1] for a in axes))]
    points.sort(key=lambda p: sum(abs(float(v) - float(getattr(defaults, n))) for n, v in p))  # defaults first
    naive = {p.id: naive_boxes(p.before, p.after) for p in pairs}
    runs: list[list[Judged]] = []
    for point in points:
        oracle = VisualOracle(config_with([*base, *(f"{n}={v}" for n, v in point)]))
        runs.append([judge(p, oracle, bar_px, 1, naive[p.id], visible=(visible or {}).get(p.id)) for p in pairs])
        visible = {j.pair.id: j.visible for j in runs[-1] if j.visible is not None}
    rows: dict[str, dict[str, float]] = {}
    held: list[Judged] = []
    for app in sorted({p.app for p in pairs}):
        scores = [objective(figures([j for j in run if j.pair.app != app])) for run in runs]
        best = max(range(len(points)), key=lambda i: (scores[i], -i))
        mine = [j for j in runs[best] if j.pair.app == app]
        held += mine
        chosen = ",".join(f"{n.split('_')[0]}={v}" for n, v in points[best])
        rows[f"{app[:20]} [{chosen}]"] = figures(mine)
    rows["HELD-OUT, all apps pooled"] = figures(held)
    largest = Counter(p.app for p in pairs).most_common(1)[0][0]  # one app may dominate the pool
    rows["HELD-OUT, all apps but the largest"] = figures([j for j in held if j.pair.app != largest])
    rows["defaults, all apps"] = figures(runs[0])
    return rows


def worst_apps(rows: dict[str, dict[str, float]], count: int = 4) -> list[str]:
    """The apps whose held-out figures are furthest from the targets (issue 43's "Done when")."""
    apps = {k: v for k, v in rows.items() if "[" in k}

    def shortfall(v: dict[str, float]) -> float:
        gaps = [v["false changes"], v["missed"], 0.97 - v["seen recall"], v["far too big"],
                0.90 - v[f"<={FEW_REGIONS} regions"]]
        return sum(max(0.0, g) for g in gaps if not math.isnan(g))

    ranked = sorted(apps, key=lambda k: -shortfall(apps[k]))
    return [f"{k}: shortfall {shortfall(apps[k]):.2f}" for k in ranked[:count] if shortfall(apps[k]) > 0]


# -- where the tree is needed (--pixels-only) ------------------------------------------------------

AS_GOOD = 0.05  # pixels only is as good as snapped: recall and precision both within this, not whole-screen
TOLERANCE = 0.02  # a rule may cost the apps it is chosen on at most this much of any figure
PLACE_GRID = (0.4, 0.5, 0.6, 0.7, 0.8)  # pixels_place's fraction of the frame
LOCAL_GRID = ((0, 0.0), (1, 0.01), (1, 0.03), (2, 0.03), (3, 0.05))  # (max regions, max share): 0 = off


def as_good(snapped: Judged, pixels: Judged) -> bool:
    """Per step: a clean local change placed as well without a tree; a screen change judged so."""
    if snapped.cls == "clean local":
        return (pixels.recall >= snapped.recall - AS_GOOD and pixels.precision >= snapped.precision - AS_GOOD
                and not pixels.whole)
    if snapped.cls == "screen change":
        return pixels.judged_changed or not snapped.judged_changed
    return True  # not judged: nothing to lose


def frame_share(judged: Judged) -> float:
    """The pixel-only regions' share of the frame, as the step loop would see it (whole frame)."""
    height, width = judged.pair.after.shape[:2]
    screen = Box(0, 0, width, height)
    return covered_area([r.box.intersection(screen) for r in judged.transition.regions]) / screen.area


@dataclass(frozen=True)
class Rule:
    """Skip the tree when `pixels_place` says so (`place`, None: never) or when the tree-less
    transition is a compact local change (at most `regions` regions covering at most `share`)."""

    place: float | None
    regions: int
    share: float

    def branch(self, pixels: Judged) -> str | None:
        """Which half of the rule skips this step's tree ("place", "local"), None: read it."""
        t = pixels.transition
        height, width = pixels.pair.after.shape[:2]
        if self.place is not None and pixels_place(t, width, height, self.place):
            return "place"
        if (0 < len(t.regions) <= self.regions and t.verdict == "changed"
                and all(r.kind == "change" for r in t.regions) and frame_share(pixels) <= self.share):
            return "local"
        return None

    def skips(self, pixels: Judged) -> bool:
        return self.branch(pixels) is not None

    def label(self) -> str:
        place = "off" if self.place is None else f"{self.place:.2f}"
        local = "off" if not self.regions else f"<={self.regions} regions <={self.share:.0%}"
        return f"place>{place}, local {local}"


def with_rule(rule: Rule, snapped: Sequence[Judged], pixels: Sequence[Judged]) -> list[Judged]:
    return [x if rule.skips(x) else s for s, x in zip(snapped, pixels, strict=True)]


PREDICTS = 0.9  # a rule must be right this often on the judged steps it skips (as good without a tree)


def rule_fits(rule: Rule, snapped: Sequence[Judged], pixels: Sequence[Judged]) -> tuple[bool, float]:
    """(the rule is usable on these steps, share of steps it skips). Usable: on the judged steps each
    half of it skips (clean local, screen change) pixels only is as good at least `PREDICTS` of the time, and
    the figures with the rule are within `TOLERANCE` of always snapped."""
    base, mixed = figures(snapped), figures(with_rule(rule, snapped, pixels))
    losses = (base["recall"] - mixed["recall"], base["precision"] - mixed["precision"],
              mixed["whole-screen crops"] - base["whole-screen crops"], base["judged changed"] - mixed["judged changed"])
    predicts = True
    for branch in ("place", "local"):
        skipped = [as_good(s, x) for s, x in zip(snapped, pixels, strict=True)
                   if rule.branch(x) == branch and s.cls in ("clean local", "screen change")]
        predicts = predicts and (not skipped or sum(skipped) >= PREDICTS * len(skipped))
    fits = predicts and all(math.isnan(loss) or loss <= TOLERANCE for loss in losses)
    return fits, _mean(float(rule.skips(x)) for x in pixels)


def choose_rule(rules: Sequence[Rule], snapped: Sequence[Judged], pixels: Sequence[Judged]) -> Rule:
    """The usable rule that skips most trees on these steps (the first listed wins ties); never
    skipping when none is usable."""
    best, most = Rule(None, 0, 0.0), 0.0
    for rule in rules:
        fits, share = rule_fits(rule, snapped, pixels)
        if fits and share > most:
            best, most = rule, share
    return best


def tree_need(snapped: Sequence[Judged], pixels: Sequence[Judged],
              learnt: Sequence[Judged] = ()) -> dict[str, dict[str, float]]:
    """Where the tree-less oracle is as good as snapped, what predicts it, and a rule held out;
    `learnt`: pixels only once a tree taught the bars, a row beside the others."""
    clean = [(s, x) for s, x in zip(snapped, pixels, strict=True) if s.cls == "clean local"]
    good = [as_good(s, x) for s, x in clean]
    print(f"\nclean local changes placed as well without a tree (recall and precision within {AS_GOOD}, not "
          f"whole-screen): {sum(good)} of {len(clean)}")
    for name, side in (("snapped", 0), ("pixels only", 1)):
        touched = [_mean(float(any(r.box.intersects(t) for r in pair[side].transition.regions)) for t in pair[0].truth)
                   for pair in clean]
        print(f"  changed items (truth boxes) a region touches, {name}: {_mean(touched):.2f}")
    for grow in (12, 24, 48):
        scores = [_scores(s.truth, [r.box.expand(grow) for r in x.transition.regions], s.pair.screen)[:2]
                  for s, x in clean]
        print(f"  pixels only, regions grown by {grow} px: recall {_mean(r for r, _ in scores):.2f}, "
              f"precision {_mean(p for _, p in scores):.2f}")
    signals: dict[str, Callable[[Judged], bool]] = {
        "one region": lambda x: len(x.transition.regions) == 1,
        "<= 2 regions": lambda x: len(x.transition.regions) <= 2,
        "regions <= 1% of the frame": lambda x: frame_share(x) <= 0.01,
        "regions <= 5% of the frame": lambda x: frame_share(x) <= 0.05,
        "a screen-level region (repaint)": lambda x: any(r.kind != "change" for r in x.transition.regions),
        f"pixels_place (> {PIXELS_PLACE_FRACTION:.0%} of the frame)": Rule(PIXELS_PLACE_FRACTION, 0, 0.0).skips,
    }
    for name, signal in signals.items():
        fired = [g for (_, x), g in zip(clean, good, strict=True) if signal(x)]
        print(f"  {name:36s} {len(fired):3d} clean local steps, {sum(fired)} of them as good")
    screens = [(s, x) for s, x in zip(snapped, pixels, strict=True) if s.cls == "screen change"]
    for fraction in PLACE_GRID:
        hits = [(s, x) for s, x in zip(snapped, pixels, strict=True)
                if pixels_place(x.transition, x.pair.after.shape[1], x.pair.after.shape[0], fraction)]
        print(f"  pixels_place > {fraction:.0%} of the frame: {len(hits)} steps ({sum(s.cls == 'screen change' for s, _ in hits)}"
              f" of the {len(screens)} screen changes, {sum(s.cls == 'clean local' for s, _ in hits)} clean local), "
              f"as good in {sum(as_good(s, x) for s, x in hits)}")
    placed = [s for s, x in zip(snapped, pixels, strict=True) if Rule(PIXELS_PLACE_FRACTION, 0, 0.0).skips(x)]
    dialogs = sum(any((r.container or "").startswith("dialog") for r in s.transition.regions) for s in placed)
    windows = sum(any(r.kind == "screen" for r in s.transition.regions) for s in placed)
    print(f"  of the {len(placed)} steps pixels_place > {PIXELS_PLACE_FRACTION:.0%} takes, snapped finds a dialog's box on "
          f"{dialogs} and names a new window on {windows} (pixels only: a repaint of the screen)")
    rules = [Rule(p, n, sh) for p in (None, *PLACE_GRID) for n, sh in LOCAL_GRID]
    rows: dict[str, dict[str, float]] = {}
    held: list[Judged] = []
    skipped: list[float] = []
    for app in sorted({s.pair.app for s in snapped}):
        train = [(s, x) for s, x in zip(snapped, pixels, strict=True) if s.pair.app != app]
        test = [(s, x) for s, x in zip(snapped, pixels, strict=True) if s.pair.app == app]
        best = choose_rule(rules, [s for s, _ in train], [x for _, x in train])
        mine = with_rule(best, [s for s, _ in test], [x for _, x in test])
        held += mine
        skipped += [float(best.skips(x)) for _, x in test]
        rows[f"{app[:20]} [{best.label()}]"] = figures(mine)
    rows["always snapped (standard / full)"] = figures(snapped)
    rows["always pixels only (light)"] = figures(pixels)
    if learnt:
        rows["always pixels only, bars learnt from a tree"] = figures(learnt)
    in_sample = Rule(PIXELS_PLACE_FRACTION, 0, 0.0)
    rows[f"pixels_place > {PIXELS_PLACE_FRACTION:.0%} (its default), all apps"] = figures(
        with_rule(in_sample, snapped, pixels))
    rows["HELD-OUT rule, all apps pooled"] = figures(held)
    print(f"\nthe rule held out (leave-one-app-out: each app gets the rule that skips most trees on the other apps, "
          f"right >= {PREDICTS:.0%} of the judged steps it skips and costing them <= {TOLERANCE} of any figure):")
    print(table({k: v for k, v in rows.items() if "[" not in k}))
    chosen = Counter(k.split("[")[1].rstrip("]") for k in rows if "[" in k)
    print("rules chosen: " + "; ".join(f"{r} ({n} apps)" for r, n in chosen.most_common()))
    by_cls = {cls: _mean(float(f) for f, s in zip(skipped, held, strict=True) if s.cls == cls)
              for cls in ("clean local", "local, not clean", "screen change")}
    print(f"trees skipped held out: {_mean(skipped):.0%} of steps (" + ", ".join(f"{c} {v:.0%}" for c, v in by_cls.items())
          + ")")
    print(f"trees skipped by pixels_place > {PIXELS_PLACE_FRACTION:.0%} on all apps: "
          f"{_mean(float(in_sample.skips(x)) for x in pixels):.0%} of steps")
    rows["HELD-OUT rule, all apps pooled"]["trees skipped"] = _mean(skipped)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="folder with manifest_all.jsonl and the files it names")
    parser.add_argument("--manifest", default="manifest_all.jsonl")
    parser.add_argument("--out", type=Path, default=None, help="write the worst cases as pictures here")
    parser.add_argument("--worst", type=int, default=12)
    parser.add_argument("--apps", default="", help="comma-separated apps to keep (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="compares per pair for the median ms")
    parser.add_argument("--status-bar-px", type=int, default=72,
                        help="the status bar's height when no tree names it (truth only; the oracle finds its own)")
    parser.add_argument("--per-pair", action="store_true", help="a line per pair")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="an OracleConfig field to try (repeatable), e.g. --set snap_growth=6")
    parser.add_argument("--json", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--holdout", action="store_true",
                        help="leave-one-app-out: each app judged with settings chosen on the other apps")
    parser.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2",
                        help=f"settings --holdout chooses from (repeatable; default {' '.join(DEFAULT_GRID)})")
    parser.add_argument("--no-light", action="store_true",
                        help="skip the tree-less call (the light tier's) judged beside the standard one")
    parser.add_argument("--pixels-only", action="store_true",
                        help="also judge the oracle without trees (as light calls it) and compare the two")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    apps = {a for a in args.apps.split(",") if a} or None
    pairs = load(args.path, args.manifest, apps)
    if not pairs:
        print("no pairs", file=sys.stderr)
        return 1
    oracle = VisualOracle(config_with(args.set))
    judged = [judge(p, oracle, args.status_bar_px, max(1, args.repeat)) for p in pairs]
    rows = breakdown(judged)
    print("pixel truth (the judge: what a person sees), the oracle as the standard tier calls it:")
    print(table(rows, PIXEL_COLUMNS))
    print("\ntree truth (a second opinion), the same call:")
    print(table(rows))
    kinds = Counter(t.kind for j in judged for t in j.transition.transients)
    print("transient shapes set aside: " + (", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"))
    if not args.no_light or args.pixels_only:
        pixels = [judge(p, oracle, args.status_bar_px, max(1, args.repeat), j.naive, mode="pixels", visible=j.visible)
                  for p, j in zip(pairs, judged, strict=True)]
        tree_less = breakdown(pixels)
        print("\npixel truth, the tree-less call (as light calls it: no tree, the status bar its top band):")
        print(table(tree_less, PIXEL_COLUMNS))
        print("\ntree truth, the tree-less call:")
        print(table(tree_less))
        rows.update({f"pixels only: {k}": v for k, v in tree_less.items()})
        learnt = [judge(p, oracle, args.status_bar_px, 1, j.naive, mode="pixels, bars learnt", visible=j.visible)
                  for p, j in zip(pairs, judged, strict=True)]
        known = breakdown(learnt)
        print("\npixel truth, the tree-less call once a tree read earlier in the session taught `StatusBars` "
              "the bars (the before-tree stands for it):")
        print(table({k: v for k, v in known.items() if not k.startswith("class")}, PIXEL_COLUMNS))
        rows.update({f"pixels only, bars learnt: {k}": v for k, v in known.items()})
    if args.pixels_only:
        rows.update({f"tree need: {k}": v for k, v in tree_need(judged, pixels, learnt).items()})
    if args.holdout:
        held = holdout(pairs, args.grid or DEFAULT_GRID, args.status_bar_px, args.set,
                       {j.pair.id: j.visible for j in judged if j.visible is not None})
        print("\nleave-one-app-out (settings chosen without the app, in brackets), pixel truth:")
        print(table(held, PIXEL_COLUMNS))
        print("\nthe same, tree truth:")
        print(table(held))
        print("worst apps held out: " + ("; ".join(worst_apps(held)) or "none short of the targets"))
        rows.update({f"holdout: {k}": v for k, v in held.items()})
    if args.per_pair:
        light = [*pixels, *learnt] if not args.no_light or args.pixels_only else []
        for j in [*judged, *light]:
            regions = [(r.box.as_list(), r.container) for r in j.transition.regions][:4]
            seen = j.visible.kind if j.visible is not None else "?"
            mode = "std" if not any(j is x for x in light) else "light" if any(j is x for x in pixels) else "learn"
            print(f"{mode:5s} {j.pair.id:48s} {seen[:8]:8s} seen={j.seen_recall:.2f}/{j.seen_strict:.2f} n={len(j.regions)} far={int(j.far_too_big)} "
                  f"false={int(j.false_change)} missed={int(j.missed)} | "
                  f"{j.cls:17s} R={j.recall:.2f} P={j.precision:.2f} whole={int(j.whole)} "
                  f"changed={int(j.judged_changed)} {j.transition.verdict} {','.join(j.why)} {regions}"
                  f" transients={[t.kind for t in j.transition.transients]}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        worst = sorted((j for j in judged if badness(j) > 0), key=badness, reverse=True)[: args.worst]
        for rank, j in enumerate(worst):
            print(f"worst {rank}: {draw(j, args.out, rank)}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
