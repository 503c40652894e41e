"""The documented variants of the real service's error answers, read beyond code and message.

Vepler's newer answers are ``{"error": {"code": "rate_limit_exceeded", "message": ...}}``; older
ones carry upper-case codes (``RATE_LIMIT_EXCEEDED``) and ``details``, ``request_id`` and
``timestamp``, in the ``error`` object or beside it. Codes keep the case they were sent in and are
compared case-insensitively (:meth:`propertykit.ApiError.code_is`). Some versions send
``X-RateLimit-Limit/Remaining/Reset`` (and ``X-RateLimit-Reset-After``) instead of
``Retry-After``: they are used for the wait when present, never required. Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from propertykit.wire._retries import header_value

#: An ``X-RateLimit-Reset`` above this is a Unix time; below it, seconds to wait.
_EPOCH_THRESHOLD = 1_000_000_000


def error_extras(text: str) -> dict[str, Any]:
    """``request_id`` and ``details`` of an error body (either may be missing: ``None``).

    Examples
    --------
    >>> error_extras('{"error": {"code": "INVALID_API_KEY", "message": "Bad key", '
    ...              '"details": {"hint": "x"}, "request_id": "req_1"}}')
    {'request_id': 'req_1', 'details': {'hint': 'x'}}
    >>> error_extras("<html>oops</html>")
    {'request_id': None, 'details': None}
    """
    extras: dict[str, Any] = {"request_id": None, "details": None}
    try:
        data = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        return extras
    if not isinstance(data, dict):
        return extras
    places = [data["error"]] if isinstance(data.get("error"), dict) else []
    places.append(data)
    for place in places:
        for name in ("request_id", "requestId"):
            value = place.get(name)
            usable = isinstance(value, str | int) and not isinstance(value, bool)
            if extras["request_id"] is None and usable and str(value).strip():
                extras["request_id"] = str(value)
        if extras["details"] is None and place.get("details") is not None:
            extras["details"] = place["details"]
    return extras


def rate_limit_wait(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds to wait from ``X-RateLimit-Reset-After`` or ``X-RateLimit-Reset``, if sent.

    ``Reset`` is read as a Unix time when it is that large, else as seconds.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> now = datetime(2024, 1, 1, tzinfo=UTC)
    >>> rate_limit_wait({"X-RateLimit-Reset": str(int(now.timestamp()) + 30)}, now)
    30.0
    >>> rate_limit_wait({"X-RateLimit-Reset-After": "12"}, now)
    12.0
    >>> rate_limit_wait({}, now) is None
    True
    """
    after = _number(header_value(headers, "X-RateLimit-Reset-After"))
    if after is not None:
        return max(0.0, after)
    reset = _number(header_value(headers, "X-RateLimit-Reset"))
    if reset is None:
        return None
    if reset >= _EPOCH_THRESHOLD:
        return max(0.0, reset - now.timestamp())
    return max(0.0, reset)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None
