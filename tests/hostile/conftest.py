"""Clients of hostile servers: a cache and a journal of their own, sleeps recorded not slept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from propertykit.client import Client, Clock
from tests.hostile._servers import KEY, Hostile


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client_of(tmp_path: Path, sleeps: list[float]) -> Iterator[Callable[..., Client]]:
    """``client_of(server, **options)``: a client of ``server`` with a cache file in tmp_path."""
    made: list[Client] = []

    def make(server: Hostile, **options: Any) -> Client:
        options.setdefault("cache", tmp_path / "cache.sqlite")
        options.setdefault("journal", tmp_path / "deeds.jsonl")
        options.setdefault("progress", False)
        options.setdefault("clock", Clock(sleep=sleeps.append))
        client = Client(KEY, server.url, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
