"""20,000 properties: one request per id (a naive notebook) against propertykit's bulk lookup.

Runs against the local sandbox with 50 ms simulated latency per request:

(a) naive: a plain ``requests.Session`` asks ``/v1/property/{id}`` once per id, one after
    another. 20,000 x 50 ms is 17+ minutes, so by default it is timed on the first
    ``--naive-ids`` ids (1,000) and extrapolated linearly to 20,000 - the output says so.
    ``--naive-ids 20000`` times the whole naive run instead.
(b) propertykit: ``client.properties(ids)`` (batches of 50, 4 in flight) on a fresh cache.
(c) the same call again from a fresh process on the same cache file: 0 requests expected.

    python benchmarks/bulk.py [--naive-ids N] [--ids N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

import propertykit as pk

LATENCY = 0.05

_SECOND_RUN = """
import json, sys, time
import propertykit as pk
spec = json.loads(sys.stdin.read())
started = time.perf_counter()
with pk.Client(base_url=spec["url"], cache=spec["cache"], progress=False) as client:
    frame = client.properties(spec["ids"])
    print(json.dumps({"seconds": time.perf_counter() - started, "rows": len(frame),
                      "sent": client.usage.requests_sent, "hits": client.usage.cache_hits}))
"""


def naive(sb: pk.sandbox.Sandbox, ids: list[str]) -> tuple[float, int]:
    """(seconds, requests) of one GET per id, one after another."""
    sb.reset_log()
    started = time.perf_counter()
    with requests.Session() as session:
        session.headers["x-api-key"] = sb.api_key
        for location_id in ids:
            answer = session.get(f"{sb.url}/v1/property/{location_id}", timeout=30)
            answer.raise_for_status()
    return time.perf_counter() - started, len(sb.requests)


def bulk(sb: pk.sandbox.Sandbox, cache: Path, ids: list[str]) -> tuple[float, int, int]:
    """(seconds, requests, rows) of propertykit's lookup on a fresh cache."""
    sb.reset_log()
    started = time.perf_counter()
    with pk.Client(sb.api_key, sb.url, cache=cache, progress=False) as client:
        frame = client.properties(ids)
        assert client.usage.requests_sent == len(sb.requests)
    return time.perf_counter() - started, len(sb.requests), len(frame)


def second_process(sb: pk.sandbox.Sandbox, cache: Path, ids: list[str]) -> dict[str, float]:
    sb.reset_log()
    spec = json.dumps({"url": sb.url, "cache": str(cache), "ids": ids})
    env = {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}
    done = subprocess.run(
        [sys.executable, "-c", _SECOND_RUN], input=spec, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    result: dict[str, float] = json.loads(done.stdout)
    result["sandbox_saw"] = len(sb.requests)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ids", type=int, default=20_000)
    parser.add_argument("--naive-ids", type=int, default=1_000)
    options = parser.parse_args()
    n_ids, n_naive = options.ids, min(options.naive_ids, options.ids)

    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(latency=LATENCY, n_properties=n_ids, daily_cap=10**9, balance=10**9) as sb,
    ):
        ids = sb.location_ids[:n_ids]
        cache = Path(folder) / "http_cache.sqlite"
        print(f"sandbox latency {LATENCY * 1000:.0f} ms per request; {n_ids:,} location ids")

        naive_s, naive_requests = naive(sb, ids[:n_naive])
        scale = n_ids / n_naive
        label = "measured" if n_naive == n_ids else f"measured on {n_naive:,} ids, x{scale:g}"
        naive_total_s, naive_total_requests = naive_s * scale, round(naive_requests * scale)
        print(
            f"(a) naive, one request per id: {naive_total_requests:,} requests, "
            f"{naive_total_s:,.1f} s ({label}: {naive_requests:,} requests in {naive_s:.1f} s)"
        )

        bulk_s, bulk_requests, rows = bulk(sb, cache, ids)
        assert rows == n_ids, rows
        print(f"(b) propertykit: {bulk_requests:,} requests, {bulk_s:.1f} s, {rows:,} rows")
        print(
            f"    ratio naive/propertykit: {naive_total_requests / bulk_requests:,.0f}x fewer "
            f"requests, {naive_total_s / bulk_s:,.1f}x less wall time"
        )

        again = second_process(sb, cache, ids)
        print(
            f"(c) fresh process, same cache: {again['sent']:.0f} requests sent "
            f"(sandbox saw {again['sandbox_saw']:.0f}), {again['hits']:.0f} cache hits, "
            f"{again['seconds']:.1f} s for {again['rows']:,.0f} rows"
        )
        if again["sent"] or again["sandbox_saw"]:
            print("FAIL: the second run sent requests")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
