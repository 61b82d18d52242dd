"""The hybrid app's tests need Chromium: fail (never skip) where it is missing, naming its install command."""

from __future__ import annotations

import pytest

from pytest_guistate.devices.sim.model import SimError
from pytest_guistate.devices.sim.webview import locate_chromium


def require_chromium() -> None:
    try:
        locate_chromium()
    except SimError as exc:
        pytest.fail(f"the hybrid app's tests need Chromium: {exc.message}")
