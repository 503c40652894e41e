"""Retry, backoff and daily-cap decisions: pure functions, a fake clock, no sleeping."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from propertykit.errors import (
    DailyCapReached,
    InsufficientCredit,
    NetworkError,
    RateLimited,
    ServerError,
)
from propertykit.wire import _retries as policy
from propertykit.wire._error_bodies import error_from_response

NOW = datetime(2024, 3, 5, 20, 48, tzinfo=UTC)  # 3 h 12 min before midnight UTC
SETTINGS = policy.RetrySettings(max_retries=3, max_wait=60.0, deadline=300.0)


def error(status: int, body: bytes = b"", headers: dict[str, str] | None = None):
    return error_from_response(status, body, headers or {}, url="http://x/p", now=NOW)


def decide(err, *, attempt: int = 0, elapsed: float = 0.0, idempotent: bool = True):
    return policy.decide_on_response(
        err,
        attempt=attempt,
        elapsed=elapsed,
        settings=SETTINGS,
        rng=random.Random(7),
        idempotent=idempotent,
    )


def test_retry_after_in_seconds_and_as_http_date():
    assert policy.parse_retry_after("17", NOW) == 17.0
    assert policy.parse_retry_after("Tue, 05 Mar 2024 20:49:30 GMT", NOW) == 90.0
    assert policy.parse_retry_after("Tue, 05 Mar 2024 20:00:00 GMT", NOW) == 0.0
    assert policy.parse_retry_after("soon", NOW) is None
    assert policy.parse_retry_after(None, NOW) is None
    assert policy.parse_retry_after("nan", NOW) is None


def test_backoff_is_capped_exponential_with_full_jitter():
    settings = policy.RetrySettings(backoff_base=1.0, backoff_cap=10.0)
    rng = random.Random(1)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 10.0), (50, 10.0)]:
        delays = [policy.backoff_delay(attempt, settings, rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # full jitter spreads over the whole range
        assert min(delays) < ceiling * 0.2


def test_5xx_is_retried_until_max_retries_then_raised():
    err = error(503, b'{"error": {"code": "unavailable", "message": "try later"}}')
    for attempt in range(SETTINGS.max_retries):
        assert isinstance(decide(err, attempt=attempt), policy.Retry)
    final = decide(err, attempt=SETTINGS.max_retries)
    assert isinstance(final, policy.Fail)
    assert isinstance(final.error, ServerError)
    assert "Gave up after 4 attempts" in str(final.error)


def test_no_wait_passes_the_total_deadline():
    err = error(503, headers={"Retry-After": "50"})
    assert isinstance(decide(err, elapsed=240.0), policy.Retry)
    assert isinstance(decide(err, elapsed=260.0), policy.Fail)


def test_402_raises_at_once_and_says_to_add_credit():
    decision = decide(error(402, b'{"error": "insufficient_credit"}'))
    assert isinstance(decision, policy.Fail)
    assert isinstance(decision.error, InsufficientCredit)
    assert "Add credit" in str(decision.error)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_4xx_are_never_retried(status):
    assert isinstance(decide(error(status)), policy.Fail)


def test_short_429_is_waited_out_for_exactly_retry_after():
    decision = decide(error(429, headers={"Retry-After": "12"}))
    assert decision == policy.Retry(delay=12.0, reason="429")


def test_429_as_http_date_is_waited_out():
    decision = decide(error(429, headers={"Retry-After": "Tue, 05 Mar 2024 20:48:30 GMT"}))
    assert decision == policy.Retry(delay=30.0, reason="429")


def test_long_429_raises_rate_limited_without_waiting():
    decision = decide(error(429, headers={"Retry-After": "600"}))
    assert isinstance(decision, policy.Fail)
    assert type(decision.error) is RateLimited
    assert decision.error.retry_after == 600.0
    assert "max_wait=60" in str(decision.error)


def test_429_without_retry_after_backs_off():
    decision = decide(error(429))
    assert isinstance(decision, policy.Retry)
    assert 0.0 <= decision.delay <= SETTINGS.backoff_base


def test_daily_cap_429_stops_with_resets_at_and_a_countdown():
    body = b'{"error": {"code": "rate_limit_exceeded", "message": "Daily cap of 100 credits"}}'
    err = error(429, body, {"Retry-After": str(3 * 3600 + 12 * 60)})
    assert isinstance(err, DailyCapReached)
    assert err.resets_at == datetime(2024, 3, 6, tzinfo=UTC)
    assert str(err).startswith("Daily credit cap reached; resets at 00:00 UTC (in 3 h 12 min)")
    assert "rate_limit_exceeded" in str(err)
    assert isinstance(decide(err), policy.Fail)


def test_daily_cap_stops_even_when_max_wait_would_allow_the_wait():
    err = error(429, headers={"Retry-After": str(3 * 3600 + 12 * 60)})
    decision = policy.decide_on_response(
        err,
        attempt=0,
        elapsed=0.0,
        settings=policy.RetrySettings(max_wait=86_400.0, deadline=86_400.0),
        rng=random.Random(0),
    )
    assert isinstance(decision, policy.Fail)


def test_daily_cap_uses_the_services_date_header_as_its_clock():
    # The local clock is far off; the service's Date says 23:00, so 3600 s is midnight.
    headers = {"Retry-After": "3600", "Date": "Tue, 05 Mar 2024 23:00:00 GMT"}
    err = error_from_response(429, b"", headers, url=None, now=NOW - timedelta(hours=9))
    assert isinstance(err, DailyCapReached)


def test_retry_after_a_little_off_midnight_is_still_the_daily_cap():
    assert policy.resets_at_midnight(3 * 3600 + 12 * 60 + 90, NOW) is not None
    assert policy.resets_at_midnight(3 * 3600 + 12 * 60 + 300, NOW) is None


def test_short_wait_just_before_midnight_is_an_ordinary_wait():
    just_before = datetime(2024, 3, 5, 23, 59, 30, tzinfo=UTC)
    err = error_from_response(429, b"", {"Retry-After": "30"}, url=None, now=just_before)
    assert type(err) is RateLimited
    assert isinstance(decide(err), policy.Retry)


def test_non_idempotent_requests_never_retry_an_answer():
    assert isinstance(decide(error(503), idempotent=False), policy.Fail)


def fail_over(kind, *, attempt: int = 0, idempotent: bool = True):
    return policy.decide_on_failure(
        kind,
        detail="connection trouble",
        url="http://x/p",
        attempt=attempt,
        elapsed=0.0,
        settings=SETTINGS,
        rng=random.Random(0),
        idempotent=idempotent,
    )


def test_network_failure_before_connecting_is_retried_even_for_a_purchase():
    assert isinstance(fail_over("connect", idempotent=False), policy.Retry)


@pytest.mark.parametrize("kind", ["timeout", "reset", "truncated"])
def test_failure_after_sending_is_retried_only_when_idempotent(kind):
    assert isinstance(fail_over(kind, idempotent=True), policy.Retry)
    failed = fail_over(kind, idempotent=False)
    assert isinstance(failed, policy.Fail)
    assert isinstance(failed.error, NetworkError)
    assert failed.error.kind == kind


def test_network_failure_gives_up_after_max_retries_and_says_so():
    decision = fail_over("reset", attempt=3)
    assert isinstance(decision, policy.Fail)
    assert "after 4 attempts" in str(decision.error)
