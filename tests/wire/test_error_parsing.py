"""Error bodies of every shape become the right typed error (pure parsing, no network)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from propertykit.errors import (
    ApiError,
    AuthenticationError,
    InsufficientCredit,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)
from propertykit.wire._error_bodies import error_from_response
from tests._hypothesis import examples

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


def parse(status: int, body: bytes | str, headers: dict[str, str] | None = None) -> ApiError:
    return error_from_response(status, body, headers or {}, url="http://h/v1/x", now=NOW)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (401, AuthenticationError),
        (402, InsufficientCredit),
        (403, PermissionDenied),
        (404, NotFound),
        (429, RateLimited),
        (500, ServerError),
        (503, ServerError),
        (418, ApiError),
    ],
)
def test_status_picks_the_error_class(status, cls):
    assert type(parse(status, b"")) is cls


def test_error_as_object_gives_code_message_and_money_state():
    body = (
        '{"success": false, "error": '
        '{"code": "x_failed", "message": "It broke", "money_state": "unknown"}}'
    )
    err = parse(500, body)
    assert (err.code, err.message, err.money_state) == ("x_failed", "It broke", "unknown")
    assert err.body == body
    assert str(err).startswith("HTTP 500 x_failed: It broke (money_state=unknown)")


def test_error_as_a_code_string_with_a_top_level_message():
    err = parse(429, '{"error": "rate_limit_exceeded", "message": "Limit is 30 per minute"}')
    assert err.code == "rate_limit_exceeded"
    assert err.message == "Limit is 30 per minute"


def test_error_as_a_sentence_string_is_the_message():
    err = parse(401, '{"error": "Invalid API key"}')
    assert err.code is None
    assert err.message == "Invalid API key"


def test_bare_message_body():
    err = parse(403, '{"message": "This endpoint is not available"}')
    assert err.message == "This endpoint is not available"
    assert "This endpoint is not available" in str(err)


def test_plain_text_body():
    err = parse(404, "Not Found\n")
    assert err.message == "Not Found"
    assert err.body == "Not Found\n"


def test_html_body_gives_its_title():
    err = parse(502, "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>")
    assert err.message == "502 Bad Gateway"


def test_empty_body():
    err = parse(503, b"")
    assert (err.code, err.message, err.body) == (None, None, "")
    assert str(err).startswith("HTTP 503")


def test_invalid_json_is_kept_as_text():
    err = parse(500, '{"error": {"code": ')
    assert err.message == '{"error": {"code":'
    assert err.code is None


def test_retry_after_header_is_read_case_insensitively():
    assert parse(429, b"", {"retry-after": "5"}).retry_after == 5.0


def test_secrets_in_the_body_are_blanked():
    key = "pk_live_0123456789abcdef"
    err = error_from_response(
        401, f'{{"error": "bad key {key}"}}', {}, url=None, now=NOW, secrets=[key]
    )
    assert key not in err.body
    assert key not in str(err)
    assert key not in repr(err)


@settings(max_examples=examples(300), deadline=None)
@given(
    status=st.integers(min_value=100, max_value=599),
    body=st.one_of(
        st.binary(max_size=400),
        st.text(max_size=200).map(str.encode),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda children: (
                st.lists(children, max_size=4)
                | st.dictionaries(
                    st.sampled_from(["error", "code", "message", "money_state", "x"]),
                    children,
                    max_size=4,
                )
            ),
            max_leaves=12,
        ).map(lambda value: repr(value).replace("'", '"').encode()),
    ),
    retry_after=st.one_of(st.none(), st.text(max_size=30)),
)
def test_any_bytes_and_status_give_only_a_typed_error(status, body, retry_after):
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    err = error_from_response(status, body, headers, url=None, now=NOW)
    assert isinstance(err, ApiError)
    assert err.status_code == status
    assert isinstance(err.body, str)
    assert isinstance(str(err), str)
    assert err.retry_after is None or err.retry_after >= 0


def test_deeply_nested_json_does_not_break_the_parser():
    err = parse(500, "[" * 100_000 + "]" * 100_000)
    assert isinstance(err, ServerError)


def test_a_hint_follows_the_servers_message_with_one_full_stop():
    error = ApiError(401, message="Missing or invalid API key.", hint="Check the API key")
    assert str(error) == "HTTP 401: Missing or invalid API key. Check the API key"
