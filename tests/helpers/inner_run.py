"""An inner pytest run in-process, checked to leave no simulated phone running.

In-process inner runs take ~1 s each against ~4 s for a subprocess (which re-imports OpenCV,
Appium and the plugin). The embedded sim stops in the inner session's teardown; its connection
threads end with it, and a thread still alive after that is a leak this check names.
"""

from __future__ import annotations

import threading
import time

import pytest

SIM_THREAD_PREFIX = "guistate-sim-"


def sim_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(SIM_THREAD_PREFIX)]


def run_inprocess(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """`pytester.runpytest_inprocess(*args)`, then fail if the run left simulated-phone threads."""
    result = pytester.runpytest_inprocess(*args)
    deadline = time.monotonic() + 2.0
    while sim_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sim_threads() == [], f"the inner run left simulated-phone threads running: {sim_threads()}"
    return result
