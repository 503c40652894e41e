"""Redis unreachable at start, or stopped in the middle of a 40-batch call.

Each ends in ``pk.CacheUnavailable`` naming ``redis://host:port/db`` (never its password); no
request goes out once Redis is gone but those already on their way; after Redis is back, the
same call pays only for the batches that were not stored. Requests are counted at the sandbox;
Redis is a real ``redis-server`` (append-only file, fsync on every write, a password), stopped
with SIGTERM and with SIGKILL.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import propertykit as pk
from propertykit.config import ENV_LOCK_LEASE
from tests._system import free_port, require

PASSWORD = "s3cret-redis-pw"
IDS_COUNT = 2000  # 40 batches of 50
IN_FLIGHT = 4


class RedisProcess:
    """A redis-server of this test's own, persisting every write, that the test may stop."""

    def __init__(self, folder: Path) -> None:
        executable = shutil.which("redis-server")
        require(
            executable is not None,
            "redis-server not found: install Debian's redis-server package "
            "(`apt-get install redis-server`) to run the Redis fault tests",
        )
        self.executable = str(executable)
        self.folder = folder
        self.port = free_port()
        self.address = f"redis://127.0.0.1:{self.port}/0"
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            [
                self.executable,
                *("--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)),
                *("--appendonly", "yes", "--appendfsync", "always", "--save", ""),
                *("--requirepass", PASSWORD),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        connection = redis.Redis.from_url(self.url)
        try:
            for _ in range(1000):
                try:
                    connection.ping()
                    return
                except redis.ConnectionError:
                    assert self.process.poll() is None, "redis-server exited"
                    time.sleep(0.01)
            pytest.fail("redis-server did not start")
        finally:
            connection.close()

    def stop(self, how: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(how)
            self.process.wait(timeout=30)


@pytest.fixture
def own_redis(tmp_path: Path):
    server = RedisProcess(tmp_path)
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


def _billable(sb) -> int:
    return sum(1 for r in sb.requests if r.path.startswith("/v1/property/") and r.status == 200)


def _assert_named_without_password(error: pk.CacheUnavailable, server: RedisProcess) -> None:
    assert error.cache == server.address
    assert server.address in str(error)
    for text in (str(error), repr(error), error.cache):
        assert PASSWORD not in text


@pytest.mark.timeout(120)
def test_redis_unreachable_at_start_raises_naming_it_and_sends_nothing(
    fresh_sandbox, tmp_path: Path
) -> None:
    server = RedisProcess(tmp_path)  # never started: nothing listens on its port
    with pytest.raises(pk.CacheUnavailable) as caught:
        pk.Client(fresh_sandbox.api_key, fresh_sandbox.url, cache=server.url, progress=False)
    _assert_named_without_password(caught.value, server)
    assert fresh_sandbox.requests == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_redis_stopped_mid_call_then_back_pays_only_for_batches_not_stored(
    fresh_sandbox, own_redis: RedisProcess, how: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The batch locks of the stopped call come back with Redis (its append-only file); they
    # lapse after the lease, shortened here from 30 s so the test waits 2 s, not 30.
    monkeypatch.setenv(ENV_LOCK_LEASE, "2")
    sb = fresh_sandbox
    ids = sb.location_ids[:IDS_COUNT]
    own_redis.start()
    sb.set_latency(0.05)  # batches land one by one, so Redis stops part-way

    def stop_when_some_were_paid() -> None:
        for _ in range(6000):
            if _billable(sb) >= 8:
                break
            time.sleep(0.005)
        own_redis.stop(how)

    stopper = threading.Thread(target=stop_when_some_were_paid, daemon=True)
    with pk.Client(
        sb.api_key, sb.url, cache=own_redis.url, progress=False, max_in_flight=IN_FLIGHT
    ) as client:
        stopper.start()
        with pytest.raises(pk.CacheUnavailable) as caught:
            client.properties(ids)  # before: redis.exceptions.ConnectionError, raw
        stopper.join(timeout=60)
    _assert_named_without_password(caught.value, own_redis)
    paid_first = _billable(sb)
    assert 8 <= paid_first < 40

    own_redis.start()  # the same folder: its append-only file brings the stored answers back
    sb.set_latency(0.0)
    with pk.Client(sb.api_key, sb.url, cache=own_redis.url, progress=False) as again:
        stored = again.properties(ids, dry_run=True).cached
        # Only requests already on their way when Redis stopped could not be stored.
        assert paid_first - IN_FLIGHT <= stored <= paid_first
        sb.reset_log()
        df = again.properties(ids)
    assert len(df) == IDS_COUNT
    assert _billable(sb) == 40 - stored  # the batches not stored, and nothing more
