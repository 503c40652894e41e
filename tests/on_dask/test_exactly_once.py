"""Workers fetching the same uncached batches at the same moment pay for each exactly once.

Two frames over the same 2,000 ids (through two clients) are computed together, so the
two worker processes ask for the same batches at the same time; the sandbox counts what reached
it. The exactly-once rule must hold with the team's Redis cache and with a SQLite file shared by
the processes of one machine.
"""

from __future__ import annotations

import pandas as pd
import pytest

import propertykit as pk
import propertykit.dask as pkd
from tests.on_dask.conftest import billable

pytestmark = pytest.mark.timeout(300)


def test_two_workers_pay_for_each_batch_once_and_a_third_run_pays_nothing(
    sb, cluster, shared_cache
):
    ids = sb.location_ids[2000:4000]  # 40 batches no test has asked for
    sb.set_latency(0.02)  # answers take a moment, so the two workers' asks overlap
    with (
        pk.Client(sb.api_key, sb.url, cache=shared_cache, progress=False) as client,
        pk.Client(sb.api_key, sb.url, cache=shared_cache, progress=False, max_in_flight=3) as other,
    ):
        # Two frames of the same partitions (two clients: two graphs, not one deduplicated),
        # one per worker process, computed together: both start on the same batches at once.
        mine = pkd.properties(ids, client=client, partition_size=500)
        theirs = pkd.properties(ids, client=other, partition_size=500)
        one, two = sorted(cluster.scheduler_info()["workers"])
        futures = [cluster.compute(mine, workers=[one]), cluster.compute(theirs, workers=[two])]
        first, second = (future.result(timeout=240) for future in futures)
        assert billable(sb) == 40  # each batch paid for exactly once, by one of the workers
        assert len(first) == len(second) == 2000
        third = pkd.properties(ids, client=client, partition_size=250).compute()
        assert billable(sb) == 40
        assert client.properties(ids).shape == pkd.unpack_extra_fields(third).shape
        assert client.usage.requests_sent == 0
    paths = [r.path for r in sb.requests]
    assert len(paths) == len(set(paths)) == 40
    pd.testing.assert_series_equal(
        first["locationId"].sort_values(ignore_index=True),
        second["locationId"].sort_values(ignore_index=True),
    )
