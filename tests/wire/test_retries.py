"""Retries against the sandbox's faults: 5xx and dropped connections, 402, short and long 429s."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

import propertykit as pk
from propertykit.client import Clock
from propertykit.errors import (
    DailyCapReached,
    InsufficientCredit,
    NetworkError,
    RateLimited,
    ServerError,
)

NO_CLIENT_LIMIT = pk.Endpoints(suggest_per_minute=None)


def lookups(sb):
    return [r for r in sb.requests if r.path.startswith("/v1/property/L")]


def test_a_burst_of_503s_is_retried_with_backoff_and_charged_once(
    profiled_sandbox, make_client, sleeps
):
    sb = profiled_sandbox
    client = make_client(sb)
    sb.inject_fault("error", status=503, count=2)
    records = client.property_records(sb.location_ids[:4])
    assert len(records) == 4
    assert [r.status for r in lookups(sb)] == [503, 503, 200]
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 1.0  # capped exponential, full jitter
    assert sb.credits_charged == 4
    assert client.usage.retries == 2


def test_5xx_past_max_retries_raises_server_error(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    client = make_client(sb, max_retries=2)
    sb.inject_fault("error", status=500, count=5)
    with pytest.raises(ServerError) as caught:
        client.property_records(sb.location_ids[:1])
    assert caught.value.status_code == 500
    assert "Gave up after 3 attempts" in str(caught.value)
    assert len(lookups(sb)) == 3
    assert len(sleeps) == 2
    assert sb.credits_charged == 0


def test_a_dropped_connection_is_retried(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    client = make_client(sb)
    sb.inject_fault("reset", count=1)
    assert len(client.property_records(sb.location_ids[:2])) == 2
    assert len(sleeps) == 1


def test_a_slow_answer_times_out_and_is_retried(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    client = make_client(sb, timeout=0.2)
    sb.inject_fault("slow", count=1, delay=1.0)
    assert len(client.property_records(sb.location_ids[:2])) == 2
    assert len(sleeps) == 1


def test_an_unreachable_service_raises_network_error_after_retries(make_client, sleeps):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_client(
        type("Nowhere", (), {"api_key": "pk_live_x", "url": f"http://127.0.0.1:{port}"})(),
        max_retries=2,
    )
    with pytest.raises(NetworkError) as caught:
        client.health()
    assert caught.value.kind == "connect"
    assert "after 3 attempts" in str(caught.value)
    assert len(sleeps) == 2


def test_402_raises_at_once_and_says_to_add_credit(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    sb.set_balance(0)
    client = make_client(sb)
    with pytest.raises(InsufficientCredit) as caught:
        client.property_records(sb.location_ids[:3])
    assert caught.value.status_code == 402
    assert caught.value.code_is("insufficient_credit")  # upper-case under vepler
    assert "Add credit" in str(caught.value)
    assert len(lookups(sb)) == 1
    assert sleeps == []
    sb.add_credit(10)  # the same request succeeds once credit is added
    assert len(client.property_records(sb.location_ids[:3])) == 3


@pytest.mark.parametrize("status", [400, 401, 403])
def test_other_4xx_are_not_retried(profiled_sandbox, make_client, sleeps, status):
    sb = profiled_sandbox
    client = make_client(sb)
    with pytest.raises(pk.ApiError) as caught:
        if status == 400:
            client.source_records(sb.source_ids[:1], attributes=["notAnAttribute"])
        elif status == 401:
            make_client(sb, api_key="pk_live_" + "0" * 32).health()
        else:
            make_client(sb, endpoints=pk.Endpoints(suggest_path="/v1/nothing/here")).suggest("x")
    assert caught.value.status_code == status
    assert len(sb.requests) == 1
    assert sleeps == []


def test_a_short_429_is_slept_through_then_succeeds(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    sb.set_now(datetime(2024, 3, 5, 12, 0, 10, tzinfo=UTC))
    sb.set_suggest_limit(1)

    def wait(seconds: float) -> None:
        sleeps.append(seconds)
        sb.advance(seconds)  # the sandbox's minute passes while the client "sleeps"

    client = make_client(sb, endpoints=NO_CLIENT_LIMIT, clock=Clock(sleep=wait))
    client.suggest("Mill")
    assert client.suggest("Church")
    assert sleeps == [50.0]  # Retry-After: to the end of the sandbox's minute
    assert [r.status for r in sb.requests] == [200, 429, 200]


def test_a_429_longer_than_max_wait_raises_without_sleeping(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    sb.set_now(datetime(2024, 3, 5, 12, 0, 10, tzinfo=UTC))
    sb.set_suggest_limit(1)
    client = make_client(sb, endpoints=NO_CLIENT_LIMIT, max_wait=10)
    client.suggest("Mill")
    with pytest.raises(RateLimited) as caught:
        client.suggest("Church")
    assert type(caught.value) is RateLimited
    assert caught.value.retry_after == 50.0
    assert "max_wait=10" in str(caught.value)
    assert sleeps == []


def test_daily_cap_429_stops_without_sleeping(profiled_sandbox, make_client, sleeps):
    sb = profiled_sandbox
    sb.set_now(datetime(2025, 6, 2, 20, 48, tzinfo=UTC))
    sb.set_daily_cap(3)
    client = make_client(sb, max_wait=86_400)  # even a patient client does not wait for midnight
    client.property_records(sb.location_ids[:3])
    with pytest.raises(DailyCapReached) as caught:
        client.property_records(sb.location_ids[3:5])
    error = caught.value
    assert error.resets_at == datetime(2025, 6, 3, tzinfo=UTC)
    assert str(error).startswith("Daily credit cap reached; resets at 00:00 UTC (in 3 h 12 min)")
    assert error.code_is("rate_limit_exceeded")  # upper-case under vepler
    assert sleeps == []
    assert len(lookups(sb)) == 2
