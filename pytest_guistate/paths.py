"""The run's output paths, checked once at configure (issue 14): fail fast, not once per test.

A directory no file can be created in (a parent that is a regular file, a read-only mount, no
permission) would fail every test at its first step; it is a usage error naming the option and
the OS error instead. The summary file gets a lock for the run (`report/summary.py`), so a second
concurrent run with the same `--guistate-summary` is refused rather than clobbering the first's.
"""

from __future__ import annotations

import pytest

from pytest_guistate.config import GuistateConfig
from pytest_guistate.report.diskio import probe_dir
from pytest_guistate.report.summary import SummaryBusy, lock_summary

__all__ = ["check_paths"]


def check_paths(settings: GuistateConfig) -> int | None:
    """Probe the artifacts, summary and memory directories; lock the summary. Returns the lock's fd."""
    summary, memory = settings.summary_path, settings.memory_path
    for option, folder in (("--guistate-artifacts", settings.artifacts_dir),
                           ("--guistate-summary", summary.parent if summary else None),
                           ("--guistate-memory", memory.parent if memory else None)):
        problem = probe_dir(folder) if folder is not None else None
        if problem:
            raise pytest.UsageError(f"{option}: {problem}")
    if summary is None:
        return None
    try:
        return lock_summary(summary)
    except (SummaryBusy, OSError) as exc:
        raise pytest.UsageError(f"--guistate-summary: {exc}") from None
