"""Checks of the client's arguments: a clear, typed error before anything is sent or paid for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from propertykit.config import DEADLINE_PER_TIMEOUT, Endpoints
from propertykit.errors import ConfigError, InvalidInput, PropertyKitError
from propertykit.wire import RetrySettings


def check_number(
    name: str,
    value: object,
    *,
    minimum: float,
    integer: bool = False,
    exclusive: bool = False,
    error: type[PropertyKitError] = ConfigError,
) -> None:
    """Raise ``error`` unless ``value`` is a number (or integer) >= ``minimum`` (> if exclusive)."""
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok:
        number = float(value)  # type: ignore[arg-type]
        ok = number > minimum if exclusive else number >= minimum
    if not ok:
        sign = ">" if exclusive else ">="
        kind = "an integer" if integer else "a number"
        raise error(f"{name} must be {kind} {sign} {minimum:g}, got {value!r}")


def check_paging(page_size: int | None, max_results: int | None) -> None:
    """:class:`InvalidInput` unless each is ``None`` or an integer (page_size >= 1, max >= 0)."""
    if page_size is not None:
        check_number("page_size", page_size, minimum=1, integer=True, error=InvalidInput)
    if max_results is not None:
        check_number("max_results", max_results, minimum=0, integer=True, error=InvalidInput)


def attribute_params(endpoints: Endpoints, attributes: Iterable[str] | None) -> dict[str, Any]:
    """The query parameter naming ``attributes`` (comma-joined), or nothing for all of them."""
    if attributes is None:
        return {}
    names = [attributes] if isinstance(attributes, str) else list(attributes)
    if not names or not all(isinstance(n, str) and n and "," not in n for n in names):
        raise InvalidInput(f"attributes must be non-empty names without commas, got {names!r}")
    return {endpoints.attributes_param: ",".join(names)}


def check_settings(
    max_retries: object,
    max_wait: object,
    timeout: object,
    deadline: object,
    max_body: object,
    max_in_flight: object,
    budget: object,
) -> RetrySettings:
    """Check the client's numeric settings (:class:`ConfigError`); return its retry bounds."""
    check_number("max_in_flight", max_in_flight, minimum=1, integer=True)
    if budget is not None:
        check_number("budget", budget, minimum=0, integer=True)
    check_number("max_retries", max_retries, minimum=0, integer=True)
    check_number("max_wait", max_wait, minimum=0)
    check_number("timeout", timeout, minimum=0, exclusive=True)
    if deadline is None:  # ten times the timeout: 300 s by default, 10 s with timeout=1
        deadline = DEADLINE_PER_TIMEOUT * float(timeout)  # type: ignore[arg-type]
    check_number("deadline", deadline, minimum=0, exclusive=True)
    check_number("max_body_bytes", max_body, minimum=1, integer=True)
    return RetrySettings(
        max_retries=int(max_retries),  # type: ignore[call-overload]
        max_wait=float(max_wait),  # type: ignore[arg-type]
        deadline=float(deadline),  # type: ignore[arg-type]
    )
