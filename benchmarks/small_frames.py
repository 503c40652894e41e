"""The fixed cost of ``pk.frame``: what a caller framing one page, or a record at a time, pays.

Side by side in one run:

- **naive** (the way it was): the columns handed to pandas with the order to put them in (pandas
  reindexes the dict it is given), the frame's currency found by ``dropna().unique()``, the
  median price by ``pd.concat(...).median()``, and the dtype of each category column's values
  built (its categories checked by pandas) on every call.
- **propertykit**: :func:`propertykit.frames._tables.frame_from_arrow`: the columns given in
  order, the currency read from the category's codes, the median by numpy, and the dtype of a
  few values seen (up to :data:`propertykit.frames._dtypes.FEW_CATEGORIES`) made once.

Both give the same frame (checked here, exactly, attrs too). Time is ``pk.frame`` of every
batch, the best of five rounds (CPU time of the process), for batches of 1, 10, 100 and 5,000
records.

    python benchmarks/small_frames.py
"""

from __future__ import annotations

import gc
import math
import time
import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from propertykit.errors import MinorUnitsWarning
from propertykit.frames import _dtypes as dtypes
from propertykit.frames import _tables as tables
from propertykit.frames._coercion import Sink, report
from propertykit.frames._extras import leaves
from propertykit.sandbox import generate_records

ROUNDS = 5


def naive_warn_if_minor_units(df: pd.DataFrame) -> None:
    prices = pd.concat([df["pricing.currentSalePrice"], df["pricing.estimatedSaleValue"]]).dropna()
    median = float(prices.median()) if len(prices) else math.nan
    if median > tables.PENCE_MEDIAN_THRESHOLD:
        warnings.warn("minor units", MinorUnitsWarning, stacklevel=2)


def naive_frame_from_arrow(
    arrow: pa.StructArray,
    boundaries: np.ndarray,
    sink: Sink,
    *,
    money_unit: Literal["major", "minor"] | None = None,
) -> pd.DataFrame:
    """:func:`~propertykit.frames._tables.frame_from_arrow` as it was."""
    children = dict(zip(arrow.type.names, arrow.flatten(), strict=True))
    named: dict[str, pa.Array] = {}
    for name in tables.RECORD_TYPE.names:
        named |= leaves(name, children.pop(name))
    extras: dict[str, pa.Array] = {}
    for name, child in children.items():
        extras |= leaves(name, child)
    columns = dtypes.typed_columns(tables.RECORD_FIELDS, named, sink)
    columns["spatial.boundary"] = boundaries
    columns |= {
        name: dtypes.as_arrow(values)
        for name, values in extras.items()
        if name not in tables.COLUMNS
    }
    order = [*tables.COLUMNS, *(n for n in extras if n not in tables.COLUMNS)]
    df = pd.DataFrame(columns, columns=order)
    df.attrs["extra_columns"] = tuple(df.columns[len(tables.COLUMNS) :])
    if sink:
        df.attrs["unparsed"] = report(sink, columns["propertyId"], list(df.columns))
    currencies = df["pricing.currency"].dropna().unique()
    df.attrs["currency"] = str(currencies[0]) if len(currencies) == 1 else None
    df.attrs["money_unit"] = money_unit or "major"
    df.attrs["money_unit_assumed"] = money_unit is None
    if money_unit is None:
        naive_warn_if_minor_units(df)
    return df


def framed(batches: list[list[dict[str, Any]]], naive: bool) -> list[pd.DataFrame]:
    """``pk.frame`` of each batch, the naive way or propertykit's."""
    few = dtypes.FEW_CATEGORIES
    if naive:
        tables.frame_from_arrow = naive_frame_from_arrow  # type: ignore[assignment]
        dtypes.FEW_CATEGORIES = -1  # no dtype kept: each built again
    try:
        return [tables.frame(batch) for batch in batches]
    finally:
        tables.frame_from_arrow = OURS
        dtypes.FEW_CATEGORIES = few


OURS = tables.frame_from_arrow


def best(run: Callable[[], Any]) -> float:
    """The least CPU time of :data:`ROUNDS` runs, in seconds."""
    times = []
    for _ in range(ROUNDS):
        gc.collect()  # no collection of garbage left by the other side's round
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    records = generate_records(5_000, seed=21)
    for size, count in ((1, 200), (10, 60), (100, 20), (5_000, 1)):
        batches = [records[i * size : (i + 1) * size] for i in range(count)]
        for ours, theirs in zip(framed(batches, False), framed(batches, True), strict=True):
            pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
            assert ours.attrs == theirs.attrs
        naive = best(lambda b=batches: framed(b, True)) / count
        quick = best(lambda b=batches: framed(b, False)) / count
        print(
            f"pk.frame of {size:>6,} records: naive {naive * 1e3:8.2f} ms, "
            f"propertykit {quick * 1e3:8.2f} ms, {naive / quick:.2f}x"
        )


if __name__ == "__main__":
    main()
