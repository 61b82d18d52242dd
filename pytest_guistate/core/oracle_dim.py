"""Global dim / undim: a modal's scrim darkens the whole screen, and closing it brightens it again.

Issue 15: closing a dimmed dialog changed every pixel, so the one region (and its crop) became the
whole list. A scrim is a uniform gain on the screen behind it (alpha-blending with black multiplies
every colour by the same factor), so when the change covers most of the screen and the changed
pixels share one brightness ratio, the oracle divides that gain out of the before-frame and looks
again: what still differs is the real change (a removed row). The dialog itself is taken from the
tree where it exists - the before-tree when it vanished, the after-tree when it appeared - and
becomes its own region, snapped to the dialog's container, instead of the whole frame.

Issue 33: an open navigation drawer is such an overlay too (its scrim dims the content beside it),
and a dump holding only a floating window (a real phone's dump of a dialog) names that window.

Issue 23: a web app whose `role="dialog"` element is the full-screen dim layer itself gave the
whole frame again. A dialog node that covers the screen is a layer, not the box a reader needs:
its content child is (the largest child, descended while it still covers the screen), and with no
such child the dialog is where the pixels do not follow the scrim's gain (the undimmed area).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.uitree import UINode, UITree

__all__ = ["DIM_FRACTION", "Overlay", "compensate", "dim_gain", "find_overlay", "floating_window"]

DIM_FRACTION = 0.5  # a change covering at least this much of the screen may be a dim / undim
_MIN_GAIN_STEP = 0.15  # |log gain| below log(1.15) is no scrim (a theme tint, a fade)
_MAX_GAIN = 8.0  # a scrim passes at least 1/8 of the light behind it; black turned white (a page
# loading in a web view: a "gain" of 256) is a repaint, not an undim (issue 43)
_UNIFORM = 0.7  # share of changed pixels that must follow the one gain
_RATIO_SPREAD = 0.2  # how far a pixel's ratio may stray from the gain and still follow it
_GAIN_SAMPLES = 1 << 15  # changed pixels the gain is read from (an even sample of them)
_DIALOG_HINTS = ("Dialog", "AlertDialog", "BottomSheet", "PopupWindow")
_DIALOG_IDS = (":id/parentPanel", ":id/dialog", "dialog")
_DIALOG_HINT = re.compile("|".join(map(re.escape, _DIALOG_HINTS)))  # a class holding any hint, in one scan
_LAYER = 0.8  # a dialog node covering this much of the screen is a dim layer, not the dialog's box


@dataclass(frozen=True)
class Overlay:
    """A dialog that appeared or vanished between the two frames."""

    node: UINode
    change: str  # "appeared" | "vanished"
    content: UINode | None = None  # the dialog's box when `node` is a full-screen layer; None: not in the tree
    layer: bool = False  # `node` covers the screen (a scrim with role="dialog")

    @property
    def box(self) -> Box:
        """The dialog's box: the node's own, its content child's when it is a layer (a layer
        without content in the tree keeps the layer's bounds; the oracle looks at pixels then)."""
        node = self.content if self.content is not None else self.node
        assert node.bounds is not None
        return node.bounds

    @property
    def label(self) -> str:
        title = next((n.text for n in self.node.walk() if n.text), "") or self.node.label
        return f"dialog {title!r} {self.change}"


def floating_window(tree: UITree | None, screen: Box | None) -> UINode | None:
    """The top-level window of a dump that holds only a floating window (a dialog, a dialog-styled
    activity, a popup: its one window covers less than `_LAYER` of the screen), else None."""
    if tree is None or screen is None:
        return None
    windows = [c for c in tree.root.children if c.bounds is not None and not c.bounds.is_empty]
    if tree.root.bounds is not None and not tree.root.bounds.is_empty and not windows:
        windows = [tree.root]
    if len(windows) != 1:
        return None
    assert windows[0].bounds is not None
    return windows[0] if windows[0].bounds.intersection(screen).area < _LAYER * screen.area else None


def _drawers(tree: UITree) -> list[UINode]:
    """Open navigation drawers: a DrawerLayout draws its content first and each open drawer after it,
    over the content and its scrim (a panel narrower than the layout)."""
    out: list[UINode] = []
    for layout in tree.nodes():
        if "DrawerLayout" not in layout.cls or layout.bounds is None:
            continue
        for child in layout.children[1:]:
            if child.bounds is not None and child.children and child.bounds.width < 0.9 * layout.bounds.width \
                    and child.bounds.area >= 0.2 * layout.bounds.area:
                out.append(child)
    return out


def _dialogs(tree: UITree | None, screen: Box | None = None) -> list[UINode]:
    if tree is None:
        return []
    found = [n for n in tree.nodes() if n.bounds is not None and not n.bounds.is_empty
             and (_DIALOG_HINT.search(n.cls) is not None or n.resource_id.endswith(_DIALOG_IDS))]
    found += _drawers(tree)
    window = floating_window(tree, screen)
    return found if window is None or any(n is window for n in found) else [window, *found]


def _key(node: UINode) -> tuple[str, str, tuple[int, int, int, int] | None]:
    b = node.bounds
    return node.cls, node.resource_id, (b.left, b.top, b.right, b.bottom) if b else None


def _content(node: UINode, screen: Box) -> tuple[bool, UINode | None]:
    """(is `node` a full-screen layer, the content child that is the dialog's box). Descends into
    the largest drawn child while it still covers the screen; None when no child is smaller."""
    assert node.bounds is not None
    if node.bounds.area < _LAYER * screen.area:
        return False, None
    current = node
    while True:
        kids = [c for c in current.children if c.bounds is not None and not c.bounds.is_empty]
        if not kids:
            return True, None
        biggest = max(kids, key=lambda c: c.bounds.area if c.bounds else 0)
        assert biggest.bounds is not None
        if biggest.bounds.area < _LAYER * screen.area:
            return True, biggest
        current = biggest


def find_overlay(before: UITree | None, after: UITree | None, screen: Box | None = None) -> Overlay | None:
    """The outermost dialog in exactly one of the two trees (vanished first: closing is the common
    case); with `screen`, a dialog node that is a full-screen layer names its content child, and a
    dump holding only a floating window (`floating_window`) counts that window as a dialog."""
    old, new = _dialogs(before, screen), _dialogs(after, screen)  # each tree walked once, not once a direction
    for source, other, change in ((old, new, "vanished"), (new, old, "appeared")):
        others = {_key(n) for n in other}
        lonely = [n for n in source if _key(n) not in others]
        if lonely:
            node = max(lonely, key=lambda n: n.bounds.area if n.bounds else 0)
            if screen is None:
                return Overlay(node, change)
            layer, content = _content(node, screen)
            return Overlay(node, change, content, layer)
    return None


_GREY = np.array([0.114, 0.587, 0.299], dtype=np.float32)  # BGR weights of OpenCV's BGR2GRAY


def _grey_at(pixels: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Grey levels (float) of the pixels at flat `positions`: only the sampled pixels are converted."""
    if pixels.ndim == 2:
        return np.asarray(np.take(pixels.reshape(-1), positions), dtype=np.float32)
    rows = np.take(pixels.reshape(-1, pixels.shape[2]), positions, axis=0)  # ~2x a fancy index's gather
    return np.asarray(rows[:, :3].astype(np.float32) @ _GREY)


def _changed_sample(strict: np.ndarray, exclude: tuple[int, int, int, int] | None) -> np.ndarray | None:
    """Flat positions of an even sample of the changed pixels outside `exclude` (about
    `_GAIN_SAMPLES`), or None when fewer than 64 pixels changed there. Positions on an even grid
    are tested first, so a screen-wide change costs a fraction of the frame; a sparse change that
    the grid misses is listed in full."""
    count = cv2.countNonZero(strict)
    if exclude is not None:
        x0, y0, x1, y1 = exclude
        count -= cv2.countNonZero(strict[y0:y1, x0:x1]) if x1 > x0 and y1 > y0 else 0
    if count < 64:
        return None
    flat = strict.reshape(-1)
    step = max(1, flat.size // (4 * _GAIN_SAMPLES))
    dense = np.count_nonzero(flat[::step]) < _GAIN_SAMPLES // 8  # the grid misses a sparse change: list it all
    if exclude is not None:  # its positions dropped: zeroed in a copy (~0.1 ms), not tested one by one (~1 ms)
        x0, y0, x1, y1 = exclude
        outside = strict.copy()
        outside[y0:y1, x0:x1] = 0
        flat = outside.reshape(-1)
    # the grid's changed positions, no gather
    positions = np.flatnonzero(flat) if dense else np.flatnonzero(flat[::step]).astype(np.int64) * step
    return positions[:: -(-positions.size // _GAIN_SAMPLES)] if positions.size else None


def dim_gain(small_before: np.ndarray, small_after: np.ndarray, strict: np.ndarray,
             exclude: tuple[int, int, int, int] | None = None) -> float | None:
    """The one brightness ratio after/before the changed pixels share (outside `exclude`, the dialog,
    at reduced scale), or None when the change is not a uniform dim / undim. A scrim changes most of
    the screen, so the ratio is read from an even sample of about `_GAIN_SAMPLES` changed pixels
    (`_changed_sample`): the median and the share that follows it are the same to well under 1%, and
    the full count cost ~6 ms of a ~25 ms dimmed step on a phone-sized frame."""
    changed = _changed_sample(strict, exclude)
    if changed is None:
        return None
    ratio = (_grey_at(small_after, changed) + 1.0) / (_grey_at(small_before, changed) + 1.0)
    gain = float(np.median(ratio))
    if not np.log1p(_MIN_GAIN_STEP) <= abs(np.log(gain)) <= np.log(_MAX_GAIN):
        return None
    following = np.abs(ratio / gain - 1.0) <= _RATIO_SPREAD
    return gain if float(following.mean()) >= _UNIFORM else None


def compensate(small: np.ndarray, gain: float) -> np.ndarray:
    """A frame as it would look under `gain` times its brightness (the other frame's): each level
    times `gain`, rounded and clipped, through a 256-entry table (a float copy of the frame cost ~13 ms)."""
    levels = np.arange(256, dtype=np.float32) * np.float32(gain)
    table = np.asarray(np.clip(levels + 0.5, 0, 255), dtype=np.uint8)
    return np.asarray(cv2.LUT(small, table))
