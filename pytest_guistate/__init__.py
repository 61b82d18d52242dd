"""pytest-guistate: task state, a visual oracle and anchored failure reports for long mobile E2E tests.

The pytest plugin itself is registered through the `pytest11` entry point; this module is the
public API a test imports: the checks used in `expect=` and plans, the errors a test may catch,
and the types that appear in hooks.
"""

from typing import TYPE_CHECKING, Any

from pytest_guistate.core.checks import CheckResult, all_of, frame_check, gone, visible
from pytest_guistate.core.detectors import DetectedAnchor
from pytest_guistate.core.errors import (
    GuistateError,
    GuistateWarning,
    MilestoneNotVisible,
    ProgressIncomplete,
    QueryFailed,
    QueryUnverified,
    StepFailed,
)
from pytest_guistate.core.frame import Frame, FrameError
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, Screen, TreeExpired
from pytest_guistate.core.oracle_types import Transition
from pytest_guistate.core.records import StepRecord
from pytest_guistate.core.state import Milestone
from pytest_guistate.core.tiers import Tier
from pytest_guistate.core.uitree import UITreeError
from pytest_guistate.report.redact import Redaction

if TYPE_CHECKING:
    from pytest_guistate.devices.device import Device

__all__ = [
    "Box",
    "CheckResult",
    "DetectedAnchor",
    "Device",
    "Frame",
    "FrameError",
    "GuistateError",
    "GuistateWarning",
    "Milestone",
    "MilestoneNotVisible",
    "Observation",
    "ProgressIncomplete",
    "QueryFailed",
    "QueryUnverified",
    "Redaction",
    "Screen",
    "StepFailed",
    "StepRecord",
    "Tier",
    "Transition",
    "TreeExpired",
    "UITreeError",
    "all_of",
    "frame_check",
    "gone",
    "visible",
]


def __getattr__(name: str) -> Any:
    """`Device` (the `reset_app` hook's first argument) on first use: importing it pulls in the Appium
    client, which `import pytest_guistate` alone (the reference server, the gate) does not need."""
    if name == "Device":
        from pytest_guistate.devices.device import Device

        return Device
    raise AttributeError(f"module 'pytest_guistate' has no attribute {name!r}")
