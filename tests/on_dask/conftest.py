"""Fixtures of the Dask tests: one sandbox and one real LocalCluster (2 worker processes), each
started once for this package's tests and stopped after them (the root ``conftest.py`` keeps
the tests that use them in one pytest-xdist group, so one of each in all).

The workers are separate processes started after ``PROPERTYKIT_API_KEY`` is set to the
sandbox's key, so they read it from their environment, as on a real cluster: the key is never
sent to them. Each test gets its own cache (a fresh SQLite file or an emptied Redis) and starts
with the sandbox as new for what it may look at: its request log empty (so ``sb.requests``
counts what that test paid), its balance full and no latency. Nothing a test leaves on the
workers is read by another: every test computes on its own cache and budget names.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from propertykit import sandbox as sandbox_module
from propertykit.config import ENV_API_KEY
from propertykit.sandbox import Sandbox
from tests.team.conftest import redis_server, redis_url  # noqa: F401  (a real redis-server)

#: The sandbox's balance, given back before each test.
BALANCE = 1_000_000
#: Task states of work the scheduler has yet to finish (others: done, failed or let go).
BUSY = ("waiting", "queued", "no-worker", "processing")


@pytest.fixture(scope="package")
def dask_sandbox() -> Iterator[Sandbox]:
    """A sandbox for the Dask tests (10,000 properties); no daily cap to run into together."""
    with sandbox_module.serve(n_properties=10_000, balance=BALANCE, daily_cap=10**12) as sb:
        yield sb


@pytest.fixture(scope="package")
def cluster(dask_sandbox: Sandbox) -> Iterator[object]:
    """A ``distributed.Client`` on a LocalCluster of 2 worker processes, 1 thread each.

    Made once for the package's tests (one pytest-xdist group: they run together) and closed
    after them: an idle cluster still takes about a seventh of a core (heartbeats), which over
    the rest of the suite would cost more than the Dask tests do."""
    from distributed import Client as DaskClient
    from distributed import LocalCluster

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_API_KEY, dask_sandbox.api_key)
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # None still means port 8787, taken by any other cluster
            silence_logs=False,
        )
    # Not the process's default scheduler: other tests (propertykit.dask's examples) that land
    # on this pytest-xdist worker compute on their own, with their own sandbox's key.
    dask_client = DaskClient(cluster, timeout=60, set_as_default=False)
    try:
        yield dask_client
    finally:
        dask_client.close(timeout=60)
        cluster.close(timeout=60)


@pytest.fixture(autouse=True)
def _on_the_cluster(cluster: Any) -> Iterator[None]:
    """Every test here computes on the session's cluster (its current Dask client), and leaves
    it quiet: nothing of its graphs runs or waits when the next test starts."""
    with cluster.as_current():
        yield
    wait_until_quiet(cluster)


def wait_until_quiet(dask_client: Any, seconds: float = 60.0) -> None:
    """Wait until no task is running on a worker or waiting on the scheduler.

    A compute that raises (a spent budget) hands back the first error and leaves the rest of its
    graph to the cluster: a partition may still be fetching, or only starting, when the next
    test begins. Its requests would land in that test's request log, and once the next test
    empties Redis its budget's count starts again from zero, so it would send more.
    """
    deadline = time.monotonic() + seconds
    while dask_client.run_on_scheduler(_busy_tasks) or dask_client.call_stack():
        if time.monotonic() > deadline:
            pytest.fail(f"the cluster still ran tasks {seconds:.0f} s after the test ended")
        time.sleep(0.02)


def _busy_tasks(dask_scheduler: Any) -> int:
    """On the scheduler: how many tasks are waiting, queued or processing."""
    return sum(task.state in BUSY for task in dask_scheduler.tasks.values())


@pytest.fixture
def sb(dask_sandbox: Sandbox, cluster: object) -> Iterator[Sandbox]:
    """The session's Dask sandbox: log emptied, balance full, no latency for this test."""
    dask_sandbox.set_latency(0.0)
    dask_sandbox.set_balance(BALANCE)
    dask_sandbox.reset_log()
    yield dask_sandbox
    dask_sandbox.set_latency(0.0)


@pytest.fixture
def sqlite_cache(tmp_path: Path) -> Path:
    """A SQLite cache file for this test (the workers open the same file)."""
    return tmp_path / "cache" / "http_cache.sqlite"


@pytest.fixture(params=["sqlite", "redis"])
def shared_cache(request: pytest.FixtureRequest, sqlite_cache: Path) -> object:
    """A cache every worker reaches: a SQLite file on this machine, or the team's Redis."""
    if request.param == "sqlite":
        return sqlite_cache
    return request.getfixturevalue("redis_url")


def billable(sb: Sandbox) -> int:
    """Property lookups that reached the sandbox since the test began."""
    return sum(1 for r in sb.requests if r.path.startswith("/v1/property/") and r.status == 200)
