"""Fixtures shared by every test package: a sandbox of the service on 127.0.0.1.

``sandbox`` is one server for the whole session: read from it, never steer it (balance, clock,
faults). ``fresh_sandbox`` is a new server per test, free to steer; ``profiled_sandbox`` is the
same once per profile (``spec``, ``vepler``), for the contract tests that must hold for both.
All use the wall clock unless a test calls ``set_now``. ``make_client`` builds clients on a
temporary cache (with the sandbox's profile), with sleeping recorded (in ``sleeps``), not done.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from propertykit import sandbox as sandbox_module
from propertykit.client import Client, Clock
from propertykit.sandbox import Sandbox

# Hypothesis: no per-example deadline (a shared 2-core machine's timing is not behaviour under
# test). Locally every run explores new examples; under CI=true the examples are derandomized, so
# CI's verdict does not depend on a random seed. A case found locally is pinned with @example.
settings.register_profile("propertykit", deadline=None, print_blob=True)
settings.register_profile("ci", parent=settings.get_profile("propertykit"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "propertykit")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """A sandbox shared by the session (5,000 properties, seed 0); do not change its state."""
    with sandbox_module.serve() as sb:
        yield sb


@pytest.fixture
def fresh_sandbox() -> Iterator[Sandbox]:
    """A new sandbox for one test (5,000 properties, seed 0), free to steer."""
    with sandbox_module.serve() as sb:
        yield sb


@pytest.fixture(params=["spec", "vepler"])
def profile(request: pytest.FixtureRequest) -> str:
    """Each profile the sandbox and the client know: a test using it runs once per profile."""
    return str(request.param)


@pytest.fixture
def profiled_sandbox(profile: str) -> Iterator[Sandbox]:
    """A new sandbox for one test, once per profile (``spec`` and ``vepler``); free to steer.

    ``make_client(sb)`` builds its clients with the same profile.
    """
    with sandbox_module.serve(profile=profile) as sb:
        yield sb


@pytest.fixture
def sleeps() -> list[float]:
    """Every wait a client asked for (the default ``clock`` of ``make_client`` records here)."""
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
        kwargs.setdefault("clock", Clock(sleep=sleeps.append))
        if "endpoints" not in kwargs:
            kwargs.setdefault("profile", getattr(sb, "profile", None))
        client = Client(**kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
