"""Re-running a notebook from a warm cache gives the very same tables and sends nothing."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pandas as pd
import pyarrow as pa
import pytest

import propertykit as pk
from propertykit.client._arguments import attribute_params
from propertykit.wire import cached_bodies


def _table_bytes(df: pd.DataFrame) -> bytes:
    """The frame as Arrow IPC bytes, boundaries (served JSON) appended."""
    table = pa.Table.from_pandas(df.drop(columns="spatial.boundary"), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    boundaries = json.dumps(df["spatial.boundary"].tolist(), sort_keys=True)
    return bytes(sink.getvalue().to_pybytes()) + boundaries.encode()


def test_a_warm_cache_gives_the_same_tables_byte_for_byte_and_sends_nothing(
    fresh_sandbox, make_client
):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]  # several batches
    with make_client(sb) as cold:
        network = cold.properties(ids)
        sales = network.pk.sales()
    sb.reset_log()
    with make_client(sb) as warm:  # a new client on the same cache file: a restarted kernel
        replayed = warm.properties(ids)
        assert warm.usage.requests_sent == 0
    assert sb.requests == []
    assert _table_bytes(replayed) == _table_bytes(network)
    assert replayed.attrs == network.attrs
    pd.testing.assert_frame_equal(replayed.pk.sales(), sales)


def _same_frame(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """The very same frame: the same columns in the same order, index, dtypes and boundaries,
    and every other value the same to the byte as Arrow holds it (the frame's attrs, categories
    and their order ride in the schema's pandas metadata). Stricter than
    ``pd.testing.assert_frame_equal`` (floats compared exactly, attrs too) at a third of its cost.
    """
    assert list(left.columns) == list(right.columns)
    assert left.index.equals(right.index) and left.index.dtype == right.index.dtype
    assert left.dtypes.to_dict() == right.dtypes.to_dict()
    assert left["spatial.boundary"].tolist() == right["spatial.boundary"].tolist()
    assert _table_bytes(left) == _table_bytes(right)


def _property_lookups(sb) -> list:
    return [r for r in sb.requests if r.path.startswith("/v1/property/")]


def test_warm_usage_counts_are_those_of_the_normal_path(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]
    with make_client(sb) as cold:
        network = cold.properties(ids)
    with make_client(sb) as fast, make_client(sb) as normal:
        replayed = fast.properties(ids)  # bulk, as bytes
        normal.property_records(ids)  # one cached response at a time
        assert fast.usage.cache_hits == 5
        pd.testing.assert_frame_equal(fast.usage.by_endpoint, normal.usage.by_endpoint)
    _same_frame(replayed, network)


def test_only_the_batches_not_cached_are_sent(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]
    with make_client(sb) as first:
        first.properties(ids[:50])
        first.properties(ids[100:150])
    with make_client(sb, cache=False) as network_only:
        network = network_only.properties(ids)
    sb.reset_log()
    with make_client(sb) as warm:
        replayed = warm.properties(ids)
        assert warm.usage.cache_hits == 2
        assert warm.usage.requests_sent == 3
    assert len(_property_lookups(sb)) == 3
    _same_frame(replayed, network)


def test_expired_entries_are_fetched_again_and_offline_replays_them(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.location_ids[:120]
    with make_client(sb, expire_after=timedelta(milliseconds=100)) as cold:
        network = cold.properties(ids)
    time.sleep(0.3)  # let every entry expire
    sb.reset_log()
    with make_client(sb, offline=True) as offline:
        replayed = offline.properties(ids)
        assert offline.usage.requests_sent == 0
        assert offline.usage.cache_hits == 3
    assert sb.requests == []
    _same_frame(replayed, network)
    with make_client(sb) as online:
        refreshed = online.properties(ids)
        assert online.usage.requests_sent == 3
        assert online.usage.cache_hits == 0
    assert len(_property_lookups(sb)) == 3
    _same_frame(refreshed, network)


def test_offline_without_the_entries_raises_not_cached_and_sends_nothing(
    fresh_sandbox, make_client
):
    sb = fresh_sandbox
    with make_client(sb) as cold:
        cold.properties(sb.location_ids[:50])
    sb.reset_log()
    with make_client(sb, offline=True) as offline, pytest.raises(pk.NotCached) as caught:
        offline.properties(sb.location_ids[:150])
    assert sb.requests == []
    assert caught.value.partial is not None
    assert len(caught.value.partial.records) == 50  # the cached batch, decoded


def test_a_cached_first_page_with_more_pages_is_still_followed(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.source_ids[:60]
    with make_client(sb) as cold:
        network = cold.sources(ids, page_size=20)  # 2 batches: 3 pages, then 1
        pages = cold.usage.requests_sent
    assert pages == 4
    sb.reset_log()
    with make_client(sb) as warm:
        replayed = warm.sources(ids, page_size=20)
        assert warm.usage.requests_sent == 0
        assert warm.usage.cache_hits == pages
    assert sb.requests == []
    assert len(replayed) == 60
    _same_frame(replayed, network)


def test_sources_in_one_page_replay_from_the_cache(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.source_ids[:120]
    with make_client(sb) as cold:
        network = cold.sources(ids, page_size=50)
    sb.reset_log()
    with make_client(sb) as warm:
        replayed = warm.sources(ids, page_size=50)
        assert warm.usage.requests_sent == 0
        assert warm.usage.cache_hits == 3
    assert sb.requests == []
    _same_frame(replayed, network)


def test_a_budget_spent_part_way_keeps_the_cached_batches_in_partial(fresh_sandbox, make_client):
    sb = fresh_sandbox
    ids = sb.location_ids[:150]
    with make_client(sb) as cold:
        cold.properties(ids[:50])
    with make_client(sb, budget=1, max_in_flight=1) as warm:
        with pytest.raises(pk.BudgetExceeded) as caught:
            warm.properties(ids)
        assert warm.usage.billable_requests == 1
    partial = caught.value.partial
    assert [r["locationId"] for r in partial.records] == ids[:100]
    assert partial.remaining_ids == ids[100:]


def test_the_bulk_read_keys_are_the_sessions_keys(fresh_sandbox, make_client):
    """Each cached body the bulk read finds is the one the session would answer with."""
    sb = fresh_sandbox
    with make_client(sb) as client:
        client.properties(sb.location_ids[:120], attributes=["address", "epc"])
        session = client._transport.session
        params = attribute_params(client.endpoints, ["address", "epc"])
        batches = client._lookups.property_batches(sb.location_ids[:120], params)
        wanted = [(client._transport.base_url + b.path, params) for b in batches]
        bodies = cached_bodies(session, wanted, offline=False)
        for (url, params), body in zip(wanted, bodies, strict=True):
            answer = session.get(url, params=params, only_if_cached=True)
            assert answer.from_cache
            assert body == answer.content


def test_a_warm_lookup_makes_no_request_object_at_all(fresh_sandbox, make_client):
    """All cached: the bodies come from the cache in bulk, not through the session one by one."""
    sb = fresh_sandbox
    with make_client(sb) as cold:
        cold.properties(sb.location_ids[:120])
        cold.sources(sb.source_ids[:60], page_size=50)
        cold.sources(sb.source_ids[:60], page_size=20)
    with make_client(sb) as warm:
        session = warm._transport.session
        through_session: list[str] = []
        send = session.send

        def counting_send(request, **kwargs):  # type: ignore[no-untyped-def]
            through_session.append(request.url)
            return send(request, **kwargs)

        session.send = counting_send  # type: ignore[method-assign]
        warm.properties(sb.location_ids[:120])
        warm.sources(sb.source_ids[:60], page_size=50)
        assert through_session == []
        assert warm.usage.cache_hits == 5
        # The first batch's 3 pages: the normal path, from the cache; the second's 1 page: bulk.
        warm.sources(sb.source_ids[:60], page_size=20)
        assert len(through_session) == 3
        assert warm.usage.cache_hits == 5 + 4
        assert warm.usage.requests_sent == 0
