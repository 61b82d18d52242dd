"""Healing a text field by its role and frame when its placeholder was rewritten.

The looks-based search (`match.py`) reduces a patch to its label: right for a button, whose word
*is* its identity, wrong for a text field, whose placeholder is copy that a redesign rewrites
("Search products" -> "What are you looking for?") while the field stays the same input. What
identifies a field is structural: it is the editable node of the screen, in about the same place
and size, drawn with the same frame. So when the looks fail and the remembered element was an
EditText/TextField of this app, a heal may land on the current screen's editable node only if
all of these hold:

* role: it is the *only* reachable text input on screen (password fields count; two inputs are
  ambiguous, and an instance named by the locator must show next to it like any heal);
* place: its centre is within `max_shift` of the remembered centre (fractions of the screen) and
  its width and height within `max_resize` of the remembered ones, relative to the screen;
* frame: the text-free outline of the remembered patch (the label blanked to the fill) correlates
  with the candidate's at `threshold` or more as blurred edge maps at a common size. Elements with
  no frame of their own (a bare icon, an unbordered input) have no outline and never heal here.

The caller still accepts the heal only when the step's effect appears (`verify.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.memory.learn import crop_bgr, decode_png
from pytest_guistate.memory.match import content_box, edge_map
from pytest_guistate.memory.regions import Target, editable_nodes, is_editable
from pytest_guistate.memory.store import PatchEntry

__all__ = ["RoleMatch", "RolePolicy", "heal_by_role", "outline_map", "outline_similarity"]

_OUTLINE_SIZE = (128, 32)  # common size of outline maps (width, height): fields are wide and low
_MIN_OUTLINE_STD = 1.0  # edge-map spread below this (grey levels) is a flat patch: no frame to compare


@dataclass(frozen=True)
class RolePolicy:
    """`threshold`: outline correlation (sim: the restyled search field 0.97-0.99, buttons and pills
    0.09-0.21). `max_shift`/`max_resize`: how far a restyle may move or resize the field."""

    enabled: bool = True
    threshold: float = 0.8
    max_shift: float = 0.12
    max_resize: float = 1.5


@dataclass(frozen=True)
class RoleMatch:
    """A role heal's outcome: `target` is set only when every cue agreed."""

    target: Target | None
    entry: PatchEntry | None
    reason: str
    status: str = "no_match"  # no_match | ambiguous (only meaningful without a target)
    score: float = 0.0


def outline_map(bgr: np.ndarray) -> np.ndarray | None:
    """The element's frame without its label, as a blurred edge map at `_OUTLINE_SIZE` (None: no frame).

    The label/glyph area (`content_box`) is painted with the element's fill so only the outline,
    corners and fill boundary are left; edges are thickened before shrinking so a 1-px stroke
    survives the resize.
    """
    h, w = bgr.shape[:2]
    if h < 4 or w < 4:
        return None
    x0, y0, x1, y1 = content_box(bgr)
    blank = bgr.copy()
    if (x0, y0, x1, y1) != (0, 0, w, h):
        blank[y0:y1, x0:x1] = _fill(bgr, (x0, y0, x1, y1))
    grey = cv2.copyMakeBorder(cv2.cvtColor(blank, cv2.COLOR_BGR2GRAY), 2, 2, 2, 2, cv2.BORDER_REPLICATE)
    edges = cv2.dilate(edge_map(grey), np.ones((3, 3), np.uint8))
    small = cv2.resize(edges, _OUTLINE_SIZE, interpolation=cv2.INTER_AREA)
    return small if float(small.std()) >= _MIN_OUTLINE_STD else None


def _fill(bgr: np.ndarray, label: tuple[int, int, int, int]) -> np.ndarray:
    """The element's fill: the median colour inside its border but outside its label (the border
    ring's median when the label leaves nothing else)."""
    h, w = bgr.shape[:2]
    inset = max(2, round(0.12 * min(h, w)))
    inside = np.zeros((h, w), dtype=bool)
    inside[inset:h - inset, inset:w - inset] = True
    x0, y0, x1, y1 = label
    inside[y0:y1, x0:x1] = False
    if inside.sum() < 8:
        inside[:] = True
        inside[inset:h - inset, inset:w - inset] = False
    return np.asarray(np.median(bgr[inside], axis=0), dtype=np.uint8)


def outline_similarity(a_bgr: np.ndarray, b_bgr: np.ndarray) -> float:
    """Correlation of two elements' text-free outlines in [-1, 1]; 0.0 when either has no frame."""
    a, b = outline_map(a_bgr), outline_map(b_bgr)
    if a is None or b is None:
        return 0.0
    return float(cv2.matchTemplate(a, b, cv2.TM_CCOEFF_NORMED)[0, 0])


def _remembered_box(entry: PatchEntry) -> Box | None:
    bounds = entry.attrs.get("bounds")
    if not isinstance(bounds, list) or len(bounds) != 4:
        return None
    return Box(*(int(v) for v in bounds))


def _placed_alike(then: Box, then_screen: tuple[int, int], now: Box, now_screen: tuple[int, int],
                  policy: RolePolicy) -> bool:
    """Same place and size relative to the screen, within the policy's restyle tolerance."""
    (tw, th), (nw, nh) = then_screen, now_screen
    if min(tw, th, nw, nh) <= 0 or then.is_empty or now.is_empty:
        return False
    (tx, ty), (nx, ny) = then.center, now.center
    if abs(tx / tw - nx / nw) > policy.max_shift or abs(ty / th - ny / nh) > policy.max_shift:
        return False
    width_ratio = (now.width / nw) / (then.width / tw)
    height_ratio = (now.height / nh) / (then.height / th)
    return all(1 / policy.max_resize <= r <= policy.max_resize for r in (width_ratio, height_ratio))


def heal_by_role(entries: Sequence[PatchEntry], observation: Observation, app: str,
                 policy: RolePolicy = RolePolicy()) -> RoleMatch:
    """The screen's one text input, when a remembered field of `app` agrees on place and frame."""
    fields = [e for e in entries if e.app == app and is_editable(str(e.attrs.get("class", "")))]
    if not policy.enabled or not fields:
        return RoleMatch(None, None, "not a remembered text field of this app")
    if observation.tree is None:
        return RoleMatch(None, fields[0], "no UI tree: the field's role cannot be checked")
    inputs = editable_nodes(observation.tree, observation.frame.size)
    if not inputs:
        return RoleMatch(None, fields[0], "no text input on screen")
    if len(inputs) > 1:
        return RoleMatch(None, fields[0], f"{len(inputs)} text inputs on screen: the role does not say which",
                         status="ambiguous")
    node = inputs[0]
    assert node.bounds is not None
    crop = crop_bgr(observation.frame.bgr, node.bounds)
    if crop is None:
        return RoleMatch(None, fields[0], "the screen's text input is off screen or too small")
    best: tuple[float, PatchEntry | None] = (0.0, None)
    for field in fields:
        then = _remembered_box(field)
        if then is None or not _placed_alike(then, field.screen, node.bounds, observation.frame.size, policy):
            continue
        similarity = outline_similarity(decode_png(field.png), crop)
        if similarity > best[0]:
            best = (similarity, field)
    score, entry = best
    if entry is None:
        return RoleMatch(None, fields[0], "the screen's text input is not where the field was (moved or resized)")
    if score < policy.threshold:
        return RoleMatch(None, entry, f"the screen's text input has another frame (outline {score:.2f} < "
                         f"{policy.threshold})", score=score)
    return RoleMatch(Target(node.bounds, score, node), entry, f"the only text input, same place and frame "
                     f"as variant {entry.id} (outline {score:.2f})", score=score)
