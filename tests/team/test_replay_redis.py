"""Replaying a lookup from the team's Redis cache: bulk reads (MGET), the same frame, no request."""

from __future__ import annotations

import time

import pandas as pd

import propertykit as pk


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
