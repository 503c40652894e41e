"""Fixtures of the team tests: a real redis-server on a free loopback port, other processes.

``redis_url`` is a Redis started for the session (``--save "" --appendonly no`` in a temporary
folder, killed after) and emptied before each test. Without Debian's ``redis-server`` the tests
that need it skip, saying how to enable them; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from tests._system import free_port, require
from tests.team._worker import serve

#: Seconds a worker may take to answer and exit (a failure past them, never a measured figure).
WORKER_LIMIT = 180.0


@contextmanager
def started_redis(folder: Path, *options: str) -> Iterator[str]:
    """URL of a redis-server started in ``folder`` with ``options`` (killed on leaving)."""
    executable = shutil.which("redis-server")
    if executable is None:
        message = (
            "redis-server not found: install Debian's redis-server package "
            "(`apt-get install redis-server`, which `make test` does when run as root) "
            "to run the team-cache tests"
        )
        require(False, message)
    import redis

    port = free_port()
    arguments = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [executable, *arguments, *options, "--dir", str(folder)],
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


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a redis-server started for this session."""
    with started_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


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
    """Run ``_worker.py`` (another kernel) against a sandbox; return what it said."""

    def run(sb: Any, **spec: Any) -> dict[str, Any]:
        return finish_worker(start_worker(sb, **spec))

    return run


@dataclass
class Worker:
    """Another kernel, started by :func:`start_worker`: its process and the pipe it answers on."""

    process: BaseProcess
    answer: Connection


def start_worker(sb: Any, **spec: Any) -> Worker:
    """Start another kernel (``_worker.serve``) against ``sb``: a process of its own, forked by
    a forkserver that has imported propertykit once (not a copy of this process); this
    process's environment and folder, with the key in the environment, never in the spec."""
    spec.setdefault("base_url", sb.url)
    env = {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.team._worker"])  # before its first process
    answer, sending = context.Pipe(duplex=False)
    process = context.Process(target=serve, args=(spec, env, os.getcwd(), sending))
    process.start()
    sending.close()
    return Worker(process, answer)


def finish_worker(worker: Worker) -> dict[str, Any]:
    """Wait for a worker; what it said (the test fails with its traceback if it failed)."""
    assert worker.answer.poll(WORKER_LIMIT), "the worker did not answer in time"
    outcome, said = worker.answer.recv()
    worker.answer.close()
    worker.process.join(WORKER_LIMIT)
    assert outcome == "ok", said
    assert worker.process.exitcode == 0, f"the worker exited with {worker.process.exitcode}"
    return dict(said)
