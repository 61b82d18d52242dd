"""The memory file: one SQLite database that outlives runs and can be shared between CI runs.

Several pytest-xdist workers write into it at once, so it runs in WAL mode with a busy timeout
and every write is one short `BEGIN IMMEDIATE` transaction (a writer waits for the lock instead
of failing). The schema is versioned (`PRAGMA user_version`); a file written by a newer plugin is
refused with a clear error rather than half-read. Patches are PNG bytes. Flows live in
`flows.py`; ranking in `rank.py`.

Learning runs beside the test (issue 42): `beside(what, fn)` queues work that writes here (a
step's learnt looks) on the memory's own thread, in order, and every read of the store waits for
what was queued before it (`settle`), so no reader, in this test or the next, misses a learnt
look; `close` (the session's end) waits for all of it. A job that fails is said as a warning at
the next read, never lost in silence.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pytest_guistate.core.errors import GuistateWarning
from pytest_guistate.memory.rank import RankPolicy, retention
from pytest_guistate.report.background import SerialWriter

__all__ = ["SCHEMA_VERSION", "MemoryCorrupt", "MemorySchemaError", "MemoryStore", "NewPatch", "PatchEntry"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS patches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    function TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
    app TEXT NOT NULL, app_version TEXT NOT NULL DEFAULT '',
    screen_w INTEGER NOT NULL, screen_h INTEGER NOT NULL, density REAL,
    locator TEXT NOT NULL DEFAULT '', test TEXT NOT NULL DEFAULT '', step TEXT NOT NULL DEFAULT '',
    png BLOB NOT NULL, patch_w INTEGER NOT NULL, patch_h INTEGER NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL, last_access REAL NOT NULL, access_count INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS patches_by_function ON patches (function, app);
CREATE TABLE IF NOT EXISTS flows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instruction TEXT NOT NULL, template TEXT NOT NULL, steps TEXT NOT NULL, apps TEXT NOT NULL,
    test TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL, last_access REAL NOT NULL, access_count INTEGER NOT NULL DEFAULT 1
);
"""
_PATCH_COLUMNS = ("id, function, description, app, app_version, screen_w, screen_h, density, locator, test, step, "
                  "png, patch_w, patch_h, attrs, created, last_access, access_count")


class MemorySchemaError(RuntimeError):
    """The file is not a guistate memory store this plugin can read."""


class MemoryCorrupt(MemorySchemaError):
    """Damaged or someone else's: not SQLite, failing its integrity check, or an SQLite file without our
    schema. Unlike a newer schema (refused, kept as is), the plugin may set it aside (`recover.py`)."""


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """SQLITE_CORRUPT / SQLITE_NOTADB (and their extended codes); not a lock or a path problem."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return not isinstance(exc, sqlite3.OperationalError)


@dataclass(frozen=True)
class NewPatch:
    """What learning hands to the store: one visual variant of a function's element."""

    function: str
    app: str
    png: bytes
    size: tuple[int, int]  # patch width, height
    screen: tuple[int, int]
    app_version: str = ""
    description: str = ""
    density: float | None = None
    locator: str = ""
    test: str = ""
    step: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)  # the element's tree attributes (class, text, ...)


@dataclass(frozen=True)
class PatchEntry:
    id: int
    function: str
    description: str
    app: str
    app_version: str
    screen: tuple[int, int]
    density: float | None
    locator: str
    test: str
    step: str
    png: bytes
    size: tuple[int, int]
    attrs: dict[str, Any]
    created: float
    last_access: float
    access_count: int

    def summary(self) -> dict[str, Any]:
        """JSON form without the pixels (for `guistate memory list/show` and exports)."""
        return {"id": self.id, "function": self.function, "description": self.description, "app": self.app,
                "app_version": self.app_version, "screen": list(self.screen), "density": self.density,
                "locator": self.locator, "test": self.test, "step": self.step, "patch_size": list(self.size),
                "attrs": self.attrs, "created": self.created, "last_access": self.last_access,
                "access_count": self.access_count}


def _entry(row: Sequence[Any]) -> PatchEntry:
    return PatchEntry(int(row[0]), row[1], row[2], row[3], row[4], (int(row[5]), int(row[6])), row[7], row[8],
                      row[9], row[10], bytes(row[11]), (int(row[12]), int(row[13])), json.loads(row[14]),
                      float(row[15]), float(row[16]), int(row[17]))


class MemoryStore:
    """One memory file. `max_entries` caps the patches; over it, the lowest-ranked are evicted."""

    def __init__(self, path: str | Path, *, max_entries: int = 5000, policy: RankPolicy | None = None,
                 clock: Callable[[], float] = time.time, busy_timeout_s: float = 30.0,
                 check: bool = False) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.path = Path(path)
        self.max_entries, self.policy, self.clock = max_entries, policy or RankPolicy(), clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._beside = SerialWriter(inline=False, name="guistate-memory", steps_behind=64)
        self._in_job = threading.local()  # set on the memory's thread while it runs a job
        self._db = sqlite3.connect(str(self.path), timeout=busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self._open_schema()  # before WAL: a file that is not ours (or newer) is refused unchanged
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            if check:
                verdict = str(self._db.execute("PRAGMA quick_check").fetchone()[0])
                if verdict != "ok":
                    raise MemoryCorrupt(f"{self.path} fails SQLite's quick_check: {verdict}")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            kind = MemoryCorrupt if _is_corruption(exc) else MemorySchemaError
            raise kind(f"{self.path} is not a usable guistate memory store: {exc}") from exc
        except MemorySchemaError:
            self._db.close()
            raise

    # -- schema ------------------------------------------------------------------------------
    def _open_schema(self) -> None:
        with self._write() as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version > SCHEMA_VERSION:
                raise MemorySchemaError(
                    f"{self.path} has memory schema {version}, newer than this plugin's {SCHEMA_VERSION}: "
                    "upgrade pytest-guistate or point --guistate-memory at another file")
            if version == 0 and tables - {"sqlite_sequence"}:
                raise MemoryCorrupt(f"{self.path} is an SQLite file but not a guistate memory store "
                                        f"(tables {sorted(tables)}, no schema version)")
            if version == 0:
                for statement in _SCHEMA.split(";"):  # not executescript: it would COMMIT our lock away
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (f"guistate.memory/{SCHEMA_VERSION}",))
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One writer transaction; waits (busy timeout) for other processes instead of failing."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- work beside the test ---------------------------------------------------------------
    def beside(self, what: str, fn: Callable[[], object]) -> None:
        """Run `fn` on the memory's thread after every job queued before it (`what` names it in a
        warning if it fails); a read of the store waits for it (`settle`)."""
        self._beside.submit(what, self._job, fn, step=True)

    def _job(self, fn: Callable[[], object]) -> None:
        self._in_job.active = True
        try:
            fn()
        finally:
            self._in_job.active = False

    def settle(self) -> None:
        """Wait for the work queued beside the test; a job that failed is a `GuistateWarning`. A
        job's own reads do not wait (for themselves)."""
        if getattr(self._in_job, "active", False):
            return
        for what, exc in self._beside.drain():
            warnings.warn(GuistateWarning(f"the memory ({self.path}) could not finish {what}: "
                                          f"{type(exc).__name__}: {exc}"), stacklevel=3)

    # -- patches -----------------------------------------------------------------------------
    def add_patch(self, patch: NewPatch) -> int:
        """Insert a variant (access count 1) and evict over the cap; returns its id."""
        if not patch.png.startswith(b"\x89PNG"):
            raise ValueError(f"patch for {patch.function!r} is not PNG bytes")
        if not patch.function.strip() or not patch.app.strip():
            raise ValueError(f"a patch needs a function and an app, got {patch.function!r} / {patch.app!r}")
        now = self.clock()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO patches (function, description, app, app_version, screen_w, screen_h, density, locator,"
                " test, step, png, patch_w, patch_h, attrs, created, last_access, access_count)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (patch.function, patch.description, patch.app, patch.app_version, patch.screen[0], patch.screen[1],
                 patch.density, patch.locator, patch.test, patch.step, sqlite3.Binary(patch.png), patch.size[0],
                 patch.size[1], json.dumps(patch.attrs, sort_keys=True), now, now))
            new_id = int(cursor.lastrowid or 0)
            self._evict(db, now, keep=new_id)
        return new_id

    def _evict(self, db: sqlite3.Connection, now: float, keep: int | None = None) -> int:
        rows = db.execute("SELECT id, created, last_access, access_count FROM patches").fetchall()
        excess = len(rows) - self.max_entries
        if excess <= 0:
            return 0
        rows.sort(key=lambda r: (retention(now - r[2], r[3], self.policy.half_life_s), r[1]))
        doomed = [r[0] for r in rows if r[0] != keep][:excess]
        db.executemany("DELETE FROM patches WHERE id = ?", [(i,) for i in doomed])
        return len(doomed)

    def patches(self, function: str | None = None, app: str | None = None) -> list[PatchEntry]:
        sql, args = f"SELECT {_PATCH_COLUMNS} FROM patches", []
        where = [(c, v) for c, v in (("function", function), ("app", app)) if v is not None]
        if where:
            sql += " WHERE " + " AND ".join(f"{c} = ?" for c, _ in where)
            args = [v for _, v in where]
        self.settle()
        with self._lock:
            return [_entry(row) for row in self._db.execute(sql + " ORDER BY id", args)]

    def get(self, entry_id: int) -> PatchEntry:
        self.settle()
        with self._lock:
            row = self._db.execute(f"SELECT {_PATCH_COLUMNS} FROM patches WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise KeyError(f"no memory entry {entry_id} in {self.path}")
        return _entry(row)

    def touch(self, ids: Sequence[int]) -> None:
        """Count an access (a retrieval that was used): recency and frequency for ranking."""
        now = self.clock()
        with self._write() as db:
            db.executemany("UPDATE patches SET last_access = ?, access_count = access_count + 1 WHERE id = ?",
                           [(now, i) for i in ids])

    def delete(self, ids: Sequence[int]) -> int:
        with self._write() as db:
            return sum(db.execute("DELETE FROM patches WHERE id = ?", (i,)).rowcount for i in ids)

    def prune(self, *, max_entries: int | None = None, older_than_s: float | None = None) -> int:
        """Drop entries unused for `older_than_s`, then the lowest-ranked over `max_entries`."""
        now, removed = self.clock(), 0
        with self._write() as db:
            if older_than_s is not None:
                removed += db.execute("DELETE FROM patches WHERE last_access < ?", (now - older_than_s,)).rowcount
            if max_entries is not None:
                saved, self.max_entries = self.max_entries, max_entries
                try:
                    removed += self._evict(db, now)
                finally:
                    self.max_entries = saved
        return removed

    def count(self) -> int:
        self.settle()
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM patches").fetchone()[0])

    def functions(self) -> list[tuple[str, str, int]]:
        """(function, app, variants) for `guistate memory list`."""
        self.settle()
        with self._lock:
            rows = self._db.execute("SELECT function, app, COUNT(*) FROM patches GROUP BY function, app "
                                    "ORDER BY function, app").fetchall()
        return [(r[0], r[1], int(r[2])) for r in rows]

    def import_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Rows as they are (timestamps and counts kept), in the given order, one transaction (merge.py)."""
        if table not in ("patches", "flows") or not all(c.isidentifier() for c in columns):
            raise ValueError(f"no memory table {table!r} with columns {list(columns)}")
        marks = ", ".join("?" for _ in columns)
        with self._write() as db:
            db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                           [[sqlite3.Binary(v) if isinstance(v, bytes) else v for v in row] for row in rows])

    # -- plumbing used by flows.py -----------------------------------------------------------
    def execute_write(self, sql: str, args: Sequence[Any]) -> int:
        with self._write() as db:
            return int(db.execute(sql, args).lastrowid or 0)

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.settle()
        with self._lock:
            return list(self._db.execute(sql, args).fetchall())

    def integrity(self) -> str:
        """SQLite's own check ("ok" when the file is sound)."""
        self.settle()
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        """Finish the work queued beside the tests (nothing learnt is lost), then close the file."""
        self.settle()
        self._beside.close()
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
