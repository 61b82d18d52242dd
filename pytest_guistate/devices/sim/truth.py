"""Ground truth for the visual oracle: which parts of the screen *semantically* changed.

Computed from two `SimNode` trees (before the last action, now), never from pixels, so it can
score a pixel oracle. A node that appeared, disappeared, moved or changed text/state yields its
box (both boxes if it moved); boxes inside another changed box are dropped; boxes that touch or
nearly touch are merged, so a dialog gives one box and a list whose rows shifted gives one band.
The status bar (package `com.android.systemui`) is left out: its clock ticking is noise.
"""

from __future__ import annotations

from typing import Any

from pytest_guistate.core.geometry import Box
from pytest_guistate.devices.sim.model import SimNode

__all__ = ["Snapshot", "changed_regions", "merge_boxes", "snapshot"]

NOISE_PACKAGES = frozenset({"com.android.systemui"})
Snapshot = dict[str, tuple[Box, tuple[Any, ...]]]


def snapshot(root: SimNode) -> Snapshot:
    """key -> (bounds, semantic state) for every node outside the status bar."""
    out: Snapshot = {}
    for node in root.walk():
        if node.package in NOISE_PACKAGES or node.cls == "hierarchy" or node.bounds.is_empty:
            continue
        state = (node.cls, node.text, node.content_desc, node.checked, node.selected, node.enabled, node.focused,
                 node.displayed)
        out[node.key] = (node.bounds, state)
    return out


def changed_regions(before: Snapshot, after: Snapshot, gap: int) -> list[Box]:
    boxes: list[Box] = []
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old is None and new is not None:
            boxes.append(new[0])
        elif new is None and old is not None:
            boxes.append(old[0])
        elif old is not None and new is not None and old != new:
            boxes.append(new[0])
            if old[0] != new[0]:
                boxes.append(old[0])
    return merge_boxes(boxes, gap)


def merge_boxes(boxes: list[Box], gap: int) -> list[Box]:
    """Drop contained boxes, then union boxes closer than `gap` until nothing changes."""
    pending = sorted(set(boxes), key=lambda b: (-b.area, b.top, b.left))
    kept: list[Box] = []
    for box in pending:
        if not any(k.contains(box) for k in kept):
            kept.append(box)
    merged = True
    while merged:
        merged = False
        for i in range(len(kept)):
            for j in range(i + 1, len(kept)):
                if kept[i].expand(gap).intersects(kept[j]):
                    kept[i] = kept[i].union(kept[j])
                    del kept[j]
                    merged = True
                    break
            if merged:
                break
    return sorted(kept, key=lambda b: (b.top, b.left))
