"""Helpers for the title-deed tests: a buyer (a client with a journal of its own) and counters."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from propertykit.client import Client, Clock
from propertykit.deeds import Journal, Purchase
from propertykit.sandbox import Sandbox


@dataclass
class Buyer:
    """A client on a sandbox, with its own journal file and a sleep that only records.

    ``journal`` reads the same file the client writes, so tests can see what it recorded.
    """

    client: Client
    journal: Journal
    sleeps: list[float] = field(default_factory=list)

    def buy(self, title_number: str, **payload: Any) -> Purchase:
        return self.client.buy_title_deed(title_number, **payload)

    def status(self, title_number: str) -> dict[str, Any]:
        return self.client.purchase_status(title_number)


BuyerFactory = Callable[..., Buyer]


@pytest.fixture
def make_buyer(tmp_path: Path) -> Iterator[BuyerFactory]:
    """``make_buyer(sb, journal=None, api_key=None, **client_options) -> Buyer``."""
    clients: list[Client] = []

    def make(
        sb: Sandbox, *, journal: Path | None = None, api_key: str | None = None, **options: Any
    ) -> Buyer:
        sleeps: list[float] = []
        client = Client(
            api_key=api_key or sb.api_key,
            base_url=sb.url,
            cache=False,
            journal=journal or tmp_path / "title-deeds.jsonl",
            clock=Clock(sleep=sleeps.append, random=random.Random(0)),
            **options,
        )
        clients.append(client)
        assert client.journal is not None
        return Buyer(client, Journal(client.journal), sleeps)

    yield make
    for client in clients:
        client.close()


def purchase_posts(sb: Sandbox, title_number: str) -> int:
    """How many purchase requests for ``title_number`` reached the sandbox."""
    return sum(
        1
        for r in sb.requests
        if r.method == "POST" and r.path.endswith(f"/{title_number}/purchase")
    )


def status_gets(sb: Sandbox, title_number: str) -> int:
    """How many purchase-status requests for ``title_number`` reached the sandbox."""
    return sum(
        1
        for r in sb.requests
        if r.method == "GET" and r.path.endswith(f"/{title_number}/purchase-status")
    )


def charges(sb: Sandbox, title_number: str) -> list[Any]:
    """The sandbox's ledger entries for ``title_number``."""
    return [charge for charge in sb.ledger if charge.title_number == title_number]
