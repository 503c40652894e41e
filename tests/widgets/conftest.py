"""Fixtures of the form tests: clients on a temporary cache and journal, time held by the test.

Delayed calls (debounced search-suggest, delivery checks) go to a :class:`ManualScheduler` the
test fires by hand; the suggest rate window reads a :class:`FakeClock`. Nothing sleeps.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from propertykit.client import Client, Clock
from propertykit.sandbox import Sandbox


@dataclass
class _Call:
    delay: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class ManualScheduler:
    """A scheduler whose calls run only when the test says so."""

    calls: list[_Call] = field(default_factory=list)

    def __call__(self, delay: float, callback: Callable[[], None]) -> _Call:
        call = _Call(delay, callback)
        self.calls.append(call)
        return call

    @property
    def pending(self) -> list[_Call]:
        return [call for call in self.calls if not call.cancelled]

    def run_pending(self) -> int:
        """Run the calls pending now (not those they schedule); returns how many ran."""
        due, self.calls = self.pending, []
        for call in due:
            call.callback()
        return len(due)


@dataclass
class FakeClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def scheduler() -> ManualScheduler:
    return ManualScheduler()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sleeps() -> list[float]:
    """Waits the clients asked for (recorded, not slept)."""
    return []


@pytest.fixture
def make_client(tmp_path: Path, sleeps: list[float]) -> Iterator[Callable[..., Client]]:
    """``make_client(sb, **options)``: a client on its own cache and journal, closed after."""
    made: list[Client] = []

    def make(sb: Sandbox, **options: Any) -> Client:
        options.setdefault("api_key", sb.api_key)
        options.setdefault("base_url", sb.url)
        options.setdefault("cache", tmp_path / "cache.sqlite")
        options.setdefault("journal", tmp_path / "title-deeds.jsonl")
        options.setdefault("progress", False)
        options.setdefault("clock", Clock(sleep=sleeps.append, random=random.Random(0)))
        client = Client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def requests_to(sb: Sandbox, fragment: str) -> list[Any]:
    """Requests that reached the sandbox with ``fragment`` in their path."""
    return [r for r in sb.requests if fragment in r.path]


def text_of(html_value: str) -> str:
    """The words of an HTML widget's value, as a user reads them."""
    return html.unescape(re.sub(r"<[^>]+>", " ", html_value)).replace("  ", " ").strip()
