"""Per-test fault limits (issue 14): the whole-test watchdog's budget, armed around the call, and the
cycle detector's limit.

`guistate_test_timeout` / `--guistate-test-timeout` (seconds, default 0 = none) sets it for every
test; `@pytest.mark.guistate(timeout=...)` (or `test_timeout=`) overrides it per test, 0 switching
it off. Off by default because a test's honest length varies by orders of magnitude (a scripted
check takes seconds, an LLM run minutes) and every device call already has its own deadline; set it
in CI for LLM runs and long flows. The budget covers the call phase (not fixture setup, whose
session creation has its own deadline), and ends the test with `TestTimeout` (core/watchdog.py):
an ordinary failure, so the journal is closed and report.html built by the usual teardown.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from pytest_guistate.core import watchdog
from pytest_guistate.items import marker_kwargs

__all__ = ["MARKER_KWARGS", "budget_for", "check_marker_kwargs", "cycle_limit_for", "watch"]

# What @pytest.mark.guistate(...) understands; anything else is probably a typo.
MARKER_KWARGS = ("tier", "app", "faults", "caps", "settle_timeout", "timeout", "test_timeout", "cycle_limit", "session")


def check_marker_kwargs(item: pytest.Item) -> None:
    """Warn (at collection) about marker keywords nothing reads: `timout=5` would silently do nothing."""
    unknown = sorted(set(marker_kwargs(item)) - set(MARKER_KWARGS))
    if unknown:
        warnings.warn(pytest.PytestConfigWarning(
            f"{item.nodeid}: @pytest.mark.guistate got unknown keyword(s) {', '.join(unknown)}; known: "
            f"{', '.join(MARKER_KWARGS)}"), stacklevel=1)


def budget_for(item: pytest.Item, default_s: float) -> float:
    """The test's budget in seconds (0 = none): the marker's `timeout=`/`test_timeout=`, else the option."""
    options = marker_kwargs(item)
    key = "test_timeout" if "test_timeout" in options else "timeout" if "timeout" in options else None
    if key is None:
        return default_s
    raw = options[key]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate({key}={raw!r}) is not a number of "
                                "seconds") from None
    if not math.isfinite(value) or value < 0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate({key}={raw!r}) must be >= 0 seconds")
    return value


def cycle_limit_for(item: pytest.Item, default: int) -> int:
    """Steps a screen loop may run without a milestone (core/cycles.py): the marker's `cycle_limit=`, else the ini."""
    raw = marker_kwargs(item).get("cycle_limit", default)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.guistate(cycle_limit={raw!r}) must be an integer >= 0")
    return raw


@contextmanager
def watch(item: pytest.Item, default_s: float) -> Iterator[None]:
    watchdog.arm(budget_for(item, default_s), item.nodeid)
    try:
        yield
    finally:
        watchdog.disarm()
