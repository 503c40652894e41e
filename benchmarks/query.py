"""What caching the area query saves: ten outcode queries cold, then again by a new client.

Side by side in one run against the local sandbox (``vepler`` profile, 50 ms latency per
request): the naive way (a ``requests`` loop POSTing each page, no cache, as a script would),
``client.query`` cold, and ``client.query`` warm (a new client on the same cache file, as after a
kernel restart), which must send nothing and be charged nothing.

    python benchmarks/query.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import requests

import propertykit as pk

LATENCY = 0.05
OUTCODES = ("DH1", "SA2", "SA1", "CT1", "BA1", "CF10", "NG1", "LS1", "PL4", "EX4")
FILTERS = {"beds": [2, 3, 4]}


def naive(sb: pk.sandbox.Sandbox) -> tuple[float, int]:
    """Every page POSTed by hand, 25 at a time: (seconds, records)."""
    started = time.perf_counter()
    found = 0
    with requests.Session() as session:
        for outcode in OUTCODES:
            offset = 0
            while True:
                body = {"area": [{"type": "outcode", "value": outcode}], "query": FILTERS,
                        "limit": 25, "offset": offset}  # fmt: skip
                answer = session.post(
                    f"{sb.url}/v1/property/query", json=body, headers={"x-api-key": sb.api_key}
                ).json()
                found += len(answer["result"])
                offset += len(answer["result"])
                if not answer["result"] or offset >= answer["total"]:
                    break
    return time.perf_counter() - started, found


def with_client(sb: pk.sandbox.Sandbox, cache: Path) -> tuple[float, int, int, int]:
    """(seconds, records, requests the sandbox saw, credits charged) of one run."""
    sb.reset_log()
    charged = sb.credits_charged
    started = time.perf_counter()
    found = 0
    with pk.Client(sb.api_key, sb.url, cache=cache, profile="vepler", progress=False) as client:
        for outcode in OUTCODES:
            found += len(client.query({"type": "outcode", "value": outcode}, **FILTERS))
    return time.perf_counter() - started, found, len(sb.requests), sb.credits_charged - charged


def main() -> int:
    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(latency=LATENCY, profile="vepler") as sb,
    ):
        cache = Path(folder) / "http_cache.sqlite"
        naive_s, naive_records = naive(sb)
        naive_requests = len(sb.requests)
        cold_s, cold_records, cold_requests, cold_credits = with_client(sb, cache)
        warm_s, warm_records, warm_requests, warm_credits = with_client(sb, cache)
    assert naive_records == cold_records == warm_records
    assert warm_requests == 0 and warm_credits == 0
    print(
        f"{len(OUTCODES)} outcode queries, {cold_records:,} homes, latency {LATENCY * 1000:.0f} ms"
    )
    print(f"naive requests loop: {naive_requests} requests, {naive_s:.2f} s")
    print(
        f"client.query cold:   {cold_requests} requests, {cold_credits:,} credits, {cold_s:.2f} s"
    )
    print(f"client.query warm:   {warm_requests} requests, {warm_credits} credits, {warm_s:.2f} s")
    print(
        f"warm vs naive: {naive_s / warm_s:.0f}x less time; cold vs naive: {cold_s / naive_s:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
