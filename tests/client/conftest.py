"""Fixtures of the client tests: clients on a temporary cache, with sleeping recorded, not done.

The sandbox fixtures (``sandbox``, ``fresh_sandbox``) come from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from propertykit.client import Client


@pytest.fixture
def sleeps() -> list[float]:
    """Every wait a client asked for (the default ``_sleep`` of ``make_client`` records here)."""
    return []


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "http_cache.sqlite"


@pytest.fixture
def make_client(sleeps: list[float], cache_file: Path) -> Iterator[Callable[..., Client]]:
    """Build clients against a sandbox; each is closed after the test."""
    made: list[Client] = []

    def make(sb: Any, **kwargs: Any) -> Client:
        kwargs.setdefault("api_key", sb.api_key)
        kwargs.setdefault("base_url", sb.url)
        kwargs.setdefault("cache", cache_file)
        kwargs.setdefault("progress", False)
        kwargs.setdefault("_sleep", sleeps.append)
        client = Client(**kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
