"""A named budget is one budget for the whole cluster: at most N billable requests in total."""

from __future__ import annotations

import uuid

import pytest

import propertykit as pk
import propertykit.dask as pkd
from tests.on_dask.conftest import billable

pytestmark = pytest.mark.timeout(300)


def test_a_shared_budget_caps_the_whole_cluster_and_compute_raises(sb, cluster, shared_cache):
    name = f"test-{uuid.uuid4().hex[:8]}"
    ids = sb.location_ids[4000:6000]  # 40 uncached batches
    with pk.Client(
        sb.api_key, sb.url, cache=shared_cache, budget=7, budget_name=name, progress=False
    ) as client:
        ddf = pkd.properties(ids, client=client, partition_size=250)  # 8 partitions, 2 workers
        with pytest.raises(pk.BudgetExceeded, match=name):
            ddf.compute()
    assert 0 < billable(sb) <= 7
    assert len(sb.requests) == billable(sb)  # nothing else was sent either


def test_cached_batches_stay_free_under_a_spent_shared_budget(sb, cluster, shared_cache):
    name = f"test-{uuid.uuid4().hex[:8]}"
    ids = sb.location_ids[6000:6500]  # 10 batches
    with pk.Client(sb.api_key, sb.url, cache=shared_cache, progress=False) as warm:
        warm.properties(ids)
    sb.reset_log()
    with pk.Client(
        sb.api_key, sb.url, cache=shared_cache, budget=0, budget_name=name, progress=False
    ) as client:
        df = pkd.properties(ids, client=client, partition_size=100).compute()
    assert len(df) == 500
    assert sb.requests == []


def test_two_clients_of_one_name_share_one_count(sb, shared_cache):
    name = f"test-{uuid.uuid4().hex[:8]}"
    settings = {"cache": shared_cache, "budget": 3, "budget_name": name, "progress": False}
    with (
        pk.Client(sb.api_key, sb.url, **settings) as one,
        pk.Client(sb.api_key, sb.url, **settings) as two,
    ):
        one.properties(sb.location_ids[7000:7100])  # 2 batches
        with pytest.raises(pk.BudgetExceeded):
            two.properties(sb.location_ids[7100:7200])  # 1 more fits, then the count is full
    assert billable(sb) == 3


def test_budget_name_needs_a_budget_and_a_shared_cache(sb):
    with pytest.raises(pk.ConfigError, match="budget="):
        pk.Client(sb.api_key, sb.url, cache=False, budget_name="q3")
    with pytest.raises(pk.ConfigError, match="Redis cache or a SQLite"):
        pk.Client(sb.api_key, sb.url, cache=False, budget=3, budget_name="q3")
    with pytest.raises(pk.ConfigError, match="budget_name"):
        pk.Client(sb.api_key, sb.url, cache=False, budget=3, budget_name="no spaces")
