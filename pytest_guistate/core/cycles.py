"""The cycle detector (issue 14): screens that repeat while the plan does not advance.

Agents loop in ways naive guards miss: open a menu, close it, open it again (A-B-A-B), or tap a
dead button over and over (A-A-A), each step "succeeding". After every confirmed step the session
hands the after-screen here; a screen is its *fingerprint* — an 8x8 average hash of the frame (the
oracle's downscaled copy, so no extra decode; a ticking clock flips a bit or two, a new screen
dozens) and a signature of the accessibility tree (class, id, text, description of every node
outside the system UI). Since the last milestone, if the last screens follow a period of 1, 2 or
3 (A-A-A, A-B-A-B, A-B-C-A-B-C), that is a loop: an EXCEPTION anchor (`kind: cycle`, the steps
and the loop's screens), a warning the LLM actor sees in its next prompt, and once the loop has
run `limit` steps with no milestone, `CycleDetected` (a `StepFailed`) with the loop's frames.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_guistate.core.errors import StepFailed
from pytest_guistate.core.frame import FrameError
from pytest_guistate.core.records import stored_names

if TYPE_CHECKING:
    from pytest_guistate.core.anchors import AnchorPlacer
    from pytest_guistate.core.observation import Observation
    from pytest_guistate.core.records import ArtifactSink, StepRecord
    from pytest_guistate.core.steploop import Verification

__all__ = ["CycleDetected", "CycleGuard", "ScreenKey", "find_cycle", "screen_key"]

DEFAULT_LIMIT = 8  # steps in a loop with no milestone before the test fails; 0 = never fail
_MAX_BITS = 6  # hash bits two looks of one screen may differ by (clock, cursor, spinner)
_PERIODS = (1, 2, 3)
_SYSTEM_UI = "com.android.systemui"


class CycleDetected(StepFailed):
    """The screens went round in a loop for `limit` steps without a milestone."""


@dataclass(frozen=True)
class ScreenKey:
    """What makes two looks "the same screen": a perceptual hash and a tree signature."""

    phash: int
    tree: str

    def same(self, other: ScreenKey) -> bool:
        return self.tree == other.tree and (self.phash ^ other.phash).bit_count() <= _MAX_BITS


def screen_key(observation: Observation, scale_divisor: int = 4) -> ScreenKey:
    phash = observation.frame.block_hash(scale_divisor)
    digest = hashlib.blake2b(digest_size=12)
    tree = observation.tree
    for node in tree.nodes() if tree is not None else ():
        if node.package != _SYSTEM_UI:
            digest.update(f"{node.cls}|{node.resource_id}|{node.text}|{node.content_desc}|{node.checked}\n".encode())
    return ScreenKey(phash, digest.hexdigest())


def find_cycle(keys: list[ScreenKey]) -> tuple[int, int] | None:
    """(period, how many trailing screens are in the loop), or None: the shortest period whose
    repetition covers at least max(3, 2*period) trailing screens."""
    for period in _PERIODS:
        if len(keys) < max(3, 2 * period):
            break
        length = period
        while length < len(keys) and keys[-length - 1].same(keys[-length - 1 + period]):
            length += 1
        distinct = period == 1 or not all(keys[-1 - i].same(keys[-1]) for i in range(period))
        if distinct and length >= max(3, 2 * period):
            return period, length
    return None


@dataclass
class CycleGuard:
    """Per-session loop watch: the screens since the last milestone and the current episode."""

    limit: int = DEFAULT_LIMIT
    limit_setting: str = "ini guistate_cycle_limit"  # where the limit was set, named in the failure
    window: int = 24  # screens kept since the last milestone
    warning: str = ""  # for the LLM actor's prompt while a loop is on
    _keys: list[ScreenKey] = field(default_factory=list)
    _steps: list[int] = field(default_factory=list)
    _pngs: list[tuple[int, bytes]] = field(default_factory=list)  # the last 3 after-frames (PNG bytes only)
    _progress: int = -1
    _anchored: bool = False

    def after_step(self, record: StepRecord, verification: Verification | None, *, milestones_done: int,
                   steps: Sequence[StepRecord], journal: AnchorPlacer, artifacts: ArtifactSink,
                   scale_divisor: int = 4) -> None:
        """Feed one confirmed step of a tier that compares frames; anchors a new loop through
        `journal`, raises `CycleDetected` past the limit. `milestones_done` tells the plan advanced;
        `steps` and `artifacts` name the loop's screens (a step's crop, else a kept after-frame)."""
        if verification is None:
            return
        if milestones_done != self._progress:  # the plan advanced: whatever came before is no loop
            self._progress, self._keys, self._steps, self._pngs = milestones_done, [], [], []
            self._anchored, self.warning = False, ""
        if not record.reads_trees and not verification.after.tree_fetched:
            # light, no check: no page source is read for this screen (tiers.py), and pixels alone would
            # call similar-looking screens a loop; an unread screen breaks the chain instead
            self._keys, self._steps, self._pngs = [], [], []
            self._anchored, self.warning = False, ""
            return
        try:
            key = screen_key(verification.after, scale_divisor)
        except (FrameError, AttributeError):
            return
        self._keys = [*self._keys, key][-self.window:]
        self._steps = [*self._steps, record.index][-self.window:]
        self._pngs = [*self._pngs, (record.index, verification.after.frame.png)][-max(_PERIODS):]
        found = find_cycle(self._keys)
        if found is None:
            self._anchored, self.warning = False, ""
            return
        period, length = found
        loop_steps = self._steps[-length:]
        shape = "-".join("ABC"[i % period] for i in range(length))
        self.warning = (f"You are going in circles: steps {loop_steps[0]}-{loop_steps[-1]} showed the screens {shape} "
                        "without completing a milestone. Do something different, or finish with done(success=false).")
        if not self._anchored:
            self._anchored = True
            crops = self._loop_frames(steps, artifacts, period)
            journal.exception(f"cycle: screens {shape} repeat", record, app=verification.after.package, crops=crops,
                              detail=f"steps {loop_steps} repeat with period {period} while the plan does not advance",
                              data={"kind": "cycle", "period": period, "steps": loop_steps, "failed": False})
        if self.limit and length >= self.limit:
            crops = self._loop_frames(steps, artifacts, period)
            message = (f"step {record.index} {record.name!r}: the screens went round in a loop ({shape}, period "
                       f"{period}) over steps {loop_steps[0]}-{loop_steps[-1]} with no milestone reached (limit "
                       f"{self.limit} steps, {self.limit_setting}); the loop's screens: "
                       f"{', '.join(stored_names(artifacts, crops)) or '(not kept)'}")
            journal.exception(f"loop of {length} steps: test failed", record, crops=crops, detail=message,
                              data={"kind": "cycle", "period": period, "steps": loop_steps, "failed": True})
            raise CycleDetected(message, record)

    def _loop_frames(self, steps: Sequence[StepRecord], artifacts: ArtifactSink, period: int) -> list[str]:
        """The loop's screens, one per step of the last period: the step's first crop (already written
        with its step), else its after-frame (kept under `extra/`)."""
        records = {step.index: step for step in steps}
        names: list[str] = []
        for index, png in self._pngs[-period:]:
            crops = records[index].crops if index in records else []
            names.append(crops[0] if crops else artifacts.put(f"step{index:03d}-cycle", png))
        return names
