"""Typing the Arrow columns of a frame: what each column's conversion costs, on small batches.

``pk.frame`` of a handful of records is mostly fixed cost per column (58 named columns), which
is what a caller framing one page, or a record at a time, pays. Side by side in one run:

- **naive** (the way it was): the text columns put in one Arrow table and converted with
  ``Table.to_pandas`` (a pandas frame built, then each column taken out of it); Arrow's dates
  and date-times converted through ``Array.to_pandas`` (a Series each); each levelled category's
  dtype built (and its categories checked by pandas) on every call.
- **propertykit**: :func:`propertykit.frames._dtypes.typed_columns`: each text column straight to
  pandas' Arrow-backed string array, dates and date-times from Arrow's numbers, the levelled
  dtypes made once.

Both give the same frame (checked here, exactly). Time is ``pk.frame`` of every batch, the best
of three rounds (CPU time of the process), for batches of 1, 10, 100 and 5,000 records.

    python benchmarks/typed_columns.py
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from propertykit.frames import _dtypes as dtypes
from propertykit.frames import _tables as tables
from propertykit.frames._coercion import Sink
from propertykit.frames._schema import (
    ARROW_ERRORS,
    CATEGORY,
    DATE,
    DATETIME,
    FLAG,
    INT,
    LIST,
    NUMBER,
    RAW,
    TEXT,
    Field,
)
from propertykit.sandbox import generate_records

ROUNDS = 3
STR_DTYPE = dtypes.STR_DTYPE


def naive_categories(text: pa.Array, levels: tuple[str, ...] | None) -> pd.Categorical:
    if levels is not None:
        letters = pc.utf8_upper(pc.utf8_trim_whitespace(text))
        codes = pc.index_in(letters, value_set=pa.array(levels)).fill_null(-1)
        return pd.Categorical.from_codes(codes.to_numpy(), categories=list(levels), ordered=True)
    seen = pc.unique(text).drop_null()
    seen = seen.take(pc.array_sort_indices(seen))
    codes = pc.index_in(text, value_set=seen).fill_null(-1).to_numpy(zero_copy_only=False)
    return pd.Categorical.from_codes(codes, categories=pd.Index(seen, dtype=STR_DTYPE))


def naive_times(text: pa.Array, kind: str) -> Any:
    with contextlib.suppress(*ARROW_ERRORS):
        if kind == DATE:
            return text.cast(pa.date32()).cast(pa.timestamp("us")).to_pandas().array
        return text.cast(pa.timestamp("us", "UTC")).to_pandas().array
    served = pd.Series(text, dtype=STR_DTYPE)
    if kind == DATE:
        day = pd.to_datetime(served, format="%Y-%m-%d", errors="coerce")
        return day.astype("datetime64[us]").array
    parsed = pd.to_datetime(served, format="ISO8601", utc=True, errors="coerce")
    return parsed.astype("datetime64[us, UTC]").array


def naive_typed_columns(
    fields: list[Field], arrow: dict[str, pa.Array], sink: Sink, prefix: str = ""
) -> dict[str, Any]:
    """:func:`~propertykit.frames._dtypes.typed_columns` as it was."""
    texts = pa.table({f.name: arrow[f.name] for f in fields if f.kind == TEXT})
    text = texts.to_pandas(types_mapper={pa.string(): STR_DTYPE}.get)
    columns: dict[str, Any] = {}
    for f in (f for f in fields if f.kind != RAW):
        values = arrow[f.name]
        unread: np.ndarray | None = None
        if f.kind == TEXT:
            columns[f.name] = text[f.name].array
        elif f.kind == CATEGORY:
            columns[f.name] = naive_categories(values, f.levels)
            if f.levels is not None:
                unread = columns[f.name].codes == -1
        elif f.kind in (DATE, DATETIME):
            columns[f.name] = naive_times(values, f.kind)
            unread = np.asarray(columns[f.name].isna())
        elif f.kind in (INT, NUMBER):
            numbers = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
            columns[f.name] = dtypes._integers(numbers) if f.kind == INT else numbers
            if f.kind == INT:
                unread = np.asarray(columns[f.name].isna())
        elif f.kind == FLAG:
            columns[f.name] = dtypes._flags(values)
        elif f.kind == LIST:
            columns[f.name] = dtypes.as_arrow(values)
        if unread is not None and unread.any():
            served = values.is_valid().to_numpy(zero_copy_only=False)
            positions = np.flatnonzero(unread & served)
            if len(positions):
                raw = values.take(pa.array(positions)).to_pylist()
                sink.append((prefix + f.name, positions.tolist(), raw))
    return columns


def framed(batches: list[list[dict[str, Any]]], typing: Callable[..., Any]) -> list[pd.DataFrame]:
    """``pk.frame`` of each batch, its columns typed by ``typing``."""
    tables.typed_columns = typing
    try:
        return [tables.frame(batch, money_unit="major") for batch in batches]
    finally:
        tables.typed_columns = dtypes.typed_columns


def best(run: Callable[[], Any]) -> float:
    """The least CPU time of :data:`ROUNDS` runs, in seconds."""
    times = []
    for _ in range(ROUNDS):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    records = generate_records(5_000, seed=21)
    for size, count in ((1, 100), (10, 30), (100, 10), (5_000, 1)):
        batches = [records[i * size : (i + 1) * size] for i in range(count)]
        for ours, theirs in zip(
            framed(batches, dtypes.typed_columns), framed(batches, naive_typed_columns), strict=True
        ):
            pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
        naive = best(lambda b=batches: framed(b, naive_typed_columns)) / count
        quick = best(lambda b=batches: framed(b, dtypes.typed_columns)) / count
        print(
            f"pk.frame of {size:>6,} records: naive {naive * 1e3:8.2f} ms, "
            f"propertykit {quick * 1e3:8.2f} ms, {naive / quick:.2f}x"
        )


if __name__ == "__main__":
    main()
