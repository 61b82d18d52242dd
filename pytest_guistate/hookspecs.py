"""Hooks a project can implement in its conftest.py to extend pytest-guistate.

Added in `pytest_addhooks`, as pytest-xdist does with its `newhooks.py`. Hooks that answer a
question are `firstresult`; the plugin's own default implementations are `trylast`, so any
implementation in a user's conftest wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_guistate.core.detectors import DetectedAnchor
    from pytest_guistate.core.geometry import Box
    from pytest_guistate.core.observation import Observation, Screen
    from pytest_guistate.core.oracle_types import Transition
    from pytest_guistate.core.records import StepRecord
    from pytest_guistate.devices.device import Device
    from pytest_guistate.report.redact import Redaction


@pytest.hookspec
def pytest_guistate_ignore_regions(observation: Observation, item: pytest.Item) -> list[Box] | None:
    """Extra screen regions the visual oracle must ignore for this observation.

    Return boxes (full-resolution pixels) that change on their own and say nothing about the
    last action: an ad banner, a live video, a clock in the app's own header. All
    implementations are called and their boxes combined; the status bar is always ignored.
    """



@pytest.hookspec
def pytest_guistate_detect_anchors(
    step: int,
    before: Observation | None,
    after: Observation | None,
    transition: Transition | None,
    record: StepRecord,
    item: pytest.Item,
) -> list[DetectedAnchor] | None:
    """Extra anchors for one finished step: a captcha, the app's own error banner.

    Called after the built-in anchors of step number `step` are placed, with its before and
    after observations, the oracle's `transition` and the step `record` (name, outcome,
    crops). Return `DetectedAnchor`s (EXCEPTION by default; STATE_CHANGE, CONTEXT_INFO or
    DEPENDENCY); every implementation is called and all their anchors are placed like the
    built-in ones (step, app, the crops overlapping `box`, EXCEPTIONs block the current
    milestone). Only called where anchors are recorded (tiers standard and full).
    """


@pytest.hookspec
def pytest_guistate_redact(observation: Observation | None, item: pytest.Item) -> Redaction | None:
    """What else must be hidden before anything is written: boxes and text patterns.

    Called once when the test's recording opens (`observation` None: the patterns known up
    front, and boxes to fill on every screen) and for every observed screen. `Redaction.boxes` (screen pixels) are filled in
    that screen's frames and crops; `Redaction.patterns` (regular expressions) are replaced by
    `[redacted]` in every text written from then on (journal, report, state and anchors, the
    guistate failure section, JUnit XML, Allure, LLM cassettes), and the screen nodes whose text
    or description matches are filled in the images. All implementations are combined.
    """


@pytest.hookspec(firstresult=True)
def pytest_guistate_refresh(screen: Screen, observation: Observation, item: pytest.Item) -> bool | None:
    """Refresh a stale screen before an action is re-verified (refresh-before-retry).

    Called when an action had no (or an uncertain) visible effect and settling did not show
    it. Return True when you refreshed, False when refreshing is impossible here, None to let
    the next implementation decide. A step's or test's own `refresh=` callable is used before
    this hook. The default pulls to refresh when a scrollable list is on screen.
    """


@pytest.hookspec(firstresult=True)
def pytest_guistate_transition_check(
    before: Observation, after: Observation, transition: Any, expect: Any, item: pytest.Item
) -> str | None:
    """Override the oracle's verdict for one transition: "changed", "no_change" or "uncertain".

    Return None to keep the oracle's verdict. Use it for effects pixels cannot show (a
    vibration, a network call) or to demote a change you know is noise.
    """


@pytest.hookspec(firstresult=True)
def pytest_guistate_reset_app(device: Device, capabilities: dict[str, Any], item: pytest.Item) -> bool | None:
    """Reset the app in a reused Appium session before `item` runs (`--guistate-session=worker`).

    `capabilities` are the ones this test asks for (its marker's app included). Return True when
    you reset it (the built-in per-driver reset is skipped), False when this session cannot be
    reset (the test gets a new session), None to let the built-in reset run. An exception is
    treated as an unresponsive device: the test gets a new session, with a warning.
    """
