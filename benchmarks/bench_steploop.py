"""Step-loop overhead on the simulated phone (1080x2400, in-process, virtual clock for waits).

Measures real CPU time per step for: a confirmed step with the before-observation reused
(the default), the same with reuse disabled (one extra screenshot + page source per step), and
a stale-screen step that goes through settle + pull-to-refresh. Prints medians; not a test.

    python benchmarks/bench_steploop.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.helpers
from pytest_guistate.core.checks import gone, visible
from pytest_guistate.core.settle import VirtualClock
from pytest_guistate.core.task_session import TaskSession
from pytest_guistate.devices.sim.phone import Phone
from tests.helpers.direct_screen import DirectScreen


def session_for(reuse: bool, **faults: object) -> tuple[TaskSession, DirectScreen, VirtualClock]:
    clock = VirtualClock()
    phone = Phone(app_package="com.guistate.feed", clock=clock, seed=1, faults=dict(faults))
    screen = DirectScreen(phone)
    return TaskSession(screen, clock=clock, reuse_window_s=1.0 if reuse else -1.0), screen, clock


def open_and_cancel(reuse: bool, rounds: int = 8) -> tuple[float, int]:
    session, screen, _ = session_for(reuse)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        session.perform("open dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        session.perform("cancel", lambda: screen.tap_id("android:id/button2"), expect=gone("Delete post?"))
        times.append(time.perf_counter() - started)
    return statistics.median(times), sum(1 for r in session.steps if r.reused_before)


def stale_delete(delay: float) -> tuple[float, str, float]:
    session, screen, clock = session_for(True, refresh_delay=delay)
    session.perform("open dialog", lambda: screen.tap_text("Delete", nth=1), expect=visible("Delete post?"))
    started = time.perf_counter()
    rec = session.perform("confirm", lambda: screen.tap_id("android:id/button1"), expect=gone("Bob", exact=True),
                          idempotent=False)
    return time.perf_counter() - started, rec.outcome, clock.t - 1000.0


if __name__ == "__main__":
    open_and_cancel(True, rounds=2)  # warm-up: fonts, OpenCV, caches
    for reuse in (True, False, True, False):
        median, reused = open_and_cancel(reuse)
        print(f"confirmed step, reuse={reuse!s:5}: median {median * 1000:6.1f} ms/step, reused before {reused}/16")
    for delay in (0.0, 2.0):
        seconds, outcome, virtual = stale_delete(delay)
        print(f"delete with refresh_delay={delay}: {seconds * 1000:6.1f} ms CPU, outcome {outcome}, "
              f"{virtual:.2f} s of (virtual) device time")
