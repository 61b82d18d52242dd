"""Helpers for the plugin's pytester tests: inner runs in-process, and no simulated phone left running.

In-process inner runs take ~1 s each against ~4 s for a subprocess (which re-imports OpenCV,
Appium and the plugin), so every inner run here is in-process; `-n 2` runs still start their
xdist workers as subprocesses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

SIM_THREAD_PREFIX = "guistate-sim-"


def sim_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(SIM_THREAD_PREFIX)]


@pytest.fixture
def inner(pytester: pytest.Pytester) -> Iterator[Callable[..., pytest.RunResult]]:
    """Run pytest in-process in the pytester dir; the cache provider is off unless asked for,
    so the auto tier never learns from an earlier inner run by accident."""

    def run(*args: str, cache: bool = False) -> pytest.RunResult:
        extra = () if cache else ("-p", "no:cacheprovider")
        result = pytester.runpytest_inprocess(*extra, *args)
        # the embedded sim is stopped in session teardown; its connection threads end with it
        deadline = time.monotonic() + 2.0
        while sim_threads() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sim_threads() == [], f"the inner run left simulated-phone threads running: {sim_threads()}"
        return result

    yield run
