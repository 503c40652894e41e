"""What paying once costs: the cache read again under the single-flight lock, before each send.

A cold lookup of 5,000 location ids (100 batches, so 100 sends) into an empty cache, through
the SQLite cache file and, when ``redis-server`` is installed, a team Redis: once as propertykit
does it (the cache read again under each batch's lock: :mod:`propertykit.wire._single_flight`),
and once without that read (the way that can pay twice, when another kernel fetched between the
look and the lock). The sandbox answers at once (no latency) so the read's cost is not hidden
by the network's; with any real latency the ratio moves towards 1. Medians of ``ROUNDS`` runs,
side by side in one process; each run sends exactly one request per batch (asserted).

Then the read alone: ``stored_response`` of a key the cache does not hold, as the read under
the lock finds it on a truly cold batch, in microseconds.

    python benchmarks/pay_once.py
"""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import propertykit as pk
from propertykit.wire import _metered
from propertykit.wire._single_flight import stored_response

N_IDS = 5_000
ROUNDS = 5
READS = 2_000


@contextmanager
def _no_read_again() -> Iterator[None]:
    """The naive way: never read the cache again under the lock."""
    decision = _metered.read_again
    _metered.read_again = lambda *, asked_fresh: False
    try:
        yield
    finally:
        _metered.read_again = decision


def _cold_lookup(sb: pk.sandbox.Sandbox, cache: str, ids: list[str]) -> float:
    sb.reset_log()
    started = time.perf_counter()
    with pk.Client(sb.api_key, sb.url, cache=cache, progress=False, max_in_flight=1) as client:
        frame = client.properties(ids)
        seconds = time.perf_counter() - started
        assert len(frame) == len(ids) and client.usage.requests_sent == len(sb.requests)
        client.clear_cache()
    return seconds


@contextmanager
def _redis() -> Iterator[str | None]:
    executable = shutil.which("redis-server")
    if executable is None:
        yield None
        return
    import redis

    with tempfile.TemporaryDirectory() as folder:
        with socket.socket() as probe:  # a free port
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen(
            [executable, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", folder],
            stdout=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            connection = redis.Redis.from_url(url)
            for _ in range(500):
                try:
                    connection.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.01)
            yield url
        finally:
            process.kill()
            process.wait()


def _compare(sb: pk.sandbox.Sandbox, name: str, cache: str, ids: list[str]) -> None:
    with_read: list[float] = []
    without: list[float] = []
    _cold_lookup(sb, cache, ids)  # the sandbox's records made, first use's set-up: untimed
    for round_number in range(ROUNDS):  # the order alternates, so neither side goes first
        if round_number % 2:
            with_read.append(_cold_lookup(sb, cache, ids))
        with _no_read_again():
            without.append(_cold_lookup(sb, cache, ids))
        if not round_number % 2:
            with_read.append(_cold_lookup(sb, cache, ids))
    kept, naive = statistics.median(with_read), statistics.median(without)
    batches = len(sb.requests)
    print(
        f"{name}: cold lookup, {batches} sends: read again {kept:.3f} s, not read again "
        f"{naive:.3f} s: {kept / naive:.3f}x the time "
        f"({(kept - naive) / batches * 1e3:+.2f} ms a send)"
    )
    with pk.Client(sb.api_key, sb.url, cache=cache, progress=False) as client:
        backend = client._transport.session.cache
        started = time.perf_counter()
        for n in range(READS):
            assert stored_response(backend, f"absent-{n}") is None
        each = (time.perf_counter() - started) / READS
    print(f"{name}: one read of an absent answer: {each * 1e6:.0f} us")


def main() -> int:
    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(n_properties=N_IDS, balance=10**9, daily_cap=10**9) as sb,
    ):
        ids = sb.location_ids[:N_IDS]
        print(f"{N_IDS:,} location ids, no latency, medians of {ROUNDS}")
        _compare(sb, "SQLite file", str(Path(folder) / "http_cache.sqlite"), ids)
        with _redis() as url:
            if url is None:
                print("Redis: redis-server not installed, not measured")
            else:
                _compare(sb, "Redis", url, ids)
    return 0


if __name__ == "__main__":
    sys.exit(main())
