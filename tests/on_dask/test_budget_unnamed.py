"""A ``budget=`` handed to the cluster without a name is still one budget for all the workers.

Before, ``propertykit.dask`` refused such a client until it was given a ``budget_name=``. Now a
name is made for it (``shared-...``, shown by ``client.describe()``) and the workers draw from
one count in the shared cache: what the budget had left when it was handed over.
"""

from __future__ import annotations

import pytest

import propertykit as pk
import propertykit.dask as pkd
from tests.on_dask.conftest import billable

pytestmark = pytest.mark.timeout(300)


def test_an_unnamed_budget_caps_the_whole_cluster(sb, cluster, shared_cache):
    ids = sb.location_ids[2000:4000]  # 40 uncached batches over 8 partitions on 2 workers
    with pk.Client(sb.api_key, sb.url, cache=shared_cache, budget=7, progress=False) as client:
        ddf = pkd.properties(ids, client=client, partition_size=250)
        name = client.describe()["budget_name"]
        assert name.startswith("shared-")
        with pytest.raises(pk.BudgetExceeded, match=name):
            ddf.compute()
    assert 0 < billable(sb) <= 7  # not 7 per worker
    assert len(sb.requests) == billable(sb)


def test_what_the_client_spent_before_is_left_out_of_the_workers_count(sb, cluster, shared_cache):
    ids = sb.location_ids[8000:8500]  # 10 batches
    with pk.Client(sb.api_key, sb.url, cache=shared_cache, budget=6, progress=False) as client:
        client.properties(ids[:100])  # 2 batches paid here
        with pytest.raises(pk.BudgetExceeded):
            pkd.properties(ids[100:], client=client, partition_size=100).compute()
        name = client.describe()["budget_name"]
        assert client.describe()["budget"] == 4  # what was left for the workers
        again = pkd.properties(ids[100:], client=client, partition_size=100)
        assert client.describe()["budget_name"] == name  # the same count the second time
        with pytest.raises(pk.BudgetExceeded):
            again.compute()
    assert billable(sb) == 6  # 2 here and 4 on the workers, in all


def test_an_unnamed_budget_without_a_cache_the_workers_reach_is_refused_before_sending(sb):
    with (
        pk.Client(sb.api_key, sb.url, cache=False, budget=3, progress=False) as client,
        pytest.raises(pk.ConfigError, match="cache="),
    ):
        pkd.properties(sb.location_ids[:100], client=client, partition_size=50)
    assert sb.requests == []
