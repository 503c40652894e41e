"""The sandbox's answers as values: a :class:`Request` read from the socket, a :class:`Reply` to
write, and the JSON and error shapes the service's answers take.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Reply:
    """An answer to write: status, body, headers; ``action`` "send", "reset" or "truncate".

    ``delay``: seconds to hold the answer after the request is logged (``slow_after_charge``).
    """

    status: int
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    action: str = "send"
    delay: float = 0.0


@dataclass(frozen=True)
class Request:
    """What the handler read from the socket."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes = b""

    def param(self, name: str) -> str | None:
        values = parse_qs(self.query, keep_blank_values=True).get(name)
        return values[-1] if values else None


def json_reply(status: int, payload: object, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return Reply(status, body, "application/json", dict(headers or {}))


def json_error(
    status: int,
    code: str,
    message: str,
    *,
    retry_after: int | None = None,
    money_state: str | None = None,
) -> Reply:
    """The usual error shape: ``{"success": false, "error": {"code", "message"}}``."""
    payload: dict[str, Any] = {"success": False, "error": {"code": code, "message": message}}
    if money_state is not None:
        payload["money_state"] = money_state
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return json_reply(status, payload, headers)


def not_available() -> Reply:
    """403 for an unknown path (or method) under ``/v1/``."""
    return json_reply(403, {"message": "This endpoint is not available"})
