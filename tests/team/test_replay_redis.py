"""Replaying a lookup from the team's Redis cache: bulk reads (MGET), the same frame, no request."""

from __future__ import annotations

import time

import pandas as pd
import pytest

import propertykit as pk
from tests.client.test_replay import _same_frame
from tests.client.test_replay_kept import changed_response_is_never_replayed_stale


def test_a_warm_redis_cache_gives_the_same_frame_and_sends_nothing(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as cold:
        network = cold.properties(ids)
    sb.reset_log()
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as warm:
        replayed = warm.properties(ids)
        assert warm.usage.requests_sent == 0
        assert warm.usage.cache_hits == 5
    assert sb.requests == []
    pd.testing.assert_frame_equal(replayed, network)


def test_redis_entries_past_their_expiry_are_fetched_again(fresh_sandbox, redis_url):
    sb = fresh_sandbox
    ids = sb.location_ids[:100]
    with pk.Client(sb.api_key, sb.url, cache=redis_url, expire_after=1, progress=False) as cold:
        network = cold.properties(ids)
    time.sleep(1.5)  # past expiry (Redis keeps the entries a while longer: ttl_offset)
    sb.reset_log()
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as warm:
        refreshed = warm.properties(ids)
        assert warm.usage.requests_sent == 2
        assert warm.usage.cache_hits == 0
    pd.testing.assert_frame_equal(refreshed, network)


def _kept(redis_url: str) -> list[bytes]:
    import redis

    return list(redis.Redis.from_url(redis_url).scan_iter("propertykit-frames:*"))


@pytest.mark.timeout(60)
def test_later_warm_runs_read_the_kept_arrow_form_from_redis(fresh_sandbox, redis_url, monkeypatch):
    import redis

    from propertykit.frames import _bodies as frames_bodies

    sb = fresh_sandbox
    ids = sb.location_ids[:230]
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    monkeypatch.setattr(
        frames_bodies.pa_json, "read_json", lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    )
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as cold:
        network = cold.properties(ids)
    sb.reset_log()
    for _ in range(3):
        with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as warm:
            replayed = warm.properties(ids)
            assert warm.usage.requests_sent == 0
            assert warm.usage.cache_hits == 5
        assert sb.requests == []
        _same_frame(replayed, network)
    assert parsed == []  # no re-run parsed a body: the fetching run kept them as read
    connection = redis.Redis.from_url(redis_url)
    assert all(connection.pttl(key) > 0 for key in _kept(redis_url))  # they go with the answers
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as client:
        client.clear_cache()
    assert _kept(redis_url) == []


@pytest.mark.timeout(60)
def test_a_kept_form_in_redis_is_never_used_once_its_response_changed(redis_url):
    changed_response_is_never_replayed_stale(redis_url)
