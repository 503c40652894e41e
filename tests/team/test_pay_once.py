"""A batch is paid once whatever happens between a kernel's look and its lock.

Each story: a kernel looks its three batches up in the shared cache (none there) and starts on
the first (held at a proxy); meanwhile another kernel - a process of its own - fetches the third.
Then something happens that used to hide that fetch (a lock mark deleted, evicted by Redis under
``maxmemory``, a wall clock stepped back, a kernel that writes no marks), and the first kernel
goes on. The service must have received, and charged, each batch exactly once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import propertykit as pk
from tests.team._proxy import InFlightProxy
from tests.team.conftest import finish_worker, start_worker, started_redis

pytestmark = pytest.mark.timeout(180)

#: Ids per batch of a property lookup; the stories look up three batches.
BATCH = 50


def _cache_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return str(tmp_path / "cache" / "http_cache.sqlite")
    return str(request.getfixturevalue("redis_url"))


def _another_kernel_fetches_meanwhile(
    sb: Any, cache: str, meanwhile: Callable[[], None], **other: Any
) -> list[str]:
    """The story of the module docstring; the frame's location ids, as the first kernel got
    them. ``other``: how the other kernel differs (see ``tests/team/_worker.py``)."""
    ids = sb.location_ids[: 3 * BATCH]
    gate = threading.Event()
    proxy = InFlightProxy(sb.url, gate=gate)  # both kernels ask through it: one cache key
    got: dict[str, Any] = {}
    try:
        options = {"cache": cache, "progress": False, "max_in_flight": 1}
        with pk.Client(sb.api_key, proxy.url, **options) as first:

            def look_up() -> None:
                got["frame"] = first.properties(ids)

            looking = threading.Thread(target=look_up)
            looking.start()
            try:
                assert proxy.first_held.wait(60), "the first kernel sent nothing"
                said = finish_worker(
                    start_worker(sb, base_url=proxy.url, cache=cache, ids=ids[2 * BATCH :], **other)
                )
                assert said["sent"] == 1  # the other kernel bought the third batch
                meanwhile()
            finally:
                gate.set()
                looking.join(120)
            assert not looking.is_alive()
    finally:
        proxy.close()
    return list(got["frame"]["locationId"])


def _paid_once_each(sb: Any, batches: int = 3) -> None:
    firsts = [r.path.split("/")[-1].split(",")[0] for r in sb.requests]  # the batches' first ids
    assert sorted(firsts) == sorted(set(firsts)) and len(firsts) == batches, firsts
    assert len(sb.ledger) == batches  # and was charged once
    charged = {charge.credits for charge in sb.ledger}
    assert sb.credits_charged == batches * charged.pop() and not charged


def _delete_marks(cache: str) -> Callable[[], None]:
    """Clean the lock marks away: the locks folder's ``*.mark`` files, or Redis ``*:mark:*``."""

    def delete() -> None:
        if cache.startswith("redis://"):
            import redis

            connection = redis.Redis.from_url(cache)
            for key in list(connection.scan_iter("propertykit:mark:*")):
                connection.delete(key)
            connection.close()
        else:
            for mark in (Path(cache).parent / ".propertykit-locks").glob("*.mark"):
                mark.unlink()

    return delete


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_mark_deleted_between_the_look_and_the_fetch(fresh_sandbox, tmp_path, request, kind):
    sb = fresh_sandbox
    cache = _cache_of(kind, tmp_path, request)
    got = _another_kernel_fetches_meanwhile(sb, cache, _delete_marks(cache))
    assert got == sb.location_ids[: 3 * BATCH]
    _paid_once_each(sb)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_kernel_that_writes_no_marks(fresh_sandbox, tmp_path, request, kind):
    """The other kernel runs a propertykit from before marks (its flight leaves none)."""
    sb = fresh_sandbox
    cache = _cache_of(kind, tmp_path, request)
    got = _another_kernel_fetches_meanwhile(sb, cache, lambda: None, writes_no_marks=True)
    assert got == sb.location_ids[: 3 * BATCH]
    _paid_once_each(sb)


def test_a_wall_clock_stepped_back_in_the_fetching_kernel(fresh_sandbox, tmp_path):
    """The other kernel's clock is 5 s behind the first's (one machine, a SQLite cache)."""
    sb = fresh_sandbox
    cache = str(tmp_path / "cache" / "http_cache.sqlite")
    got = _another_kernel_fetches_meanwhile(sb, cache, lambda: None, clock_step=-5.0)
    assert got == sb.location_ids[: 3 * BATCH]
    _paid_once_each(sb)


def test_a_wall_clock_stepped_back_in_the_looking_kernel(fresh_sandbox, redis_url, monkeypatch):
    """The first kernel's clock steps back 5 s between its look and its lock (a team Redis,
    whose own clock stamps nothing the kernels compare any more)."""
    sb = fresh_sandbox
    wall, wall_ns = time.time, time.time_ns

    def step_back() -> None:
        monkeypatch.setattr(time, "time", lambda: wall() - 5.0)
        monkeypatch.setattr(time, "time_ns", lambda: wall_ns() - 5 * 10**9)

    got = _another_kernel_fetches_meanwhile(sb, redis_url, step_back)
    assert got == sb.location_ids[: 3 * BATCH]
    _paid_once_each(sb)


@pytest.fixture
def lru_redis_url(tmp_path):
    """A cache Redis that evicts any key under memory pressure (``allkeys-lru``), sampling
    enough keys that the least recently used one goes first."""
    options = ("--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "64")
    with started_redis(tmp_path, *options) as url:
        yield url


def _evict_all_but_the_answers(url: str) -> Callable[[], None]:
    """Put Redis under ``maxmemory`` until every key but the stored answers was evicted: the
    answers read just before (as a busy team's reads keep them recent), the rest not."""

    def evict() -> None:
        import redis

        connection = redis.Redis.from_url(url)
        answers = list(connection.scan_iter("propertykit:answer:*"))
        assert answers, "the other kernel stored no answer"
        time.sleep(1.1)  # Redis's LRU clock ticks once a second: older than the answers' reads
        connection.touch(*answers)
        used = int(connection.info("memory")["used_memory"])
        connection.config_set("maxmemory", used + 512 * 1024)
        others = ["x"]
        for n in range(200):  # few keys in all, fewer than the samples: the oldest goes first
            connection.set(f"filler:{n}", b"f" * 64 * 1024)
            keys = connection.scan_iter(count=1000)
            others = [k for k in keys if not k.startswith((b"filler:", b"propertykit:answer"))]
            if not others:
                break
        assert not others, f"not evicted: {others}"
        assert connection.exists(*answers) == len(answers), "the LRU evicted an answer"
        connection.config_set("maxmemory", 0)  # the pressure is over
        connection.close()

    return evict


def test_marks_evicted_under_maxmemory_allkeys_lru(fresh_sandbox, lru_redis_url):
    sb = fresh_sandbox
    evict = _evict_all_but_the_answers(lru_redis_url)
    got = _another_kernel_fetches_meanwhile(sb, lru_redis_url, evict)
    assert got == sb.location_ids[: 3 * BATCH]
    _paid_once_each(sb)


def test_a_batch_known_missing_reaches_the_service_with_no_header_of_the_cache(
    fresh_sandbox, make_client
):
    """The bulk read found the batch missing, and requests-cache was told not to look again:
    the service sees the same headers as from a client with no cache at all."""
    sb = fresh_sandbox
    ids = sb.location_ids[:BATCH]
    with make_client(sb) as cached:
        cached.properties(ids)
        assert cached.usage.requests_sent == 1
    with make_client(sb, cache=False) as uncached:
        uncached.properties(ids)
    with_cache, without_cache = (dict(r.headers) for r in sb.requests)
    assert "cache-control" not in with_cache
    assert with_cache == without_cache
