"""A team shares one cache in Redis: nobody pays for a record a colleague already fetched."""

from __future__ import annotations

from typing import Any

import pytest

import propertykit as pk
from propertykit.wire._team import redis_cache


def property_lookups(sb: Any) -> list[Any]:
    return [r for r in sb.requests if r.path.startswith("/v1/property/L")]


def everything_in(url: str) -> list[bytes]:
    """Every key in Redis and every value under it, whatever its type."""
    import redis

    connection = redis.Redis.from_url(url)
    found: list[bytes] = []
    for key in connection.scan_iter("*"):
        found.append(key)
        kind = connection.type(key)
        if kind == b"string":
            found.append(connection.get(key) or b"")
        elif kind == b"hash":
            for field, value in connection.hgetall(key).items():
                found += [field, value]
        elif kind == b"zset":
            for member, _score in connection.zrange(key, 0, -1, withscores=True):
                found.append(member)
        elif kind == b"list":
            found += connection.lrange(key, 0, -1)
        elif kind == b"set":
            found += list(connection.smembers(key))
        else:
            pytest.fail(f"unexpected Redis type {kind!r} under {key!r}")
    connection.close()
    return found


def test_second_process_sharing_redis_sends_no_request(fresh_sandbox, redis_url, run_worker):
    sb = fresh_sandbox
    ids = sb.location_ids[:200]

    first = run_worker(sb, cache=redis_url, ids=ids)
    sent_by_first = len(property_lookups(sb))
    second = run_worker(sb, cache=redis_url, ids=ids)

    assert first["rows"] == second["rows"] == 200
    assert first["sent"] == sent_by_first == 4
    assert len(property_lookups(sb)) == sent_by_first  # the second process sent nothing
    assert second["sent"] == 0
    assert second["cache_hits"] == 4
    assert second["location_ids"] == ids


def test_no_api_key_bytes_anywhere_in_redis(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    endpoints = pk.Endpoints(suggest_per_minute=30)
    with pk.Client(sb.api_key, sb.url, cache=redis_url, endpoints=endpoints, progress=False) as c:
        c.properties(sb.location_ids[:120])
        c.sources(sb.source_ids[:60], page_size=25)
        c.suggest("Flat")
    stored = everything_in(redis_url)

    assert len(stored) > 10  # the cache and the limiter's bucket are there
    assert any(b"propertykit:suggest:" in item for item in stored)
    key = sb.api_key.encode()
    assert not [item for item in stored if key in item or key.upper() in item]


def test_a_backend_object_works_like_a_url(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    backend = redis_cache(redis_url)
    with pk.Client(sb.api_key, sb.url, cache=backend, progress=False) as client:
        client.properties(sb.location_ids[:3])
        assert client.cache_info()["entries"] == 1
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as client:
        client.properties(sb.location_ids[:3])
        assert client.usage.requests_sent == 0
    backend.close()


def test_repr_shows_the_redis_address_but_no_password(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    url = redis_url.replace("redis://", "redis://:s3cret-pass@")
    with pk.Client(sb.api_key, sb.url, cache=url, progress=False) as client:
        shown = repr(client)
    assert redis_url in shown
    assert "s3cret" not in shown
    assert sb.api_key not in shown


def test_suggest_limit_is_shared_by_kernels_through_redis(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    endpoints = pk.Endpoints(suggest_per_minute=3)

    def kernel() -> pk.Client:
        return pk.Client(
            sb.api_key, sb.url, cache=redis_url, endpoints=endpoints, max_wait=0, progress=False
        )

    with kernel() as first, kernel() as second:
        first.suggest("Flat 1")
        first.suggest("Flat 2")
        second.suggest("Flat 3")
        with pytest.raises(pk.RateLimited, match="nothing was sent"):
            second.suggest("Flat 4")
        with pytest.raises(pk.RateLimited, match="nothing was sent"):
            first.suggest("Flat 5")

    suggests = [r for r in sb.requests if r.path.endswith("/suggest")]
    assert len(suggests) == 3
    assert all(r.status == 200 for r in suggests)


def test_without_redis_each_kernel_counts_alone(fresh_sandbox, tmp_path):
    """The control: with separate caches the second kernel would send a fourth suggest."""
    sb = fresh_sandbox
    endpoints = pk.Endpoints(suggest_per_minute=3)
    made = [
        pk.Client(sb.api_key, sb.url, cache=tmp_path / name, endpoints=endpoints, max_wait=0,
                  progress=False)
        for name in ("a", "b")
    ]  # fmt: skip
    with made[0] as first, made[1] as second:
        for query in ("Flat 1", "Flat 2", "Flat 3"):
            first.suggest(query)
        second.suggest("Flat 4")
    assert len([r for r in sb.requests if r.path.endswith("/suggest")]) == 4
