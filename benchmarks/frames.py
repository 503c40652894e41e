"""propertykit's tables against the json_normalize route, on synthetic records, tidy and untidy.

Two data sets: the sandbox's tidy records, and the same records made untidy the way real feeds
are (:func:`untidy`): a few percent of records (3 % by default) each bend the interface in one
or two of the ways in :data:`DEVIATIONS` — ``marketStatus.forSale`` as a boolean, a date where a
date-time is expected, an offset, numbers sent as text, a lowercase rating or band, a null
object, an extra field, and values with no clear meaning (a year as prose, an unknown area).

(a) the usual route: ``pd.json_normalize(records)`` for the main table, plus
    ``pd.json_normalize(records, record_path="saleHistory", meta=["propertyId"])`` for the sales
    (given only the records that have a history: the call raises on the others);
(b) propertykit: ``pk.frame(...)`` + ``.pk.sales()`` + ``.pk.epc()``.

From parsed records, and from the raw response bodies: the records arrive as 1,000 bodies of
100 (the service's largest page), ``{"success": true, "result": [...], "hasMore": ...}``. From
bodies, (a) decodes each with ``json.loads`` first; (b) is ``pk.frame(bodies)``, which reads them
with Arrow's JSON reader. Each measurement runs in a fresh subprocess, the sides alternating over
several rounds; medians are printed with their ratios.

Time is wall-clock (``time.perf_counter``) around the work only. Memory is the peak resident set
size of the child during the work minus its resident size just before (the input already
loaded): the kernel's high-water mark (``VmHWM``) is reset through ``/proc/self/clear_refs``
first, so this counts everything, Arrow's buffers included (tracemalloc would miss them). The C
heap's free memory is handed back first (glibc's ``malloc_trim``): the bodies freed once decoded
would otherwise be reused unseen by whichever side allocates from the C heap.
Where that reset is not allowed, the figure is ``ru_maxrss`` minus the size before, and says so.

A last child per data set times getting the bodies into memory alone: ``json.loads`` with the
garbage collector on and paused (and ``orjson`` if it can be imported), against propertykit's
reading (Arrow's JSON reader; bodies it refuses decoded by ``msgspec`` and read as records:
records as Arrow arrays, boundaries as Python values).

Arrow's memory pool is its default unless ``ARROW_DEFAULT_MEMORY_POOL`` is set (``system``,
``jemalloc``, ``mimalloc``); the children inherit the environment, so run the script with and
without it to compare.

    python benchmarks/frames.py [--records 100000] [--rounds 3] [--share 0.03] [--data tidy untidy]
                                [--modes records bytes]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ctypes
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIDES = ("json_normalize", "propertykit")
MODES = ("records", "bytes")
DATASETS = ("tidy", "untidy")
#: Records per response body: the service's largest page.
PAGE_SIZE = 100


def _set(record: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    parent: Any = record
    for key in path[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if isinstance(parent, dict):
        parent[path[-1]] = value


def _first_sale(record: dict[str, Any], value: Any) -> None:
    if record.get("saleHistory"):
        record["saleHistory"][0]["price"] = value


Deviation = Callable[[dict[str, Any], random.Random], None]
#: Ways real feeds bend the interface, each with how it is applied to a record.
DEVIATIONS: dict[str, Deviation] = {
    "forSale as a boolean": lambda r, g: _set(r, ("marketStatus", "forSale"), g.random() < 0.5),
    "a date for a date-time": lambda r, g: _set(r, ("marketStatus", "listingDate"), "2023-05-17"),
    "an offset": lambda r, g: _set(r, ("lastUpdated",), "2025-02-21T04:21:41+01:00"),
    "a price as text": lambda r, g: _set(
        r, ("pricing", "estimatedSaleValue"), str(g.randrange(90_000, 900_000))
    ),
    "beds as text": lambda r, g: _set(r, ("roomDetails", "beds"), str(g.randrange(1, 6))),
    "a lowercase rating": lambda r, g: _set(r, ("epc", "currentEnergyRating"), g.choice("abcdefg")),
    "a lowercase band": lambda r, g: _set(r, ("councilTax", "taxBand"), g.choice("abcdefgh")),
    "a null object": lambda r, g: _set(r, ("tenure",), None),
    "an extra field": lambda r, g: _set(r, ("agentNote",), {"text": "viewing by appointment"}),
    "a year as prose": lambda r, g: _set(r, ("yearBuilt",), "c. 1930"),
    "an unknown area": lambda r, g: _set(r, ("floorAreaSqM",), "unknown"),
    "a sale price as text": lambda r, g: _first_sale(r, str(g.randrange(50_000, 500_000))),
}


def untidy(records: list[dict[str, Any]], share: float, seed: int = 7) -> list[dict[str, Any]]:
    """``records`` with ``share`` of them each bent in one or two of the :data:`DEVIATIONS`."""
    generator = random.Random(seed)
    ways = list(DEVIATIONS.values())
    bent = []
    for record in records:
        if generator.random() < share:
            record = copy.deepcopy(record)
            for _ in range(generator.randint(1, 2)):
                generator.choice(ways)(record, generator)
        bent.append(record)
    return bent


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def _trim() -> None:
    """Hand the C heap's free memory back to the system (glibc), so that what the work takes
    is counted from the same start on both sides: memory freed while loading the input (the
    bodies, once decoded) would otherwise be taken again by whichever side allocates from it."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc
        ctypes.CDLL(None).malloc_trim(0)


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _naive(records: list[dict[str, Any]]) -> int:
    import pandas as pd

    main = pd.json_normalize(records)
    with_history = [r for r in records if r.get("saleHistory") is not None]
    sales = pd.json_normalize(with_history, record_path="saleHistory", meta=["propertyId"])
    return len(main) + len(sales)


def _propertykit(records_or_bodies: list[Any]) -> int:
    import warnings

    import propertykit.views._accessor  # noqa: F401  (df.pk)
    from propertykit.frames import frame

    with warnings.catch_warnings():  # the untidy set's values without meaning: counted, kept
        warnings.simplefilter("ignore")
        df = frame(records_or_bodies)
        return len(df) + len(df.pk.sales()) + len(df.pk.epc())


def _bodies(path: str) -> list[bytes]:
    return Path(path).read_bytes().splitlines()


def child(side: str, mode: str, path: str) -> None:
    """Run one side once and print JSON: seconds, peak MiB over the input, how peak was read."""
    import pandas  # noqa: F401  (imports are not part of the work)

    import propertykit.frames._tables  # noqa: F401

    data: list[Any] = _bodies(path)
    if mode == "records":
        data = [r for body in data for r in json.loads(body)["result"]]
    gc.collect()
    _trim()
    before = _rss_kib("VmRSS")
    exact = _reset_peak()
    started = time.perf_counter()
    if side == "json_normalize":
        if mode == "bytes":
            data = [r for body in data for r in json.loads(body)["result"]]
        rows = _naive(data)
    else:
        rows = _propertykit(data)
    seconds = time.perf_counter() - started
    peak = _rss_kib("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mib = (peak - before) / 1024
    print(json.dumps({"seconds": seconds, "mib": mib, "rows": rows, "exact": exact}))


def decode_child(path: str) -> None:
    """Print seconds to decode the bodies: json.loads with gc on / paused, orjson, Arrow."""
    from propertykit.frames._bodies import read_bodies

    bodies = _bodies(path)

    def each(decode: Any) -> Any:
        return lambda: [decode(body) for body in bodies]

    readers: dict[str, Any] = {"json.loads": each(json.loads)}
    readers["json.loads, gc paused"] = each(json.loads)
    try:
        import orjson

        readers["orjson.loads"] = each(orjson.loads)
        readers["orjson.loads, gc paused"] = each(orjson.loads)
    except ImportError:
        pass
    readers["propertykit: Arrow (or msgspec)"] = lambda: read_bodies(bodies, [])

    timings: dict[str, float] = {}
    for name, work in readers.items():
        runs = []
        for _ in range(3):
            gc.collect()
            paused = "paused" in name
            if paused:
                gc.disable()
            started = time.perf_counter()
            value = work()
            runs.append(time.perf_counter() - started)
            gc.enable()
            del value
        timings[name] = statistics.median(runs)
    print(json.dumps(timings))


def _run(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _write(records: list[dict[str, Any]], path: Path) -> None:
    with path.open("wb") as out:
        for start in range(0, len(records), PAGE_SIZE):
            page = records[start : start + PAGE_SIZE]
            more = start + PAGE_SIZE < len(records)
            envelope = {"success": True, "result": page, "hasMore": more}
            out.write(json.dumps(envelope, separators=(",", ":")).encode() + b"\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--share", type=float, default=0.03, help="untidy records' share")
    parser.add_argument("--data", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--child", nargs=3, metavar=("SIDE", "MODE", "PATH"), help=argparse.SUPPRESS
    )
    parser.add_argument("--decode", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if args.decode:
        decode_child(args.decode)
        return 0

    from propertykit.sandbox import generate_records

    print(f"generating {args.records:,} records with propertykit.sandbox._data ...", flush=True)
    records = generate_records(args.records)
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for data in args.data:
            paths[data] = Path(folder) / f"{data}.jsonl"
            _write(records if data == "tidy" else untidy(records, args.share), paths[data])
            size = paths[data].stat().st_size / 2**20
            print(f"{data}: {-(-args.records // PAGE_SIZE):,} response bodies, {size:,.0f} MiB")
        del records
        for round_number in range(args.rounds):
            for data in args.data:
                for mode in args.modes:
                    order = SIDES if round_number % 2 == 0 else SIDES[::-1]
                    for side in order:
                        result = _run("--child", side, mode, str(paths[data]))
                        results.setdefault((data, side, mode), []).append(result)
                        print(
                            f"  round {round_number + 1} {data:6} {mode:7} {side:14} "
                            f"{result['seconds']:6.2f} s {result['mib']:7.0f} MiB",
                            flush=True,
                        )
        decoding = {data: _run("--decode", str(paths[data])) for data in args.data}

    exact = all(r["exact"] for runs in results.values() for r in runs)
    memory = "peak RSS over input (VmHWM reset)" if exact else "ru_maxrss over input"
    print(f"\n{args.records:,} records, medians of {args.rounds} rounds; memory = {memory}")
    if "untidy" in args.data:
        print(f"untidy: {args.share:.0%} of records each bent in 1-2 ways: {', '.join(DEVIATIONS)}")
    print(f"{'data':7} {'from':8} {'side':15} {'seconds':>8} {'MiB':>7}")
    medians: dict[tuple[str, str, str], tuple[float, float]] = {}
    for (data, side, mode), runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        mib = statistics.median(r["mib"] for r in runs)
        medians[data, side, mode] = (seconds, mib)
        print(f"{data:7} {mode:8} {side:15} {seconds:8.2f} {mib:7.0f}")
    for data in args.data:
        for mode in args.modes:
            naive_s, naive_mib = medians[data, "json_normalize", mode]
            ours_s, ours_mib = medians[data, "propertykit", mode]
            print(
                f"{data:6} from {mode:7}: propertykit is {naive_s / ours_s:4.1f}x faster and "
                f"uses {ours_mib / naive_mib:.2f} of the peak memory"
            )
    for data, timings in decoding.items():
        print(f"\nthe {data} bodies alone, decoded or read into Arrow (median of 3):")
        for name, seconds in timings.items():
            print(f"  {name:32} {seconds:6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
