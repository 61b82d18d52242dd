"""What the Android and iOS `--guistate-session=worker` suites share: the inner run, the control
hook that resets nothing, and the checks that then fail."""

from __future__ import annotations

from collections.abc import Callable

import pytest

# the control: a hook that claims to reset but does nothing replaces the built-in reset
NO_RESET_HOOK = """
    def pytest_guistate_reset_app(device, capabilities, item):
        return True
"""


def run_worker(inner: Callable[..., pytest.RunResult], pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An inner run with one session per worker, every test's artifacts kept."""
    return inner("--guistate=light", "--guistate-session=worker", "--guistate-retain=on", "--guistate-memory=off",
                 f"--guistate-artifacts={pytester.path / 'artifacts'}", *args)


def failed_calls(result: pytest.RunResult) -> list[str]:
    """The names of the tests whose call phase failed, sorted."""
    return sorted(r.nodeid.split("::")[-1] for r in result.reprec.getreports("pytest_runtest_logreport")
                  if r.when == "call" and r.failed)
