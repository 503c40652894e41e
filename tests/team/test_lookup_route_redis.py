"""One way through a lookup with a team Redis cache, as ``tests/client/test_lookup_route.py``
follows it with the SQLite file."""

from __future__ import annotations

import pytest

from tests.client.test_lookup_route import _over_twice, _visits


@pytest.mark.timeout(120)
def test_a_lookup_through_a_team_redis_visits_each_module_at_most_twice(
    fresh_sandbox, make_client, redis_url
):
    """The same route through the team cache: the Redis storage looked at once and written
    once; the lock's mark, taken and let go, spares the read again; no lease renewed for a
    short fetch."""
    sb = fresh_sandbox
    ids = sb.location_ids[:40]  # one batch
    with make_client(sb, cache=redis_url, max_in_flight=1) as warm_up:
        warm_up.properties(sb.location_ids[100:101])
    for label in ("cold", "first re-run", "warm, kept form"):
        with make_client(sb, cache=redis_url, max_in_flight=1) as client:
            visits = _visits(lambda client=client: client.properties(ids))
            assert client.usage.requests_sent == int(label == "cold"), label
        assert visits["wire/_redis_storage.py"] == 2, f"{label}: {dict(visits)}"
        assert _over_twice(visits) == {}, f"{label}: {dict(visits)}"
