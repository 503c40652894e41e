"""Price-index benchmark: 1,000,000 sales, the repeat-sales index yearly and by outcode.

- **naive**: pairs by ``groupby(...).shift()``, then the textbook route: a dense one-hot design
  matrix (pairs x periods, -1 / +1), ``numpy.linalg.lstsq`` for OLS, the squared residuals
  regressed on the time between sales, ``lstsq`` again on rows scaled by the square root of the
  weights (WLS), and ``inv(X'WX)`` for the band. By outcode: the same per outcode.
- **propertykit**: :func:`propertykit.frames.price_index`: pairs by one sort, the
  normal equations summed from each pair's two periods (a P x P matrix), no design matrix.

Both give the same numbers (checked here, and in ``tests/views/test_price_index.py``). Time is
the best of two runs; memory is the peak traced by :mod:`tracemalloc` (numpy reports its
arrays to it) above what the sales table already holds.

The sales are synthetic (numpy, not the sandbox: a million sandbox sales would take minutes to
generate): 400,000 homes with 0-5 sales each over 1995-2025, in 150 outcodes, prices following
a yearly index with noise.

Run: ``.venv/bin/python benchmarks/price_index.py`` (``--sales 200000`` for a quicker run).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from propertykit.frames import price_index

_Z95 = 1.959963984540054


def synthetic_sales(count: int, *, seed: int = 0) -> pd.DataFrame:
    """About ``count`` sales of homes sold 1 to 5 times, 1995-2025, in 150 outcodes."""
    rng = np.random.default_rng(seed)
    homes = count * 2 // 5
    sold = rng.integers(0, 6, homes)
    owner = np.repeat(np.arange(homes), sold)[:count]
    days = rng.integers(
        np.datetime64("1995-01-01").astype(int), np.datetime64("2025-06-01").astype(int), len(owner)
    )
    year = (days.astype("datetime64[D]").astype("datetime64[Y]").astype(int) + 1970) - 1995
    level = np.cumsum(rng.normal(0.05, 0.06, 31))
    quality = rng.normal(12, 0.5, homes)
    price = np.exp(quality[owner] + level[year] + rng.normal(0, 0.05, len(owner)))
    return pd.DataFrame(
        {
            "propertyId": pd.array([f"PK{i:08d}" for i in owner], dtype="string"),
            "date": days.astype("datetime64[D]").astype("datetime64[us]"),
            "price": price.round(-2),
            "address.outcode": pd.array([f"OC{i % 150:03d}" for i in owner], dtype="string"),
        }
    )


def dense_index(sales: pd.DataFrame, *, by: str | None = None) -> pd.DataFrame:
    """The three-stage repeat-sales index the textbook way (every period assumed to have pairs).

    Examples
    --------
    >>> sales = pd.DataFrame({"propertyId": ["A", "A", "B", "B"], "price": [100, 110, 50, 60],
    ...                       "date": pd.to_datetime(["2019-01-01", "2020-01-01"] * 2)})
    >>> dense_index(sales)["index"].round(1).tolist()
    [100.0, 114.8]
    """
    if by is not None:
        parts = [
            dense_index(rows.drop(columns=by)).assign(**{by: name})
            for name, rows in sales.groupby(by, sort=True)
        ]
        table = pd.concat(parts, ignore_index=True)
        return table[[by, *[c for c in table.columns if c != by]]]
    table = sales[["propertyId", "date", "price"]].sort_values(
        ["propertyId", "date"], kind="stable"
    )
    table["year"] = table["date"].dt.year
    earlier = table.groupby("propertyId").shift()
    pairs = table.assign(
        first=earlier["year"],
        days=(table["date"] - earlier["date"]).dt.days,
        before=earlier["price"],
    ).dropna(subset=["first"])
    pairs = pairs[pairs["first"] != pairs["year"]]
    periods = np.sort(np.unique(np.concatenate([pairs["first"], pairs["year"]]))).astype(int)
    column = {year: i for i, year in enumerate(periods)}
    design = np.zeros((len(pairs), len(periods)))
    rows = np.arange(len(pairs))
    design[rows, pairs["first"].astype(int).map(column).to_numpy()] = -1
    design[rows, pairs["year"].map(column).to_numpy()] = 1
    design = design[:, 1:]
    target = np.log(pairs["price"].to_numpy() / pairs["before"].to_numpy())
    years = pairs["days"].to_numpy() / 365.25
    beta = np.linalg.lstsq(design, target, rcond=None)[0]
    squared = (target - design @ beta) ** 2
    slope, intercept = np.polyfit(years, squared, 1)
    weights = 1 / np.maximum(intercept + slope * years, 0.05 * squared.mean())
    root = np.sqrt(weights)
    beta = np.linalg.lstsq(design * root[:, None], target * root, rcond=None)[0]
    residuals = target - design @ beta
    scale = float(np.sum(weights * residuals**2)) / (len(target) - design.shape[1])
    errors = np.sqrt(np.diag(np.linalg.inv(design.T @ (design * weights[:, None]))) * scale)
    levels, errors = np.concatenate([[0.0], beta]), np.concatenate([[0.0], errors])
    return pd.DataFrame(
        {
            "period": periods,
            "index": 100 * np.exp(levels),
            "lower": 100 * np.exp(levels - _Z95 * errors),
            "upper": 100 * np.exp(levels + _Z95 * errors),
        }
    )


def measure(work: Callable[[], pd.DataFrame]) -> tuple[float, float, pd.DataFrame]:
    """Best time of two runs (seconds), peak traced memory of one (MiB), and the result."""
    times = []
    for _ in range(2):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return min(times), peak, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sales", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    sales = synthetic_sales(args.sales)
    print(f"{len(sales):,} sales of {sales['propertyId'].nunique():,} homes")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("yearly", {}),
        ("yearly, by outcode (150)", {"by": "address.outcode"}),
    ]
    print(f"{'case':28} {'naive':>18} {'propertykit':>18} {'time':>7} {'memory':>7}")
    for name, options in cases:
        naive_time, naive_memory, naive = measure(lambda o=options: dense_index(sales, **o))
        with warnings.catch_warnings(action="error"):
            fast_time, fast_memory, fast = measure(
                lambda o=options: price_index(  # no merging, interval weights, as naive
                    sales, min_pairs=1, weights="interval", robust=False, **o
                )
            )
        gap = float(np.max(np.abs(fast["index"].to_numpy() / naive["index"].to_numpy() - 1)))
        assert gap < 1e-8, f"the two routes differ by {gap:.2g}"
        print(
            f"{name:28} {naive_time:7.2f} s {naive_memory:6.0f} MiB"
            f" {fast_time:7.2f} s {fast_memory:6.0f} MiB"
            f" {naive_time / fast_time:6.1f}x {fast_memory / naive_memory:6.2f}"
        )
    print("time: naive / propertykit (higher is better); memory: propertykit / naive")


if __name__ == "__main__":
    main()
