"""What the core needs from a device: an observation (frame + UI tree) and a way to refresh.

The core never imports Appium; `pytest_guistate.devices.Device` implements `Screen` over an
Appium session, and tests may implement it over anything that yields real frames.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.uitree import UITree

__all__ = ["Observation", "Screen"]


@dataclass(eq=False)
class Observation:
    """The screen at one moment: what the oracle compares and what checks are evaluated on."""

    frame: Frame
    tree: UITree | None
    package: str = ""  # foreground app, when the device can tell
    timestamp: float = field(default_factory=time.time)


@runtime_checkable
class Screen(Protocol):
    """The device as the step loop sees it."""

    def observe(self) -> Observation:
        """Screenshot and page source, taken back to back."""
        ...

    def pull_to_refresh(self) -> bool:
        """Pull down on the first scrollable list on screen; False when there is none."""
        ...
