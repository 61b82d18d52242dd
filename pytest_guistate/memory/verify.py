"""Accept a heal only if the step's expected effect appears (issue 7).

`heal_and_act` is the whole heal cycle for callers without a `TaskSession` (the benchmark, the
tests, a Device used on its own): observe, heal, tap the healed element once, let the screen
settle, check the effect. An unmet effect is a *false heal prevented*: the outcome carries the
remembered variant, the crop that matched, and the same area after the tap, and the look is not
learned. Inside a `TaskSession` the session's own verification plays the role of `expect`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2

from pytest_guistate.core.observation import Observation
from pytest_guistate.memory.heal import Healer, HealResult
from pytest_guistate.memory.learn import LearnResult, crop_bgr
from pytest_guistate.memory.locator import Locator

__all__ = ["HealOutcome", "heal_and_act"]


@dataclass
class HealOutcome:
    result: HealResult
    tapped: bool
    accepted: bool
    verdict: str  # "healed" | "false heal prevented" | "not healed"
    after_png: bytes = b""  # the healed element's area after the tap (with a false heal: proof)
    learned: LearnResult | None = None

    def title(self) -> str:
        if self.verdict == "false heal prevented":
            return (f"false heal prevented: locator {self.result.locator} matched {self.result.box} "
                    f"at {self.result.score:.2f} but the expected effect did not appear")
        return self.result.title()


def heal_and_act(
    healer: Healer,
    observe: Callable[[], Observation],
    tap: Callable[[int, int], None],
    locator: Locator,
    expect: Callable[[Observation], object],
    *,
    function: str | None = None,
    settle: Callable[[], None] = lambda: None,
    version: str = "",
    test: str = "",
    step: str = "",
) -> HealOutcome:
    """One healed action: at most one tap, accepted only when `expect(after)` is truthy."""
    before = observe()
    result = healer.heal(before, locator, function)
    if not result.ok or result.point is None:
        return HealOutcome(result, tapped=False, accepted=False, verdict="not healed")
    tap(*result.point)
    settle()
    after = observe()
    assert result.box is not None
    crop = crop_bgr(after.frame.bgr, result.box)
    after_png = cv2.imencode(".png", crop)[1].tobytes() if crop is not None else b""
    if not bool(expect(after)):
        return HealOutcome(result, tapped=True, accepted=False, verdict="false heal prevented", after_png=after_png)
    learned = healer.confirm(result, before, version=version, test=test, step=step)
    return HealOutcome(result, tapped=True, accepted=True, verdict="healed", after_png=after_png, learned=learned)
