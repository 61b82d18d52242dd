"""pytest-guistate: task state, a visual oracle and anchored failure reports for long mobile E2E tests.

The pytest plugin itself is registered through the `pytest11` entry point; this module is the
public API a test imports: the checks used in `expect=` and plans, the errors a test may catch,
and the types that appear in hooks. The device's errors (`DeviceError`, `WebViewGone`, ...) and
`Device` live beside the Appium client: they are imported on first use (`_LAZY`), so
`import pytest_guistate` alone loads no Appium or Selenium client.
"""

import importlib
from typing import TYPE_CHECKING, Any

from pytest_guistate.core.checks import CheckResult, all_of, frame_check, gone, switched, visible
from pytest_guistate.core.cycles import CycleDetected
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
from pytest_guistate.core.watchdog import TestTimeout
from pytest_guistate.report.diskio import ArtifactWriteError
from pytest_guistate.report.redact import Redaction

if TYPE_CHECKING:
    from pytest_guistate.devices.device import Device
    from pytest_guistate.devices.errors import (
        CapabilityUnavailable,
        ContextUnavailable,
        DeviceError,
        ElementAmbiguous,
        ElementNotFound,
        ElementNotReady,
        WebViewGone,
    )
    from pytest_guistate.devices.timeouts import DeviceGone, DeviceTimeout
    from pytest_guistate.llm.cache.replay import CacheMiss
    from pytest_guistate.llm.errors import LLMError
    from pytest_guistate.worker_sessions import SessionReuseWarning

# name -> module, imported on first use: these modules import the Appium client (or pytest)
_LAZY = {
    "Device": "pytest_guistate.devices.device",
    "CapabilityUnavailable": "pytest_guistate.devices.errors",
    "ContextUnavailable": "pytest_guistate.devices.errors",
    "DeviceError": "pytest_guistate.devices.errors",
    "ElementAmbiguous": "pytest_guistate.devices.errors",
    "ElementNotFound": "pytest_guistate.devices.errors",
    "ElementNotReady": "pytest_guistate.devices.errors",
    "WebViewGone": "pytest_guistate.devices.errors",
    "DeviceGone": "pytest_guistate.devices.timeouts",
    "DeviceTimeout": "pytest_guistate.devices.timeouts",
    "CacheMiss": "pytest_guistate.llm.cache.replay",
    "LLMError": "pytest_guistate.llm.errors",
    "SessionReuseWarning": "pytest_guistate.worker_sessions",
}

__all__ = [
    "ArtifactWriteError",
    "Box",
    "CacheMiss",
    "CapabilityUnavailable",
    "CheckResult",
    "ContextUnavailable",
    "CycleDetected",
    "DetectedAnchor",
    "Device",
    "DeviceError",
    "DeviceGone",
    "DeviceTimeout",
    "ElementAmbiguous",
    "ElementNotFound",
    "ElementNotReady",
    "Frame",
    "FrameError",
    "GuistateError",
    "GuistateWarning",
    "LLMError",
    "Milestone",
    "MilestoneNotVisible",
    "Observation",
    "ProgressIncomplete",
    "QueryFailed",
    "QueryUnverified",
    "Redaction",
    "Screen",
    "SessionReuseWarning",
    "StepFailed",
    "StepRecord",
    "TestTimeout",
    "Tier",
    "Transition",
    "TreeExpired",
    "UITreeError",
    "WebViewGone",
    "all_of",
    "frame_check",
    "gone",
    "switched",
    "visible",
]


def __getattr__(name: str) -> Any:
    """`Device` (the `reset_app` hook's first argument) and the device's errors on first use: importing
    them pulls in the Appium client, which `import pytest_guistate` alone (the reference server, the
    gate) does not need."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_guistate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: the next lookup is a plain attribute
    return value
