"""What the transport knows about a failed attempt: its kind, and whether anything was sent."""

from __future__ import annotations

from urllib.parse import urlsplit

import requests
from urllib3.exceptions import ConnectTimeoutError

from propertykit.errors import RateLimited
from propertykit.wire import _retries as policy


class Failed(Exception):
    """No complete HTTP answer (internal: turned into a decision by ``Transport.fetch``)."""

    def __init__(self, kind: policy.FailureKind, cause: BaseException) -> None:
        super().__init__(kind)
        self.kind = kind
        self.cause = cause


def never_connected(exc: requests.exceptions.ConnectionError) -> bool:
    """True when the connection was refused or never made, so nothing was sent.

    Told by types: ``requests`` raises ``ConnectTimeout``, or a ``ConnectionError`` wrapping
    urllib3's ``MaxRetryError`` whose ``reason`` is a ``NewConnectionError`` (a subclass of
    ``ConnectTimeoutError``), when no connection was made.
    """
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    cause = exc.args[0] if exc.args else None
    reason = getattr(cause, "reason", cause)
    return isinstance(reason, ConnectTimeoutError)


def path_of(url: str | None) -> str:
    parts = urlsplit(url or "")
    return parts.path + (f"?{parts.query}" if parts.query else "")


def client_side_limit(url: str, per_minute: float | None, max_wait: float) -> RateLimited:
    """The search-suggest limit of this client would need a wait longer than ``max_wait``."""
    return RateLimited(
        429,
        message=f"search-suggest limit of {per_minute:g} per minute reached on this client; "
        "nothing was sent",
        url=url,
        hint=f"Wait up to a minute (longer than max_wait={max_wait:g} s)",
    )
