"""Known transient shapes: changes the platform draws on its own, not changes of the app (issue 33).

On real phones the pixels of an action's after-frame hold more than the action's effect: a list's
scrollbar fades in or out at its edge for a second after any touch, a tapped control's ripple may
still be fading, a list dragged past its end glows at that edge, and a text cursor blinks (that
one is `VisualOracle._classify`'s, with the focused field from the tree). Snapping a scrollbar's
12 px strip to its list made the whole list the change (92% of the screen on a real launcher app).
A change of one of these shapes is left out of the regions and named in `Transition.transients`,
so a reader sees what was set aside and why. The rules are about shapes, not apps:
- scrollbar: a thin strip (at most `_BAR_MAX_WIDTH` of the screen's width wide, at least
  `_BAR_MIN_ASPECT` times as tall as wide and `_BAR_MIN_HEIGHT` of the screen tall) hugging the
  right or left edge of a scrollable node that holds it (of the screen without a tree); the same
  shape turned sideways along a bottom edge for a horizontal list.
- overscroll: a band (2-20% of the screen tall) across most of a scrollable node's width at its
  top or bottom edge whose pixels are the before-frame under a translucent layer (`is_overlay`):
  the glow of a list dragged past its end. The list's own rows under it are unchanged, or the
  test fails; a thinner band is a shadow (a toolbar's, a dialog's edge), not a glow.
- ripple: a change covering most of a clickable node (or drawn around one, centred on it and at
  most twice its size: a borderless control's halo, issue 43) whose pixels are the before-frame under a
  weak translucent layer (the fading phase, which fills the control; the expanding circle's edge
  is not a layer and stays a change), while that node and everything in it is the same in the
  before-tree (text, state, enabled, bounds): a tap's ripple or pressed state still fading. A
  highlight the tree does not report looks the same in one frame, so a pair whose only changes
  are ripples or glows is `uncertain`, never `no_change`: the step loop looks again (a faded ripple
  is no change), and never retries on their account. Given the settle poll just before the
  after-frame (`previous`), a layer whose pixels did not move between the two is not fading: a
  highlight that stays, the app's change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_mask import to_small
from pytest_guistate.core.oracle_types import Transient
from pytest_guistate.core.uitree import UINode, UITree

__all__ = ["FADING", "TransientShapes", "is_overlay", "lone_cursor"]

_BAR_MAX_WIDTH = 0.02  # of the screen's width (a 4 dp bar with its 1/2-scale rounding)
_BAR_MIN_ASPECT = 4.0
_BAR_MIN_HEIGHT = 0.03  # of the screen's height: a scroll thumb, not a row's accent stripe
_EDGE = 0.02  # of the screen's width: how far from the list's edge the strip may lie
_LIST_HINTS = ("RecyclerView", "ListView", "ScrollView", "GridView", "WebView", "Table", "CollectionView")
# Material's ripple and pressed-state layers are 10-20% black or white (#1F000000, #33FFFFFF); the
# edge glow at most about a third of its colour. A darker or more opaque layer is not one of them.
_RIPPLE_MAX_ALPHA = 0.3
_GLOW_MAX_ALPHA = 0.35
_GLOW_MIN_WIDTH = 0.6  # of the list's width: the glow spans the list
_GLOW_MAX_HEIGHT = 0.2  # of the screen's height
_GLOW_MIN_HEIGHT = 0.02  # of the screen's height: thinner is a shadow (a toolbar's, a dialog's edge), not a glow
_HALO_REACH = 2.0  # a borderless ripple's circle reaches at most this many times its control's width and height
_RIPPLE_MIN_COVER = 0.5  # of the control's area: a fading ripple fills its control; a thin shadow edge does not
_HOST_MAX_FRACTION = 0.25  # a clickable node larger than this share of the screen is a page, not a control
_CONTROL_MIN = 0.05  # of the screen's short side: the smallest side of a control's layer (18-20 dp)
_BLOCK = 8  # px of the 1/2-scale pixels a layer is checked over (a translucent layer is smooth at this size)
_RESIDUAL = 7.0  # grey levels a block may stray from "before under a layer" (JPEG noise of real screenshots)

_STILL = 1  # grey levels a layer may move between two polls and still stand still (lossless screenshots; rounding)
FADING = ("ripple", "overscroll")  # kinds that fade within a second: alone, they make the verdict `uncertain`


def is_overlay(before: np.ndarray, after: np.ndarray, max_alpha: float) -> bool:
    """Whether `after` is `before` under a translucent layer at most `max_alpha` opaque (a ripple,
    a glow): in every `_BLOCK`-sized block the after-grey is a linear function of the before-grey
    whose gain lies near [1 - max_alpha, 1] (a layer only lowers contrast) with a small residual,
    and no block moved by more than the layer can. New text, an icon or a changed colour of a
    textured area leaves a block no such function fits; a flat area changed by more than the layer
    can is caught by the shift's bound."""
    if before.shape != after.shape or before.size == 0:
        return False
    b = cv2.cvtColor(before, cv2.COLOR_BGR2GRAY).astype(np.float32)
    a = cv2.cvtColor(after, cv2.COLOR_BGR2GRAY).astype(np.float32)
    if float(np.abs(a - b).max()) > max_alpha * 255 + _RESIDUAL:
        return False
    k = _BLOCK
    h, w = (b.shape[0] // k) * k or b.shape[0], (b.shape[1] // k) * k or b.shape[1]
    rows, cols = max(1, b.shape[0] // k), max(1, b.shape[1] // k)
    bb = b[:h, :w].reshape(rows, h // rows, cols, w // cols)
    ab = a[:h, :w].reshape(rows, h // rows, cols, w // cols)
    mean_b, mean_a = bb.mean(axis=(1, 3)), ab.mean(axis=(1, 3))
    var_b = bb.var(axis=(1, 3))
    var_a = ab.var(axis=(1, 3))
    cov = ((bb - mean_b[:, None, :, None]) * (ab - mean_a[:, None, :, None])).mean(axis=(1, 3))
    textured = var_b > 16.0  # std > 4 grey levels: the block has content a layer must keep
    gain = np.where(textured, cov / np.maximum(var_b, 1e-6), 1.0)
    residual = np.where(textured, var_a - cov * gain, var_a)
    fits = np.sqrt(np.maximum(residual, 0.0)) <= _RESIDUAL
    # a layer only lowers contrast; a block across the layer's own edge (the control's bounds) gains a little
    gains = ~textured | ((gain >= 1.0 - max_alpha - 0.05) & (gain <= 1.0 + max_alpha / 2))
    return bool(np.all(fits & gains))


def _channels(image: np.ndarray) -> np.ndarray:
    """`image`'s colour values side by side as a grey image (each pixel's B, G, R in a row), so that
    `is_overlay`'s blocks fit one gain and offset to all three channels."""
    if image.ndim == 2:
        return image
    flat = np.ascontiguousarray(image).reshape(image.shape[0], -1)
    return cv2.merge([flat, flat, flat])


def _halo_of(box: Box, control: Box) -> bool:
    """Whether a change `box` is drawn around `control` as a borderless control's ripple is (an icon
    button's halo, a circle about its centre reaching past its bounds): the box holds the control,
    is centred on it and reaches at most `_HALO_REACH` times its width and height."""
    if not box.contains(control) or box.width > _HALO_REACH * control.width or box.height > _HALO_REACH * control.height:
        return False
    (bx, by), (cx, cy) = box.center, control.center
    return abs(bx - cx) <= 0.25 * control.width and abs(by - cy) <= 0.25 * control.height


def _lists(nodes: Iterable[UINode]) -> list[UINode]:
    """The scrollable nodes (lists, scroll views, web views): where scrollbars and glows are drawn."""
    return [n for n in nodes if n.bounds is not None and not n.bounds.is_empty
            and (n.is_scrollable or any(h in n.cls for h in _LIST_HINTS))]


def _signature(node: UINode) -> tuple[object, ...]:
    """What a ripple must leave alone: the node's shown content and state, and its children's."""
    bounds = tuple(node.bounds.as_list()) if node.bounds is not None else None
    return (node.cls, node.resource_id, node.text, node.content_desc, node.value, bounds, node.checked,
            node.selected, node.enabled, tuple(_signature(c) for c in node.children))


class TransientShapes:
    """The scrollable and clickable nodes of one after-tree, looked up once per compare. `pixels`
    (before and after at 1/`scale`) and `before_tree` let the layer shapes (ripple, overscroll)
    be checked; without them only the scrollbar is."""

    def __init__(self, tree: UITree | None, screen: Box, *,
                 pixels: tuple[np.ndarray, np.ndarray, int] | None = None,
                 before_tree: Callable[[], UITree | None] | None = None,
                 previous: np.ndarray | None = None) -> None:
        self.screen = screen
        self.lists: list[UINode] = []
        self.controls: list[UINode] = []
        if tree is not None:
            nodes = list(tree.nodes())  # one walk of the tree for both lists
            self.lists = _lists(nodes)
            limit = _HOST_MAX_FRACTION * screen.area
            self.controls = [n for n in nodes if n.bounds is not None and not n.bounds.is_empty
                             and (n.clickable or n.long_clickable) and n.bounds.area <= limit]
        self.tree = tree
        self.pixels = pixels
        self.before_tree = before_tree
        self.previous = previous  # a frame just before `after`, no input between: is the layer still moving?
        self._before_nodes: list[UINode] | None = None

    def kind_of(self, box: Box, layers: bool = True) -> Transient | None:
        """The transient `box` is, if its shape is a known one. `layers=False`: the scrollbar only,
        for a change found under a scrim, whose pixels a layer test would judge by the scrim."""
        return self._scrollbar(box) or (self._overscroll(box) or self._ripple(box) if layers else None)

    def _scrollbar(self, box: Box) -> Transient | None:
        screen = self.screen
        thin = _BAR_MAX_WIDTH * screen.width
        edge = _EDGE * screen.width
        vertical = box.width <= thin and box.height >= max(_BAR_MIN_ASPECT * box.width, _BAR_MIN_HEIGHT * screen.height)
        horizontal = box.height <= thin and box.width >= max(_BAR_MIN_ASPECT * box.height, _BAR_MIN_HEIGHT * screen.width)
        if not (vertical or horizontal):
            return None
        hosts: list[tuple[Box, str]] = [(n.bounds, n.label or n.cls) for n in self.lists
                                        if n.bounds is not None and n.bounds.expand(round(edge)).contains(box)]
        if self.tree is None:
            hosts = [(screen, "screen")]
        elif not hosts and not any(w.bounds is not None and w.bounds.intersects(box) for w in self.tree.root.children):
            # a dump of a floating window alone (a popup, a dialog) holds nothing of the screen behind
            # it, whose list's scrollbar still fades after the touch: the before-screen's lists hold it
            hosts = [(n.bounds, n.label or n.cls) for n in self._lists_before()
                     if n.bounds is not None and n.bounds.expand(round(edge)).contains(box)]
        for bounds, name in hosts:
            at_side = abs(box.right - bounds.right) <= edge or abs(box.left - bounds.left) <= edge
            at_bottom = abs(box.bottom - bounds.bottom) <= edge
            if (vertical and at_side) or (horizontal and at_bottom):
                return Transient("scrollbar", box, name)
        return None

    def _lists_before(self) -> list[UINode]:
        return _lists(self._before())

    def _before(self) -> list[UINode]:
        """The before-tree's nodes, read once and only when a rule needs them."""
        if self._before_nodes is None:
            old = self.before_tree() if self.before_tree is not None else None
            self._before_nodes = list(old.nodes()) if old is not None else []
        return self._before_nodes

    def _overscroll(self, box: Box) -> Transient | None:
        height = self.screen.height
        if self.pixels is None or not _GLOW_MIN_HEIGHT * height <= box.height <= _GLOW_MAX_HEIGHT * height:
            return None
        edge = _EDGE * self.screen.width
        for node in self.lists:
            bounds = node.bounds
            assert bounds is not None
            if not bounds.expand(round(edge)).contains(box) or box.width < _GLOW_MIN_WIDTH * bounds.width:
                continue
            at_top, at_bottom = abs(box.top - bounds.top) <= edge, abs(box.bottom - bounds.bottom) <= edge
            if (at_top or at_bottom) and box.height <= 0.5 * bounds.height and self._layer(box, _GLOW_MAX_ALPHA) \
                    and self._fading(box):
                return Transient("overscroll", box, node.label or node.cls)
        return None

    def _ripple(self, box: Box) -> Transient | None:
        if self.pixels is not None and self.tree is None:
            return self._ripple_without_tree(box)
        if self.pixels is None or self.before_tree is None:
            return None
        tolerance = 2 * self.pixels[2]
        hosts = sorted((n for n in self.controls if n.bounds is not None and n.bounds.expand(tolerance).contains(box)),
                       key=lambda n: n.bounds.area if n.bounds is not None else 0)
        if not hosts:  # a borderless control's halo reaches past its bounds: the control it is drawn around
            hosts = sorted((n for n in self.controls if n.bounds is not None and _halo_of(box, n.bounds)),
                           key=lambda n: -(n.bounds.area if n.bounds is not None else 0))
        if not hosts:
            return None
        host = hosts[0]  # the tapped control: the smallest clickable node holding the change (the largest it surrounds)
        assert host.bounds is not None
        if box.intersection(host.bounds).area < _RIPPLE_MIN_COVER * host.bounds.area:
            return None  # a ripple's last frame covers its control: this is something else (a shadow's edge)
        if not self._layer(box, _RIPPLE_MAX_ALPHA) or not self._fading(box) or not self._unchanged(host):
            return None  # new content under the layer, or the control itself changed: the app's change
        return Transient("ripple", box, host.label or host.cls)

    def _ripple_without_tree(self, box: Box) -> Transient | None:
        """No tree names the tapped control (the light tier's call, issue 43): a change no larger than a
        control (`_HOST_MAX_FRACTION` of the screen) whose pixels are what was there under a weak
        translucent grey layer (one gain and offset for every colour channel), still fading, is taken
        for a ripple all the same. It only makes the step `uncertain` (looked at again once settled,
        when a layer that stood still is the app's change), so a tap that did nothing never passes on
        a halo; new content under the layer is no layer."""
        if box.area > _HOST_MAX_FRACTION * self.screen.area \
                or min(box.width, box.height) < _CONTROL_MIN * min(self.screen.width, self.screen.height):
            return None  # larger than a control, or a line (a divider drawn faint is no tap's layer)
        assert self.pixels is not None
        before, after, scale = self.pixels
        x0, y0, x1, y1 = to_small(box, scale, after.shape)
        # fitted over the colour channels together: a grey layer scales every channel alike, a button
        # turning from blue to green (one grey level apart) does not
        if not is_overlay(_channels(before[y0:y1, x0:x1]), _channels(after[y0:y1, x0:x1]), _RIPPLE_MAX_ALPHA) \
                or not self._fading(box):
            return None
        return Transient("ripple", box, "screen")

    def _layer(self, box: Box, max_alpha: float) -> bool:
        assert self.pixels is not None
        before, after, scale = self.pixels
        x0, y0, x1, y1 = to_small(box, scale, after.shape)
        return is_overlay(before[y0:y1, x0:x1], after[y0:y1, x0:x1], max_alpha)

    def _fading(self, box: Box) -> bool:
        """Whether the layer over `box` still moves: without a frame just before the after-frame,
        assumed (it was just drawn); with one, only if its pixels differ from it. A layer that stood
        still between two polls is not fading: a highlight, the app's change."""
        if self.previous is None:
            return True
        assert self.pixels is not None
        _, after, scale = self.pixels
        x0, y0, x1, y1 = to_small(box, scale, after.shape)
        moved = cv2.absdiff(self.previous[y0:y1, x0:x1], after[y0:y1, x0:x1])
        return bool(moved.size) and int(moved.max()) > _STILL

    def _unchanged(self, host: UINode) -> bool:
        """Whether the before-tree holds `host` as it is now, with everything in it."""
        mine = _signature(host)
        return any(_signature(n) == mine for n in self._before() if n.bounds == host.bounds and n.cls == host.cls)


_CURSOR_MIN_ASPECT = 3.0  # a text cursor is at least this many times as tall as wide
_CURSOR_MAX_HEIGHT = 0.07  # of the screen's height: a line of text (a taller bar is a divider, a progress bar)
_CURSOR_MIN_HEIGHT = 0.012  # of the screen's height: a line of small text (a shorter mark is a dot, a tick)
_CURSOR_PLAIN = 45  # |dB| + |dG| + |dR|: how far a pixel of the cursor's place may stray from its colour without it
_CURSOR_INK = 60  # |dB| + |dG| + |dR| from that colour: a pixel of the bar
_CURSOR_ROWS = 0.8  # share of the box's rows the bar must fill (a solid upright stroke, not a glyph)


def lone_cursor(boxes: Sequence[tuple[Box, tuple[int, int, int, int]]], small_before: np.ndarray,
                small_after: np.ndarray, scale: int, max_width: int) -> Box | None:
    """The one change among `boxes` (full-scale box, its 1/`scale` box) that is a text cursor
    blinking, for a compare with no tree to name the focused field (issue 43: the light tier's call
    took a blink for the app's change, passing a tap that did nothing): a solid upright bar at most
    `max_width` wide and a text line tall, on a plain place in the other frame. Two such bars (one
    gone, one come) are a cursor that moved to another field, the action's change: None then."""
    found = [box for box, small in boxes if _cursor_shaped(box, small, small_before, small_after, scale, max_width)]
    return found[0] if len(found) == 1 else None


def _cursor_shaped(box: Box, small: tuple[int, int, int, int], before: np.ndarray, after: np.ndarray, scale: int,
                   max_width: int) -> bool:
    height = before.shape[0] * scale
    tall = max(_CURSOR_MIN_ASPECT * box.width, _CURSOR_MIN_HEIGHT * height)
    if box.width > max_width or not tall <= box.height <= _CURSOR_MAX_HEIGHT * height:
        return False
    x0, y0, x1, y1 = small
    for plain, bar in ((before, after), (after, before)):
        place = plain[y0:y1, x0:x1].astype(np.int32).reshape(-1, plain.shape[2] if plain.ndim == 3 else 1)
        if place.size == 0:
            return False
        colour = np.median(place, axis=0)
        if float(np.abs(place - colour).sum(axis=1).max()) > _CURSOR_PLAIN:
            continue  # something is drawn there in this frame too: not a bar on a plain place
        stroke = bar[y0:y1, x0:x1].astype(np.int32)
        ink = (np.abs(stroke - colour).sum(axis=-1) if stroke.ndim == 3 else np.abs(stroke - colour[0])) > _CURSOR_INK
        if ink.any(axis=1).mean() >= _CURSOR_ROWS and int(ink.any(axis=0).sum()) * scale <= max_width:
            return True
    return False
