"""What the actor remembers of earlier screens: change crops (default) or whole frames (baseline).

AGMem (seed 001, §3.2): whole-frame memory raised grounding errors (36.1% vs 22.5%); crops of the
changed regions with their container kept the evidence and cost far fewer image tokens. Crops are
downscaled to at most `crop_width` px wide; old whole frames by the same divisor as the current one.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pytest_guistate.core.frame import Frame
from pytest_guistate.llm.prompt import downscale_png, image_block

__all__ = ["CropMemory"]


class CropMemory:
    def __init__(self, crops: int, whole_frames: int, *, crop_width: int = 360, frame_divisor: float = 1.0) -> None:
        self._crops: deque[tuple[int, str, bytes]] = deque(maxlen=max(crops, 0) or 1)
        self._frames: deque[Frame] = deque(maxlen=whole_frames + 1)
        self.crops_enabled = crops > 0
        self.whole_frames = whole_frames
        self.crop_width = crop_width
        self.frame_divisor = frame_divisor

    def add(self, step: int, transition: Any) -> None:
        """Keep the crops of `step`'s transition (not the whole-screen fallback)."""
        if not self.crops_enabled or transition is None:
            return
        for crop in getattr(transition, "crops", [])[:2]:
            if getattr(crop, "region_index", 0) == -1:
                continue
            box = getattr(crop, "box", None)
            where = box.to_bounds() if box is not None else ""
            small, _ = downscale_png(crop.png, 1.0, max_width=self.crop_width)
            self._crops.append((step, where, small))

    def frame(self, frame: Frame) -> None:
        self._frames.append(frame)

    def blocks(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self.crops_enabled and self._crops:
            blocks.append({"type": "text", "text": "<recent_changes>\n" + "\n".join(
                f"step {step}: changed region {where}" for step, where, _ in self._crops) + "\n</recent_changes>"})
            blocks += [image_block(png) for _, _, png in self._crops]
        if self.whole_frames and len(self._frames) > 1:
            older = list(self._frames)[:-1][-self.whole_frames:]
            blocks.append({"type": "text", "text": f"Previous {len(older)} screenshot(s), oldest first:"})
            for frame in older:
                png, _ = downscale_png(frame.png, self.frame_divisor)
                blocks.append(image_block(png))
        return blocks
