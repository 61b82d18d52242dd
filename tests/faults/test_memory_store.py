"""The cross-run memory store under faults (issue 14): a damaged file is set aside and recreated with
a warning (never deleted), and `-n 2` workers share one store and one summary consistently."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.memory.store import MemoryStore, NewPatch

from .conftest import Outcome

LEARN = '''
import pytest


@pytest.mark.parametrize("n", range({tests}))
@pytest.mark.guistate(app="com.guistate.feed")
def test_learn(device, guistate, n):
    guistate.goal("Open Bob's delete dialog", plan=["dialog open"])
    with guistate.step("open the delete dialog", expect="Delete post by Bob?"):
        device.tap(desc="Delete post by Bob", function=f"delete bob {{n}}")
    guistate.milestone("dialog open")
'''


def _store_with_pages(path: Path) -> None:
    """A real store of several pages, so cutting it in half damages it."""
    rng = np.random.default_rng(7)
    png = cv2.imencode(".png", rng.integers(0, 255, (48, 48, 3), dtype=np.uint8))[1].tobytes()
    with MemoryStore(path) as store:
        for i in range(40):
            store.add_patch(NewPatch(f"f{i}", "com.guistate.feed", png, (48, 48), (1080, 2400)))


def _damage(path: Path, how: str) -> None:
    if how == "truncated":
        _store_with_pages(path)
        for side in ("-wal", "-shm"):
            Path(f"{path}{side}").unlink(missing_ok=True)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(3000))
    else:  # a sound SQLite file, but someone else's
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE users (name TEXT)")
        db.commit()
        db.close()


@pytest.mark.parametrize(("how", "cause"), [
    ("truncated", "database disk image is malformed"),
    ("garbage", "file is not a database"),
    ("wrong schema", "is an SQLite file but not a guistate memory store (tables ['users'], no schema version)"),
], ids=["truncated", "garbage", "wrong schema"])
def test_a_damaged_memory_store_is_set_aside_and_recreated_with_a_warning(run_inner, pytester, how: str,
                                                                         cause: str) -> None:
    memory = pytester.path / "mem.sqlite"
    _damage(memory, how)
    damaged = memory.read_bytes()
    out = run_inner(LEARN.format(tests=1), "--guistate-device=sim", "--guistate-memory=mem.sqlite")
    out.result.assert_outcomes(passed=1)  # a cache that broke never fails a test
    assert cause in out.text
    assert "it was moved to mem.sqlite.corrupt-" in out.text and "a new, empty store started" in out.text
    aside = sorted(pytester.path.glob("mem.sqlite.corrupt-*[0-9Z]"))
    assert len(aside) == 1 and aside[0].read_bytes() == damaged, "the damaged file was not kept as it was"
    with MemoryStore(memory) as store:
        assert store.integrity() == "ok"
        assert [f for f, _, _ in store.functions()] == ["delete bob 0"], "the new store did not learn"
    out.record((), kept=1, message=f"GuistateWarning: the memory store was unreadable ({cause[:60]}); moved to "
                                   f"{aside[0].name.split('corrupt-')[0]}corrupt-<UTC time>, a new store started")


def test_two_workers_share_one_memory_store_and_one_summary(pytester, request) -> None:
    """`-n 2`: both workers learn into one SQLite file (WAL, busy timeout) that starts damaged, so both
    find it broken at once; it is set aside once, and the merged summary has every test."""
    tests = 4
    pytester.makepyfile(test_inner=LEARN.format(tests=tests))
    (pytester.path / "mem.sqlite").write_bytes(b"not a database" * 100)
    started = time.monotonic()
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-p", "no:randomly",
                                           "--guistate-device=sim", "--guistate-memory=mem.sqlite",
                                           "--guistate-summary=run.json", "--guistate-artifacts=out", timeout=120)
    elapsed = time.monotonic() - started
    result.assert_outcomes(passed=tests)
    assert len(list(pytester.path.glob("mem.sqlite.corrupt-*[0-9Z]"))) == 1, "set aside more than once"
    with MemoryStore(pytester.path / "mem.sqlite") as store:
        assert store.integrity() == "ok"
        assert sorted(f for f, _, _ in store.functions()) == [f"delete bob {n}" for n in range(tests)]
    summary = json.loads((pytester.path / "run.json").read_text("utf-8"))
    assert summary["totals"]["tests"] == tests
    assert sorted(summary["workers"]) == ["gw0", "gw1"], "a worker's part is missing"
    assert sorted(t["nodeid"] for t in summary["tests"]) == sorted(
        f"test_inner.py::test_learn[{n}]" for n in range(tests))
    Outcome(result, elapsed, pytester.path / "none", request.node.name).record(
        (), kept=tests, message=f"-n 2: {tests} tests passed, store integrity ok with all {tests} functions, the "
                                f"damaged file set aside once, run.json has {tests} tests from gw0+gw1")
