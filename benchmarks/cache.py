"""What the on-disk cache saves: 2,000 source ids fetched cold, then again by a new client.

Runs against the local sandbox with a simulated 50 ms latency per request. The warm run (a new
client on the same cache file, as after a kernel restart) must send no request and be charged
no credit; the script asserts it and prints the figures measured in this one run.

    python benchmarks/cache.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import propertykit as pk
from propertykit.client import Client

N_IDS = 2_000
LATENCY = 0.05


def fetch(sb: pk.sandbox.Sandbox, cache: Path, ids: list[str]) -> tuple[float, int, int, int]:
    """(seconds, records, requests the sandbox saw, credits the sandbox charged) of one run."""
    sb.reset_log()
    charged_before = sb.credits_charged
    started = time.perf_counter()
    with Client(sb.api_key, sb.url, cache=cache, progress=False) as client:
        records = client.source_records(ids, page_size=100)
        assert client.usage.requests_sent == len(sb.requests)
    elapsed = time.perf_counter() - started
    return elapsed, len(records), len(sb.requests), sb.credits_charged - charged_before


def main() -> int:
    with tempfile.TemporaryDirectory() as folder, pk.sandbox.serve(latency=LATENCY) as sb:
        cache = Path(folder) / "http_cache.sqlite"
        ids = sb.source_ids[:N_IDS]
        cold_s, cold_records, cold_requests, cold_credits = fetch(sb, cache, ids)
        warm_s, warm_records, warm_requests, warm_credits = fetch(sb, cache, ids)
        assert warm_records == cold_records, "the warm run must give the same records"
        assert warm_requests == 0, f"the warm run sent {warm_requests} requests"
        assert warm_credits == 0, f"the warm run was charged {warm_credits} credits"
    print(f"{len(ids):,} source ids, sandbox latency {LATENCY * 1000:.0f} ms per request")
    print(
        f"cold: {cold_requests} requests sent, {cold_credits:,} credits charged, "
        f"{cold_records:,} records, {cold_s:.2f} s"
    )
    print(
        f"warm: {warm_requests} requests sent, {warm_credits} credits charged, "
        f"{warm_records:,} records, {warm_s:.2f} s (new client, same cache file)"
    )
    print(f"warm/cold time ratio: {warm_s / cold_s:.3f} ({cold_s / warm_s:.0f}x faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
