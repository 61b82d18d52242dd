"""Helpers for the plugin's pytester tests: inner runs in-process, and no simulated phone left running.

Every inner run here is in-process (see `tests/helpers/inner_run.py`); `-n 2` runs still start their
xdist workers as subprocesses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.helpers.inner_run import run_inprocess


@pytest.fixture
def inner(pytester: pytest.Pytester) -> Iterator[Callable[..., pytest.RunResult]]:
    """Run pytest in-process in the pytester dir; the cache provider is off unless asked for,
    so the auto tier never learns from an earlier inner run by accident."""

    def run(*args: str, cache: bool = False) -> pytest.RunResult:
        extra = () if cache else ("-p", "no:cacheprovider")
        return run_inprocess(pytester, *extra, *args)

    yield run
