"""Helpers of the sandbox tests: raw HTTP with ``requests`` against a fresh sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from propertykit.sandbox import Sandbox

#: A fixed moment for tests that steer the clock (a Monday, mid-afternoon UTC).
NOON = datetime(2025, 6, 2, 12, 0, 0, tzinfo=UTC)


class Api:
    """Sends raw requests to a sandbox with its demo key unless told otherwise."""

    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.session = requests.Session()

    def request(
        self,
        method: str,
        path: str,
        *,
        key: str | None = "demo",
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        sent = dict(headers or {})
        if key == "demo":
            sent["x-api-key"] = self.sb.api_key
        elif key is not None:
            sent["x-api-key"] = key
        kwargs.setdefault("timeout", 10)
        return self.session.request(method, self.sb.url + path, headers=sent, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def buy(
        self, title: str, idempotency_key: str | None = None, **kwargs: Any
    ) -> requests.Response:
        headers = dict(kwargs.pop("headers", None) or {})
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        return self.post(f"/v1/title-deeds/{title}/purchase", headers=headers, **kwargs)

    def status(self, title: str, **kwargs: Any) -> requests.Response:
        return self.get(f"/v1/title-deeds/{title}/purchase-status", **kwargs)


@pytest.fixture
def api(fresh_sandbox: Sandbox) -> Iterator[Api]:
    """Raw HTTP against ``fresh_sandbox`` (steer it through ``api.sb``)."""
    client = Api(fresh_sandbox)
    yield client
    client.session.close()


@pytest.fixture
def shared_api(sandbox: Sandbox) -> Iterator[Api]:
    """Raw HTTP against the session's shared sandbox (read-only tests)."""
    client = Api(sandbox)
    yield client
    client.session.close()
