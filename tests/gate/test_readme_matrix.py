"""The sharded GitHub Actions recipe of docs/ci-gate.md (once in the README): valid YAML, and its gate and memory
steps run by bash as CI would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from pytest_guistate.memory.store import MemoryStore
from tests.helpers.memory_patches import new_patch

ROOT = Path(__file__).resolve().parents[2]


def _matrix_recipe() -> dict[str, Any]:
    text = (ROOT / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)]
    return next(b for b in blocks if "gate" in (b.get("jobs") or {}))


def _bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, text=True, capture_output=True, timeout=120,
                          check=False, env={**os.environ, "PATH": path, **env})


def _shard(root: Path, name: str) -> None:
    folder = root / "shards" / f"shard-{name}"
    folder.mkdir(parents=True)
    nodeid = f"example_suite/test_s{name}.py::test_it"
    (folder / f"shard-{name}.json").write_text(json.dumps({
        "schema": "guistate.summary/2", "complete": True, "shard": name, "collected": [nodeid],
        "tests": [{"nodeid": nodeid, "outcome": "passed", "tier": "light", "shard": name}]}), encoding="utf-8")
    with MemoryStore(folder / "guistate-memory" / "memory.sqlite", clock=lambda: 1000.0 + int(name)) as store:
        store.add_patch(new_patch(f"function {name}", int(name) * 10))


def test_the_matrix_recipe_shards_by_env_and_gates_once() -> None:
    recipe = _matrix_recipe()
    e2e, gate = recipe["jobs"]["e2e"], recipe["jobs"]["gate"]
    assert [m["shard"] for m in e2e["strategy"]["matrix"]["include"]] == [1, 2, 3]
    assert e2e["env"]["GUISTATE_SHARD"] == "${{ matrix.shard }}" and gate["needs"] == "e2e"
    run = next(s["run"] for s in e2e["steps"] if s.get("name") == "run this shard")
    assert "--splits 3 --group ${{ matrix.shard }}" in run and "--guistate-summary=shard-${{ matrix.shard }}.json" in run


def test_the_gate_step_blocks_a_missing_shard_and_the_memory_step_merges(tmp_path: Path) -> None:
    steps = _matrix_recipe()["jobs"]["gate"]["steps"]
    gate_step = next(s for s in steps if s.get("name") == "gate")["run"]
    memory_step = next(s for s in steps if "memory merge" in s.get("run", ""))["run"]
    for name in ("1", "3"):  # shard 2's job died before its upload
        _shard(tmp_path, name)
    summary = tmp_path / "step-summary.md"
    done = _bash(gate_step, tmp_path, GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1 and "::error title=guistate gate::run.json: missing shard(s) 2" in done.stdout
    assert "missing shard(s) 2" in summary.read_text(encoding="utf-8")
    _shard(tmp_path, "2")
    done = _bash(gate_step, tmp_path, GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 0, done.stdout + done.stderr
    done = _bash(memory_step, tmp_path)
    assert done.returncode == 0 and "3 written" in done.stdout, done.stdout + done.stderr
    with MemoryStore(tmp_path / "guistate-memory" / "memory.sqlite") as merged:
        assert sorted(f for f, _, _ in merged.functions()) == ["function 1", "function 2", "function 3"]
