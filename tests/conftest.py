"""Fixtures shared by every test package: a sandbox of the service on 127.0.0.1.

``sandbox`` is one server for the whole session: read from it, never steer it (balance, clock,
faults). ``fresh_sandbox`` is a new server per test, free to steer. Both use the wall clock
unless a test calls ``set_now``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from propertykit import sandbox as sandbox_module
from propertykit.sandbox import Sandbox


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
