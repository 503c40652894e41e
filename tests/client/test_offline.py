"""offline=True answers from the cache only; a miss raises NotCached and sends nothing."""

from __future__ import annotations

import pytest

from propertykit.errors import NotCached


def test_offline_replays_a_notebook_without_the_network(profiled_sandbox, make_client):
    sb = profiled_sandbox
    with make_client(sb) as online:
        props = online.properties(sb.location_ids[:60])
        sources = online.source_records(sb.source_ids[:9], page_size=4)
        online.suggest("Mill")
    sb.reset_log()
    charged = sb.credits_charged
    offline = make_client(sb, offline=True)
    assert offline.properties(sb.location_ids[:60]).equals(props)
    assert offline.source_records(sb.source_ids[:9], page_size=4) == sources
    assert offline.suggest("Mill")
    assert sb.requests == []
    assert sb.credits_charged == charged
    assert offline.usage.requests_sent == 0
    assert offline.usage.cache_hits == 6


def test_an_offline_miss_raises_not_cached_and_sends_nothing(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, offline=True)
    with pytest.raises(NotCached, match="nothing was sent"):
        client.property_records(sb.location_ids[:1])
    with pytest.raises(NotCached):
        client.health()
    assert sb.requests == []


def test_offline_serves_entries_past_their_expiry(profiled_sandbox, make_client):
    sb = profiled_sandbox
    with make_client(sb, expire_after=1e-9) as online:
        online.property_records(sb.location_ids[:2])
    sb.reset_log()
    client = make_client(sb, offline=True)
    assert len(client.property_records(sb.location_ids[:2])) == 2
    assert sb.requests == []
    make_client(sb).property_records(sb.location_ids[:2])  # online, the entry is stale
    assert len(sb.requests) == 1


def test_propertykit_offline_env_makes_clients_offline(profiled_sandbox, make_client, monkeypatch):
    sb = profiled_sandbox
    monkeypatch.setenv("PROPERTYKIT_OFFLINE", "1")
    client = make_client(sb)
    assert client.offline
    with pytest.raises(NotCached):
        client.property_records(sb.location_ids[:1])
    assert not make_client(sb, offline=False).offline
    assert sb.requests == []
