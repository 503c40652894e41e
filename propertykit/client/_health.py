"""``client.health()``: the service's own word on its state, whatever the answer's shape.

The service interface answers ``{"success": true, "status": "ok", ...}``; Vepler's per-service
health answers ``{"status": "healthy"|"degraded"|"unhealthy", "service", "timestamp",
"version"}`` with no ``success`` field. Both are read: ``degraded`` warns
(:class:`~propertykit.errors.ServiceDegradedWarning`), ``unhealthy`` raises
(:class:`~propertykit.errors.ServiceUnhealthy`) even when the HTTP status was 200.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from propertykit.config import Endpoints
from propertykit.errors import (
    InvalidInput,
    ServerError,
    ServiceDegradedWarning,
    ServiceUnhealthy,
    outside_stacklevel,
)
from propertykit.wire import Transport

_SERVICE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def health_path(endpoints: Endpoints, service: str | None) -> str:
    """The health path; with ``service``, that service's (``/v1/<service>/health``).

    Examples
    --------
    >>> health_path(Endpoints(), "planning")
    '/v1/planning/health'
    """
    if service is None:
        return endpoints.health_path
    if not isinstance(service, str) or not _SERVICE.match(service):
        raise InvalidInput(f"service must be a lower-case service name, got {service!r}")
    parts = endpoints.health_path.strip("/").split("/")
    if len(parts) >= 3 and parts[-1] == "health":
        parts[-2] = service
        return "/" + "/".join(parts)
    return f"/v1/{service}/health"


def read_health(body: Any) -> dict[str, Any]:
    """The health answer as a dict; warns when ``degraded``, raises when ``unhealthy``.

    Examples
    --------
    >>> read_health({"status": "healthy", "service": "property"})["status"]
    'healthy'
    """
    answer = body if isinstance(body, dict) else {"result": body}
    status = answer.get("status")
    state = status.strip().casefold() if isinstance(status, str) else ""
    service = answer.get("service") or "the service"
    if state == "unhealthy" or answer.get("success") is False:
        raise ServiceUnhealthy(
            f"Health: {service} says it is {status or 'not well'}; expect failures, try later",
            health=answer,
        )
    if state == "degraded":
        warnings.warn(
            f"Health: {service} is degraded; some answers may be slow or fail",
            ServiceDegradedWarning,
            stacklevel=outside_stacklevel(),
        )
    return answer


def fetch_health(transport: Transport, endpoints: Endpoints, service: str | None) -> dict[str, Any]:
    """Ask the health endpoint (never cached) and read its answer."""
    path = health_path(endpoints, service)
    try:
        body = transport.fetch_json(
            path, endpoint="health", billable="health" in endpoints.billable_endpoints
        )
    except ServerError as exc:  # a 503 whose body says unhealthy says more than "503"
        said = _status_in(exc.body)
        if said is not None:
            read_health(said)
        raise
    return read_health(body)


def _status_in(text: str) -> dict[str, Any] | None:
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return body if isinstance(body, dict) and isinstance(body.get("status"), str) else None


class HealthMixin:
    """``health`` for :class:`~propertykit.Client`."""

    _transport: Transport
    endpoints: Endpoints

    def health(self, service: str | None = None) -> dict[str, Any]:
        """Ask the health endpoint (never cached; ``service``: ``/v1/<service>/health``).

        ``status`` ``degraded`` warns (``pk.errors.ServiceDegradedWarning``); ``unhealthy`` raises
        ``pk.errors.ServiceUnhealthy``, even with HTTP 200 (see :mod:`propertykit.client._health`).

        Examples
        --------
        >>> client.health()["status"]
        'ok'
        """
        return fetch_health(self._transport, self.endpoints, service)
