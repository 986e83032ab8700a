"""Kept replies in Redis, shared by replicas on several machines (beside the rooms, when
APP_ROOM_STORE is a redis:// URL): one move of the teacher runs once in the whole deployment.

Each key is a hash (owner, claim, done, error, size, expiry, last use) and a list of bodies;
one sorted set orders the keys for eviction (a finished one by its last use, a running one by
its claim's end, so a live run is never evicted) and one counter holds their bytes. Every call
is one Lua script: its checks and its writes are one atomic step. The app's clock decides
expiry; Redis keeps nothing on a timer of its own, so the counter stays true.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gradient_lab.kept.store import Entry, StoreFailed

T = TypeVar("T")
_PREFIX = "gradient-lab:kept:"
_TOUCH_SECONDS = 1.0

# KEYS: the key's hash, its bodies, the eviction order, the byte counter. ARGV[1]: the key.
_COMMON = """
local function forget(meta, bodies, key)
  local size = redis.call('HGET', meta, 'size')
  if size then redis.call('DECRBY', KEYS[4], size) end
  redis.call('DEL', meta, bodies)
  redis.call('ZREM', KEYS[3], key)
end
local function evict(max_bytes, now)
  while tonumber(redis.call('GET', KEYS[4]) or '0') > max_bytes do
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
    if #oldest == 0 then return end
    local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
    forget(prefix .. oldest[1], prefix .. oldest[1] .. ':b', oldest[1])
  end
end
local function mine(owner)
  return redis.call('HGET', KEYS[1], 'owner') == owner and
         redis.call('HGET', KEYS[1], 'done') == '0'
end
"""
# ARGV: key, start, now, touch seconds.
_READ = _COMMON + """
local m = redis.call('HMGET', KEYS[1], 'done', 'error', 'claimed', 'expires', 'used')
if not m[1] then return false end
local now = tonumber(ARGV[3])
if m[1] == '1' and m[4] ~= '' and tonumber(m[4]) <= now then
  forget(KEYS[1], KEYS[2], ARGV[1])
  return false
end
if m[1] == '1' and tonumber(m[5]) < now - tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[1], 'used', ARGV[3])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
end
local live = (m[1] == '0' and tonumber(m[3]) > now) and '1' or '0'
return {m[1], m[2] or '', live, redis.call('LRANGE', KEYS[2], tonumber(ARGV[2]), -1)}
"""
# ARGV: key, owner, now, claim's end.
_CLAIM = _COMMON + """
local m = redis.call('HMGET', KEYS[1], 'done', 'claimed', 'expires')
local now = tonumber(ARGV[3])
if m[1] == '1' and (m[3] == '' or tonumber(m[3]) > now) then return 0 end
if m[1] == '0' and tonumber(m[2]) > now then return 0 end
if m[1] then forget(KEYS[1], KEYS[2], ARGV[1]) end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'claimed', ARGV[4], 'done', '0', 'size', 0,
           'expires', '', 'used', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 1
"""
# ARGV: key, owner, body, max bytes, now.
_ADD = _COMMON + """
if not mine(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'size', #ARGV[3])
redis.call('INCRBY', KEYS[4], #ARGV[3])
evict(tonumber(ARGV[4]), tonumber(ARGV[5]))
return 1
"""
# ARGV: key, owner, error ('' for none), max bytes, now, expiry ('' for none).
_FINISH = _COMMON + """
if not mine(ARGV[2]) then return 0 end
local size = tonumber(redis.call('HGET', KEYS[1], 'size')) + #ARGV[3]
if size > tonumber(ARGV[4]) then
  forget(KEYS[1], KEYS[2], ARGV[1])
  return 0
end
redis.call('HSET', KEYS[1], 'done', '1', 'error', ARGV[3], 'size', size, 'expires', ARGV[6],
           'used', ARGV[5])
redis.call('INCRBY', KEYS[4], #ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
evict(tonumber(ARGV[4]), tonumber(ARGV[5]))
return 1
"""
# ARGV: key, owner.
_DROP = _COMMON + """
if mine(ARGV[2]) then forget(KEYS[1], KEYS[2], ARGV[1]) end
return 1
"""


class RedisStore:
    def __init__(self, url: str, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._redis = aioredis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._scripts = {name: self._redis.register_script(text) for name, text in (
            ("read", _READ), ("claim", _CLAIM), ("add", _ADD), ("finish", _FINISH),
            ("drop", _DROP))}

    async def read(self, key: str, start: int, now: float) -> Entry | None:
        found = await self._call("read", key, start, now, _TOUCH_SECONDS)
        if not found:
            return None
        done, error, live, bodies = found
        return Entry(tuple(bodies), done == b"1", error or None, claimed=live == b"1")

    async def claim(self, key: str, owner: str, now: float, seconds: float) -> bool:
        return bool(await self._call("claim", key, owner, now, now + seconds))

    async def add(self, key: str, owner: str, body: bytes, now: float) -> None:
        await self._call("add", key, owner, body, self.max_bytes, now)

    async def finish(self, key: str, owner: str, error: bytes | None, now: float,
                     lifetime: float | None) -> None:
        expires = "" if lifetime is None else repr(now + lifetime)
        await self._call("finish", key, owner, error or b"", self.max_bytes, now, expires)

    async def drop(self, key: str, owner: str) -> None:
        await self._call("drop", key, owner)

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def _call(self, script: str, key: str, *args: Any) -> Any:
        keys = [_PREFIX + key, _PREFIX + key + ":b", _PREFIX + "order", _PREFIX + "bytes"]
        return await _guarded(lambda: self._scripts[script](keys=keys,
                                                            args=[key, *map(_arg, args)]))


def _arg(value: object) -> bytes | str:
    return value if isinstance(value, bytes | str) else repr(value)


async def _guarded(call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except RedisError as error:  # down, unreachable, out of memory, timed out
        raise StoreFailed(f"the kept replies' Redis failed: {error}") from error
