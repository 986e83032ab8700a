"""Rooms in Redis, shared by replicas on several machines (APP_ROOM_STORE=redis://...).

Each room is three hashes (the room; its students; their answers to its question) that expire
together after the idle time, and one sorted set of the live rooms by expiry, which bounds
their number; a second sorted set holds the codes of rooms their teachers ended, by when each
stops saying so. Every write is one Lua script, so its checks and its writes are one atomic
step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gradient_lab.rooms import errors
from gradient_lab.rooms.model import Lead, Limits, Question, Room, Stamp, Student
from gradient_lab.rooms.store import dump_question, load_question

T = TypeVar("T")

# KEYS: the room, its students, its answers, the live rooms, the ended ones. ARGV[1..4]: the
# code, now, the new expiry (both seconds since the epoch, by the app's clock), and how long
# Redis keeps the keys, in ms (past the expiry: the app's clock decides, Redis only cleans up).
_COMMON = """
local function live()
  local expires = redis.call('HGET', KEYS[1], 'expires')
  return expires and tonumber(expires) > tonumber(ARGV[2])
end
local function gone()
  local ended = redis.call('ZSCORE', KEYS[5], ARGV[1])
  if ended and tonumber(ended) > tonumber(ARGV[2]) then return 'ended' end
  return 'gone'
end
local function touch()
  redis.call('HSET', KEYS[1], 'expires', ARGV[3])
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
end
"""
_CREATE = _COMMON + """
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[2])
if live() then return 'taken' end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[6]) then
  -- full: take back the rooms no teacher has led since ARGV[8] (ARGV[7]: the keys' prefix)
  for _, code in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    local room = ARGV[7] .. 'room:' .. code
    local led = redis.call('HGET', room, 'led')
    if not led or tonumber(led) <= tonumber(ARGV[8]) then
      redis.call('DEL', room, room .. ':students', room .. ':answers')
      redis.call('ZREM', KEYS[4], code)
    end
  end
  if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[6]) then return 'full' end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'token', ARGV[5], 'address', '', 'question', '', 'qid', '',
           'revealed', '0', 'version', 1, 'crowd', 0, 'seq', 0, 'led', ARGV[2])
touch()
return 'ok'
"""
_JOIN = _COMMON + """
if not live() then return gone() end
local old = redis.call('HGET', KEYS[2], ARGV[5])
local seq
if old then
  seq = string.match(old, '^(%d+):')
else
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[7]) then return 'full' end
  seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
end
redis.call('HSET', KEYS[2], ARGV[5], seq .. ':' .. ARGV[6])
redis.call('HINCRBY', KEYS[1], 'crowd', 1)
touch()
return 'ok'
"""
_LEAVE = _COMMON + """
if redis.call('HDEL', KEYS[2], ARGV[5]) == 1 then
  redis.call('HDEL', KEYS[3], ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'crowd', 1)
  touch()
end
return 'ok'
"""
_LEAD = _COMMON + """
if not live() then return gone() end
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[5] then return 'forbidden' end
if ARGV[11] == '1' and redis.call('HGET', KEYS[1], 'question') == '' then
  return 'no question'
end
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  redis.call('ZREM', KEYS[4], ARGV[1])
  -- its code says it ended until now + ARGV[12] s; past ARGV[13] such codes, the oldest go
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[2])
  redis.call('ZADD', KEYS[5], tonumber(ARGV[2]) + tonumber(ARGV[12]), ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -tonumber(ARGV[13]) - 1)
  return 'ok'
end
redis.call('HSET', KEYS[1], 'led', ARGV[2])
local version, crowd = 0, 0
if ARGV[7] == '1' then redis.call('HSET', KEYS[1], 'address', ARGV[8]); version = 1 end
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[1], 'question', ARGV[9], 'qid', ARGV[10], 'revealed', '0')
  redis.call('DEL', KEYS[3])
  version, crowd = 1, 1
end
if ARGV[11] == '1' and redis.call('HGET', KEYS[1], 'revealed') == '0' then
  redis.call('HSET', KEYS[1], 'revealed', '1')
  version, crowd = 1, 1
end
redis.call('HINCRBY', KEYS[1], 'version', version)
redis.call('HINCRBY', KEYS[1], 'crowd', crowd)
touch()
return 'ok'
"""
_ANSWER = _COMMON + """
if not live() then return gone() end
if redis.call('HEXISTS', KEYS[2], ARGV[5]) == 0 then return 'stranger' end
local room = redis.call('HMGET', KEYS[1], 'qid', 'revealed')
if room[1] ~= ARGV[6] or room[2] == '1' then return 'closed' end
redis.call('HSET', KEYS[3], ARGV[5], ARGV[7])
redis.call('HINCRBY', KEYS[1], 'crowd', 1)
touch()
return 'ok'
"""


class RedisStore:
    def __init__(self, url: str, prefix: str = "gradient-lab:") -> None:
        self.url = url
        self.prefix = prefix
        self._redis = aioredis.Redis.from_url(url, decode_responses=True, socket_timeout=5,
                                              socket_connect_timeout=5)
        self._scripts = {name: self._redis.register_script(text) for name, text in (
            ("create", _CREATE), ("join", _JOIN), ("leave", _LEAVE), ("lead", _LEAD),
            ("answer", _ANSWER))}

    async def create(self, code: str, token_hash: str, now: float, limits: Limits) -> bool:
        said = await self._script("create", code, now, limits, token_hash, limits.rooms,
                                  self.prefix, now - limits.unattended_seconds)
        if said == "full":
            raise errors.rooms_full(limits.rooms)
        return bool(said == "ok")

    async def join(self, code: str, student: str, nickname: str, now: float,
                   limits: Limits) -> None:
        said = await self._script("join", code, now, limits, student, nickname, limits.students)
        _raise_if_missing(said, code)
        if said == "full":
            raise errors.room_full(limits.students)

    async def leave(self, code: str, student: str, now: float, limits: Limits) -> None:
        await self._script("leave", code, now, limits, student)

    async def lead(self, code: str, token_hash: str, lead: Lead, now: float,
                   limits: Limits) -> None:
        question = lead.question
        said = await self._script(
            "lead", code, now, limits, token_hash, int(lead.end), int(lead.address is not None),
            lead.address or "", dump_question(question) if question else "",
            question.id if question else "", int(lead.reveal), limits.ended_seconds,
            limits.rooms)
        _raise_if_missing(said, code)
        if said == "forbidden":
            raise errors.not_teacher()
        if said == "no question":
            raise errors.question_closed("there is no question to reveal")

    async def question(self, code: str, now: float) -> Question | None:
        text, revealed, expires = await self._call(
            lambda: self._redis.hmget(self._key(code), ["question", "revealed", "expires"]))
        if expires is None or float(expires) <= now:
            raise errors.room_ended(code) if await self._ended(code, now) \
                else errors.room_not_found(code)
        return load_question(str(text), revealed == "1")

    async def answer(self, code: str, student: str, question: str, value: str, now: float,
                     limits: Limits) -> None:
        said = await self._script("answer", code, now, limits, student, question, value)
        _raise_if_missing(said, code)
        if said == "stranger":
            raise errors.not_in_room()
        if said == "closed":
            raise errors.question_closed("this question is closed: its answer was revealed "
                                         "or the teacher asked another")

    async def get(self, code: str, now: float) -> Room | None:
        async def read() -> list[Any]:
            async with self._redis.pipeline(transaction=True) as pipe:  # one snapshot
                for key in self._keys(code)[:3]:
                    pipe.hgetall(key)
                return list(await pipe.execute())
        room, students, answers = await self._call(read)
        if not room or float(room["expires"]) <= now:
            if await self._ended(code, now):
                raise errors.room_ended(code)
            return None
        joined = sorted((int(value.split(":", 1)[0]), sid, value.split(":", 1)[1])
                        for sid, value in students.items())
        return Room(code, int(room["version"]), int(room["crowd"]), room["address"],
                    load_question(room["question"], room["revealed"] == "1"),
                    tuple(Student(sid, nickname) for _, sid, nickname in joined), answers)

    async def stamps(self, codes: Iterable[str], now: float) -> dict[str, Stamp]:
        wanted = list(codes)

        async def read() -> list[Any]:
            async with self._redis.pipeline(transaction=False) as pipe:
                for code in wanted:
                    pipe.hmget(self._key(code), ["version", "crowd", "expires"])
                return list(await pipe.execute())
        rows = await self._call(read) if wanted else []
        return {code: (int(version), int(crowd))
                for code, (version, crowd, expires) in zip(wanted, rows, strict=True)
                if expires is not None and float(expires) > now}

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def _ended(self, code: str, now: float) -> bool:
        """Whether the teacher of room `code` ended it lately (asked when no room is live)."""
        ended = await self._call(lambda: self._redis.zscore(self._keys(code)[4], code))
        return ended is not None and ended > now

    def _key(self, code: str) -> str:
        return f"{self.prefix}room:{code}"

    def _keys(self, code: str) -> list[str]:
        room = self._key(code)
        return [room, room + ":students", room + ":answers", self.prefix + "rooms",
                self.prefix + "ended"]

    async def _script(self, name: str, code: str, now: float, limits: Limits,
                      *args: str | float) -> str:
        script = self._scripts[name]
        keep_ms = int((limits.idle_seconds + 60) * 1000)
        argv = [code, now, now + limits.idle_seconds, keep_ms, *args]
        said = await self._call(lambda: script(keys=self._keys(code), args=argv))
        return str(said)

    @staticmethod
    async def _call(work: Callable[[], Awaitable[T]]) -> T:
        try:
            return await work()
        except RedisError as error:  # down, unreachable, out of memory, timed out
            raise errors.unavailable(error) from error


def _raise_if_missing(said: str, code: str) -> None:
    if said == "ended":
        raise errors.room_ended(code)
    if said == "gone":
        raise errors.room_not_found(code)
