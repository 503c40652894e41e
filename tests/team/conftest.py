"""Fixtures of the team tests: a real redis-server on a free loopback port, other processes.

``redis_url`` is a Redis started for the session (``--save "" --appendonly no`` in a temporary
folder, killed after) and emptied before each test. Without Debian's ``redis-server`` the tests
that need it skip, saying how to enable them; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._system import free_port, require

WORKER = Path(__file__).with_name("_worker.py")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a redis-server started for this session."""
    executable = shutil.which("redis-server")
    if executable is None:
        message = (
            "redis-server not found: install Debian's redis-server package "
            "(`apt-get install redis-server`, which `make test` does when run as root) "
            "to run the team-cache tests"
        )
        require(False, message)
    import redis

    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    arguments = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [executable, *arguments, "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    connection = redis.Redis.from_url(url)
    try:
        for _ in range(500):  # until it accepts connections
            try:
                connection.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None:
                    pytest.fail(f"redis-server exited with {process.returncode}")
                time.sleep(0.01)
        else:
            pytest.fail("redis-server did not start")
        yield url
    finally:
        connection.close()
        process.kill()
        process.wait()


@pytest.fixture
def redis_url(redis_server: str) -> Iterator[str]:
    """The session's Redis, empty at the start of the test."""
    import redis

    connection = redis.Redis.from_url(redis_server)
    connection.flushall()
    connection.close()
    yield redis_server


@pytest.fixture
def run_worker() -> Callable[..., dict[str, Any]]:
    """Run ``_worker.py`` (another kernel) against a sandbox; return what it printed."""

    def run(sb: Any, **spec: Any) -> dict[str, Any]:
        return finish_worker(start_worker(sb, **spec))

    return run


def start_worker(sb: Any, **spec: Any) -> subprocess.Popen[str]:
    """Start ``_worker.py`` against ``sb``; the key goes in the environment, never argv."""
    spec.setdefault("base_url", sb.url)
    env = {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish_worker(process: subprocess.Popen[str]) -> dict[str, Any]:
    """Wait for a worker; its printed JSON (the test fails with its stderr if it failed)."""
    out, err = process.communicate()
    assert process.returncode == 0, err
    return dict(json.loads(out))
