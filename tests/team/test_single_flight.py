"""Kernels never pay twice for a batch, even asking for it at the same instant.

Two processes look the same 2,000 uncached ids up together (started by one go signal, answers
slowed a little so their asks overlap), through the team's Redis or one machine's SQLite file:
the service sees each of the 40 batches exactly once; a third kernel then pays nothing.
"""

from __future__ import annotations

import time

import pytest

import propertykit as pk
from propertykit.wire._single_flight import FileFlight, RedisFlight, single_flight_for
from tests.team.conftest import finish_worker, start_worker

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=["sqlite", "redis"])
def shared_cache(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "cache" / "http_cache.sqlite")
    return request.getfixturevalue("redis_url")


def _together(sb, tmp_path, cache, ids, kernels=2):
    go = tmp_path / "go"
    workers = [
        start_worker(sb, cache=cache, ids=ids, go_file=str(go),
                     ready_file=str(tmp_path / f"ready-{n}"))
        for n in range(kernels)
    ]  # fmt: skip
    while not all((tmp_path / f"ready-{n}").exists() for n in range(kernels)):
        time.sleep(0.005)
    go.touch()
    return [finish_worker(worker) for worker in workers]


def test_two_kernels_asking_together_pay_for_each_batch_once(fresh_sandbox, tmp_path, shared_cache):
    sb = fresh_sandbox
    sb.set_latency(0.02)
    ids = sb.location_ids[:2000]
    results = _together(sb, tmp_path, shared_cache, ids)
    assert [r["location_ids"] for r in results] == [ids, ids]
    paths = [r.path for r in sb.requests]
    assert len(paths) == len(set(paths)) == 40  # every batch reached the service once
    assert sum(r["sent"] for r in results) == 40
    assert sum(r["cache_hits"] for r in results) == 40  # the other kernel's answers, free
    with pk.Client(sb.api_key, sb.url, cache=shared_cache, progress=False) as third:
        assert third.properties(ids)["locationId"].tolist() == ids
        assert third.usage.requests_sent == 0
    assert len(sb.requests) == 40


def test_the_lock_is_a_redis_lock_or_a_file_lock_by_cache(shared_cache):
    with pk.Client("pk_live_x", "http://127.0.0.1:9", cache=shared_cache) as client:
        flight = single_flight_for(client._transport.cache, timeout=1)
    expected = RedisFlight if shared_cache.startswith("redis") else FileFlight
    assert isinstance(flight, expected)
    with flight.hold("some-cache-key") as hold:
        assert hold.held


def test_a_lock_left_by_a_dead_kernel_expires(redis_url):
    import redis

    connection = redis.Redis.from_url(redis_url)
    dead = RedisFlight(connection, hold_seconds=0.3, wait_seconds=10)
    lock = connection.lock(dead.lock_name("k"), timeout=0.3)
    assert lock.acquire(blocking=False)  # taken, never released: its kernel died
    with dead.hold("k") as hold:
        assert hold.held  # got it when it expired: a waiter that gives up holds nothing


def test_a_waiter_gives_up_after_its_wait_and_sends_anyway(tmp_path):
    flight = FileFlight(tmp_path, wait_seconds=0.2)
    with flight.hold("k") as first, flight.hold("k") as second:
        assert first.held and not second.held


def test_a_waiter_sees_the_answer_another_kernel_stored_even_mid_read(tmp_path):
    """The read after the wait is fresh, though another thread's read pins the shared view.

    requests-cache reads on one SQLite connection shared by a kernel's threads; while one of
    them has a read under way, another read on that connection sees the file as it was when
    the first began. The answer another process stored meanwhile must still be found.
    """
    from requests_cache import CachedResponse

    from propertykit.wire import open_sqlite_cache
    from propertykit.wire._single_flight import stored_response

    path = tmp_path / "cache.sqlite"
    waiter, other_kernel = open_sqlite_cache(path), open_sqlite_cache(path)
    answer = CachedResponse(status_code=200, content=b'{"result": []}')
    for n in range(3):
        waiter.save_response(answer, f"seen-before-{n}")
    with waiter.responses.connection() as shared:
        under_way = shared.execute("SELECT key FROM responses")  # another thread's read
        assert under_way.fetchone() is not None
        other_kernel.save_response(answer, "stored-meanwhile")
        assert waiter.get_response("stored-meanwhile") is None  # the shared, pinned view
        found = stored_response(waiter, "stored-meanwhile")
        assert found is not None and found.content == b'{"result": []}'
        under_way.close()
    waiter.close()
    other_kernel.close()


# -- a batch another kernel fetched after the look --------------------------------------------


def test_a_batch_another_kernel_fetched_after_the_look_is_not_paid_again(
    fresh_sandbox, make_client, shared_cache
):
    """A kernel looks its three batches up in the cache (none there), then fetches them one by
    one; meanwhile another kernel on the same cache fetches the third. When the first gets to
    it, it reads the cache again under the lock and pays nothing for it (more such stories,
    with processes of their own, in ``test_pay_once.py``)."""
    import threading

    sb = fresh_sandbox
    ids = sb.location_ids[:150]  # batches of 50: the third is ids[100:150]
    sb.set_latency(0.4)
    with (
        make_client(sb, cache=shared_cache, max_in_flight=1) as first,
        make_client(sb, cache=shared_cache) as other,
    ):
        looking = threading.Thread(target=first.properties, args=(ids,))
        looking.start()
        deadline = time.monotonic() + 30
        while not sb.requests and time.monotonic() < deadline:  # its first batch is under way
            time.sleep(0.005)
        other.properties(ids[100:150])
        assert other.usage.requests_sent == 1
        looking.join(60)
        assert not looking.is_alive()
        assert first.usage.requests_sent == 2 and first.usage.cache_hits == 1
    paths = [r.path for r in sb.requests]
    assert len(paths) == len(set(paths)) == 3  # each batch paid once, by one kernel
