"""Every propertykit error becomes plain words: what happened and what to do."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from propertykit.errors import (
    ApiError,
    AuthenticationError,
    BudgetExceeded,
    ConfigError,
    DailyCapReached,
    InsufficientCredit,
    InvalidInput,
    NetworkError,
    NotCached,
    NotFound,
    PermissionDenied,
    PurchaseUncertain,
    RateLimited,
    ServerError,
)
from propertykit.widgets._messages import (
    describe_error,
    describe_money_state,
    describe_reset,
    money_state_of,
)

NOW = datetime(2025, 6, 2, 20, 48, tzinfo=UTC)
MIDNIGHT = datetime(2025, 6, 3, tzinfo=UTC)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (AuthenticationError(401), "The API key was refused: check PROPERTYKIT_API_KEY"),
        (InsufficientCredit(402), "too little credit; this request was not charged"),
        (
            PermissionDenied(403, message="This endpoint is not available"),
            "may not use this part of the service. The service said: “This endpoint is not "
            "available”.",
        ),
        (NotFound(404, body="Not Found"), "The service found nothing at the address asked."),
        (
            DailyCapReached(429, resets_at=MIDNIGHT, retry_after=11520),
            "resets at 00:00 UTC on Tue 3 Jun 2025 (in 3 h 12 min)",
        ),
        (RateLimited(429, retry_after=30), "Too many requests for now: wait 30 s and try again."),
        (ServerError(503), "The service failed, even after retrying"),
        (ApiError(418, code="teapot"), "The service refused the request."),
        (NetworkError("reset", kind="reset"), "Could not reach the service"),
        (PurchaseUncertain("?", title_number="T1"), "check again before retrying"),
        (InvalidInput("Empty location id"), "Please check the input: Empty location id"),
        (NotCached("miss"), "Offline mode: this lookup is not in the cache"),
        (BudgetExceeded("spent"), "budget of billable requests is spent, so nothing was sent"),
        (ConfigError("No API key"), "A setting is missing or wrong: No API key"),
        (KeyError("boom"), "Something unexpected went wrong inside propertykit. Please report"),
    ],
)
def test_each_error_reads_as_plain_words(error, expected):
    text = describe_error(error, now=NOW)
    assert expected in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError(401),
        InsufficientCredit(402, code="insufficient_credit"),
        PermissionDenied(403, code="forbidden", message="No access"),
        NotFound(404, code="not_found"),
        DailyCapReached(429, resets_at=MIDNIGHT, retry_after=11520, code="daily_cap"),
        RateLimited(429, retry_after=30, code="rate_limit_exceeded"),
        ServerError(503, code="unavailable"),
        ApiError(418, code="teapot"),
        KeyError("boom"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_no_message_holds_a_status_code_or_a_code_name(error):
    text = describe_error(error, now=NOW)
    assert not re.search(r"HTTP|\b[1-5]\d\d\b|\b[a-z]+_[a-z_]+\b", text), text
    assert type(error).__name__ not in text and "boom" not in text


def test_a_missing_thing_is_named():
    said = describe_error(
        NotFound(404, message="Title ZZ999999 does not exist."), about="title ZZ999999"
    )
    assert said == (
        "The service does not know title ZZ999999. The service said: “Title ZZ999999 does not "
        "exist”."
    )


def test_daily_cap_without_a_reset_time_still_says_midnight():
    assert "it resets at midnight UTC" in describe_error(DailyCapReached(429), now=NOW)


def test_reset_time_counts_down():
    assert describe_reset(MIDNIGHT, datetime(2025, 6, 2, 23, 59, 10, tzinfo=UTC)).endswith(
        "(in 1 min)"
    )


@pytest.mark.parametrize(
    ("error", "state"),
    [
        (ApiError(500, money_state="charged"), "charged"),
        (ApiError(402, money_state="not_charged"), "not_charged"),
        (ApiError(500, money_state="unknown"), "unknown"),
        (PurchaseUncertain("?", title_number="T1"), "unknown"),
        (PermissionDenied(403), "not_charged"),  # raised before anything was sent
        (RuntimeError("bug"), "unknown"),  # not ours: never claim "not charged"
    ],
)
def test_money_state_of_purchase_errors(error, state):
    assert money_state_of(error) == state


def test_money_states_in_the_words_of_the_issue():
    assert describe_money_state("charged") == "You were charged; the deed is being delivered"
    assert describe_money_state("not_charged") == "You were not charged"
    assert describe_money_state("unknown") == (
        "We could not establish whether you were charged — check again before retrying"
    )
