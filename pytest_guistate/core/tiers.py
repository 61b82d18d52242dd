"""Tiers: how much the step loop checks and keeps, chosen by test length (TSR, seed 000, §5).

TSR's ablation is the reason tiers exist: on long cross-app tasks the transition check helped
(+12 points on MobileWorld); on short single-app tasks it added noise (-3.45 on AndroidWorld).
So a short test gets `light` (no transition gating, expect still checked), a long one `standard`
or `full`. Whatever the tier, a non-idempotent action is never repeated.

Refresh is not a recording choice: a step whose `expect=` is unmet settles and refreshes before it
fails at light as at standard (issue 15: the README's late-redraw example must not pass only
because the settle timeout outlasts the delay). It costs nothing when the expect is met at once.
What light drops is the *implicit* check of a step with no `expect` (TSR: noise on short tests),
so there a step with no expect is never settled or refreshed.

What each tier does (the session reads only the `TierPolicy` fields, never the tier name):

| field              | off | light | standard | full |
|--------------------|-----|-------|----------|------|
| compare (oracle)   |  -  |  yes  |   yes    | yes  |
| gate_transitions   |  -  |   -   |   yes    | yes  |
| settle             | yes |  yes  |   yes    | yes  |  (only when an expect/gate is unmet)
| refresh            |  -  |  yes  |   yes    | yes  |  (only when a check is still unmet after settling)
| retry (idempotent) |  -  |  yes  |   yes    | yes  |  (only when proven not to have taken effect)
| anchors            |  -  |   -   |   yes    | yes  |
| keep_step_crops    |  -  |   -   |   yes    | yes  |  (light keeps crops of failed steps)
| keep_frames        |  -  |   -   |    -     | yes  |  (PNG bytes, never decoded pixels)
| state_snapshots    |  -  |   -   |    -     | yes  |
| step_trees         |  -  |   -   |   yes    | yes  |  (light: a page source only when read, below)

`off`: the session still works; verbs are no-ops except the action itself and `expect` /
milestone checks (an unmet expect is polled until the screen settles, then fails). No oracle,
no refresh, no retry, no anchors, no crops: the plugin takes no action of its own, so `off` is
the way to rule the plugin out when a test misbehaves.

`step_trees` off (light, off; issue 12, "light records less"): a step with no check (no
`expect=`, no milestone check pending, the offline updater) fetches no page source at all. The
oracle masks the status bar from the boxes learnt from the last tree read on that screen size
(`StatusBars`), compares pixels only and keeps the raw regions; the route detector uses what is
known without a page source (packages, trees already read, else a large changed pixel fraction);
the journal's packages are the known ones ("" when none was read). A step with a check reads
the trees as before (the check needs them). An unmet step reads its after-tree while that screen
is current and snaps its regions to containers then, so a failure report is what it was.

With `gate_transitions` off, a step with no check is met whatever the oracle says, so its compare
runs beside the test (`StepLoop.judges_beside`) and the step is recorded once judged.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["AutoThresholds", "Tier", "TierPolicy", "choose_tier"]


class Tier(str, enum.Enum):
    OFF = "off"
    LIGHT = "light"
    STANDARD = "standard"
    FULL = "full"
    AUTO = "auto"

    @classmethod
    def parse(cls, value: str | Tier) -> Tier:
        if isinstance(value, Tier):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ValueError(f"unknown guistate tier {value!r}; choose one of {[t.value for t in cls]}") from None


@dataclass(frozen=True)
class TierPolicy:
    """What the step loop does at one concrete tier. Build with `TierPolicy.for_tier`."""

    tier: Tier
    compare: bool  # run the oracle on before/after frames
    gate_transitions: bool  # with no expect, a step must show a visible change to pass
    settle: bool  # wait for frames to stop changing when a check is unmet
    refresh: bool  # refresh (callable / hook / pull-to-refresh) and re-verify when a check is still unmet
    retry: bool  # perform() may repeat an idempotent action proven not to have taken effect
    anchors: bool  # record the anchor DAG
    keep_step_crops: bool  # store every step's crops (else only failed steps' crops)
    keep_frames: bool  # store every step's before/after PNG bytes
    state_snapshots: bool  # keep a TaskState snapshot per step
    step_trees: bool = True  # read every step's trees (snapping, detectors, packages) even with no check
    frames_window: int = 4  # max frames the session keeps decoded; older ones release pixels
    max_plan_length: int = 12  # over-decomposition ceiling (TSR's photo-sorting case)

    def __post_init__(self) -> None:
        if self.tier is Tier.AUTO:
            raise ValueError("TierPolicy needs a concrete tier; resolve 'auto' with choose_tier() first")
        if self.frames_window < 2:
            raise ValueError(f"frames_window must be >= 2 (before and after of one step), got {self.frames_window}")
        if self.max_plan_length < 1:
            raise ValueError(f"max_plan_length must be >= 1, got {self.max_plan_length}")

    @property
    def settle_and_refresh(self) -> bool:
        """The full stale-screen policy of TSR figure 2 (settle, refresh, re-verify, episodes)."""
        return self.settle and self.refresh

    @property
    def keeps_crops_on_failure(self) -> bool:
        return self.tier is not Tier.OFF

    @classmethod
    def for_tier(cls, tier: Tier | str, *, frames_window: int = 4, max_plan_length: int = 12) -> TierPolicy:
        tier = Tier.parse(tier)
        table = {
            Tier.OFF: (False, False, True, False, False, False, False, False, False),
            Tier.LIGHT: (True, False, True, True, True, False, False, False, False),
            Tier.STANDARD: (True, True, True, True, True, True, True, False, False),
            Tier.FULL: (True, True, True, True, True, True, True, True, True),
        }
        if tier not in table:
            raise ValueError("TierPolicy.for_tier needs a concrete tier; resolve 'auto' with choose_tier() first")
        compare, gate, settle, refresh, retry, anchors, crops, frames, snapshots = table[tier]
        return cls(
            tier=tier,
            compare=compare,
            gate_transitions=gate,
            settle=settle,
            refresh=refresh,
            retry=retry,
            anchors=anchors,
            keep_step_crops=crops,
            keep_frames=frames,
            state_snapshots=snapshots,
            step_trees=tier in (Tier.STANDARD, Tier.FULL),
            frames_window=frames_window,
            max_plan_length=max_plan_length,
        )


@dataclass(frozen=True)
class AutoThresholds:
    """`auto` picks light up to `light_max_steps`, standard up to `standard_max_steps`, else full."""

    light_max_steps: int = 8
    standard_max_steps: int = 25

    def __post_init__(self) -> None:
        if not 0 <= self.light_max_steps <= self.standard_max_steps:
            raise ValueError(
                f"need 0 <= light_max_steps <= standard_max_steps, got {self.light_max_steps}, "
                f"{self.standard_max_steps}"
            )

    def tier_for(self, steps: int) -> Tier:
        if steps <= self.light_max_steps:
            return Tier.LIGHT
        if steps <= self.standard_max_steps:
            return Tier.STANDARD
        return Tier.FULL


def choose_tier(
    requested: Tier | str,
    *,
    marker_tier: Tier | str | None = None,
    plan_length: int | None = None,
    last_step_count: int | None = None,
    thresholds: AutoThresholds = AutoThresholds(),
) -> tuple[Tier, str]:
    """Resolve the tier for one test and say why.

    Order: a concrete marker tier wins (the author knows the test); then a concrete requested
    tier (command line); for `auto`: the step count of the last run (measured beats declared),
    then the declared plan length (a plan item is roughly a few steps, so milestones count x2),
    else `standard` ("default"). Reasons: "marker", "option", "last run took 31 steps",
    "plan length 14", "default".
    """
    requested = Tier.parse(requested)
    if marker_tier is not None:
        marker = Tier.parse(marker_tier)
        if marker is not Tier.AUTO:
            return marker, "marker"
    elif requested is not Tier.AUTO:
        return requested, "option"
    if last_step_count is not None:
        if last_step_count < 0:
            raise ValueError(f"last_step_count must be >= 0, got {last_step_count}")
        return thresholds.tier_for(last_step_count), f"last run took {last_step_count} steps"
    if plan_length is not None:
        if plan_length < 0:
            raise ValueError(f"plan_length must be >= 0, got {plan_length}")
        return thresholds.tier_for(plan_length * 2), f"plan length {plan_length}"
    return Tier.STANDARD, "default"
