"""The UI-tree half of the oracle: changed boxes -> the containers they belong to (AGMem §3.2).

"A crop cut too tight loses the item it belongs to": each raw box is snapped, at full scale, to
the smallest container (window, panel, dialog, list row, a leaf row too) that encloses it *on top*: windows and
overlays stack, so the candidate chain starts at the topmost node enclosing the box (the last one
in document order) and walks up its ancestors -- a spinner drawn over a list row belongs to the
spinner's layout, not to the row beneath. An empty layer drawn over other nodes (a childless,
non-clickable overlay FrameLayout; issue 25) is no candidate: what changed shows through it. The raw box is kept when no container fits; the
full-screen root and near-full-screen content views never count. A box may poke out of its
container by `snap_tolerance` px or `snap_slack` of its size (scale rounding, a dialog's shadow).
Then one change becomes one region:
- regions in two or more rows of the same list are one change of the list (a removed row shifts
  every row below it; row-by-row crops would hide what happened);
- a region whose box lies inside another region's container joins it.
The stability probe uses the tree the other way round: `grow_unstable` widens the few pixels
that moved between two probe frames to the small node that will keep moving (a ProgressBar).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_mask import RawRegion
from pytest_guistate.core.oracle_types import OracleConfig, Region
from pytest_guistate.core.uitree import UINode, UITree
from pytest_guistate.core.uitree_platform import IOS

__all__ = ["SnappedRegion", "grow_unstable", "snap_regions"]

_LIST_HINTS = ("RecyclerView", "ListView", "ScrollView", "Table", "CollectionView", "GridView")
_ELEMENT_GROWTH = 4  # an element may be this many times the area of the changed pixels' box
_LEAF_MAX_FRACTION = 0.25  # a leaf bigger than this (a full-screen image) says little about where
_SNAP_SLACK = 0.03  # fraction of the box's width/height it may poke out of its container
_COVER = 0.5  # a container is the change's item only when the change spans this much of its width and height


@dataclass
class SnappedRegion:
    region: Region
    strict_pixels: int
    uncertain: bool  # every raw region in it was judged uncertain


@dataclass
class _Group:
    node: UINode | None
    raws: list[RawRegion]
    uncertain: bool

    @property
    def box(self) -> Box:
        if self.node is not None and self.node.bounds is not None:
            return self.node.bounds
        union = Box.union_all(r.box for r in self.raws)
        assert union is not None
        return union


class _Snapper:
    """Container look-ups over one tree (parents and document order computed once)."""

    def __init__(self, tree: UITree, screen: Box, config: OracleConfig) -> None:
        self.screen = screen
        self.config = config
        drawn = [n for n in tree.nodes() if n.bounds is not None and not n.bounds.is_empty and n.is_drawn]
        self.parents: dict[int, UINode] = {}
        for node in tree.nodes():
            for child in node.children:
                self.parents[id(child)] = node
        # `drawn[:i]` only for an empty layer: a slice for every node cost O(nodes^2) on a large web page's tree
        self.order = [n for i, n in enumerate(drawn)
                      if not (n.is_empty_layer and self.is_transparent_layer(n, drawn[:i]))]
        self.changes: list[Box] = []  # every changed box of the pair: what a container is measured against
        self._topmost: dict[Box, UINode | None] = {}

    def is_transparent_layer(self, node: UINode, beneath: Sequence[UINode]) -> bool:
        """An empty layer (`UINode.is_empty_layer`) drawn over other nodes, not its own parents: a
        change seen through it is in what lies beneath (issue 25: a large app's childless overlay
        FrameLayout over its list took every row's change). An empty box beside its siblings (a
        placeholder in a row) covers nothing and stays a candidate."""
        if not node.is_empty_layer or node.bounds is None:
            return False
        ancestors: set[int] = set()
        parent = self.parents.get(id(node))
        while parent is not None:
            ancestors.add(id(parent))
            parent = self.parents.get(id(parent))
        return any(id(other) not in ancestors and node.bounds.intersects(other.bounds)  # type: ignore[arg-type]
                   for other in beneath)

    def usable(self, node: UINode | None) -> bool:
        if node is None or node.bounds is None or not node.is_container:
            return False
        bounds = node.bounds.clamp(self.screen.width, self.screen.height)
        if bounds.contains(self.screen):
            return False  # the full-screen root says nothing about where the change was
        return bounds.area <= self.config.max_container_fraction * self.screen.area

    def encloses(self, node: UINode, box: Box) -> bool:
        assert node.bounds is not None
        slack_x = max(self.config.snap_tolerance, int(_SNAP_SLACK * box.width))
        slack_y = max(self.config.snap_tolerance, int(_SNAP_SLACK * box.height))
        b = node.bounds
        return (
            b.left - slack_x <= box.left
            and b.top - slack_y <= box.top
            and b.right + slack_x >= box.right
            and b.bottom + slack_y >= box.bottom
        )

    def topmost(self, box: Box) -> UINode | None:
        """The last node in document order (drawn on top) that encloses `box` (`encloses`, its
        slack worked out once for the box rather than once a node: this walk is most of snapping)."""
        if box in self._topmost:  # `element` and `container` both ask it for each changed box
            return self._topmost[box]
        slack_x = max(self.config.snap_tolerance, int(_SNAP_SLACK * box.width))
        slack_y = max(self.config.snap_tolerance, int(_SNAP_SLACK * box.height))
        left, top, right, bottom = box.left + slack_x, box.top + slack_y, box.right - slack_x, box.bottom - slack_y
        found: UINode | None = None
        for node in reversed(self.order):
            b = node.bounds
            assert b is not None
            if b.left <= left and b.top <= top and b.right >= right and b.bottom >= bottom:
                found = node
                break
        self._topmost[box] = found
        return found

    def element(self, box: Box) -> Box:
        """The node the change is in: a leaf (a TextView whose text changed) unless it is a large part
        of the screen, or a container at most `_ELEMENT_GROWTH` times the changed box; else `box`."""
        node = self.topmost(box)
        if node is None or node.bounds is None:
            return box
        bounds = node.bounds.clamp(self.screen.width, self.screen.height)
        if node.children:
            small_enough = bounds.area <= _ELEMENT_GROWTH * max(1, box.area)
        else:
            small_enough = bounds.area <= _LEAF_MAX_FRACTION * self.screen.area
        return bounds.union(box) if small_enough else box

    def container(self, box: Box) -> UINode | None:
        """The smallest usable container enclosing `box` while it is about the size of the change
        (`about_the_size`: at most `OracleConfig.snap_growth` times the union of the changes' parts
        inside it, which spans half of it each way: one change spread over a row's parts is that row;
        a web view's page is a container like any other), or a row whatever the change's size (no taller than
        `OracleConfig.row_max_fraction` of the screen's long side: a changed count, a switch's
        knob or a check mark keeps its row). None: the nearest container is a sheet, a list or a page, which is not the item
        that changed."""
        node = self.topmost(box)
        while node is not None:
            if self.usable(node) or self.leaf_row(node):
                node = self.named(node)
                assert node.bounds is not None
                # what changed inside the node: every change's part that lies in it (a fade-in that
                # spills past a panel's top still covers the panel)
                inside = Box.union_all(cut for other in (box, *self.changes)
                                       if not (cut := other.intersection(node.bounds)).is_empty)
                if self.about_the_size(node.bounds, inside or box):
                    return node
                row = self.config.row_max_fraction * max(self.screen.width, self.screen.height)
                return node if node.bounds.height <= row else None
            node = self.parents.get(id(node))
        return None

    def about_the_size(self, bounds: Box, change: Box) -> bool:
        """Whether a container is the item `change` is: at most `snap_growth` times its area, and the
        change spans a good part (`_COVER`) of it in both dimensions. A wide band across a tall page,
        or a word and a far-off strip inside a web view's page, is not the page (issue 43: a text
        selection in a browser got the whole web view): the page is taken only when the change covers
        a good part of it."""
        bounds = bounds.clamp(self.screen.width, self.screen.height)
        if bounds.area > self.config.snap_growth * max(1, change.area):
            return False
        return change.width >= _COVER * bounds.width and change.height >= _COVER * bounds.height

    def leaf_row(self, node: UINode) -> bool:
        """A list's row that is one view with nothing in it (a ListView of TextViews, Android's
        `simple_list_item_1`): no container, yet the row, the item a change of its text belongs to.
        Android only: an iOS list's rows are cells (containers); a leaf in it is a control of the list."""
        return (node.platform != IOS and not node.children and node.bounds is not None
                and not node.bounds.is_empty and self.list_of(node) is not None)

    def named(self, node: UINode) -> UINode:
        """`node`, or the ancestor of the very same box that has a name when `node` has none: a
        component's inner parts are drawn its size (Material's md-switch, Android's unnamed FrameLayout
        inside a described view), and a region named 'android.view.ViewGroup' says nothing."""
        current = node
        while current.label == current.cls:
            parent = self.parents.get(id(current))
            if parent is None or parent.bounds != current.bounds or not self.usable(parent):
                return node
            current = parent
        return current

    def list_of(self, node: UINode | None) -> UINode | None:
        """The list `node` is a row of, if any."""
        parent = self.parents.get(id(node)) if node is not None else None
        if parent is None or not self.usable(parent):
            return None
        return parent if parent.is_scrollable or any(h in parent.cls for h in _LIST_HINTS) else None


def snap_regions(
    kept: Sequence[tuple[RawRegion, bool]],
    tree: UITree | None,
    screen: Box,
    config: OracleConfig,
) -> list[SnappedRegion]:
    """Snap (raw region, uncertain) pairs; order: most strictly changed pixels first."""
    elements: dict[int, Box] = {}
    if tree is None:
        groups = [_Group(None, [raw], uncertain) for raw, uncertain in kept]
    else:
        snapper = _Snapper(tree, screen, config)
        snapper.changes = [raw.box for raw, _ in kept]
        elements = {id(raw): snapper.element(raw.box) for raw, _ in kept}
        groups = [_Group(snapper.container(raw.box), [raw], uncertain) for raw, uncertain in kept]
        groups = _merge_list_rows(groups, snapper)
        groups = _merge_contained(groups)
    scale2 = config.scale_divisor**2
    result: list[SnappedRegion] = []
    for group in groups:
        raw_box = Box.union_all(r.box for r in group.raws)
        assert raw_box is not None
        strict = sum(r.strict_pixels for r in group.raws)
        fraction = min(1.0, strict * scale2 / float(max(1, raw_box.area)))
        element = Box.union_all(elements[id(r)] for r in group.raws) if elements else None
        if group.node is None or group.node.bounds is None:
            # no container is the item: the raw box grown by a margin (without a tree, the raw box)
            grown = raw_box.expand(config.raw_margin).clamp(screen.width, screen.height) if tree else raw_box
            region = Region(raw_box, grown, None, fraction, element)
        else:
            box = group.node.bounds.clamp(screen.width, screen.height)
            region = Region(raw_box, box, group.node.label, fraction, element)
        result.append(SnappedRegion(region, strict, group.uncertain))
    result.sort(key=lambda s: (-s.strict_pixels, s.region.raw.top, s.region.raw.left))
    return result


def _merge_list_rows(groups: list[_Group], snapper: _Snapper) -> list[_Group]:
    """Groups whose containers are rows (children) of one list become one group of that list, when
    the list is at most `snap_growth` times the union of their changes (a removed row shifting the
    rows below it); else each keeps its row."""
    rows_per_list: dict[int, set[int]] = {}
    changed: dict[int, list[Box]] = {}
    for group in groups:
        parent = snapper.list_of(group.node)
        if parent is not None and group.node is not None:
            rows_per_list.setdefault(id(parent), set()).add(id(group.node))
            changed.setdefault(id(parent), []).extend(r.box for r in group.raws)
    for key, boxes in changed.items():  # the list is the change only while it is about its size
        lists = [g for g in groups if (p := snapper.list_of(g.node)) is not None and id(p) == key]
        parent = snapper.list_of(lists[0].node)
        union = Box.union_all(boxes)
        assert parent is not None and parent.bounds is not None and union is not None
        if parent.bounds.area > snapper.config.snap_growth * max(1, union.area):
            rows_per_list[key] = set()  # separate changes in a few rows of a long list keep their rows
    result: list[_Group] = []
    by_list: dict[int, _Group] = {}
    for group in groups:
        parent = snapper.list_of(group.node)
        if parent is None or len(rows_per_list.get(id(parent), ())) < 2:
            result.append(group)
            continue
        merged = by_list.get(id(parent))
        if merged is None:
            by_list[id(parent)] = merged = _Group(parent, [], True)
            result.append(merged)
        merged.raws.extend(group.raws)
        merged.uncertain = merged.uncertain and group.uncertain
    return result


def _merge_contained(groups: list[_Group]) -> list[_Group]:
    """A group whose box lies inside a snapped group's container joins that group (repeat until stable)."""
    pending = sorted(groups, key=lambda g: -g.box.area)
    result: list[_Group] = []
    for group in pending:
        host = next((h for h in result if h.node is not None and h.box.contains(group.box)), None)
        if host is None:
            result.append(group)
        else:
            host.raws.extend(group.raws)
            host.uncertain = host.uncertain and group.uncertain
    return result


def grow_unstable(boxes: Sequence[Box], tree: UITree | None, factor: float, tolerance: int = 0) -> list[Box]:
    """Replace probe boxes by the smallest tree node holding them if that node is at most
    `factor` times the union of the boxes it holds (a spinner's node, not the text field a
    cursor blinks in)."""
    if tree is None or not boxes:
        return list(boxes)
    nodes = sorted(
        (n.bounds for n in tree.nodes() if n.bounds is not None and not n.bounds.is_empty and n.is_drawn),
        key=lambda b: b.area,
    )
    result: list[Box] = []
    for box in boxes:
        grown = box
        for bounds in nodes:
            reach = bounds.expand(tolerance)
            if not reach.contains(box):
                continue
            inside = Box.union_all(other for other in boxes if reach.contains(other))
            if inside is not None and bounds.area <= factor * max(1, inside.area):
                grown = bounds.union(inside)
            break  # only the smallest enclosing node is a candidate
        result.append(grown)
    return result
