"""Learning: a step that acted on a known element adds that element's look to its function.

The patch comes from the *before*-frame (the element as it was when tapped, not the screen it
led to). A patch that looks like a variant already kept only refreshes that variant (access count
and time), so a suite run a thousand times on the same app version keeps one variant, while a
restyle adds a second one (MAGNET §2.3.1: one function, several visual versions).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode
from pytest_guistate.memory.locator import Locator, function_key
from pytest_guistate.memory.match import patch_similarity
from pytest_guistate.memory.store import MemoryStore, NewPatch, PatchEntry

__all__ = ["LearnResult", "crop_bgr", "decode_png", "find_kept", "learn_patch", "node_attrs", "refresh_kept",
           "remember_place"]

_MAX_SCREEN_SHARE = 0.25  # a list or a whole page is not one element's look
_FIND_DIVISOR = 2  # a kept look is compared on the frame's half-size copy (the oracle's)
_PLACES: weakref.WeakKeyDictionary[MemoryStore, dict[int, Box]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class LearnResult:
    entry_id: int | None  # the variant stored or refreshed; None when nothing was learned
    new_variant: bool
    reason: str  # why nothing was learned, or "new variant" / "same as variant N"


def decode_png(png: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"memory patch of {len(png)} bytes is not a decodable PNG")
    return image


def crop_bgr(bgr: np.ndarray, box: Box) -> np.ndarray | None:
    height, width = bgr.shape[:2]
    clipped = box.clamp(width, height)
    if clipped.width < 4 or clipped.height < 4:
        return None
    return bgr[clipped.top:clipped.bottom, clipped.left:clipped.right]


def node_attrs(node: UINode | None) -> dict[str, Any]:
    """What an attribute-only healer (the Healenium-style baseline) would have kept of the element."""
    if node is None:
        return {}
    return {"class": node.cls, "text": node.text, "desc": node.content_desc, "rid": node.resource_id,
            "bounds": node.bounds.as_list() if node.bounds else None, "index_path": node.index_path}


def _node_at(observation: Observation, box: Box) -> UINode | None:
    if observation.tree is None:
        return None
    same = [n for n in observation.tree.nodes() if n.bounds == box]
    return same[-1] if same else None


def learn_patch(
    store: MemoryStore,
    before: Observation,
    element_box: Box,
    *,
    locator: Locator | None,
    function: str | None = None,
    app: str = "",
    app_version: str = "",
    test: str = "",
    step: str = "",
    description: str = "",
    density: float | None = None,
    min_difference: float = 0.12,
) -> LearnResult:
    """Add the element's patch from `before` to its function's entry (or refresh a kept variant)."""
    key = function_key(locator, function)
    app = app or before.package
    if not app:
        return LearnResult(None, False, "no app package known: an entry without its app cannot be ranked")
    frame = before.frame.bgr
    height, width = frame.shape[:2]
    if element_box.area > _MAX_SCREEN_SHARE * width * height:
        return LearnResult(None, False, f"element {element_box.as_list()} covers over a quarter of the screen")
    node = _node_at(before, element_box)
    if before.tree is not None and any(n.password and n.bounds is not None and n.bounds.iou(element_box) > 0
                                       for n in before.tree.nodes()):
        return LearnResult(None, False, "element overlaps a password field: its pixels are never stored")
    patch = crop_bgr(frame, element_box)
    if patch is None:
        return LearnResult(None, False, f"element {element_box.as_list()} is off screen or too small")
    for kept in store.patches(key, app):
        similarity = patch_similarity(patch, decode_png(kept.png))
        if similarity >= 1.0 - min_difference:
            store.touch([kept.id])
            return LearnResult(kept.id, False, f"same as variant {kept.id} ({similarity:.2f})")
    ok, encoded = cv2.imencode(".png", patch)
    if not ok:
        raise ValueError(f"OpenCV could not encode the patch of {key!r} as PNG")
    entry = store.add_patch(NewPatch(
        function=key, app=app, png=encoded.tobytes(), size=(patch.shape[1], patch.shape[0]), screen=(width, height),
        app_version=app_version, description=description or (function or ""), density=density,
        locator=str(locator) if locator else "", test=test, step=step, attrs=node_attrs(node)))
    return LearnResult(entry, True, "new variant")


def remember_place(store: MemoryStore, entry_id: int, box: Box) -> None:
    """Where variant `entry_id` was last seen on screen (this process only): `find_kept` looks
    there first, so refreshing a look that did not move costs one small comparison."""
    _PLACES.setdefault(store, {})[entry_id] = box


def find_kept(store: MemoryStore, before: Observation, key: str, *,
              min_difference: float = 0.12) -> tuple[int, Box] | None:
    """(variant id, box) of a kept variant of `key` that `before` shows unchanged, else None.

    Issue 38: a step that reads no trees knows neither where the tapped element is nor its app
    without asking the driver. When the memory already keeps the element's look, the
    before-frame alone says whether that look is still there: the same pixels at the same
    scale (a screen of the size it was learnt on), compared on the half-size copy the oracle
    diffs (no full decode) with the threshold `learn_patch` uses to call two looks the same:
    first where the look was last seen, else at its best place found at a quarter size.
    """
    frame = before.frame
    width, height = frame.size
    half = frame.small(_FIND_DIVISOR)
    places = _PLACES.setdefault(store, {})
    for kept in store.patches(key):
        if kept.screen != (width, height):
            continue  # another screen size: the look is not at the same scale, learn it with its box
        patch = _half_patch(kept)
        if patch is None:
            continue
        for guess in (places.get(kept.id), None):
            box = _seen_near(half, patch, guess or _coarse_place(half, patch), min_difference)
            if box is not None:
                places[kept.id] = box
                return kept.id, box
    return None


def _half_patch(kept: PatchEntry) -> np.ndarray | None:
    patch = decode_png(kept.png)
    ph, pw = patch.shape[:2]
    size = (pw // _FIND_DIVISOR, ph // _FIND_DIVISOR)
    return cv2.resize(patch, size, interpolation=cv2.INTER_AREA) if min(size) >= 4 else None


def _coarse_place(half: np.ndarray, patch: np.ndarray) -> Box | None:
    """The patch's best place in the half-size frame, searched at half that size (a quarter of the
    screen's), in full-size screen pixels; within a few pixels, `_same_at` settles it."""
    small = cv2.resize(half, (half.shape[1] // 2, half.shape[0] // 2), interpolation=cv2.INTER_AREA)
    template = cv2.resize(patch, (patch.shape[1] // 2, patch.shape[0] // 2), interpolation=cv2.INTER_AREA)
    if min(template.shape[:2]) < 2 or template.shape[0] > small.shape[0] or template.shape[1] > small.shape[1]:
        return None
    _, _, (x, y), _ = cv2.minMaxLoc(cv2.matchTemplate(small, template, cv2.TM_SQDIFF_NORMED))
    scale = 2 * _FIND_DIVISOR
    ph, pw = patch.shape[:2]
    return Box(x * scale, y * scale, x * scale + pw * _FIND_DIVISOR, y * scale + ph * _FIND_DIVISOR)


def _seen_near(half: np.ndarray, patch: np.ndarray, box: Box | None, min_difference: float) -> Box | None:
    """Where the half-size frame shows `patch` (half size) within a few pixels of `box` (screen
    pixels), as a screen box; None when it does not (or `box` is None)."""
    if box is None:
        return None
    ph, pw = patch.shape[:2]
    left, top = box.left // _FIND_DIVISOR, box.top // _FIND_DIVISOR
    pad = 3  # a coarse place is off by up to two half-size pixels
    x0, y0 = max(0, left - pad), max(0, top - pad)
    window = half[y0:min(half.shape[0], top + ph + pad), x0:min(half.shape[1], left + pw + pad)]
    if window.shape[0] < ph or window.shape[1] < pw:
        return None
    _, _, (dx, dy), _ = cv2.minMaxLoc(cv2.matchTemplate(window, patch, cv2.TM_SQDIFF))
    if patch_similarity(window[dy:dy + ph, dx:dx + pw], patch) < 1.0 - min_difference:
        return None
    x, y = (x0 + dx) * _FIND_DIVISOR, (y0 + dy) * _FIND_DIVISOR
    return box if (x, y) == (box.left - box.left % _FIND_DIVISOR, box.top - box.top % _FIND_DIVISOR) else \
        Box(x, y, x + pw * _FIND_DIVISOR, y + ph * _FIND_DIVISOR)


def refresh_kept(store: MemoryStore, before: Observation, key: str) -> LearnResult:
    """Refresh the kept variant `before` still shows (access count and time), storing no pixels:
    the before-frame may show what the step could not check (a password field), so a look that
    is not kept already is never added here."""
    found = find_kept(store, before, key)
    if found is None:
        return LearnResult(None, False, "no kept look of it is in the before-frame")
    store.touch([found[0]])
    return LearnResult(found[0], False, f"same as variant {found[0]} (found in the before-frame)")
