"""The tree-free work of one frame pair, kept so it can be done ahead of the compare (issue 42).

At standard and full the after-screen's page source is read after its screenshot (~25 ms on a real
Appium + Chromium stack), and the oracle needed that tree before its first mask: the ignore regions
(status bars, a steady keyboard) come from it, and so does the dialog a scrim's gain is read around.
Yet most of the compare's time is pixels: the change masks (~2 ms a phone frame) and, on a dimmed
or undimmed screen, the gain and the masks again on the compensated frames (~4 ms). `PixelWork`
computes those for given inputs and keeps them by those inputs. The step loop starts one on the
judge thread with the inputs the before-tree predicts while the page source is read; the compare
then asks for the inputs the real tree gives, finding the result done when the prediction held and
computing it as before when not. What a compare returns does not depend on whether its pixels were
computed ahead: the keys are the exact inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle_dim import compensate, dim_gain
from pytest_guistate.core.oracle_mask import ChangeMasks, Differences, RawRegion, differences, find_regions, masked
from pytest_guistate.core.oracle_types import OracleConfig

__all__ = ["Dimmed", "PixelWork"]

_Key = tuple[Box, ...]


@dataclass(frozen=True)
class Dimmed:
    """A dim / undim's pixels: the gain read around `exclude`, and what still differs once it is
    divided out (None, no regions: the change is no uniform dim)."""

    gain: float | None
    residual: ChangeMasks | None
    found: tuple[RawRegion, ...]


class PixelWork:
    """Masks, regions and dim results of one (before, after) pair, each computed once per inputs.
    Not thread-safe: one thread at a time (the judge thread runs the work ahead and the compare
    after it, in order)."""

    def __init__(self, before: Frame, after: Frame, config: OracleConfig) -> None:
        self.before = before
        self.after = after
        self.config = config
        self._masks: dict[_Key, ChangeMasks] = {}
        self._regions: dict[_Key, list[RawRegion]] = {}
        self._dimmed: dict[tuple[_Key, tuple[int, int, int, int] | None, _Key], Dimmed] = {}
        self._gains: dict[tuple[_Key, tuple[int, int, int, int] | None], float | None] = {}
        self._differences_at: dict[float, Differences] = {}  # by the gain divided out
        self.wanted = False  # the compare is waiting: guesses not started yet are not worth starting

    def want(self) -> None:
        """The compare's inputs are known (its tree was read): the work ahead stops guessing (it
        runs on the thread the compare is queued on, so a guess made now would only delay it)."""
        self.wanted = True

    def serves(self, before: Frame, after: Frame) -> bool:
        """Whether this work is of exactly these two frames (not merely equal bytes: the step loop
        hands it to the compare of the pair it was started for)."""
        return before is self.before and after is self.after

    def masks(self, ignored: Sequence[Box]) -> ChangeMasks:
        key = tuple(ignored)
        masks = self._masks.get(key)
        if masks is None:
            masks = masked(self._differences(1.0), self.config, self.after.size, key)
            self._masks[key] = masks
        return masks

    def regions(self, ignored: Sequence[Box]) -> list[RawRegion]:
        """`find_regions` of `masks(ignored)`; the list is the caller's to keep, not to change."""
        key = tuple(ignored)
        found = self._regions.get(key)
        if found is None:
            found = find_regions(self.masks(key), self.config)
            self._regions[key] = found
        return found

    def dimmed(self, ignored: Sequence[Box], exclude: tuple[int, int, int, int] | None,
               residual_ignored: Sequence[Box]) -> Dimmed:
        """The gain of the changed pixels of `masks(ignored)` outside `exclude` (reduced scale: the
        dialog), and the regions that still differ at the darker frame's brightness with
        `residual_ignored` set aside (`VisualOracle._undim`). A dialog that appeared changes the
        gain's sample only where the scrim's pixels do not already agree (a page of one colour behind
        it): the same gain shares the compensated frames' differences with a guess made without it."""
        key = (tuple(ignored), exclude, tuple(residual_ignored))
        done = self._dimmed.get(key)
        if done is not None:
            return done
        if key[:2] not in self._gains:  # None is a result too: no uniform dim
            scale = self.config.scale_divisor
            self._gains[key[:2]] = dim_gain(self.before.small(scale), self.after.small(scale),
                                            self.masks(ignored).strict, exclude)
        gain = self._gains[key[:2]]
        if gain is None:
            done = Dimmed(None, None, ())
        else:
            residual = masked(self._differences(gain), self.config, self.after.size, key[2])
            done = Dimmed(gain, residual, tuple(find_regions(residual, self.config)))
        self._dimmed[key] = done
        return done

    def _differences(self, gain: float) -> Differences:
        """The pair's differences with `gain` divided out (1.0: as shot), compared at the darker
        frame's brightness: brightening the dimmed frame would clip a white dialog to the white of
        the page behind it, leaving only its text as change (its box lost)."""
        found = self._differences_at.get(gain)
        if found is None:
            scale = self.config.scale_divisor
            small_before, small_after = self.before.small(scale), self.after.small(scale)
            if gain < 1:
                small_before = compensate(small_before, gain)
            elif gain != 1.0:
                small_after = compensate(small_after, 1.0 / gain)
            found = self._differences_at[gain] = differences(small_before, small_after, self.config)
        return found
