"""One way through a lookup with a team Redis cache, as ``tests/client/test_lookup_route.py``
follows it with the SQLite file: paid once, and every re-run gives the same frame."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.mark.timeout(120)
def test_a_lookup_through_a_team_redis_is_paid_once_and_re_runs_give_the_same_frame(
    fresh_sandbox, make_client, redis_url
):
    sb = fresh_sandbox
    ids = sb.location_ids[:40]  # one batch
    frames = {}
    for label in ("cold", "first re-run", "warm, kept form"):
        with make_client(sb, cache=redis_url, max_in_flight=1) as client:
            frames[label] = client.properties(ids)
            assert client.usage.requests_sent == int(label == "cold"), label
            assert client.usage.cache_hits == int(label != "cold"), label
    assert len(sb.requests) == len(sb.ledger) == 1  # received once, charged once
    for label in ("first re-run", "warm, kept form"):
        pd.testing.assert_frame_equal(frames[label], frames["cold"])
