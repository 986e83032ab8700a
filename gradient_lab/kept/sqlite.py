"""Kept replies in one SQLite file, shared by every server process on this machine (the
default, beside the rooms' file): one move of the teacher runs once, whichever process gets it.

WAL mode, one short transaction per call, from one thread of each process, off the event loop
(as rooms/sqlite.py does). Bodies are stored deflated, in that thread: a reply's JSON shrinks
several times, and the file's writes and the store's bound count what is written.
"""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from gradient_lab.kept.store import Entry, StoreFailed

T = TypeVar("T")
_TOUCH_SECONDS = 1.0  # a finished entry's last use is rewritten at most this often
# zlib's fastest level: a race's JSON deflates 2.6 times, a graph's 4, an attacker's megabytes
# of empty lists a few hundred times, in a few ms a megabyte.
_LEVEL = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept (
    key TEXT PRIMARY KEY, owner TEXT NOT NULL, claimed_until REAL NOT NULL,
    done INTEGER NOT NULL DEFAULT 0, error BLOB, size INTEGER NOT NULL DEFAULT 0,
    expires REAL, used REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS kept_used ON kept (done, used);
CREATE TABLE IF NOT EXISTS kept_bodies (
    key TEXT NOT NULL, i INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (key, i));
"""


class SqliteStore:
    def __init__(self, path: str | Path, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="kept-sqlite")
        self._db: sqlite3.Connection | None = None

    async def read(self, key: str, start: int, now: float) -> Entry | None:
        def read(db: sqlite3.Connection) -> Entry | None:
            row = db.execute("SELECT done, error, claimed_until, expires, used FROM kept "
                             "WHERE key = ?", (key,)).fetchone()
            if row is None or (row[0] and row[3] is not None and row[3] <= now):
                return None
            bodies = db.execute("SELECT body FROM kept_bodies WHERE key = ? AND i >= ? "
                                "ORDER BY i", (key, start)).fetchall()
            if row[0] and row[4] < now - _TOUCH_SECONDS:
                db.execute("UPDATE kept SET used = ? WHERE key = ?", (now, key))
            return Entry(tuple(zlib.decompress(body) for (body,) in bodies), bool(row[0]), row[1],
                         claimed=not row[0] and row[2] > now)
        return await self._transaction(read)

    async def claim(self, key: str, owner: str, now: float, seconds: float) -> bool:
        def claim(db: sqlite3.Connection) -> bool:
            row = db.execute("SELECT done, claimed_until, expires FROM kept WHERE key = ?",
                             (key,)).fetchone()
            if row is not None:
                done, claimed_until, expires = row
                if (done and (expires is None or expires > now)) or \
                        (not done and claimed_until > now):
                    return False
                _forget(db, key)
            db.execute("INSERT INTO kept (key, owner, claimed_until, used) VALUES (?, ?, ?, ?)",
                       (key, owner, now + seconds, now))
            return True
        return await self._transaction(claim)

    async def add(self, key: str, owner: str, body: bytes, now: float) -> None:
        def add(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT size FROM kept WHERE key = ? AND owner = ? AND done = 0",
                             (key, owner)).fetchone()
            if row is None:
                return
            count = db.execute("SELECT count(*) FROM kept_bodies WHERE key = ?",
                               (key,)).fetchone()[0]
            packed = zlib.compress(body, _LEVEL)
            db.execute("INSERT INTO kept_bodies (key, i, body) VALUES (?, ?, ?)",
                       (key, count, packed))
            db.execute("UPDATE kept SET size = size + ? WHERE key = ?", (len(packed), key))
            _evict(db, self.max_bytes)
        await self._transaction(add)

    async def finish(self, key: str, owner: str, error: bytes | None, now: float,
                     lifetime: float | None) -> None:
        def finish(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT size FROM kept WHERE key = ? AND owner = ? AND done = 0",
                             (key, owner)).fetchone()
            if row is None:
                return
            size = row[0] + len(error or b"")
            if size > self.max_bytes:
                _forget(db, key)  # larger than the whole store: not kept
                return
            db.execute("UPDATE kept SET done = 1, error = ?, size = ?, expires = ?, used = ? "
                       "WHERE key = ?",
                       (error, size, None if lifetime is None else now + lifetime, now, key))
            _evict(db, self.max_bytes)
        await self._transaction(finish)

    async def drop(self, key: str, owner: str) -> None:
        def drop(db: sqlite3.Connection) -> None:
            if db.execute("SELECT 1 FROM kept WHERE key = ? AND owner = ? AND done = 0",
                          (key, owner)).fetchone():
                _forget(db, key)
        await self._transaction(drop)

    async def aclose(self) -> None:
        def close() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None
        await asyncio.get_running_loop().run_in_executor(self._thread, close)
        self._thread.shutdown()

    async def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")  # the write lock first: no deadlock between readers
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, run)
        except (sqlite3.Error, OSError) as error:  # locked too long, a full or read-only disk
            raise StoreFailed(f"the kept replies' file failed: {error}") from error

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a lost reply is only run again
            db.executescript(_SCHEMA)
            self._db = db
        return self._db


def _forget(db: sqlite3.Connection, key: str) -> None:
    db.execute("DELETE FROM kept_bodies WHERE key = ?", (key,))
    db.execute("DELETE FROM kept WHERE key = ?", (key,))


def _evict(db: sqlite3.Connection, max_bytes: int) -> None:
    """Finished entries go, least recently used first, until all fit."""
    total = db.execute("SELECT coalesce(sum(size), 0) FROM kept").fetchone()[0]
    while total > max_bytes:
        oldest = db.execute("SELECT key, size FROM kept WHERE done = 1 ORDER BY used "
                            "LIMIT 64").fetchall()
        if not oldest:
            return
        for key, size in oldest:
            _forget(db, key)
            total -= size
            if total <= max_bytes:
                return
