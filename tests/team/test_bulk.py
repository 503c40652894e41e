"""Lookups of many ids: a bounded number in flight, order kept, budget and usage exact."""

from __future__ import annotations

import pytest

import propertykit as pk
from tests.team._proxy import InFlightProxy


def test_never_more_than_max_in_flight_requests_reach_the_service(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    proxy = InFlightProxy(sb.url, hold=3)
    try:
        with pk.Client(sb.api_key, proxy.url, cache=tmp_path / "c.sqlite", max_in_flight=3,
                       progress=False) as client:  # fmt: skip
            df = client.properties(sb.location_ids[:1000])
    finally:
        proxy.close()
    assert len(df) == 1000
    assert proxy.requests == 20
    assert not proxy.held_broken  # the first three were on their way together
    assert proxy.most_in_flight == 3


def test_one_in_flight_sends_one_after_another(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    proxy = InFlightProxy(sb.url)
    try:
        with pk.Client(sb.api_key, proxy.url, cache=False, max_in_flight=1, progress=False) as c:
            c.properties(sb.location_ids[:500])
    finally:
        proxy.close()
    assert proxy.requests == 10
    assert proxy.most_in_flight == 1


def test_records_keep_the_order_of_the_ids(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    ids = sb.location_ids[:1500][::-1]
    with pk.Client(sb.api_key, sb.url, cache=False, max_in_flight=6, progress=False) as client:
        records = client.property_records(ids)
    assert [r["locationId"] for r in records] == ids


def test_usage_counts_every_request_sent_from_threads(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    with pk.Client(sb.api_key, sb.url, cache=tmp_path / "c", max_in_flight=8,
                   progress=False) as client:  # fmt: skip
        client.properties(sb.location_ids[:2000])
        client.properties(sb.location_ids[:2000])
        usage = client.usage
    assert usage.requests_sent == usage.billable_requests == len(sb.requests) == 40
    assert usage.cache_hits == 40


def test_budget_is_never_overspent_with_requests_in_flight(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    ids = sb.location_ids[:1000]
    with pk.Client(sb.api_key, sb.url, cache=tmp_path / "c", budget=5, max_in_flight=4,
                   progress=False) as client:  # fmt: skip
        with pytest.raises(pk.BudgetExceeded) as caught:
            client.properties(ids)
        assert client.usage.billable_requests == 5
    assert len(sb.requests) == 5
    partial = caught.value.partial
    assert len(partial.records) == 250
    fetched = [r["locationId"] for r in partial.records]
    assert sorted(fetched + partial.remaining_ids) == sorted(ids)
    assert [i for i in ids if i in set(partial.remaining_ids)] == partial.remaining_ids


def test_invalid_max_in_flight_is_a_config_error(sandbox):
    with pytest.raises(pk.ConfigError, match="max_in_flight"):
        pk.Client(sandbox.api_key, sandbox.url, cache=False, max_in_flight=0)


def test_progress_bar_counts_batches(fresh_sandbox, capsys):
    sb = fresh_sandbox
    with pk.Client(sb.api_key, sb.url, cache=False, progress=True) as client:
        client.properties(sb.location_ids[:400])
    assert "8/8" in capsys.readouterr().err
