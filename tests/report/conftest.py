"""Shared fixtures: one failing full-tier sim scenario per module (it takes ~1 s)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pytest_guistate.report.finish import FinishedTest
from tests.helpers.scenario import Run, run_failing


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, FinishedTest, Path]:
    root = tmp_path_factory.mktemp("artifacts")
    run, done = run_failing(root)
    return run, done, root
