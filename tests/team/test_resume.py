"""An interrupted run resumes where it stopped and pays for nothing twice."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

import propertykit as pk
from propertykit.client import Clock

NOON = datetime(2025, 6, 2, 12, 0, tzinfo=UTC)


def answered(sb) -> list[tuple[str, str]]:
    return [(r.path, r.query) for r in sb.requests if r.status == 200]


@pytest.mark.parametrize("resume_with", ["the same call", "the remaining ids"])
def test_resume_after_the_daily_cap_pays_for_nothing_twice(fresh_sandbox, tmp_path, resume_with):
    sb = fresh_sandbox
    sb.set_now(NOON)
    ids = sb.source_ids[:600]  # 12 batches of 50, 2 pages of 25 each: 24 requests, 600 credits

    def kernel() -> pk.Client:
        return pk.Client(sb.api_key, sb.url, cache=tmp_path / "c.sqlite", max_in_flight=4,
                         progress=False, clock=Clock(now=sb.now, sleep=lambda s: None))  # fmt: skip

    sb.set_daily_cap(250)  # ten pages' worth
    with kernel() as first, pytest.raises(pk.DailyCapReached) as caught:
        first.sources(ids, page_size=25)
    first_run = answered(sb)
    partial = caught.value.partial
    assert len(first_run) == 10
    assert sb.credits_charged == 250
    assert len(partial.records) == 250  # every page paid for is in hand
    assert partial.remaining_ids  # and what is left to fetch
    done = set(ids) - set(partial.remaining_ids)
    assert {r["locationId"] for r in partial.records} >= {
        sb.location_ids[sb.source_ids.index(i)] for i in done
    }

    sb.set_daily_cap(100_000)  # the next day, in a new kernel
    sb.reset_log()
    with kernel() as second:
        wanted = ids if resume_with == "the same call" else partial.remaining_ids
        df = second.sources(wanted, page_size=25)
    second_run = answered(sb)

    with pk.Client(sb.api_key, sb.url, cache=False, progress=False) as reference:
        sb.reset_log()
        reference.sources(ids, page_size=25)
    one_pass = answered(sb)

    assert len(one_pass) == 24
    assert Counter(first_run + second_run) == Counter(one_pass)  # nothing asked twice
    assert len(second_run) == 14
    assert sb.credits_charged == 600 + 600  # both runs together, then the reference pass
    if resume_with == "the same call":
        assert df["locationId"].tolist() == [sb.location_ids[i] for i in range(600)]
    else:
        got = set(df["locationId"]) | {r["locationId"] for r in partial.records}
        assert got == set(sb.location_ids[:600])
