"""The memory file: schema version, eviction cap, ranking and decay, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.memory import SCHEMA_VERSION, MemorySchemaError, MemoryStore, NewPatch, RankPolicy, rank, retention


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _png(seed: int, size: tuple[int, int] = (40, 24)) -> bytes:
    rng = np.random.default_rng(seed)
    return cv2.imencode(".png", rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8))[1].tobytes()


def _patch(function: str = "add to cart", seed: int = 0, app: str = "com.example") -> NewPatch:
    return NewPatch(function=function, app=app, png=_png(seed), size=(40, 24), screen=(1080, 2400), app_version="1",
                    locator="id=add_to_cart", test="t", step=f"s{seed}", density=2.625, attrs={"rid": "x"})


def test_new_store_has_the_schema_version_and_round_trips(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")
    assert store.schema_version == SCHEMA_VERSION
    entry_id = store.add_patch(_patch())
    entry = store.get(entry_id)
    assert (entry.function, entry.app, entry.app_version, entry.screen, entry.density) == (
        "add to cart", "com.example", "1", (1080, 2400), 2.625)
    assert entry.png == _patch().png and entry.access_count == 1 and entry.created == entry.last_access
    assert store.integrity() == "ok"
    assert sqlite3.connect(tmp_path / "m.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "m.sqlite").close()
    db = sqlite3.connect(tmp_path / "m.sqlite")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(MemorySchemaError, match="newer than this plugin"):
        MemoryStore(tmp_path / "m.sqlite")


def test_foreign_sqlite_and_garbage_files_are_refused(tmp_path: Path) -> None:
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE users (name TEXT)")
    other.commit()
    other.close()
    with pytest.raises(MemorySchemaError, match="not a guistate memory store"):
        MemoryStore(tmp_path / "other.sqlite")
    (tmp_path / "junk.sqlite").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(MemorySchemaError):
        MemoryStore(tmp_path / "junk.sqlite")


def test_bad_patch_is_refused(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")
    with pytest.raises(ValueError, match="not PNG"):
        store.add_patch(NewPatch("f", "app", b"GIF89a", (1, 1), (1, 1)))


def test_retention_decays_slower_when_used_often() -> None:
    day = 86400.0
    assert retention(0, 1, 30 * day) == 1.0
    assert retention(30 * day, 1, 30 * day) == pytest.approx(0.5)
    assert retention(30 * day, 8, 30 * day) > retention(30 * day, 2, 30 * day) > retention(30 * day, 1, 30 * day)
    assert retention(60 * day, 1, 30 * day) < retention(30 * day, 1, 30 * day)


def test_rank_relevance_first_then_recency_frequency_ties_to_newer(tmp_path: Path) -> None:
    clock = Clock()
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock)
    old_used = store.add_patch(_patch(seed=1))
    clock.t += 1
    twin = store.add_patch(_patch(seed=2))  # same score as `fresh` below except age: newer wins
    clock.t += 1
    fresh = store.add_patch(_patch(seed=3))
    other_app = store.add_patch(_patch(seed=4, app="com.other"))
    for _ in range(5):
        store.touch([old_used])
    clock.t += 40 * 86400  # everything is old now; old_used was used 6 times
    entries = store.patches("add to cart")

    def relevance(e):
        return 1.0 if e.app == "com.example" else 0.2

    ranked = rank(entries, relevance, clock(), RankPolicy(top_n=3, top_k=4))
    assert [e.id for e in ranked] == [old_used, fresh, twin]  # the other app is cut by top_n (relevance first)
    assert other_app not in [e.id for e in ranked]


def test_cap_evicts_the_lowest_ranked(tmp_path: Path) -> None:
    clock = Clock()
    store = MemoryStore(tmp_path / "m.sqlite", max_entries=3, clock=clock)
    ids = []
    for seed in range(3):
        ids.append(store.add_patch(_patch(seed=seed)))
        clock.t += 3600
    store.touch([ids[0]])  # the oldest entry is in use: it must survive
    clock.t += 3600
    ids.append(store.add_patch(_patch(seed=9)))
    kept = [e.id for e in store.patches()]
    assert len(kept) == 3 and ids[1] not in kept and ids[0] in kept and ids[3] in kept
    assert store.prune(max_entries=1) == 2 and store.count() == 1


def _writer(path: str, worker: int, n: int) -> None:
    store = MemoryStore(path)
    for i in range(n):
        store.add_patch(_patch(function=f"fn{worker}", seed=worker * 1000 + i))
        if i % 5 == 0:
            store.touch([1])
    store.close()


def test_four_processes_learning_into_one_store(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    MemoryStore(path).close()
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(path, w, 30)) for w in range(4)]
    for proc in workers:
        proc.start()
    for proc in workers:
        proc.join(60)
        assert proc.exitcode == 0
    store = MemoryStore(path)
    assert store.integrity() == "ok"
    assert store.count() == 120
    assert sorted(store.functions()) == [(f"fn{w}", "com.example", 30) for w in range(4)]
    for entry in store.patches():
        worker, i = divmod(int(entry.step[1:]), 1000)
        assert entry.png == _png(worker * 1000 + i)  # nothing torn or swapped
    assert store.get(1).access_count == 1 + 6 * 4


def test_learning_beside_the_test_is_read_by_the_next_reader(tmp_path: Path) -> None:
    """Issue 42: a step's learning is queued beside the test (`beside` returns before it ran); any read
    of the store waits for it, so no reader misses a learnt look."""
    store = MemoryStore(tmp_path / "m.sqlite")
    release, ran_on = threading.Event(), []

    def learn() -> None:
        release.wait(10)
        ran_on.append(threading.current_thread().name)
        store.add_patch(_patch())
        assert store.count() == 1  # a job's own read does not wait for itself

    store.beside("learning", learn)
    assert ran_on == []  # not run on the caller's thread
    release.set()
    assert [p.function for p in store.patches()] == ["add to cart"]
    assert ran_on and ran_on[0] != threading.current_thread().name
    store.close()


def test_learning_queued_at_the_end_is_not_lost(tmp_path: Path) -> None:
    """The session's end (`close`) finishes what was queued: the look is in the file."""
    store = MemoryStore(tmp_path / "m.sqlite")
    release = threading.Event()
    store.beside("learning", lambda: (release.wait(10), store.add_patch(_patch())))
    threading.Timer(0.05, release.set).start()
    store.close()
    with MemoryStore(tmp_path / "m.sqlite") as again:
        assert again.count() == 1


def test_a_learning_job_that_fails_is_a_warning_at_the_next_read(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")

    def broken() -> None:
        raise ValueError("no pixels")

    store.beside("learning step 3's looks", broken)
    store.beside("learning", lambda: store.add_patch(_patch()))  # the next job still runs
    with pytest.warns(GuistateWarning, match="could not finish learning step 3's looks: ValueError: no pixels"):
        assert store.count() == 1
    store.close()
