"""Read an error answer, whatever its shape, into the right :class:`~propertykit.errors.ApiError`.

The body is read as text first, then interpreted: JSON with ``error`` as an object or a string, a
bare ``{"message": ...}``, plain text, HTML, empty or invalid JSON all work. A 429 whose
``Retry-After`` counts down to the next midnight UTC becomes
:class:`~propertykit.errors.DailyCapReached`. Pure: no network, no clock, no randomness.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from propertykit.errors import (
    ApiError,
    AuthenticationError,
    DailyCapReached,
    InsufficientCredit,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)
from propertykit.wire._error_variants import error_extras, rate_limit_wait
from propertykit.wire._retries import (
    describe_duration,
    header_value,
    parse_retry_after,
    reference_time,
    resets_at_midnight,
)

#: Longest server message kept in an exception's text (the raw body is kept whole in ``.body``).
_MESSAGE_LIMIT = 300


def error_from_response(
    status: int,
    body: bytes | str,
    headers: Mapping[str, str],
    *,
    url: str | None,
    now: datetime,
    secrets: Iterable[str] = (),
) -> ApiError:
    """Read an error answer into the right :class:`~propertykit.errors.ApiError` subclass.

    The body is read as text first, then interpreted: JSON with ``error`` as an object or a
    string, a bare ``{"message": ...}``, plain text, HTML, empty or invalid JSON all work. Any
    ``secrets`` (the API key) are blanked out of the text before it is kept.

    Parameters
    ----------
    status
        The HTTP status.
    body
        The raw body.
    headers
        Response headers (``Retry-After`` is read; ``Date`` is the service's clock).
    url
        The request URL, kept on the error.
    now
        The current time, for an HTTP-date ``Retry-After`` and the daily-cap test.
    secrets
        Strings that must never appear in the error.

    Returns
    -------
    ApiError
        Never raises.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> error = error_from_response(
    ...     402, b'{"error": {"code": "insufficient_credit", "message": "No credit"}}', {},
    ...     url=None, now=datetime.now(UTC))
    >>> type(error).__name__, error.code
    ('InsufficientCredit', 'insufficient_credit')
    """
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    code, message, money_state = _interpret_body(text)
    when = reference_time(headers, now)
    retry_after = parse_retry_after(header_value(headers, "Retry-After"), when)
    if retry_after is None and status == 429:
        retry_after = rate_limit_wait(headers, when)
    fields: dict[str, Any] = {
        "body": text,
        "code": code,
        "message": message,
        "retry_after": retry_after,
        "money_state": money_state,
        "url": url,
        **error_extras(text),
    }
    if status == 429:
        midnight = resets_at_midnight(retry_after, when)
        if midnight is not None:
            return DailyCapReached(
                status, resets_at=midnight, hint=_daily_cap_text(midnight, when), **fields
            )
        return RateLimited(status, **fields)
    error_class, hint = _CLASS_BY_STATUS.get(status, (None, None))
    if error_class is None:
        error_class = ServerError if 500 <= status <= 599 else ApiError
    return error_class(status, hint=hint, **fields)


_CLASS_BY_STATUS: dict[int, tuple[type[ApiError], str]] = {
    401: (AuthenticationError, "Check the API key (PROPERTYKIT_API_KEY)"),
    402: (
        InsufficientCredit,
        "Add credit to the account, then run the same call again (nothing was charged)",
    ),
    403: (PermissionDenied, "The key lacks access to this resource, or it is not available"),
    404: (NotFound, "No such path or resource"),
}


def _interpret_body(text: str) -> tuple[str | None, str | None, str | None]:
    """(code, message, money_state) from a body of any shape."""
    stripped = text.strip()
    if not stripped:
        return None, None, None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None, _message_from_text(stripped), None
    if isinstance(data, dict):
        return _interpret_object(data)
    if isinstance(data, str):
        return None, _shorten(data) or None, None
    return None, _shorten(stripped), None


def _interpret_object(data: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    code = message = money_state = None
    error = data.get("error")
    if isinstance(error, dict):
        code = _scalar(error.get("code"))
        message = _scalar(error.get("message"))
        money_state = _scalar(error.get("money_state"))
    elif isinstance(error, str) and error.strip():
        if re.fullmatch(r"[A-Za-z0-9_.\-]+", error.strip()):
            code = error.strip()
        else:
            message = error
    code = code or _scalar(data.get("code"))
    message = message or _scalar(data.get("message"))
    money_state = money_state or _scalar(data.get("money_state"))
    return code, _shorten(message) if message else None, money_state


def _message_from_text(text: str) -> str:
    if text.startswith("<") and re.search(r"<\s*(html|!doctype|body|head)", text, re.I):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        heading = re.search(r"<h1[^>]*>(.*?)</h1>", text, re.I | re.S)
        found = title or heading
        words = re.sub(r"<[^>]+>|\s+", " ", found.group(1)).strip() if found else ""
        return _shorten(words) if words else "an HTML error page"
    return _shorten(" ".join(text.split()))


def _scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def _shorten(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def _daily_cap_text(midnight: datetime, now: datetime) -> str:
    remaining = max(0.0, (midnight - now).total_seconds())
    return f"Daily credit cap reached; resets at 00:00 UTC (in {describe_duration(remaining)})"
