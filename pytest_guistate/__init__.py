"""pytest-guistate: task state, a visual oracle and anchored failure reports for long mobile E2E tests.

The pytest plugin itself is registered through the `pytest11` entry point; this module is the
public API a test imports: the checks used in `expect=` and plans, the errors a test may catch,
and the types that appear in hooks.
"""

from pytest_guistate.core.checks import CheckResult, all_of, frame_check, gone, visible
from pytest_guistate.core.detectors import DetectedAnchor
from pytest_guistate.core.errors import (
    GuistateError,
    GuistateWarning,
    MilestoneNotVisible,
    ProgressIncomplete,
    StepFailed,
)
from pytest_guistate.core.frame import Frame, FrameError
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.observation import Observation, TreeExpired
from pytest_guistate.core.state import Milestone
from pytest_guistate.core.tiers import Tier
from pytest_guistate.core.uitree import UITreeError
from pytest_guistate.report.redact import Redaction

__all__ = [
    "Box",
    "CheckResult",
    "DetectedAnchor",
    "Frame",
    "FrameError",
    "GuistateError",
    "GuistateWarning",
    "Milestone",
    "MilestoneNotVisible",
    "Observation",
    "ProgressIncomplete",
    "Redaction",
    "StepFailed",
    "Tier",
    "TreeExpired",
    "UITreeError",
    "all_of",
    "frame_check",
    "gone",
    "visible",
]
