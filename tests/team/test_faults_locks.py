"""A kernel killed (SIGKILL) while it holds a batch's lock does not hold the others for long.

A real child process asks a server of our own for one batch and is killed while that request is
on its way, holding the batch's lock: a Redis lease, or an OS file lock beside the SQLite cache.
Two other clients then ask for the same batch. They wait at most the lease (the OS frees a dead
process's file lock at once; a Redis lease lapses once nobody renews it), then one fetches and
the other reads its answer: the batch is paid at most twice in all, counted at the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

import propertykit as pk
from propertykit.config import ENV_API_KEY, ENV_LOCK_LEASE
from tests.hostile._servers import KEY, Seen, envelope, hostile, records, send

LEASE = 2.0  # seconds (renewed every 0.67 s); the default is 30
IDS = ["L1", "L2"]

#: The kernel that dies: looks the batch up, with the key and the lease from its environment.
HOLDER = """
import json, sys
import propertykit as pk
spec = json.loads(sys.argv[1])
with pk.Client(base_url=spec["url"], cache=spec["cache"], progress=False) as client:
    client.properties(spec["ids"])
"""


def _wait_for(condition, what: str, seconds: float = 60.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        time.sleep(0.01)
    pytest.fail(f"gave up waiting for {what}")


@pytest.fixture(params=["sqlite", "redis"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "cache" / "http_cache.sqlite")
    return str(request.getfixturevalue("redis_url"))


@pytest.mark.timeout(180)
def test_a_killed_lock_holder_costs_at_most_one_more_request(
    cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:  # the holder's request: answered never (it is killed first)
            release.wait(120)
            return
        send(handler, 200, envelope(records(1, 2)))

    monkeypatch.setenv(ENV_LOCK_LEASE, str(LEASE))
    monkeypatch.setenv(ENV_API_KEY, KEY)
    with hostile(behaviour) as server:
        spec = {"url": server.url, "cache": cache, "ids": IDS}
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, json.dumps(spec)],
            env={**os.environ},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for(lambda: len(server.requests) == 1, "the holder's request")
            if cache.startswith("redis://"):
                import redis

                connection = redis.Redis.from_url(cache)
                (lock,) = connection.keys("propertykit:lock:*")
                # The holder renews its lease while it fetches: the lock's time to live, going
                # down between two looks 10 ms apart, goes back up (to the lease) once.
                ttls = [connection.pttl(lock)]

                def renewed() -> bool:
                    ttls.append(connection.pttl(lock))
                    return ttls[-1] > ttls[-2]

                _wait_for(renewed, "the holder to renew its lease", seconds=2 * LEASE)
                assert ttls[-1] > LEASE * 1000 * 2 / 3 and ttls[-2] > 0
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            if cache.startswith("redis://"):
                assert 0 < connection.pttl(lock) <= LEASE * 1000  # it lapses within the lease
                connection.close()

            def look_up() -> tuple[int, int]:
                with pk.Client(KEY, server.url, cache=cache, progress=False) as client:
                    df = client.properties(IDS)
                    return len(df), client.usage.requests_sent

            with ThreadPoolExecutor(2) as pool:
                answers = list(pool.map(lambda _: look_up(), range(2)))
        finally:
            release.set()
            if holder.poll() is None:
                holder.kill()
                holder.wait()
    assert [rows for rows, _ in answers] == [2, 2]
    assert sum(sent for _, sent in answers) == 1  # one fetched, the other read its answer
    assert len(server.requests) == 2  # the dead holder's and one more: paid at most twice
