"""Fixtures for the fail-closed gate: inner pytest runs (in-process; `-n 2` workers are subprocesses)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers.inner_run import run_inprocess

InnerRun = Callable[..., pytest.RunResult]


@pytest.fixture
def inner(pytester: pytest.Pytester) -> InnerRun:
    def run(*args: str) -> pytest.RunResult:
        return run_inprocess(pytester, "-p", "no:cacheprovider", *args)

    return run
