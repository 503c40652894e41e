"""Valuation benchmark: 3,000 subjects valued on the sales of 40,000 properties.

- **naive**: a pandas loop, one subject at a time: the distance from the subject to every sale
  (haversine over the whole sales table), then the filters (same type, sold in the 24 months
  before, floor area within 35 %, at most one bedroom more or fewer), widening the radius
  250 m ... 8 km until 5 are found, and the median index-adjusted price per m² times the
  subject's floor area.
- **propertykit**: :func:`propertykit.frames.valuation` (``appraise(...).values``): one STRtree
  over the sales' projected points, every subject's neighbours found at once per radius, the
  weighted quartiles per subject from one sort, the clipped weighted geometric mean. It also
  does work the naive loop does not: the index and the size elasticity fitted on the sales
  before the date's quarter (point in time), and the 80 % range calibrated on at least 600 of
  the frame's own earlier sales, each valued blind on the sales before it.

Each subject has its own date, spread over a year (2024-06-01 ... 2025-05-31): the naive loop
takes each subject's window from its date; propertykit fits and calibrates per quarter. Both
start from the property frame; the naive loop is given a price index ready (fitted on
every sale, not timed). Time is one run each over every subject;
memory is the peak traced by :mod:`tracemalloc` (numpy reports its arrays to it) in a second
run, over every subject for propertykit and over the first 300 for the naive loop (whose peak
does not grow with the subjects: it holds one subject's masks at a time; minutes saved).

The properties are the sandbox's real-shaped world (``realism="real"``): building them takes
half a minute and is not timed.

Measured on the shared 2-core machine (load average 3-16, so the naive loop's time moved from
91 s to 227 s between runs; read the ratio, not the seconds): this branch 80.1x (propertykit
2.83 s, 32 MiB), the commit before it 35.2x (2.60 s, 61 MiB) in a run of its own. The
valuation alone, before and after alternating, best of three each: 3.32 / 2.40 s, then
1.88 / 2.54 s: within the machine's noise. The search keeps one STRtree per property type (a
subject meets only sales of its type), which halves the peak memory.

Run: ``.venv/bin/python benchmarks/valuation.py`` (``--properties 10000 --subjects 1000`` for a
quicker run).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

import propertykit as pk
from propertykit.frames import FewPairsWarning, price_index, valuation
from propertykit.sandbox import generate_records

RADII_M = (250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)


def naive_valuation(
    df: pd.DataFrame, ids: list[str], dates: list[str], index: pd.DataFrame
) -> pd.Series:
    """One subject at a time, the way a pandas user would write it first."""
    homes = df.set_index("propertyId")
    sales = df.pk.sales().join(
        homes[["spatial.lat", "spatial.lng", "floorAreaSqM", "roomDetails.beds"]], on="propertyId"
    )
    sales = sales.dropna(subset=["spatial.lat", "spatial.lng", "floorAreaSqM"])
    level = index.set_index("period")["index"]
    every = pd.period_range(level.index.min(), level.index.max(), freq="Q")
    level = level.reindex(every).ffill()  # a merged quarter carries the level of its run
    quarters = sales["date"].dt.to_period("Q").clip(every[0], every[-1])
    moved = level.reindex(quarters).to_numpy() / level.iloc[-1]
    sales["adjusted_per_sqm"] = sales["price"] / moved / sales["floorAreaSqM"]
    estimates = {}
    for name, as_of in zip(ids, dates, strict=True):
        day = pd.Timestamp(as_of)
        subject = homes.loc[name]
        north = np.radians(sales["spatial.lat"] - subject["spatial.lat"])
        east = np.radians(sales["spatial.lng"] - subject["spatial.lng"]) * np.cos(
            np.radians(subject["spatial.lat"])
        )
        distance = 6_371_008.8 * np.hypot(north, east)
        fits = (
            (sales["propertyType"] == subject["propertyType"])
            & (sales["date"] < day)
            & (sales["date"] >= day - pd.DateOffset(months=24))
            & (sales["floorAreaSqM"] / subject["floorAreaSqM"]).between(1 / 1.35, 1.35)
            & ~((sales["roomDetails.beds"] - subject["roomDetails.beds"]).abs() > 1)
        )
        chosen = sales[fits & (distance <= RADII_M[0])]
        for radius in RADII_M[1:]:
            if len(chosen) >= 5:
                break
            chosen = sales[fits & (distance <= radius)]
        estimates[name] = (
            chosen["adjusted_per_sqm"].median() * subject["floorAreaSqM"]
            if len(chosen) >= 5
            else np.nan
        )
    return pd.Series(estimates)


def measure(
    work: Callable[[], object], traced: Callable[[], object] | None = None
) -> tuple[float, float, object]:
    """Time of one run (seconds), peak traced memory of another (MiB; of ``traced`` when
    given), and the result."""
    start = time.perf_counter()
    result = work()
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    (traced or work)()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return elapsed, peak, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--properties", type=int, default=40_000)
    parser.add_argument("--subjects", type=int, default=3_000)
    args = parser.parse_args(argv)
    df = pk.frame(generate_records(args.properties, realism="real"))
    usable = df[df["floorAreaSqM"].notna() & df["spatial.lat"].notna()]
    ids = usable["propertyId"].iloc[: args.subjects].tolist()
    # the subjects' dates spread over a year (each quarter's range calibrated on its own sales)
    days = pd.date_range("2024-06-01", "2025-05-31", periods=len(ids)).normalize()
    dates = days.strftime("%Y-%m-%d").tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewPairsWarning)
        index = price_index(df, freq="quarter")
    print(f"{len(ids):,} subjects, {len(df):,} properties, {len(df.pk.sales()):,} sales")
    naive_time, naive_memory, naive = measure(
        lambda: naive_valuation(df, ids, dates, index),
        lambda: naive_valuation(df, ids[:300], dates[:300], index),
    )
    fast_time, fast_memory, fast = measure(lambda: valuation(df, ids, as_of=dates))
    assert isinstance(fast, pd.DataFrame) and isinstance(naive, pd.Series)
    valued = fast.set_index("propertyId")["estimate"]
    both = valued.notna() & naive.notna()
    gap = float(np.median(np.abs(valued[both] / naive[both] - 1)))
    print(f"{'':14} {'time':>9} {'peak memory':>12} {'valued':>8}")
    for name, spent, memory, count in (
        ("naive", naive_time, naive_memory, int(naive.notna().sum())),
        ("propertykit", fast_time, fast_memory, int(valued.notna().sum())),
    ):
        print(f"{name:14} {spent:7.2f} s {memory:8.0f} MiB {count:8,}")
    print(
        f"time: naive / propertykit = {naive_time / fast_time:.1f}x (higher is better); "
        f"memory: propertykit / naive = {fast_memory / naive_memory:.2f}"
    )
    print(
        f"median gap between the two estimates (weighted geometric mean vs plain median): {gap:.1%}"
    )


if __name__ == "__main__":
    main()
