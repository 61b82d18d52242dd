"""The package's types are checked in the default test run (issue 36): mypy with the project's
`[tool.mypy]` (strict) finds 0 errors in `pytest_guistate/`, and the failure lists every error it found.

mypy's cache lives in pytest's cache dir (`.pytest_cache/d/mypy`), so a run after the first only
re-checks the modules that changed; with `-p no:cacheprovider` it goes to a temporary dir."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_guistate"
CONFIG = ROOT / "pyproject.toml"


def _cache_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy-cache")


def test_mypy_finds_no_errors_in_the_package(request: pytest.FixtureRequest,
                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    cache_dir = _cache_dir(request, tmp_path_factory)
    stdout, stderr, status = mypy_api.run(
        ["--config-file", str(CONFIG), "--cache-dir", str(cache_dir), "--show-error-codes", str(PACKAGE)])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 0 and not errors, (
        f"mypy found {len(errors)} error(s) in pytest_guistate/ (exit {status}); fix them, "
        "or say in a `# type: ignore[code]` why the checker cannot see what the code checks:\n"
        + "\n".join(errors or stdout.splitlines()) + (f"\n{stderr}" if stderr else ""))
    assert "Success" in stdout, stdout  # mypy checked the files, not an empty set


def test_the_mypy_config_stays_strict() -> None:
    """0 errors means something only under the strict settings: loosening them is a change to review here."""
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True, config
    for override in config.get("overrides", []):
        loosened = {key for key, value in override.items() if key != "module" and value is False}
        assert loosened <= {"disallow_untyped_calls"}, (
            f"{override['module']} turns off {sorted(loosened)}: only calls into untyped libraries may be allowed")
