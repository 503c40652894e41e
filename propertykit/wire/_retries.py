"""Pure decisions of the transport: whether to retry, how long to wait, when to give up.

Nothing here touches the network, the clock or a random source: every input is a plain value
(status, headers, body, attempt, elapsed seconds, the current UTC time, a random generator), and
every output is plain data. :mod:`~propertykit.wire._transport` executes what these functions
decide, which makes the rules testable with a fake clock and no sleeping.

The rules, from the service interface and the design's transport rules:

- 5xx and network failures are retried with capped exponential backoff and full jitter, within
  ``max_retries`` and a total ``deadline``. A failure after the request may have been received
  (read timeout, reset, cut-off body) is retried only for idempotent requests.
- 402 raises at once (add credit); other 4xx are never retried.
- 429 with ``Retry-After`` of at most ``max_wait`` seconds is waited out; a longer one raises at
  once, as :class:`~propertykit.errors.DailyCapReached` when it counts down to the next midnight
  UTC, else :class:`~propertykit.errors.RateLimited`. A 429 without ``Retry-After`` backs off.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Literal

from propertykit.errors import (
    ApiError,
    DailyCapReached,
    NetworkError,
    PropertyKitError,
)

#: Longest wait a ``Retry-After`` is read as: anything longer (1e12 s, a date in year 9999) is
#: clamped to it before any date arithmetic, which would overflow.
MAX_RETRY_AFTER = 366 * 24 * 3600.0

#: A Retry-After landing this close to the next midnight UTC is the daily credit cap.
MIDNIGHT_TOLERANCE = timedelta(minutes=2)


FailureKind = Literal["connect", "timeout", "reset", "truncated"]
"""How a request failed without an HTTP answer.

``connect``: the connection was never made, so nothing was sent (safe to retry any request).
``timeout``, ``reset``, ``truncated``: the service may have received and acted on the request.
"""


@dataclass(frozen=True, kw_only=True)
class RetrySettings:
    """Bounds of the retry loop.

    Parameters
    ----------
    max_retries
        Retries after the first attempt.
    max_wait
        Longest ``Retry-After`` (seconds) the client waits through; longer ones raise at once.
    backoff_base, backoff_cap
        Backoff before retry ``n`` (0-based) is uniform in ``[0, min(cap, base * 2**n)]``.
    deadline
        Total seconds a call may spend across attempts and waits; no wait goes past it.

    Examples
    --------
    >>> RetrySettings(max_retries=0).max_retries
    0
    """

    max_retries: int = 3
    max_wait: float = 60.0
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    deadline: float = 300.0


@dataclass(frozen=True)
class Retry:
    """Wait ``delay`` seconds, then send the same request again."""

    delay: float
    reason: str


@dataclass(frozen=True)
class Fail:
    """Stop and raise ``error``."""

    error: PropertyKitError


Decision = Retry | Fail


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP-date).

    Parameters
    ----------
    value
        The header value, or ``None`` when absent.
    now
        The current time (timezone-aware) against which an HTTP-date is measured.

    Returns
    -------
    float or None
        Seconds (never negative, at most :data:`MAX_RETRY_AFTER`), or ``None`` when absent or
        unreadable.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> parse_retry_after("120", datetime(2024, 1, 1, tzinfo=UTC))
    120.0
    >>> parse_retry_after("Mon, 01 Jan 2024 00:01:00 GMT", datetime(2024, 1, 1, tzinfo=UTC))
    60.0
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return _clamp(seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return _clamp((when - now).total_seconds())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _clamp(seconds: float) -> float:
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


def reference_time(headers: Mapping[str, str], fallback: datetime) -> datetime:
    """The service's own clock from its ``Date`` header, else ``fallback``.

    ``Retry-After`` counts from the service's clock, so the daily-cap test uses it when given.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> reference_time({"Date": "Mon, 01 Jan 2024 21:00:00 GMT"}, datetime.now(UTC)).hour
    21
    """
    value = header_value(headers, "Date")
    if value:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return fallback
        return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return fallback


def resets_at_midnight(retry_after: float | None, now: datetime) -> datetime | None:
    """The next midnight UTC when ``retry_after`` counts down to it, else ``None``.

    A wait of two minutes or less is never called the daily cap: waiting it out is right either
    way, as the cap resets at midnight.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> resets_at_midnight(3 * 3600, datetime(2024, 1, 1, 21, 0, tzinfo=UTC))
    datetime.datetime(2024, 1, 2, 0, 0, tzinfo=datetime.timezone.utc)
    >>> resets_at_midnight(30, datetime(2024, 1, 1, 21, 0, tzinfo=UTC)) is None
    True
    """
    if retry_after is None or not MIDNIGHT_TOLERANCE.total_seconds() < retry_after <= 2 * 86400:
        return None
    now_utc = now.astimezone(UTC)
    midnight = datetime.combine(now_utc.date() + timedelta(days=1), datetime.min.time(), UTC)
    if abs(now_utc + timedelta(seconds=retry_after) - midnight) <= MIDNIGHT_TOLERANCE:
        return midnight
    return None


def backoff_delay(attempt: int, settings: RetrySettings, rng: random.Random) -> float:
    """Capped exponential backoff with full jitter before retry number ``attempt`` (0-based).

    Examples
    --------
    >>> import random
    >>> 0 <= backoff_delay(2, RetrySettings(), random.Random(0)) <= 2.0
    True
    """
    ceiling = min(settings.backoff_cap, settings.backoff_base * 2.0 ** min(attempt, 62))
    return rng.uniform(0.0, ceiling)


def decide_on_response(
    error: ApiError,
    *,
    attempt: int,
    elapsed: float,
    settings: RetrySettings,
    rng: random.Random,
    idempotent: bool = True,
) -> Decision:
    """Retry or raise after an error answer.

    Parameters
    ----------
    error
        The answer, read by :func:`~propertykit.wire._error_bodies.error_from_response`.
    attempt
        Attempts already made minus one (0 after the first attempt).
    elapsed
        Seconds since the first attempt began.
    settings
        Retry bounds.
    rng
        Source of jitter.
    idempotent
        ``False`` for requests that must never be resent blindly (title-deed purchases): every
        error answer then raises, and the caller decides using ``money_state``.

    Examples
    --------
    >>> import random
    >>> from datetime import datetime, UTC
    >>> from propertykit.wire._error_bodies import error_from_response
    >>> error = error_from_response(503, b"", {}, url=None, now=datetime.now(UTC))
    >>> decision = decide_on_response(error, attempt=0, elapsed=0.0, settings=RetrySettings(),
    ...                               rng=random.Random(0))
    >>> type(decision).__name__
    'Retry'
    """
    if not idempotent:
        return Fail(error)
    status = error.status_code
    if isinstance(error, DailyCapReached):
        return Fail(error)
    if status == 429:
        if error.retry_after is None:
            return _retry_with_backoff(error, attempt, elapsed, settings, rng, "429 without wait")
        if error.retry_after > settings.max_wait:
            error.hint = (
                f"The service asks to wait {describe_duration(error.retry_after)}, longer than "
                f"max_wait={settings.max_wait:g} s; wait and run again, or raise max_wait"
            )
            return Fail(error)
        return _retry_after_wait(error, error.retry_after, attempt, elapsed, settings, "429")
    if 500 <= status <= 599:
        if error.retry_after is not None and error.retry_after <= settings.max_wait:
            return _retry_after_wait(error, error.retry_after, attempt, elapsed, settings, "5xx")
        return _retry_with_backoff(error, attempt, elapsed, settings, rng, f"{status}")
    return Fail(error)


def decide_on_failure(
    kind: FailureKind,
    *,
    detail: str,
    url: str | None,
    attempt: int,
    elapsed: float,
    settings: RetrySettings,
    rng: random.Random,
    idempotent: bool = True,
) -> Decision:
    """Retry or raise after a request got no complete HTTP answer.

    A failure before connecting is always safe to retry; one after sending only for idempotent
    requests, since the service may have acted on it.

    Examples
    --------
    >>> import random
    >>> decision = decide_on_failure("timeout", detail="read timed out", url=None, attempt=0,
    ...                              elapsed=0.0, settings=RetrySettings(), rng=random.Random(0),
    ...                              idempotent=False)
    >>> type(decision).__name__
    'Fail'
    """
    attempts = attempt + 1
    plural = "s" if attempts != 1 else ""
    where = f" {url}" if url else ""
    error = NetworkError(
        f"Could not get a complete answer from{where} after {attempts} attempt{plural} "
        f"({kind}: {detail})",
        url=url,
        kind=kind,
    )
    if kind != "connect" and not idempotent:
        return Fail(error)
    return _retry_with_backoff(error, attempt, elapsed, settings, rng, kind)


# -- helpers -------------------------------------------------------------------------------------


def _retry_with_backoff(
    error: PropertyKitError,
    attempt: int,
    elapsed: float,
    settings: RetrySettings,
    rng: random.Random,
    reason: str,
) -> Decision:
    return _retry_after_wait(
        error, backoff_delay(attempt, settings, rng), attempt, elapsed, settings, reason
    )


def _retry_after_wait(
    error: PropertyKitError,
    delay: float,
    attempt: int,
    elapsed: float,
    settings: RetrySettings,
    reason: str,
) -> Decision:
    if attempt >= settings.max_retries or elapsed + delay > settings.deadline:
        if isinstance(error, ApiError) and error.hint is None and error.status_code >= 500:
            tries = attempt + 1
            error.hint = f"Gave up after {tries} attempt{'s' if tries != 1 else ''}; not charged"
        return Fail(error)
    return Retry(delay=delay, reason=reason)


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, item in headers.items():
        if key.lower() == lowered:
            return item
    return None


def describe_duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    minutes = int(seconds // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"
