"""Size-elasticity benchmark: the slope per property type, net of place and time fixed effects.

- **naive**: the textbook route: per type, a dense design matrix (log area, one dummy per
  group and per period but the first) and :func:`numpy.linalg.lstsq`.
- **propertykit**: :func:`propertykit.frames.fit_size_elasticity`: the fixed
  effects absorbed by alternating :func:`numpy.bincount` projections, no design matrix.

Both give the same slopes (checked here to 1e-6). Time is the best of three runs, side by side.

The sales are synthetic (numpy): ``--sales`` (default 20,000; the dense route's cost grows with
the square of the groups) of six types in ``--sales // 70`` groups and 40 quarters, larger homes
in cheaper places and later quarters; the propertykit route is also timed alone on 100,000 sales
in 2,000 groups and 120 quarters.

Run: ``.venv/bin/python benchmarks/size_elasticity.py``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from propertykit.frames import fit_size_elasticity

KINDS = 6


def synthetic_sales(count: int, groups: int, periods: int, *, seed: int = 0) -> dict[str, Any]:
    """Logs of area and £/m², kind, group and period codes of ``count`` sales."""
    draws = np.random.default_rng(seed)
    group, period = draws.integers(0, groups, count), draws.integers(0, periods, count)
    kind = draws.integers(0, KINDS, count)
    place = draws.normal(0, 0.3, groups)
    log_area = 4.4 - 0.5 * place[group] + 0.005 * period + draws.normal(0, 0.2, count)
    slope = np.linspace(-0.1, -0.35, KINDS)[kind]
    log_price = 8 + place[group] + 0.02 * period + slope * log_area + draws.normal(0, 0.1, count)
    return {"log_area": log_area, "log_price": log_price, "kind": kind, "group": group,
            "period": period}  # fmt: skip


def dense_slopes(sales: dict[str, Any]) -> np.ndarray:
    """Per kind, the slope of log £/m² on log area with group and period dummies (lstsq)."""
    slopes = np.full(KINDS, np.nan)
    for kind in range(KINDS):
        rows = sales["kind"] == kind
        _, group = np.unique(sales["group"][rows], return_inverse=True)
        _, period = np.unique(sales["period"][rows], return_inverse=True)
        design = np.zeros((int(rows.sum()), 2 + group.max() + period.max()))
        design[:, 0] = sales["log_area"][rows]
        design[np.arange(len(group)), 1 + group] = 1.0
        later = period > 0
        design[np.flatnonzero(later), 1 + group.max() + period[later]] = 1.0
        slopes[kind] = np.linalg.lstsq(design, sales["log_price"][rows], rcond=None)[0][0]
    return slopes


def fast_slopes(sales: dict[str, Any]) -> np.ndarray:
    fit = fit_size_elasticity(
        sales["log_area"], sales["log_price"], sales["kind"], KINDS,
        group=sales["group"], period=sales["period"],
    )  # fmt: skip
    return np.asarray(fit.fitted)


def best_of_three(work: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sales", type=int, default=20_000)
    args = parser.parse_args(argv)
    sales = synthetic_sales(args.sales, max(args.sales // 70, 2), 40)
    naive, dense = best_of_three(lambda: dense_slopes(sales))
    fast, slopes = best_of_three(lambda: fast_slopes(sales))
    np.testing.assert_allclose(slopes, dense, atol=1e-6)
    print(f"{args.sales:,} sales, {KINDS} types: slopes {np.round(slopes, 3).tolist()}")
    print(f"dense lstsq {naive:.3f} s, propertykit {fast:.4f} s: {naive / fast:,.0f}x")
    large = synthetic_sales(100_000, 2_000, 120)
    alone, _ = best_of_three(lambda: fast_slopes(large))
    print(f"propertykit alone, 100,000 sales in 2,000 groups and 120 quarters: {alone:.4f} s")


if __name__ == "__main__":
    main()
