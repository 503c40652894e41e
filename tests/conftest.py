"""Fixtures shared by every test package: a sandbox of the service on 127.0.0.1.

``sandbox`` is one server for the whole session: read from it, never steer it (balance, clock,
faults). ``fresh_sandbox`` is a new server per test, free to steer; ``profiled_sandbox`` is the
same once per profile (``spec``, ``vepler``), for the contract tests that must hold for both.
All use the wall clock unless a test calls ``set_now``. ``make_client`` builds clients on a
temporary cache (with the sandbox's profile), with sleeping recorded (in ``sleeps``), not done.

Things that take seconds to start are started once per session (per pytest-xdist worker) and
shared; a test asking for one is marked by the root ``conftest.py`` (see ``MARKED_FIXTURES``):

``browser``
    One headless Chromium under Playwright. Open pages in a context of your own
    (:func:`tests._browser.open_offline`, or ``browser.new_context()``) and close it afterwards;
    never close the browser.
``image_export``
    Kaleido's persistent image server on the same system Chromium: ``fig.write_image`` and
    ``fig.to_image`` reuse one browser instead of starting one per image.
``system_chromium``
    The system Chromium's path, for a test whose code starts it itself (``print_pdf``, a report
    written as PDF): a browser start per call, so the test is ``slow``.
``new_process``
    Runs Python (or ``python -m propertykit``) in a new process: seconds of start-up each.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from tests._browser import chromium
from tests._hypothesis import FAST_PROFILE
from tests._system import NewProcess

# The package is imported by the fixtures that use it (see the root conftest.py).
if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from propertykit.client import Client
    from propertykit.sandbox import Sandbox

# Hypothesis: no per-example deadline (a shared 2-core machine's timing is not behaviour under
# test). Locally every run explores new examples; under CI=true the examples are derandomized, so
# CI's verdict does not depend on a random seed. A case found locally is pinned with @example.
settings.register_profile("propertykit", deadline=None, print_blob=True)
settings.register_profile("ci", parent=settings.get_profile("propertykit"), derandomize=True)
# `make test-fast` (--hypothesis-profile=fast): each property a sixth of its examples
# (tests/_hypothesis.py), new ones each run; `make test` runs them all.
settings.register_profile(FAST_PROFILE, parent=settings.get_profile("propertykit"))
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "propertykit")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """A sandbox shared by the session (5,000 properties, seed 0); do not change its state."""
    from propertykit.sandbox import serve

    with serve() as sb:
        yield sb


@pytest.fixture
def fresh_sandbox() -> Iterator[Sandbox]:
    """A new sandbox for one test (5,000 properties, seed 0), free to steer."""
    from propertykit.sandbox import serve

    with serve() as sb:
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
    from propertykit.sandbox import serve

    with serve(profile=profile) as sb:
        yield sb


@pytest.fixture(scope="session")
def valuable_home() -> tuple[str, str]:
    """A home of the default sandbox's world (seed 0) with enough comparables within 2 km to be
    valued as of 2025-06-01: its ``(locationId, propertyId)``."""
    from propertykit.frames import frame
    from propertykit.sandbox import generate_records

    homes = frame(generate_records(5000))
    # The first 200 valued against all 5,000 (a home's value depends on the world, not on the
    # other subjects): the same first home as valuing all 5,000, in a third of the time.
    values = homes.pk.valuation(list(homes["propertyId"].iloc[:200]), as_of="2025-06-01")
    near = values.loc[~values["thin"] & (values["radius_m"] <= 2000), "propertyId"].iloc[0]
    return str(homes.set_index("propertyId").loc[near, "locationId"]), str(near)


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
    from propertykit.client import Client, Clock

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


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium (Playwright) for the session; open and close contexts, not it."""
    with chromium() as running:
        yield running


@pytest.fixture(scope="session")
def system_chromium() -> str:
    """The system Chromium (skips, or fails under CI=true, without it or Playwright)."""
    from tests._browser import require_browser
    from tests._system import CHROMIUM

    require_browser()
    return CHROMIUM


@pytest.fixture(scope="session")
def image_export() -> Iterator[str]:
    """Kaleido's persistent image server on the system's Chromium, for the session; its path."""
    import importlib.util

    import propertykit as pk
    from propertykit.views import use_system_browser
    from tests._system import require

    require(importlib.util.find_spec("kaleido") is not None, "pip install 'propertykit[export]'")
    try:
        path = use_system_browser()
    except pk.ConfigError as error:
        require(False, str(error))
    yield path
    import kaleido

    kaleido.stop_sync_server(silence_warnings=True)


@pytest.fixture
def new_process() -> NewProcess:
    """Python in a new process (``.run(...)``, ``.start(...)``): a test using it is ``slow``."""
    return NewProcess()
