"""The one place artifact names are made: the name a record, an anchor, the terminal section and
Allure use IS the file's path inside the test's artifact folder (issue 15: the terminal said
`step004-crop0.png` while the file on disk was `crops/step-0004-r0.png`).

Crops: `crops/step-0004-r0.png` (region 0 of step 4), its before-crop `crops/step-0004-r0-before.png`,
labelled crops (the healer's) `crops/step-0004-heal-matched.png`. Frames are stored content-addressed
(`frames/<digest>.jpg`, a reused frame is one file), so a frame's name (`step-0004-after`) is only a
handle; the journal's `files` says where it went.
"""

from __future__ import annotations

import re

__all__ = ["CROPS_DIR", "before_crop_name", "crop_name", "crop_region", "crop_step", "frame_name"]

CROPS_DIR = "crops"
_REGION = re.compile(r"^crops/step-\d{4,}-r(\d+)\.png$")
_STEP = re.compile(r"^crops/step-(\d{4,})-")


def crop_name(step: int, region: int | None = None, *, label: str = "") -> str:
    """`crops/step-0004-r0.png` for region 0 of step 4; `label=` names a crop that is not a region."""
    if step < 0 or (region is not None and region < 0):
        raise ValueError(f"crop_name needs step >= 0 and region >= 0, got step={step}, region={region}")
    if (region is None) == (not label):
        raise ValueError("crop_name takes a region number or a label, exactly one")
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)[:60]
    return f"{CROPS_DIR}/step-{step:04d}-" + (f"r{region}" if region is not None else safe) + ".png"


def crop_region(name: str) -> int | None:
    """The region number of a `crop_name(step, region)` name; None for any other name."""
    match = _REGION.match(name)
    return int(match.group(1)) if match else None


def crop_step(name: str) -> int | None:
    """The step number of any `crop_name` name (region or labelled); None for any other name."""
    match = _STEP.match(name)
    return int(match.group(1)) if match else None


def before_crop_name(crop: str) -> str:
    """The same box cut from the before-frame: `crops/step-0004-r0-before.png`."""
    if not crop.endswith(".png"):
        raise ValueError(f"not a crop name: {crop!r}")
    return crop[: -len(".png")] + "-before.png"


def frame_name(step: int, role: str) -> str:
    """The handle of a step's whole frame (`step-0004-before.png`); stored under frames/ by content."""
    return f"step-{step:04d}-{role}.png"
