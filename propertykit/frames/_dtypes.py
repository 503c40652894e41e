"""Arrow columns -> pandas arrays of the frame's dtypes: the typing half of frames.

:func:`typed_columns` types the columns of named fields by their kind (the table in
``docs/tables.md``); a value that is no date, date-time, level or integer where one
is expected goes to a sink, as served, for the frame to count and keep. Fields the interface
does not name keep the type Arrow gave them (:func:`as_arrow`).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

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

#: pandas' string dtype, Arrow-backed, missing as NaN: the dtype of text columns.
STR_DTYPE: Any = pd.StringDtype("pyarrow", na_value=np.nan)
_UTC = pd.DatetimeTZDtype("us", "UTC")


def as_arrow(array: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """A column of a field the interface does not name: the type Arrow gave it, as is."""
    return pd.arrays.ArrowExtensionArray(array)


def _integers(numbers: np.ndarray) -> pd.arrays.IntegerArray:
    """Whole, finite numbers within int64 as ``Int64``; anything else missing."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(numbers) & (numbers == np.trunc(numbers)) & (np.abs(numbers) < 2.0**63)
    values = np.where(ok, numbers, 0.0).astype(np.int64)
    return pd.arrays.IntegerArray(values, ~ok)


def _categories(text: pa.Array, levels: tuple[str, ...] | None) -> pd.Categorical:
    """Categories of the values seen, sorted; or the ordered ``levels`` (stripped, upper-cased)."""
    if levels is not None:  # anything that is not one of the levels is missing, not an error
        letters = pc.utf8_upper(pc.utf8_trim_whitespace(text))
        codes = pc.index_in(letters, value_set=pa.array(levels)).fill_null(-1)
        return pd.Categorical.from_codes(codes.to_numpy(), dtype=_levels(levels))
    seen = pc.unique(text).drop_null()
    seen = seen.take(pc.array_sort_indices(seen))  # by code point, as pandas
    codes = pc.index_in(text, value_set=seen).fill_null(-1).to_numpy(zero_copy_only=False)
    if len(seen) <= FEW_CATEGORIES:  # the dtype of a few values seen again, made once
        return pd.Categorical.from_codes(codes, dtype=_seen(tuple(seen.to_pylist())))
    return pd.Categorical.from_codes(codes, categories=pd.Index(seen, dtype=STR_DTYPE))


#: Up to how many categories the dtype of the values seen is kept for the next frame.
FEW_CATEGORIES = 64


@functools.cache
def _levels(levels: tuple[str, ...]) -> pd.CategoricalDtype:
    """The ordered dtype of ``levels``, made once (pandas checks the categories each time)."""
    return pd.CategoricalDtype(list(levels), ordered=True)


@functools.lru_cache(maxsize=1024)
def _seen(categories: tuple[str, ...]) -> pd.CategoricalDtype:
    """The unordered dtype of ``categories``, made once for the latest ones asked for."""
    return pd.CategoricalDtype(pd.Index(list(categories), dtype=STR_DTYPE))


def _times(text: pa.Array, kind: str) -> Any:
    """Dates (``datetime64[us]``) or UTC date-times from text; anything not ISO 8601 missing.

    Arrow's cast, quicker, when it takes every value: it is strict (no 30 February, exactly
    ``YYYY-MM-DD`` for dates, an offset or ``Z`` on date-times) and reads what it accepts as
    pandas does (``tests/frames/test_dates.py``). Otherwise pandas reads the column (a date alone
    in a date-time column, the usual reason, is midnight UTC).
    """
    with contextlib.suppress(*ARROW_ERRORS):
        if kind == DATE:
            days = text.cast(pa.date32()).cast(pa.timestamp("us"))
            return pd.array(days.to_numpy(zero_copy_only=False), dtype="datetime64[us]")
        moments = text.cast(pa.timestamp("us", "UTC")).to_numpy(zero_copy_only=False)
        return pd.array(moments, dtype=_UTC)  # the instants in UTC, as Arrow holds them
    served = pd.Series(text, dtype=STR_DTYPE)
    if kind == DATE:  # format as served; no date-times here
        day = pd.to_datetime(served, format="%Y-%m-%d", errors="coerce")
        return day.astype("datetime64[us]").array
    parsed = pd.to_datetime(served, format="ISO8601", utc=True, errors="coerce")
    return parsed.astype("datetime64[us, UTC]").array


def _flags(values: pa.Array) -> pd.arrays.BooleanArray:
    missing = values.is_null().to_numpy(zero_copy_only=False)
    return pd.arrays.BooleanArray(values.fill_null(False).to_numpy(zero_copy_only=False), missing)


def typed_columns(
    fields: list[Field], arrow: dict[str, pa.Array], sink: Sink, prefix: str = ""
) -> dict[str, Any]:
    """pandas arrays, by dotted name, for the Arrow-read ``fields``.

    Text that is no date, date-time or level, and a number that is no integer where one is
    expected, go to ``sink`` as served (under ``prefix`` + the field's name).
    """
    columns: dict[str, Any] = {}
    for f in (f for f in fields if f.kind != RAW):  # spatial.boundary: as served
        values = arrow[f.name]
        unread: np.ndarray | None = None
        if f.kind == TEXT:
            columns[f.name] = pd.array(values, dtype=STR_DTYPE)
        elif f.kind == CATEGORY:
            columns[f.name] = _categories(values, f.levels)
            if f.levels is not None:
                unread = columns[f.name].codes == -1
        elif f.kind in (DATE, DATETIME):
            columns[f.name] = _times(values, f.kind)
            unread = np.asarray(columns[f.name].isna())
        elif f.kind in (INT, NUMBER):
            numbers = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
            columns[f.name] = _integers(numbers) if f.kind == INT else numbers
            if f.kind == INT:
                unread = np.asarray(columns[f.name].isna())
        elif f.kind == FLAG:
            columns[f.name] = _flags(values)
        elif f.kind == LIST:
            columns[f.name] = as_arrow(values)
        if unread is not None and unread.any():
            served = values.is_valid().to_numpy(zero_copy_only=False)
            positions = np.flatnonzero(unread & served)
            if len(positions):
                raw = values.take(pa.array(positions)).to_pylist()
                sink.append((prefix + f.name, positions.tolist(), raw))
    return columns
