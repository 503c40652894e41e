"""Sources are paged: nextOffset followed while hasMore; a failure part-way keeps what was paid."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs

import pytest

from propertykit.errors import BudgetExceeded, DailyCapReached, ServerError

#: A fixed moment far from midnight UTC, for tests that reach the daily cap.
AFTERNOON = datetime(2025, 6, 2, 15, 0, tzinfo=UTC)


def source_queries(sb):
    return [
        {k: v[0] for k, v in parse_qs(r.query).items()}
        for r in sb.requests
        if r.path.startswith("/v1/property/sources/")
    ]


def test_pages_are_followed_through_next_offset_while_has_more(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    ids = sb.source_ids[:17]
    records = client.source_records(ids, page_size=5)
    assert len(records) == len({r["propertyId"] for r in records}) == 17
    assert [q["offset"] for q in source_queries(sb)] == ["0", "5", "10", "15"]
    assert {q["limit"] for q in source_queries(sb)} == {"5"}


def test_without_page_size_the_services_default_page_is_used(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    assert len(client.source_records(sb.source_ids[:45])) == 45
    queries = source_queries(sb)
    assert [q["offset"] for q in queries] == ["0", "20", "40"]
    assert all("limit" not in q for q in queries)


def test_max_results_stops_early_and_asks_for_no_more_than_needed(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    records = client.source_records(sb.source_ids[:30], page_size=10, max_results=13)
    assert len(records) == 13
    assert [q["limit"] for q in source_queries(sb)] == ["10", "3"]
    assert sb.credits_charged == 13  # one credit per record returned: nothing extra was paid


def test_attributes_are_sent_comma_joined_and_restrict_the_records(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    records = client.source_records(sb.source_ids[:3], attributes=["address", "epc"])
    assert source_queries(sb)[0]["attributes"] == "address,epc"
    assert set(records[0]) == {"propertyId", "locationId", "address", "epc"}


def test_a_failure_part_way_through_paging_keeps_records_and_resume_offset(
    profiled_sandbox, make_client
):
    sb = profiled_sandbox
    sb.set_now(AFTERNOON)  # far from midnight, when a short wait would clear the cap
    sb.set_daily_cap(7)  # pages of 3: the third page would pass the cap
    client = make_client(sb)
    ids = sb.source_ids[:10]
    with pytest.raises(DailyCapReached) as caught:
        client.source_records(ids, page_size=3)
    partial = caught.value.partial
    assert len(partial.records) == 6
    assert partial.resume_offset == 6
    assert partial.remaining_ids == ids
    assert [r["propertyId"] for r in partial.records] == [
        r["propertyId"] for r in client.source_records(ids, max_results=6, page_size=3)
    ]  # the pages already paid for come back from the cache


def test_a_failure_in_a_later_batch_keeps_earlier_batches(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, max_retries=0)
    ids = sb.source_ids[:60]  # two batches of 50 and 10
    sb.inject_fault("error", status=500, path_contains=ids[55])
    with pytest.raises(ServerError) as caught:
        client.source_records(ids, page_size=100)
    partial = caught.value.partial
    assert len(partial.records) == 50
    assert partial.remaining_ids == ids[50:]
    assert partial.resume_offset == 0


def test_budget_refusal_mid_paging_gives_the_offset_to_resume(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, budget=2)
    with pytest.raises(BudgetExceeded) as caught:
        client.source_records(sb.source_ids[:12], page_size=4)
    assert caught.value.partial.resume_offset == 8
    assert len(caught.value.partial.records) == 8
    assert len(source_queries(sb)) == 2
