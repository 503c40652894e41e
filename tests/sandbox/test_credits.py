"""Credits and the daily cap: costs per endpoint, 402, 429 until midnight UTC, errors free."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from .conftest import NOON, Api


def _lookup(api: Api, count: int) -> int:
    return api.get("/v1/property/" + ",".join(api.sb.location_ids[:count])).status_code


def test_property_lookup_costs_one_credit_per_record(api: Api) -> None:
    assert _lookup(api, 7) == 200
    assert api.sb.credits_charged == 7
    assert api.sb.balance == 1_000_000 - 7


def test_lookup_that_finds_nothing_costs_one_credit(api: Api) -> None:
    assert api.get("/v1/property/L99999999").json()["result"] == []
    assert api.sb.credits_charged == 1


def test_sources_charge_per_record_on_the_page(api: Api) -> None:
    api.get("/v1/property/sources/" + ",".join(api.sb.source_ids[:25]), params={"limit": 10})
    assert [c.credits for c in api.sb.ledger] == [10]
    assert api.sb.ledger[0].endpoint == "sources"


def test_purchase_costs_25_credits(api: Api) -> None:
    assert api.buy(api.sb.title_numbers[0], "k").status_code == 200
    assert api.sb.credits_charged == 25


def test_health_suggest_and_purchase_status_are_free(api: Api) -> None:
    assert api.get("/v1/property/health").status_code == 200
    assert api.get("/v1/property/suggest", params={"q": "Leeds"}).status_code == 200
    assert api.status(api.sb.title_numbers[0]).status_code == 200
    assert api.sb.ledger == []


def test_ledger_names_key_endpoint_and_time(api: Api) -> None:
    api.sb.set_now(NOON)
    api.get("/v1/property/" + api.sb.location_ids[0], key=api.sb.restricted_key)
    [charge] = api.sb.ledger
    assert (charge.key_name, charge.endpoint, charge.credits, charge.at) == (
        "restricted",
        "property",
        1,
        NOON,
    )


def test_402_without_retry_after_when_balance_too_low(api: Api) -> None:
    api.sb.set_balance(4)
    answer = api.get("/v1/property/" + ",".join(api.sb.location_ids[:5]))
    assert answer.status_code == 402
    assert "Retry-After" not in answer.headers
    assert answer.json()["error"]["code"] == "insufficient_credit"
    assert api.sb.ledger == []
    assert api.sb.balance == 4


def test_402_succeeds_after_credit_added(api: Api) -> None:
    api.sb.set_balance(0)
    assert _lookup(api, 3) == 402
    api.sb.add_credit(3)
    assert _lookup(api, 3) == 200
    assert api.sb.balance == 0


def test_daily_cap_429_retry_after_counts_to_midnight_utc(api: Api) -> None:
    api.sb.set_now(datetime(2025, 6, 2, 23, 0, 0, tzinfo=UTC))
    api.sb.set_daily_cap(5)
    assert _lookup(api, 5) == 200
    answer = api.get("/v1/property/" + api.sb.location_ids[9])
    assert answer.status_code == 429
    assert answer.headers["Retry-After"] == "3600"
    assert answer.json()["error"]["code"] == "rate_limit_exceeded"
    assert api.sb.credits_charged == 5


def test_date_header_follows_the_sandbox_clock(api: Api) -> None:
    # A client reads "now" from Date to tell a daily-cap Retry-After from a short one.
    api.sb.set_now(datetime(2025, 6, 2, 23, 0, 0, tzinfo=UTC))
    answer = api.get("/v1/property/health")
    sent = parsedate_to_datetime(answer.headers["Date"])
    assert sent.date() == api.sb.now().date() and sent.hour == 23


def test_daily_cap_message_states_the_limit(api: Api) -> None:
    api.sb.set_daily_cap(2)
    answer = api.get("/v1/property/" + ",".join(api.sb.location_ids[:3]))
    assert answer.status_code == 429
    assert "2 credits" in answer.json()["error"]["message"]


def test_daily_cap_resets_at_midnight_utc(api: Api) -> None:
    api.sb.set_now(datetime(2025, 6, 2, 23, 59, 58, tzinfo=UTC))
    api.sb.set_daily_cap(3)
    assert _lookup(api, 3) == 200
    assert _lookup(api, 1) == 429
    api.sb.advance(1)
    assert api.get("/v1/property/L00000001").headers["Retry-After"] == "1"
    api.sb.advance(1)
    assert _lookup(api, 3) == 200
    assert api.sb.credits_charged == 6


def test_cap_and_balance_are_shared_by_both_keys(api: Api) -> None:
    api.sb.set_daily_cap(2)
    assert _lookup(api, 2) == 200
    answer = api.get("/v1/property/" + api.sb.location_ids[0], key=api.sb.restricted_key)
    assert answer.status_code == 429


def test_errors_are_never_charged(api: Api) -> None:
    ids = api.sb.location_ids
    api.get("/v1/property/" + ids[0], key=None)  # 401
    api.get("/v1/property/" + ids[0], params={"attributes": "nope"})  # 400
    api.get("/v1/nothing")  # 403
    api.get("/nothing")  # 404
    api.sb.inject_fault("error", count=2, status=500)
    api.get("/v1/property/" + ids[0])  # 500
    api.buy(api.sb.title_numbers[0], "k")  # 500
    api.buy("XX999999", "k2")  # 404, not_charged
    assert api.sb.ledger == []
    assert api.sb.balance == 1_000_000
