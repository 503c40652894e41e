"""client.usage: requests sent, cache hits, billable requests, per endpoint, for notebooks too."""

from __future__ import annotations

import pytest

from propertykit.errors import ServerError


def test_usage_counts_sent_hits_billable_and_retries_per_endpoint(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb, max_retries=1)
    client.health()
    client.property_records(sb.location_ids[:60])  # 2 requests
    client.property_records(sb.location_ids[:60])  # 2 cache hits
    sb.inject_fault("error", status=502, count=1)
    client.source_records(sb.source_ids[:3])  # 1 failed + 1 retried
    sb.inject_fault("error", status=500, count=2)
    with pytest.raises(ServerError):
        client.source_records(sb.source_ids[3:5])
    usage = client.usage
    assert usage.requests_sent == 1 + 2 + 2 + 2
    assert usage.cache_hits == 2
    assert usage.billable_requests == 2 + 1  # 5xx answers are not charged (issue 30)
    assert usage.retries == 2
    assert usage.errors == 1
    table = usage.by_endpoint
    assert list(table.index) == ["health", "properties", "sources", "total"]
    assert table.loc["properties", "cache_hits"] == 2
    assert table.loc["health", "billable_requests"] == 0
    assert table.loc["sources", "billable_requests"] == 1
    assert table.loc["sources", "requests_sent"] == 4
    assert table.loc["total", "requests_sent"] == usage.requests_sent
    assert len([r for r in sb.requests]) == usage.requests_sent


def test_usage_reads_well_in_a_notebook_and_as_text(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb, budget=10)
    client.property_records(sb.location_ids[:1])
    client.property_records(sb.location_ids[:1])
    text = str(client.usage)
    assert text == (
        "1 request sent (1 billable), 1 cache hit (50% of answers free), 0 retries, 0 errors; "
        "budget 1/10 billable requests"
    )
    shown = client.usage._repr_html_()
    assert "<table" in shown
    assert "properties" in shown
    assert "budget 1/10" in shown
