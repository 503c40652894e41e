"""What the sandbox's own speed-ups buy: records drawn once, and an area query paged by its index.

Side by side in one run, each against the naive way it replaced:

- ``generate_records(5000)`` asked again: drawing every record again (the naive way, and what a
  first call still does) against the process's pickled copy.
- A query never asked before: every record read against the index of places.
- Paging one outcode query a record at a time, as a client asking ``limit=1`` does: reading and
  testing every record of the world for each page (the naive way) against the sandbox's
  ``run_query``, which tests a per-world index of places and keeps the latest answers' matches.

    python benchmarks/sandbox.py
"""

from __future__ import annotations

import sys
import time
from typing import Any

from propertykit.sandbox.catalogue import Catalogue
from propertykit.sandbox.data import generate_record, generate_records
from propertykit.sandbox.query import run_query

WORLD = 5_000
OUTCODE = "CT1"
ROUNDS = 3


def best(run: Any) -> float:
    """The quickest of :data:`ROUNDS` runs, in seconds."""
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def naive_pages(catalogue: Catalogue) -> list[str]:
    """Every page of the outcode query, each found by reading every record."""
    ids: list[str] = []
    offset = 0
    while True:
        found = [
            record
            for record in (catalogue.record(i) for i in range(catalogue.n_properties))
            if str(record["address"]["outcode"]).replace(" ", "").upper() == OUTCODE
        ]
        page = found[offset : offset + 1]
        if not page:
            return ids
        ids.extend(record["locationId"] for record in page)
        offset += 1


def indexed_pages(catalogue: Catalogue) -> list[str]:
    """Every page of the same query, as the sandbox answers it."""
    ids: list[str] = []
    offset = 0
    area = [{"type": "outcode", "value": OUTCODE}]
    while True:
        page, *_ = run_query(catalogue, {"area": area, "limit": 1, "offset": offset}, 25)
        if not page:
            return ids
        ids.extend(record["locationId"] for record in page)
        offset += 1


def main() -> int:
    generate_records(WORLD)  # the first call draws and keeps them
    draw = best(lambda: [generate_record(i, 0) for i in range(WORLD)])
    kept = best(lambda: generate_records(WORLD))
    print(f"generate_records({WORLD:,}) again: drawn {draw:.3f} s, kept copy {kept:.3f} s")
    print(f"  ratio: {draw / kept:.1f}x")

    catalogue = Catalogue(seed=0, n_properties=WORLD)
    catalogue.places()  # built once per world and process, as the first query builds it
    naive_ids = naive_pages(catalogue)
    assert naive_ids == indexed_pages(catalogue) and naive_ids
    naive = best(lambda: naive_pages(catalogue))
    indexed = best(lambda: indexed_pages(catalogue))
    print(f"outcode {OUTCODE} paged one record at a time ({len(naive_ids)} pages):")
    print(f"  every record read per page {naive:.3f} s, run_query {indexed:.3f} s")
    print(f"  ratio: {naive / indexed:.1f}x")

    # A query never asked before: one scan, of the index of places against every record
    outcodes = sorted({place.outcode for place in catalogue.places()} - {OUTCODE})[:20]
    started = time.perf_counter()
    for outcode in outcodes:
        [r for r in map(catalogue.record, range(WORLD)) if r["address"]["outcode"] == outcode]
    scanned = time.perf_counter() - started
    started = time.perf_counter()
    for outcode in outcodes:
        run_query(catalogue, {"area": [{"type": "outcode", "value": outcode}]}, 25)
    first = time.perf_counter() - started
    print(f"{len(outcodes)} outcode queries never asked before, one page each:")
    print(f"  every record read {scanned:.3f} s, run_query {first:.3f} s")
    print(f"  ratio: {scanned / first:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
