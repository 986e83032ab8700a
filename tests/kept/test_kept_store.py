"""The kept-replies store's contract, held against all three: memory, SQLite and Redis."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from gradient_lab.kept import Keeper
from gradient_lab.kept.store import Entry
from tests.kept.conftest import MAX_BYTES

pytestmark = pytest.mark.anyio
NOW = 1_000_000.0


async def test_nothing_is_kept_under_a_key_never_claimed(keeper: Keeper) -> None:
    assert await keeper.store.read("k", 0, NOW) is None


async def test_a_finished_reply_is_read_whole_from_any_body(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", b"one", NOW)
    await store.add("k", "a", b"two", NOW)
    assert await store.read("k", 0, NOW) == Entry((b"one", b"two"), False, claimed=True)
    await store.finish("k", "a", None, NOW, None)
    assert await store.read("k", 0, NOW + 1e6) == Entry((b"one", b"two"), True)
    assert await store.read("k", 1, NOW) == Entry((b"two",), True)


async def test_an_error_is_kept_beside_the_bodies(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.finish("k", "a", b'{"type": "program_error"}', NOW, None)
    assert await store.read("k", 0, NOW) == Entry((), True, b'{"type": "program_error"}')


async def test_a_live_claim_holds_off_another_until_it_lapses(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", b"one", NOW)
    assert not await store.claim("k", "b", NOW + 5, 10)
    await store.add("k", "b", b"not b's", NOW)  # b holds no claim: ignored
    assert await store.read("k", 0, NOW + 5) == Entry((b"one",), False, claimed=True)
    assert (await store.read("k", 0, NOW + 11)).claimed is False  # type: ignore[union-attr]
    assert await store.claim("k", "b", NOW + 11, 10)  # a lapsed: b starts afresh
    assert await store.read("k", 0, NOW + 11) == Entry((), False, claimed=True)
    await store.finish("k", "a", None, NOW + 12, None)  # a's late finish changes nothing
    assert (await store.read("k", 0, NOW + 12)).done is False  # type: ignore[union-attr]


async def test_a_finished_reply_cannot_be_claimed_again(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.finish("k", "a", None, NOW, None)
    assert not await store.claim("k", "b", NOW + 100, 10)


async def test_a_dropped_run_leaves_nothing(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", b"one", NOW)
    await store.drop("k", "b")  # not b's to drop
    assert await store.read("k", 0, NOW) is not None
    await store.drop("k", "a")
    assert await store.read("k", 0, NOW) is None
    assert await store.claim("k", "b", NOW, 10)


async def test_a_reply_with_a_lifetime_is_gone_after_it(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", b"one", NOW)
    await store.finish("k", "a", None, NOW, 5.0)
    assert (await store.read("k", 0, NOW + 4.9)).done  # type: ignore[union-attr]
    assert await store.read("k", 0, NOW + 5.0) is None
    assert await store.claim("k", "b", NOW + 5.0, 10)


async def test_the_store_stays_within_its_bytes_evicting_the_least_recently_used(
        keeper: Keeper) -> None:
    store = keeper.store
    body = random.Random(0).randbytes(MAX_BYTES // 4)  # as large stored as given: no deflating
    for n in range(3):
        assert await store.claim(f"k{n}", "a", NOW + n, 10)
        await store.add(f"k{n}", "a", body, NOW + n)
        await store.finish(f"k{n}", "a", None, NOW + n, None)
    await store.read("k0", 0, NOW + 10)  # k0 used again: k1 is now the least recent
    for n in range(3, 5):
        assert await store.claim(f"k{n}", "a", NOW + 10 + n, 10)
        await store.add(f"k{n}", "a", body, NOW + 10 + n)
        await store.finish(f"k{n}", "a", None, NOW + 10 + n, None)
    kept = [n for n in range(5) if await store.read(f"k{n}", 0, NOW + 20) is not None]
    assert kept == [0, 3, 4] or kept == [0, 2, 3, 4], kept
    assert len(kept) * len(body) <= MAX_BYTES
    assert 1 not in kept


async def test_a_reply_larger_than_the_store_is_not_kept(keeper: Keeper) -> None:
    store = keeper.store
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", random.Random(1).randbytes(MAX_BYTES + 1), NOW)
    await store.finish("k", "a", None, NOW, None)
    assert await store.read("k", 0, NOW) is None


@pytest.mark.parametrize("kept_setting", ["sqlite"], indirect=True)
async def test_sqlite_keeps_bodies_deflated_and_gives_them_back_whole(
        keeper: Keeper, kept_setting: str) -> None:
    # A class's reply is JSON: its bytes on disk, and the store's bound, are a fraction of it.
    store = keeper.store
    body = ("[" + ",".join(["[]"] * 3000) + "]").encode()
    assert await store.claim("k", "a", NOW, 10)
    await store.add("k", "a", body, NOW)
    await store.finish("k", "a", None, NOW, None)
    entry = await store.read("k", 0, NOW)
    assert entry is not None and entry.bodies == (body,)
    with sqlite3.connect(Path(kept_setting)) as db:
        (stored,) = db.execute("SELECT sum(length(body)) FROM kept_bodies").fetchone()
    assert stored * 20 < len(body), stored
