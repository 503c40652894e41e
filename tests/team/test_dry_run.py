"""dry_run=True sends nothing and says what a call would send, given what is cached."""

from __future__ import annotations

import propertykit as pk
from propertykit.client import DryRun


def client_for(sb, tmp_path, **kwargs) -> pk.Client:
    return pk.Client(sb.api_key, sb.url, cache=tmp_path / "c.sqlite", progress=False, **kwargs)


def test_properties_dry_run_counts_batches_not_cached(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    ids = sb.location_ids[:1000]  # 20 batches
    with client_for(sb, tmp_path) as client:
        client.properties(ids[:400])  # 8 batches now cached
        sb.reset_log()
        plan = client.properties(ids, dry_run=True)
        assert sb.requests == []  # nothing sent
        assert client.usage.requests_sent == 8  # and nothing counted
        client.properties(ids)
        sent = client.usage.requests_sent - 8

    assert isinstance(plan, DryRun)
    assert (plan.ids, plan.batches, plan.cached) == (1000, 20, 8)
    assert plan.requests == plan.billable_requests == plan.requests_at_most == 12
    assert plan.exact
    assert sent == plan.requests == len(sb.requests)
    assert repr(plan) == (
        "<DryRun properties: 1,000 ids in 20 batches; 12 requests to send (12 billable), "
        "8 cached (free)>"
    )


def test_sources_dry_run_follows_cached_pages_and_bounds_the_rest(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    ids = sb.source_ids[:200]  # 4 batches of 50, 2 pages of 25 each
    with client_for(sb, tmp_path, budget=100) as client:
        client.sources(ids[:100], page_size=25)  # 2 batches, 4 pages
        sb.reset_log()
        plan = client.sources(ids, page_size=25, dry_run=True)
        assert sb.requests == []
        client.sources(ids, page_size=25)

    assert plan.cached == 4
    assert plan.requests == 2  # the first page of each batch not cached
    assert plan.requests_at_most == 4  # at most 50 records per batch, 25 per page
    assert plan.requests <= len(sb.requests) <= plan.requests_at_most
    assert plan.budget_left == 96
    assert plan.fits_budget
    assert "2 to 4 requests to send" in repr(plan)


def test_sources_dry_run_without_page_size_has_no_upper_bound(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    with client_for(sb, tmp_path) as client:
        plan = client.sources(sb.source_ids[:60], dry_run=True)
    assert (plan.requests, plan.requests_at_most, plan.exact) == (2, None, False)
    assert "2 to ? requests" in repr(plan)
    assert sb.requests == []


def test_everything_cached_means_nothing_to_send(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    with client_for(sb, tmp_path) as client:
        client.sources(sb.source_ids[:120])
        plan = client.sources(sb.source_ids[:120], dry_run=True)
    assert plan.requests == plan.requests_at_most == plan.billable_requests == 0
    assert plan.cached == len(sb.requests) == 7  # batches of 50, 50, 20; pages of 20
