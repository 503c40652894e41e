"""Fixtures shared by every test package: a sandbox of the service on 127.0.0.1.

``sandbox`` is one server for the whole session: read from it, never steer it (balance, clock,
faults). ``fresh_sandbox`` is a new server per test, free to steer. Both use the wall clock
unless a test calls ``set_now``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from propertykit import sandbox as sandbox_module
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
