"""Review decisions on a team's Redis cache: one analyst decides, every colleague's match uses it,
and clearing the cache keeps it."""

from __future__ import annotations

import pytest

import propertykit as pk
from propertykit.sandbox import Sandbox

pytestmark = pytest.mark.timeout(120)


def test_a_decision_on_redis_is_used_by_a_colleague_and_survives_clearing(
    sandbox: Sandbox, redis_url: str
) -> None:
    picked = sandbox.location_ids[7]
    with pk.Client(sandbox.api_key, sandbox.url, cache=redis_url, progress=False) as mine:
        mine.address_decisions.pick("Flat 2, 7 Oak Road", picked, "Flat 2, 7 Oak Road, Bedford")
        mine.address_decisions.not_held("1 Gone Street")
        assert "redis://127.0.0.1" in mine.address_decisions.where
        mine.clear_cache()
    with pk.Client(sandbox.api_key, sandbox.url, cache=redis_url, progress=False) as theirs:
        df = theirs.match_addresses(["flat 2, 7 oak road", "1 GONE STREET"])
    assert df["status"].tolist() == ["matched", "unmatched"]
    assert df["locationId"].iloc[0] == picked
    assert df["reason"].iloc[1].startswith("not held by the service")
    assert df.attrs["requests_sent"] == 0
    assert df.attrs["decisions_applied"] == 2


def test_books_on_redis_are_apart_until_one_copies_the_other(
    sandbox: Sandbox, redis_url: str
) -> None:
    picked = sandbox.location_ids[8]
    with pk.Client(sandbox.api_key, sandbox.url, cache=redis_url, progress=False) as mine:
        mine.match_decisions("team-a").pick("Flat 3, 8 Oak Road", picked)
        assert mine.match_decisions("team-a").where.endswith(":notes:address-matches:team-a)")
    with pk.Client(sandbox.api_key, sandbox.url, cache=redis_url, progress=False) as theirs:
        other = theirs.match_decisions("team-b")
        assert other.get("flat 3, 8 oak road") is None
        assert other.copy_from("team-a") == 1
        df = theirs.match_addresses(["flat 3, 8 oak road"], book="team-b")
    assert df["locationId"].tolist() == [picked]
    assert df.attrs["requests_sent"] == 0
