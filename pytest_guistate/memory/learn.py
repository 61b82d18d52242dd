"""Learning: a step that acted on a known element adds that element's look to its function.

The patch comes from the *before*-frame (the element as it was when tapped, not the screen it
led to). A patch that looks like a variant already kept only refreshes that variant (access count
and time), so a suite run a thousand times on the same app version keeps one variant, while a
restyle adds a second one (MAGNET §2.3.1: one function, several visual versions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation
from pytest_guistate.core.uitree import UINode
from pytest_guistate.memory.locator import Locator, function_key
from pytest_guistate.memory.match import patch_similarity
from pytest_guistate.memory.store import MemoryStore, NewPatch

__all__ = ["LearnResult", "crop_bgr", "decode_png", "learn_patch", "node_attrs"]

_MAX_SCREEN_SHARE = 0.25  # a list or a whole page is not one element's look


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
