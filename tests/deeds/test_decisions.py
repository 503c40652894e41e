"""The purchase rules as pure decisions: plain values in, plain decisions out, no clock, no HTTP."""

from __future__ import annotations

import random

import pytest

from propertykit.deeds._decisions import (
    AskStatus,
    Delivered,
    Delivering,
    Raise,
    RetryAfter,
    RetryPolicy,
    decide_after_attempt,
    decide_after_status,
    read_delivery_status,
    read_money_state,
    read_purchase_keys,
)
from propertykit.wire import RetrySettings


def policy(max_retries: int = 3, max_wait: float = 60.0) -> RetryPolicy:
    return RetryPolicy(RetrySettings(max_retries=max_retries, max_wait=max_wait), random.Random(7))


def test_200_is_delivered_and_202_is_delivering() -> None:
    assert decide_after_attempt(200, attempt=1, policy=policy()) == Delivered()
    assert decide_after_attempt(202, attempt=1, policy=policy()) == Delivering()


def test_202_is_never_retried_even_on_the_last_attempt() -> None:
    assert decide_after_attempt(202, attempt=99, policy=policy(max_retries=0)) == Delivering()


@pytest.mark.parametrize("status", [400, 402, 409, 500, 503])
def test_error_with_money_state_charged_is_raised_never_retried(status: int) -> None:
    decision = decide_after_attempt(status, money_state="charged", attempt=1, policy=policy())
    assert isinstance(decision, Raise)
    assert decision.money_state == "charged"


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_not_charged_5xx_is_retried_with_backoff(status: int) -> None:
    decision = decide_after_attempt(status, money_state="not_charged", attempt=1, policy=policy())
    assert isinstance(decision, RetryAfter)
    assert 0.0 <= decision.seconds <= 0.5


def test_not_charged_5xx_stops_after_max_retries() -> None:
    retries = [
        decide_after_attempt(503, money_state="not_charged", attempt=n, policy=policy(2))
        for n in (1, 2, 3)
    ]
    assert [type(decision) for decision in retries] == [RetryAfter, RetryAfter, Raise]
    assert isinstance(retries[-1], Raise)
    assert retries[-1].money_state == "not_charged"


@pytest.mark.parametrize("status", [400, 402, 404, 409, 422])
def test_not_charged_4xx_is_never_retried(status: int) -> None:
    decision = decide_after_attempt(status, money_state="not_charged", attempt=1, policy=policy())
    assert decision == Raise("not_charged", f"HTTP {status}, not charged; not retryable")


def test_short_429_waits_its_retry_after_then_retries() -> None:
    decision = decide_after_attempt(
        429, money_state="not_charged", retry_after=12.0, attempt=1, policy=policy()
    )
    assert decision == RetryAfter(12.0)


def test_429_longer_than_max_wait_or_daily_cap_raises() -> None:
    long_wait = decide_after_attempt(
        429, money_state="not_charged", retry_after=600.0, attempt=1, policy=policy(max_wait=60)
    )
    daily_cap = decide_after_attempt(
        429, money_state="not_charged", retry_after=5.0, daily_cap=True, attempt=1, policy=policy()
    )
    assert isinstance(long_wait, Raise) and long_wait.money_state == "not_charged"
    assert isinstance(daily_cap, Raise) and daily_cap.money_state == "not_charged"


@pytest.mark.parametrize("status", [400, 409, 500, 503])
def test_unknown_money_state_asks_purchase_status_first(status: int) -> None:
    decision = decide_after_attempt(status, money_state="unknown", attempt=1, policy=policy())
    assert isinstance(decision, AskStatus)


@pytest.mark.parametrize("status", [404, 500])
def test_error_body_without_money_state_is_treated_as_unknown(status: int) -> None:
    assert isinstance(decide_after_attempt(status, attempt=1, policy=policy()), AskStatus)


@pytest.mark.parametrize("status", [401, 403])
def test_auth_refusal_without_money_state_is_not_charged(status: int) -> None:
    decision = decide_after_attempt(status, attempt=1, policy=policy())
    assert isinstance(decision, Raise) and decision.money_state == "not_charged"


@pytest.mark.parametrize("kind", ["timeout", "reset", "truncated", "read_timeout_after_send"])
def test_failure_after_sending_asks_purchase_status_never_resends(kind: str) -> None:
    decision = decide_after_attempt(kind, attempt=1, policy=policy())
    assert isinstance(decision, AskStatus)


def test_failure_after_sending_asks_status_even_when_retries_are_spent() -> None:
    assert isinstance(decide_after_attempt("reset", attempt=9, policy=policy(0)), AskStatus)


@pytest.mark.parametrize("kind", ["connect", "connect_error"])
def test_connect_failure_never_sent_so_retries_then_raises_not_charged(kind: str) -> None:
    assert isinstance(decide_after_attempt(kind, attempt=1, policy=policy(1)), RetryAfter)
    last = decide_after_attempt(kind, attempt=2, policy=policy(1))
    assert isinstance(last, Raise) and last.money_state == "not_charged"


def test_connect_failure_already_retried_by_the_transport_is_not_retried_again() -> None:
    decision = decide_after_attempt("connect", transport_retried=True, attempt=1, policy=policy(3))
    assert isinstance(decision, Raise) and decision.money_state == "not_charged"


def test_status_charged_and_delivered_is_success() -> None:
    assert decide_after_status("charged", "delivered", attempt=1, policy=policy()) == Delivered()


@pytest.mark.parametrize("delivery", ["delivering", None, "pending"])
def test_status_charged_but_not_yet_delivered_is_delivering(delivery: str | None) -> None:
    decision = decide_after_status("charged", delivery, attempt=1, policy=policy())
    assert decision == Delivering()


def test_status_charged_with_failed_delivery_raises_charged() -> None:
    decision = decide_after_status("charged", "failed", attempt=1, policy=policy())
    assert isinstance(decision, Raise) and decision.money_state == "charged"


def test_status_not_charged_retries_while_attempts_remain_then_raises() -> None:
    assert isinstance(
        decide_after_status("not_charged", None, attempt=1, policy=policy(1)), RetryAfter
    )
    last = decide_after_status("not_charged", None, attempt=2, policy=policy(1))
    assert isinstance(last, Raise) and last.money_state == "not_charged"


def test_status_not_charged_for_an_open_intent_sends_at_once() -> None:
    assert decide_after_status("not_charged", None, attempt=0, policy=policy(0)) == RetryAfter(0.0)


@pytest.mark.parametrize("money_state", ["unknown", None, "something-else"])
def test_status_that_cannot_establish_the_outcome_raises_unknown(money_state: str | None) -> None:
    decision = decide_after_status(money_state, None, attempt=1, policy=policy())
    assert isinstance(decision, Raise) and decision.money_state == "unknown"


def test_backoff_is_deterministic_under_an_injected_rng_and_capped() -> None:
    first = RetryPolicy(RetrySettings(backoff_base=1, backoff_cap=4), random.Random(3))
    second = RetryPolicy(RetrySettings(backoff_base=1, backoff_cap=4), random.Random(3))
    delays = [first.backoff(n) for n in range(1, 8)]
    assert delays == [second.backoff(n) for n in range(1, 8)]
    assert all(0.0 <= delay <= 4.0 for delay in delays)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"success": True, "result": {"money_state": "charged"}}, "charged"),
        ({"money_state": "not_charged"}, "not_charged"),
        ({"data": [{"moneyState": "unknown"}]}, "unknown"),
        ({"result": {"money_state": "refunded?"}}, None),
        ("plain text", None),
        (None, None),
    ],
)
def test_money_state_is_read_wherever_the_body_carries_it(
    body: object, expected: str | None
) -> None:
    assert read_money_state(body) == expected


def test_delivery_status_ignores_unrelated_status_fields() -> None:
    body = {"status": "ok", "result": {"status": "delivering", "purchases": [{"status": "x"}]}}
    assert read_delivery_status(body) == "delivering"
    assert read_delivery_status({"status": "ok"}) is None


def test_purchase_keys_are_read_only_when_the_body_lists_them() -> None:
    body = {"result": {"purchases": [{"idempotencyKey": "a"}, {"idempotency_key": "b"}]}}
    assert read_purchase_keys(body) == {"a", "b"}
    assert read_purchase_keys({"result": {"money_state": "charged"}}) is None
