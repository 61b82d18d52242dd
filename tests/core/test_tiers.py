"""Tiers by test length (TSR's ablation) and the auto choice with its reason."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_guistate.core.tiers import AutoThresholds, Tier, TierPolicy, choose_tier


def test_policy_table() -> None:
    off, light, standard, full = (TierPolicy.for_tier(t) for t in ("off", "light", "standard", "full"))
    assert not off.compare and not off.retry and not off.anchors and off.settle
    assert light.compare and not light.gate_transitions and light.settle_and_refresh and light.retry
    assert not off.refresh  # off: the plugin takes no action of its own
    assert standard.gate_transitions and standard.settle_and_refresh and standard.anchors
    assert standard.keep_step_crops and not standard.keep_frames and not standard.state_snapshots
    assert full.keep_frames and full.state_snapshots
    assert not light.keep_step_crops and light.keeps_crops_on_failure and not off.keeps_crops_on_failure


def test_policy_is_frozen_and_validated() -> None:
    policy = TierPolicy.for_tier(Tier.STANDARD, frames_window=6, max_plan_length=5)
    assert policy.frames_window == 6 and policy.max_plan_length == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.compare = False  # type: ignore[misc]
    with pytest.raises(ValueError, match="auto"):
        TierPolicy.for_tier("auto")
    with pytest.raises(ValueError, match="frames_window"):
        TierPolicy.for_tier("full", frames_window=1)
    with pytest.raises(ValueError, match="unknown guistate tier 'loud'"):
        Tier.parse("loud")


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"requested": "auto"}, (Tier.STANDARD, "default")),
        ({"requested": "light"}, (Tier.LIGHT, "option")),
        ({"requested": "light", "marker_tier": "full"}, (Tier.FULL, "marker")),
        ({"requested": "auto", "plan_length": 14}, (Tier.FULL, "plan length 14")),
        ({"requested": "auto", "plan_length": 3}, (Tier.LIGHT, "plan length 3")),
        ({"requested": "auto", "plan_length": 3, "last_step_count": 31}, (Tier.FULL, "last run took 31 steps")),
        ({"requested": "auto", "last_step_count": 12}, (Tier.STANDARD, "last run took 12 steps")),
        ({"requested": "auto", "last_step_count": 8}, (Tier.LIGHT, "last run took 8 steps")),
        ({"requested": "standard", "marker_tier": "auto", "last_step_count": 3}, (Tier.LIGHT, "last run took 3 steps")),
    ],
)
def test_choose_tier(kwargs: dict, expected: tuple[Tier, str]) -> None:
    requested = kwargs.pop("requested")
    assert choose_tier(requested, **kwargs) == expected


def test_thresholds_are_configurable_and_checked() -> None:
    thresholds = AutoThresholds(light_max_steps=2, standard_max_steps=4)
    assert choose_tier("auto", last_step_count=3, thresholds=thresholds) == (Tier.STANDARD, "last run took 3 steps")
    with pytest.raises(ValueError):
        AutoThresholds(light_max_steps=10, standard_max_steps=5)
    with pytest.raises(ValueError):
        choose_tier("auto", last_step_count=-1)
