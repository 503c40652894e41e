"""The EPC trend on 1,000,000 properties: ``df.pk.epc_trend`` against the obvious pandas route.

(a) the obvious route: ``df.pk.epc()``, then per year lodged (and group)
    ``groupby(...)["currentEnergyRating"].value_counts(normalize=True).unstack()`` for the shares,
    ``.size()`` for the counts and ``.mean()`` for the two efficiencies;
(b) propertykit: ``df.pk.epc_trend(by=..., min_count=50)`` — the same numbers plus counts per
    band, the A-to-C share, pooling of thin periods and the count of what was left out.

The frame: the sandbox's records (``--records``, default 20,000) read with ``pk.frame``, the
columns the trend reads kept (ids, property type, town, the six EPC fields), repeated to
``--properties`` rows (default 1,000,000) and written to Parquet once. Each measurement runs in a
fresh subprocess that reads it back, the sides alternating over ``--rounds`` rounds; medians are
printed with their ratios (route a over route b: above 1 means propertykit is faster or smaller).

Time is wall-clock (``time.perf_counter``) around the work only. Memory is the peak resident set
size of the child during the work minus its resident size just before: the kernel's high-water
mark (``VmHWM``) is reset through ``/proc/self/clear_refs`` first, after the C heap's free memory
is handed back (where the reset is not allowed, ``ru_maxrss`` minus the size before, and the output
says so); the probes are those of ``benchmarks/frames.py``.

    python benchmarks/epc_trend.py [--properties 1000000] [--records 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

# the memory probes of benchmarks/frames.py (this folder is on sys.path when run as a script)
from frames import _reset_peak, _rss_kib, _trim

SIDES = ("pandas route", "propertykit")
GROUPINGS = ("none", "propertyType")
KEEP = (
    "propertyId", "propertyType", "address.town", "epc.currentEnergyRating",
    "epc.potentialEnergyRating", "epc.currentEnergyEfficiency", "epc.potentialEnergyEfficiency",
    "epc.validFrom", "epc.validTo",
)  # fmt: skip


def pandas_route(df: Any, by: str | None) -> Any:
    """What an analyst writes first: value_counts(normalize=True) per group, unstacked."""
    epc = df.pk.epc()
    keys = [epc["validFrom"].dt.year.rename("year")]
    if by:
        keys.append(df[by])
    grouped = epc.groupby(keys, observed=True)
    shares = grouped["currentEnergyRating"].value_counts(normalize=True).unstack(fill_value=0)
    counts = grouped["currentEnergyRating"].count().rename("n")
    means = grouped[["currentEnergyEfficiency", "potentialEnergyEfficiency"]].mean()
    return shares.join(counts).join(means)


def propertykit_route(df: Any, by: str | None) -> Any:
    with warnings.catch_warnings(action="ignore"):  # thin periods pooled: said, not timed
        return df.pk.epc_trend(by=by, min_count=50)


def child(path: str, side: str, grouping: str) -> None:
    import pandas as pd

    import propertykit  # noqa: F401  (registers df.pk)

    df = pd.read_parquet(path)
    by = None if grouping == "none" else grouping
    work = pandas_route if side == SIDES[0] else propertykit_route
    work(df.head(1000), by)  # imports and first-call costs out of the measurement
    gc.collect()
    _trim()
    before = _rss_kib("VmRSS")
    exact = _reset_peak()
    start = time.perf_counter()
    result = work(df, by)
    seconds = time.perf_counter() - start
    if exact:
        peak = _rss_kib("VmHWM")
    else:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "mib": (peak - before) / 1024, "exact": exact,
                      "rows": len(result)}))  # fmt: skip


def build(path: Path, properties: int, records: int) -> None:
    import pandas as pd

    import propertykit as pk
    from propertykit.sandbox import generate_records

    df = pk.frame(generate_records(records))[list(KEEP)]
    repeats = -(-properties // len(df))
    big = pd.concat([df] * repeats, ignore_index=True).iloc[:properties]
    big.to_parquet(path)
    rated = int(big["epc.currentEnergyRating"].notna().sum())
    print(f"{len(big):,} properties ({rated:,} with a certificate), from {records:,} records")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--properties", type=int, default=1_000_000)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(*arguments.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "properties.parquet"
        build(path, arguments.properties, arguments.records)
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for round_ in range(arguments.rounds):
            for grouping in GROUPINGS:
                sides = SIDES if round_ % 2 == 0 else SIDES[::-1]
                for side in sides:
                    answer = subprocess.run(
                        [sys.executable, __file__, "--child", str(path), side, grouping],
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    results.setdefault((grouping, side), []).append(json.loads(answer.stdout))
    exact = all(r["exact"] for runs in results.values() for r in runs)
    memory = "peak RSS growth" + ("" if exact else " (ru_maxrss: not reset, an upper bound)")
    print(f"median of {arguments.rounds} rounds; time in seconds, memory as {memory} in MiB")
    print(f"{'by':<14}{'route':<14}{'seconds':>9}{'MiB':>9}{'rows':>7}")
    for grouping in GROUPINGS:
        medians = {}
        for side in SIDES:
            runs = results[(grouping, side)]
            seconds = statistics.median(r["seconds"] for r in runs)
            mib = statistics.median(r["mib"] for r in runs)
            medians[side] = (seconds, mib)
            print(f"{grouping:<14}{side:<14}{seconds:>9.3f}{mib:>9.1f}{runs[0]['rows']:>7,}")
        (slow, heavy), (fast, light) = medians[SIDES[0]], medians[SIDES[1]]
        print(
            f"{grouping:<14}{'ratio':<14}{slow / fast:>8.1f}x{heavy / max(light, 0.1):>8.1f}x"
            "   (pandas route / propertykit)"
        )


if __name__ == "__main__":
    main()
