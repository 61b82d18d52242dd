"""`guistate memory merge A B ... -o OUT`: one memory for a fleet of CI runners (issue 27).

Each runner of a matrix starts from the same downloaded memory and learns its own variants; the
merge folds them back into one file:

- inputs must carry this plugin's schema (`PRAGMA user_version`); another version, a file that is
  not a store, or a missing file is refused naming the file, and nothing is written;
- a variant learnt by several runners (same function, app, version, screen, locator and pixels)
  is kept once: earliest `created`, latest `last_access`, highest `access_count` (a download
  shared by all runners is not counted twice);
- over the cap (`max_entries`, the store's own default) the lowest-ranked variants go, by the
  store's own eviction rule (`rank.retention`, then older first), ranked at the latest access
  among the inputs, never at the wall clock, so the result does not depend on when it ran;
- flows are kept once per (instruction, template, steps, apps), with the same folding;
- the output is written in one canonical order to a temporary file, then renamed: the same inputs
  in any order give a byte-identical file. Every count is reported (read, folded, evicted, kept).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_guistate.memory.rank import RankPolicy, retention
from pytest_guistate.memory.store import SCHEMA_VERSION, MemorySchemaError, MemoryStore

__all__ = ["MergeReport", "merge_stores"]

_PATCH_FIELDS = ("function", "description", "app", "app_version", "screen_w", "screen_h", "density", "locator",
                 "test", "step", "png", "patch_w", "patch_h", "attrs", "created", "last_access", "access_count")
_FLOW_FIELDS = ("instruction", "template", "steps", "apps", "test", "created", "last_access", "access_count")


@dataclass
class MergeReport:
    """What the merge did, in numbers: nothing leaves silently."""

    inputs: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (patches, flows) read
    patches_read: int = 0
    patches_folded: int = 0  # the same variant in several inputs, kept once
    patches_evicted: int = 0  # over max_entries, lowest retention first
    patches_written: int = 0
    flows_read: int = 0
    flows_folded: int = 0
    flows_written: int = 0
    max_entries: int = 0

    def lines(self) -> list[str]:
        out = [f"  {name}: {patches} variant(s), {flows} flow(s)" for name, (patches, flows) in self.inputs.items()]
        out.append(f"variants: {self.patches_read} read, {self.patches_folded} folded as duplicates, "
                   f"{self.patches_evicted} evicted over the cap of {self.max_entries} (lowest rank first), "
                   f"{self.patches_written} written")
        out.append(f"flows: {self.flows_read} read, {self.flows_folded} folded as duplicates, "
                   f"{self.flows_written} written")
        return out


def _check_input(path: Path) -> None:
    """Refuse before opening for real: MemoryStore would create a missing file, or upgrade an empty one."""
    if not path.is_file():
        raise MemorySchemaError(f"{path}: no memory file there")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise MemorySchemaError(f"{path} is not a guistate memory store ({exc})") from None
    if version != SCHEMA_VERSION:
        raise MemorySchemaError(f"{path} has memory schema {version}; this plugin merges schema {SCHEMA_VERSION} "
                                "only (open it with the plugin version that wrote it, or leave it out)")


def _patch_key(row: dict[str, Any]) -> tuple[Any, ...]:
    digest = hashlib.sha256(bytes(row["png"])).hexdigest()
    return (row["function"], row["app"], row["app_version"], row["screen_w"], row["screen_h"],
            -1.0 if row["density"] is None else float(row["density"]), row["locator"], digest)


def _flow_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["instruction"], row["template"], row["steps"], row["apps"])


def _order(row: dict[str, Any], fields: Sequence[str]) -> tuple[Any, ...]:
    """A total order on a row's own content (no input position): picks which duplicate speaks."""
    return tuple((0, "") if row[f] is None else (1, row[f] if not isinstance(row[f], bytes) else row[f].hex())
                 for f in fields)


def _fold(rows: list[dict[str, Any]], key: Any, fields: Sequence[str]) -> tuple[list[dict[str, Any]], int]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    folded = []
    for group in groups.values():
        first = min(group, key=lambda r: (r["created"], _order(r, fields)))
        folded.append({**first, "created": min(r["created"] for r in group),
                       "last_access": max(r["last_access"] for r in group),
                       "access_count": max(r["access_count"] for r in group)})
    return folded, len(rows) - len(folded)


def _read(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with MemoryStore(path) as store:
        patches = [dict(zip(_PATCH_FIELDS, row, strict=True))
                   for row in store.query(f"SELECT {', '.join(_PATCH_FIELDS)} FROM patches")]
        flows = [dict(zip(_FLOW_FIELDS, row, strict=True))
                 for row in store.query(f"SELECT {', '.join(_FLOW_FIELDS)} FROM flows")]
    for row in patches:
        row["png"] = bytes(row["png"])
    return patches, flows


def merge_stores(inputs: Sequence[Path], output: Path, *, max_entries: int = 5000,
                 policy: RankPolicy | None = None) -> MergeReport:
    """Merge memory files into `output` (replaced whole at the end); raises MemorySchemaError naming a bad input."""
    if not inputs:
        raise ValueError("give at least one memory file to merge")
    if max_entries < 1:
        raise ValueError(f"max_entries must be >= 1, got {max_entries}")
    policy = policy or RankPolicy()
    for path in inputs:
        _check_input(path)
    report = MergeReport(max_entries=max_entries)
    patches: list[dict[str, Any]] = []
    flows: list[dict[str, Any]] = []
    for path in inputs:
        got_patches, got_flows = _read(path)
        report.inputs[str(path)] = (len(got_patches), len(got_flows))
        patches += got_patches
        flows += got_flows
    report.patches_read, report.flows_read = len(patches), len(flows)
    patches, report.patches_folded = _fold(patches, _patch_key, _PATCH_FIELDS)
    flows, report.flows_folded = _fold(flows, _flow_key, _FLOW_FIELDS)
    patches.sort(key=lambda r: (_patch_key(r), _order(r, _PATCH_FIELDS)))
    flows.sort(key=lambda r: (_flow_key(r), _order(r, _FLOW_FIELDS)))
    if len(patches) > max_entries:
        now = max(r["last_access"] for r in patches)  # the inputs' own latest time: no wall clock in the result
        ranked = sorted(range(len(patches)), key=lambda i: (
            retention(now - patches[i]["last_access"], patches[i]["access_count"], policy.half_life_s),
            patches[i]["created"], i))
        doomed = set(ranked[:len(patches) - max_entries])
        patches = [row for i, row in enumerate(patches) if i not in doomed]
        report.patches_evicted = len(doomed)
    _write(output, patches, flows, max_entries)
    report.patches_written, report.flows_written = len(patches), len(flows)
    return report


def _write(output: Path, patches: list[dict[str, Any]], flows: list[dict[str, Any]], max_entries: int) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.merging-{os.getpid()}")
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    try:
        with MemoryStore(tmp, max_entries=max_entries) as store:
            store.import_rows("patches", _PATCH_FIELDS, [[r[f] for f in _PATCH_FIELDS] for r in patches])
            store.import_rows("flows", _FLOW_FIELDS, [[r[f] for f in _FLOW_FIELDS] for r in flows])
        for suffix in ("-wal", "-shm"):  # the output's old WAL must not be replayed onto the new file
            output.with_name(output.name + suffix).unlink(missing_ok=True)
        os.replace(tmp, output)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            leftover.unlink(missing_ok=True)
