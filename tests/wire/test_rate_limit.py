"""Search-suggest is rate limited on the client; cache hits are free and never count."""

from __future__ import annotations

import pytest

import propertykit as pk
from propertykit.errors import RateLimited


def suggests(sb):
    return [r for r in sb.requests if r.path == "/v1/property/suggest"]


def test_the_client_keeps_to_the_suggest_limit_without_sending_more(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(suggest_per_minute=2), max_wait=0)
    client.suggest("Mill")
    client.suggest("Church")
    with pytest.raises(RateLimited, match="limit of 2 per minute reached on this client"):
        client.suggest("Station")
    assert len(suggests(sb)) == 2
    assert all(r.status == 200 for r in sb.requests)


def test_cache_hits_do_not_count_against_the_suggest_limit(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(suggest_per_minute=1), max_wait=0)
    first = client.suggest("Mill")
    for _ in range(5):
        assert client.suggest("Mill") == first
    assert len(suggests(sb)) == 1
    assert client.usage.cache_hits == 5


def test_only_suggest_is_rate_limited(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(suggest_per_minute=1), max_wait=0)
    for i in range(4):
        client.property_records(sb.location_ids[i : i + 1])
        client.health()
    client.suggest("Mill")
    assert len(sb.requests) == 9
