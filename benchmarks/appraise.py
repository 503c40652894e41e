"""What ``client.appraise`` buys: a book of scattered homes of the real-shaped world valued at
once, against the same homes one by one (``client.neighbourhood`` then ``.pk.valuation`` within
its radius, each).

Side by side in one run, each way against a fresh sandbox of the same world (so each pays for
itself), the rows checked equal:

- the book: ``client.appraise(ids)`` with a cache (then the plan of the same book again);
- one by one, no cache: what a loop over the homes pays when nothing is kept;
- one by one, with a cache (neighbourhoods only: what they cost does not depend on the valuation).

Printed: credits charged and requests received by the sandbox, and seconds, with the ratios.

    python benchmarks/appraise.py [HOMES]      # default 200
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

import propertykit as pk
from propertykit.frames import VALUATION_COLUMNS
from propertykit.sandbox import generate_records

WORLD = 5000
AS_OF = "2025-06-01"


def scattered(count: int) -> list[str]:
    """``count`` location ids spread over the world (every ``WORLD // count``-th home)."""
    step = max(1, WORLD // count)
    return [f"L{number:08d}" for number in range(0, step * count, step)][:count]


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    ids = scattered(count)
    warnings.simplefilter("ignore")
    warm = pk.frame(generate_records(300, realism="real"))  # imports and first calls, untimed
    warm.pk.valuation(["PK00000001"], as_of=AS_OF)
    cache = Path(tempfile.mkdtemp()) / "http_cache.sqlite"
    with pk.sandbox.serve(realism="real", n_properties=WORLD) as sb:
        client = pk.Client(sb.api_key, sb.url, cache=cache, progress=False)
        plan = client.appraise(ids, dry_run=True)
        before = (sb.credits_charged, len(sb.requests))
        started = time.perf_counter()
        book = client.appraise(ids, as_of=AS_OF)
        book_seconds = time.perf_counter() - started
        book_cost = (sb.credits_charged - before[0], len(sb.requests) - before[1])
        again = client.appraise(ids, dry_run=True)
        client.close()

    rows = []
    with pk.sandbox.serve(realism="real", n_properties=WORLD) as sb:
        alone = pk.Client(sb.api_key, sb.url, cache=False, progress=False)
        started = time.perf_counter()
        for given in ids:
            df = alone.neighbourhood(given, radius_m=2000.0)
            said = df.attrs["neighbourhood"]
            if said["stopped"] is None:
                rows.append(df.pk.valuation([said["propertyId"]], as_of=AS_OF, radius_m=2000.0))
        alone_seconds = time.perf_counter() - started
        alone_cost = (sb.credits_charged, len(sb.requests))
        alone.close()

    with pk.sandbox.serve(realism="real", n_properties=WORLD) as sb:
        cached = pk.Client(sb.api_key, sb.url, cache=Path(tempfile.mkdtemp()) / "c.sqlite",
                           progress=False)  # fmt: skip
        for given in ids:
            cached.neighbourhood(given, radius_m=2000.0)
        cached_cost = (sb.credits_charged, len(sb.requests))
        cached.close()

    valued = book.values[book.values["why"].isna()][list(VALUATION_COLUMNS)]
    expected = pd.concat(rows, ignore_index=True)
    pd.testing.assert_frame_equal(valued.reset_index(drop=True), expected, check_dtype=False)

    print(f"{count} scattered homes of the real-shaped world ({WORLD:,} homes), as of {AS_OF}")
    print(f"plan (nothing sent): {plan!r}")
    print(f"the same book again, planned: {again!r}")
    print(f"{'':34}{'credits':>9}{'requests':>10}{'seconds':>9}")
    lines = [
        ("client.appraise (cache)", book_cost, book_seconds),
        ("one by one, no cache", alone_cost, alone_seconds),
        ("one by one, cache (fetch only)", cached_cost, None),
    ]
    for name, (credits, requests), seconds in lines:
        shown = "" if seconds is None else f"{seconds:9.1f}"
        print(f"{name:34}{credits:9,}{requests:10,}{shown}")
    print(
        f"one by one (no cache) / book: credits {alone_cost[0] / book_cost[0]:.2f}x, "
        f"requests {alone_cost[1] / book_cost[1]:.2f}x, time {alone_seconds / book_seconds:.2f}x"
    )
    print(
        f"one by one (cache) / book: credits {cached_cost[0] / book_cost[0]:.2f}x, "
        f"requests {cached_cost[1] / book_cost[1]:.2f}x"
    )
    print(f"rows equal to valuing each alone: {len(expected)} valued rows checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
