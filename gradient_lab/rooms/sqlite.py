"""Rooms in one SQLite file, shared by every server process on this machine (the default).

WAL mode: readers never wait for the writer, and each write is one short `BEGIN IMMEDIATE`
transaction, so processes take turns at the file's write lock (waiting up to 5 s) instead of
failing. Each process talks to the file from one thread of its own, off the event loop.
"""

from __future__ import annotations

import asyncio
import hmac
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from gradient_lab.rooms import errors
from gradient_lab.rooms.model import Lead, Limits, Question, Room, Stamp, Student
from gradient_lab.rooms.store import dump_question, load_question

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, address TEXT NOT NULL DEFAULT '',
    question TEXT, revealed INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1, crowd INTEGER NOT NULL DEFAULT 0, expires REAL NOT NULL,
    led REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS rooms_expires ON rooms (expires);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL REFERENCES rooms ON DELETE CASCADE, id TEXT NOT NULL,
    nickname TEXT NOT NULL, PRIMARY KEY (code, id));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL REFERENCES rooms ON DELETE CASCADE, student TEXT NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS ended (code TEXT PRIMARY KEY, expires REAL NOT NULL);
"""


class SqliteStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="rooms-sqlite")
        self._db: sqlite3.Connection | None = None

    async def create(self, code: str, token_hash: str, now: float, limits: Limits) -> bool:
        def create(db: sqlite3.Connection) -> bool:
            db.execute("DELETE FROM rooms WHERE expires <= ?", (now,))
            if _count(db) >= limits.rooms:  # full: take back the rooms no teacher leads
                db.execute("DELETE FROM rooms WHERE led <= ?",
                           (now - limits.unattended_seconds,))
                if _count(db) >= limits.rooms:
                    raise errors.rooms_full(limits.rooms)
            inserted = db.execute(
                "INSERT INTO rooms (code, token_hash, expires, led) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING", (code, token_hash, now + limits.idle_seconds, now))
            return inserted.rowcount == 1
        return await self._write(create)

    async def join(self, code: str, student: str, nickname: str, now: float,
                   limits: Limits) -> None:
        def join(db: sqlite3.Connection) -> None:
            _live(db, code, now)
            known = db.execute("SELECT 1 FROM students WHERE code = ? AND id = ?",
                               (code, student)).fetchone()
            if known:
                db.execute("UPDATE students SET nickname = ? WHERE code = ? AND id = ?",
                           (nickname, code, student))
            else:
                count = db.execute("SELECT count(*) FROM students WHERE code = ?",
                                   (code,)).fetchone()[0]
                if count >= limits.students:
                    raise errors.room_full(limits.students)
                db.execute("INSERT INTO students (code, id, nickname) VALUES (?, ?, ?)",
                           (code, student, nickname))
            _changed(db, code, now, limits, crowd=True)
        await self._write(join)

    async def leave(self, code: str, student: str, now: float, limits: Limits) -> None:
        def leave(db: sqlite3.Connection) -> None:
            gone = db.execute("DELETE FROM students WHERE code = ? AND id = ?", (code, student))
            if gone.rowcount:
                db.execute("DELETE FROM answers WHERE code = ? AND student = ?", (code, student))
                _changed(db, code, now, limits, crowd=True)
        await self._write(leave)

    async def lead(self, code: str, token_hash: str, lead: Lead, now: float,
                   limits: Limits) -> None:
        def lead_(db: sqlite3.Connection) -> None:
            room = _live(db, code, now)
            if not hmac.compare_digest(room["token_hash"], token_hash):
                raise errors.not_teacher()
            if lead.end:
                db.execute("DELETE FROM rooms WHERE code = ?", (code,))
                db.execute("DELETE FROM ended WHERE expires <= ?", (now,))
                db.execute("INSERT OR REPLACE INTO ended (code, expires) VALUES (?, ?)",
                           (code, now + limits.ended_seconds))
                db.execute("DELETE FROM ended WHERE code NOT IN "
                           "(SELECT code FROM ended ORDER BY expires DESC LIMIT ?)",
                           (limits.rooms,))
                return
            db.execute("UPDATE rooms SET led = ? WHERE code = ?", (now, code))
            version = crowd = False
            if lead.address is not None:
                db.execute("UPDATE rooms SET address = ? WHERE code = ?", (lead.address, code))
                version = True
            if lead.question is not None:
                db.execute("UPDATE rooms SET question = ?, revealed = 0 WHERE code = ?",
                           (dump_question(lead.question), code))
                db.execute("DELETE FROM answers WHERE code = ?", (code,))
                version = crowd = True
            if lead.reveal:
                if room["question"] is None:
                    raise errors.question_closed("there is no question to reveal")
                if not room["revealed"]:  # a second reveal (a double click) changes nothing
                    db.execute("UPDATE rooms SET revealed = 1 WHERE code = ?", (code,))
                    version = crowd = True
            _changed(db, code, now, limits, version=version, crowd=crowd)
        await self._write(lead_)

    async def question(self, code: str, now: float) -> Question | None:
        return await self._run(lambda db: _question(_live(db, code, now)))

    async def answer(self, code: str, student: str, question: str, value: str, now: float,
                     limits: Limits) -> None:
        def answer(db: sqlite3.Connection) -> None:
            room = _live(db, code, now)
            if not db.execute("SELECT 1 FROM students WHERE code = ? AND id = ?",
                              (code, student)).fetchone():
                raise errors.not_in_room()
            current = _question(room)
            if current is None or current.id != question or current.revealed:
                raise errors.question_closed("this question is closed: its answer was revealed "
                                             "or the teacher asked another")
            db.execute("INSERT OR REPLACE INTO answers (code, student, value) VALUES (?, ?, ?)",
                       (code, student, value))
            _changed(db, code, now, limits, crowd=True)
        await self._write(answer)

    async def get(self, code: str, now: float) -> Room | None:
        def get(db: sqlite3.Connection) -> Room | None:
            db.execute("BEGIN")  # one snapshot for the three reads
            try:
                room = db.execute("SELECT * FROM rooms WHERE code = ? AND expires > ?",
                                  (code, now)).fetchone()
                if room is None:
                    if _ended(db, code, now):
                        raise errors.room_ended(code)
                    return None
                students = db.execute("SELECT id, nickname FROM students WHERE code = ? "
                                      "ORDER BY rowid", (code,)).fetchall()
                answers = db.execute("SELECT student, value FROM answers WHERE code = ?",
                                     (code,)).fetchall()
            finally:
                db.execute("COMMIT")
            return Room(code, room["version"], room["crowd"], room["address"], _question(room),
                        tuple(Student(s["id"], s["nickname"]) for s in students),
                        {a["student"]: a["value"] for a in answers})
        return await self._run(get)

    async def stamps(self, codes: Iterable[str], now: float) -> dict[str, Stamp]:
        wanted = list(codes)

        def stamps(db: sqlite3.Connection) -> dict[str, Stamp]:
            marks = ",".join("?" * len(wanted))
            rows = db.execute(f"SELECT code, version, crowd FROM rooms WHERE expires > ? "
                              f"AND code IN ({marks})", (now, *wanted)).fetchall()
            return {row["code"]: (row["version"], row["crowd"]) for row in rows}
        return await self._run(stamps) if wanted else {}

    async def aclose(self) -> None:
        def close(db: sqlite3.Connection) -> None:
            db.close()
            self._db = None
        if self._db is not None:
            await self._run(close)
        self._thread.shutdown()

    async def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def write(db: sqlite3.Connection) -> T:
            db.execute("BEGIN IMMEDIATE")  # the write lock first: no deadlock between readers
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result
        return await self._run(write)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            return work(self._connection())
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, run)
        except (sqlite3.Error, OSError) as error:  # locked too long, a full or read-only disk
            raise errors.unavailable(error) from error

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None,
                                 check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # WAL: durable but for the last commits
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(_SCHEMA)
            if "led" not in {row["name"] for row in db.execute("PRAGMA table_info(rooms)")}:
                db.execute("ALTER TABLE rooms ADD COLUMN led REAL NOT NULL DEFAULT 0")
            self._db = db
        return self._db


def _count(db: sqlite3.Connection) -> int:
    count: int = db.execute("SELECT count(*) FROM rooms").fetchone()[0]
    return count


def _live(db: sqlite3.Connection, code: str, now: float) -> Any:
    room = db.execute("SELECT * FROM rooms WHERE code = ? AND expires > ?",
                      (code, now)).fetchone()
    if room is None:
        raise errors.room_ended(code) if _ended(db, code, now) else errors.room_not_found(code)
    return room


def _ended(db: sqlite3.Connection, code: str, now: float) -> bool:
    return db.execute("SELECT 1 FROM ended WHERE code = ? AND expires > ?",
                      (code, now)).fetchone() is not None


def _changed(db: sqlite3.Connection, code: str, now: float, limits: Limits, *,
             version: bool = False, crowd: bool = False) -> None:
    db.execute("UPDATE rooms SET version = version + ?, crowd = crowd + ?, expires = ? "
               "WHERE code = ?", (int(version), int(crowd), now + limits.idle_seconds, code))



def _question(room: Any) -> Question | None:
    return load_question(room["question"], bool(room["revealed"]))
