"""What the sandbox's own speed-ups buy: records drawn once, an area query's matches kept, and
records in pence copied only where they change.

Side by side in one run, each against the naive way it replaced:

- ``generate_records(5000)`` asked again: drawing every record again (the naive way, and what a
  first call still does) against the process's pickled copy.
- The same world asked at several sizes, as a test suite's fixtures do (3,000 homes here, 50
  there): drawing each (the naive way, and what a copy kept per size did for each new size)
  against the blocks of records kept for the process.
- Paging one outcode query a record at a time, as a client asking ``limit=1`` does: reading and
  testing every record of the world for each page (the naive way) against the sandbox's
  ``run_query``, which keeps the latest answers' matches (a query never asked before still reads
  every record, as the naive way does).
- Serving the world under the ``vepler`` profile (prices in pence): a deep copy of each record,
  then changed (the naive way, as ``in_minor_units`` did), against ``in_minor_units``, which
  copies only the parts it changes.

    python benchmarks/sandbox.py
"""

from __future__ import annotations

import copy
import sys
import time
from typing import Any

from propertykit.sandbox.catalogue import Catalogue
from propertykit.sandbox.data import generate_record, generate_records
from propertykit.sandbox.profiles import MINOR_PRICING, in_minor_units
from propertykit.sandbox.query import run_query

WORLD = 5_000
SIZES = (3_000, 50, 2_000, 300, 150, 1_500)
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


def deep_copied_in_minor_units(record: dict[str, Any], factor: int = 100) -> dict[str, Any]:
    """The record in pence by way of a deep copy (the naive way)."""
    out = copy.deepcopy(record)
    for name in MINOR_PRICING:
        if isinstance(out["pricing"].get(name), int | float):
            out["pricing"][name] *= factor
    for sale in out.get("saleHistory") or []:
        sale["price"] *= factor
    if out["marketStatus"]["forSale"] in ("underOffer", "soldSTC"):
        out["marketStatus"]["forSale"] = "sstc"
    return out


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
    draw = best(lambda: [[generate_record(i, 0) for i in range(n)] for n in SIZES])
    kept = best(lambda: [generate_records(n) for n in SIZES])
    print(f"generate_records at sizes {SIZES}: drawn {draw:.3f} s, kept blocks {kept:.3f} s")
    print(f"  ratio: {draw / kept:.1f}x")

    catalogue = Catalogue(seed=0, n_properties=WORLD)
    naive = best(lambda: naive_pages(catalogue))  # its first round draws the records both read
    started = time.perf_counter()
    paged_ids = indexed_pages(catalogue)  # the query's first paging: one scan, then kept
    indexed = time.perf_counter() - started
    assert naive_pages(catalogue) == paged_ids and paged_ids
    print(f"outcode {OUTCODE} paged one record at a time ({len(paged_ids)} pages):")
    print(f"  every record read per page {naive:.3f} s, run_query (first time) {indexed:.3f} s")
    print(f"  ratio: {naive / indexed:.1f}x")

    records = generate_records(WORLD)
    assert [deep_copied_in_minor_units(r) for r in records] == [in_minor_units(r) for r in records]
    naive = best(lambda: [deep_copied_in_minor_units(r) for r in records])
    changed = best(lambda: [in_minor_units(r) for r in records])
    print(f"{WORLD:,} records in pence: deep copies {naive:.3f} s, in_minor_units {changed:.3f} s")
    print(f"  ratio: {naive / changed:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
