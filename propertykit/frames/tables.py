"""Property records -> typed pandas DataFrames: the main table, sale histories and EPC data.

The main table (:func:`frame`) has one row per record and always the same columns, in the order of
:data:`COLUMNS`: nested objects flatten to json_normalize-style dotted names (``address.postcode``,
``epc.currentEnergyRating``); ``spatial.boundary`` stays one column holding the raw value as
served; ``saleHistory`` stays a list column (Arrow-backed ``list<struct<date: string, price:
double, propertyType: string, newBuild: bool>>``; each cell a list of dicts) until
:func:`explode_sales`.

Types
-----
============================  ======================================================================
fields                        dtype
============================  ======================================================================
ids, address, text            ``str`` (pandas' string dtype; missing is NaN)
counts, years, efficiencies   ``Int64`` (nullable)
money, areas, coordinates     ``float64`` (missing is NaN; money exactly as served, see below)
tags                          ``boolean`` (nullable)
date-times                    ``datetime64[us, UTC]`` (a time without an offset is read as UTC)
dates (``YYYY-MM-DD``)        ``datetime64[us]``
EPC ratings                   ordered ``category`` A < B < ... < G (label order, so ``min()`` is the
                              most efficient rating and ``rating <= "C"`` means C or better)
council-tax band              ordered ``category`` A < ... < I
types, statuses, tenure,      ``category`` of the values seen, sorted (the service gives no
currency                      complete lists)
============================  ======================================================================

Untidy data never raises, and loses no value without a count
(:mod:`propertykit.frames.coercion`). Absent keys and null objects are missing. A value of the
wrong type is coerced when its reading is clear: a boolean or number where text is expected
becomes its JSON text (``true`` -> ``"true"``); a numeric string (``"12"``, ``" 3.5 "``) where a
number is expected becomes the number; ``"true"``/``"false"`` (any case) and ``1``/``0`` where a
flag is expected become the flag; a date where a date-time is expected is midnight UTC and
offsets are converted to UTC; EPC ratings and bands are stripped and upper-cased. As in Python,
numpy and Arrow, ``true`` and ``false`` where a number is expected read as 1 and 0. Anything else
(a fraction where an integer is expected, text that is not a number, a ``YYYY-MM-DD`` date, an
ISO 8601 date-time or a level, an object or list where a value is expected, a value that is not a
list in ``saleHistory`` or an entry in it that is not an object) is missing in its column,
warned about once per column (:class:`~propertykit.frames.coercion.UnparsedValuesWarning`) and
kept as served in ``df.attrs["unparsed"]`` (``df.pk.unparsed()``); :func:`explode_sales` does
the same for a sale's date. Keys the interface does not name are dropped. Integers pass
through ``float64`` on the way in, so values beyond 2**53 are not exact (no field of the
interface comes near).

Money
-----
The interface does not state the unit of its monetary numbers. They are kept as served; the unit
and currency go in ``df.attrs``: ``currency`` (the one ISO code of ``pricing.currency``, or
``None`` when absent or mixed) and ``money_unit`` (``"major"`` e.g. pounds, or ``"minor"`` e.g.
pence), with ``money_unit_assumed`` saying whether it was assumed (``frame(money_unit=None)``) or
given. When the unit is assumed and the median sale price looks like pence, :func:`frame` warns
with :class:`MinorUnitsWarning`.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from propertykit.errors import InvalidInput, PropertyKitWarning, outside_stacklevel
from propertykit.frames.coercion import Sink, Unparsed, report
from propertykit.frames.from_bodies import read_bodies
from propertykit.frames.memory import in_system_pool
from propertykit.frames.records import (
    ARROW_ERRORS,
    BODY_TYPES,
    CATEGORY,
    DATE,
    DATETIME,
    EPC_RATINGS,
    FLAG,
    INT,
    LIST,
    NUMBER,
    RAW,
    RECORD_FIELDS,
    SALE_FIELDS,
    SALES_LIST,
    TAX_BANDS,
    TEXT,
    Field,
    flatten,
    read_records,
    read_values,
)

__all__ = [
    "COLUMNS",
    "EPC_COLUMNS",
    "EPC_RATINGS",
    "PENCE_MEDIAN_THRESHOLD",
    "SALES_COLUMNS",
    "TAX_BANDS",
    "MinorUnitsWarning",
    "epc_table",
    "explode_sales",
    "frame",
]

#: A median sale price above this (5 million in major units) is taken as a sign of minor units.
PENCE_MEDIAN_THRESHOLD = 5_000_000


class MinorUnitsWarning(PropertyKitWarning):
    """Prices look like minor units (pence) although major units (pounds) were assumed."""


#: Columns of :func:`frame`, in order.
COLUMNS: tuple[str, ...] = tuple(f.name for f in RECORD_FIELDS)
#: Columns of :func:`explode_sales`, in order.
SALES_COLUMNS: tuple[str, ...] = (
    "propertyId", "date", "price", "propertyType", "newBuild",
    "address.postcode", "address.outcode", "address.town", "councilTax.localAuthority",
)  # fmt: skip
#: Columns of :func:`epc_table`, in order.
EPC_COLUMNS: tuple[str, ...] = (
    "propertyId", "currentEnergyRating", "potentialEnergyRating", "currentEnergyEfficiency",
    "potentialEnergyEfficiency", "efficiencyGap", "validFrom", "validTo", "validToday",
)  # fmt: skip
_STR_DTYPE: Any = pd.StringDtype("pyarrow", na_value=np.nan)


def _integers(numbers: np.ndarray) -> pd.arrays.IntegerArray:
    """Whole, finite numbers within int64 as ``Int64``; anything else missing."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(numbers) & (numbers == np.trunc(numbers)) & (np.abs(numbers) < 2.0**63)
    values = np.where(ok, numbers, 0.0).astype(np.int64)
    return pd.arrays.IntegerArray(values, ~ok)


def _categories(text: pa.Array | pa.ChunkedArray, levels: tuple[str, ...] | None) -> pd.Categorical:
    """Categories of the values seen, sorted; or the ordered ``levels`` (stripped, upper-cased)."""
    if levels is not None:  # anything that is not one of the levels is missing, not an error
        letters = pc.utf8_upper(pc.utf8_trim_whitespace(text))
        codes = pc.index_in(letters, value_set=pa.array(levels)).fill_null(-1)
        return pd.Categorical.from_codes(codes.to_numpy(), categories=list(levels), ordered=True)
    seen = pc.unique(text).drop_null()
    seen = seen.take(pc.array_sort_indices(seen))  # by code point, as pandas
    codes = pc.index_in(text, value_set=seen).fill_null(-1).to_numpy(zero_copy_only=False)
    return pd.Categorical.from_codes(codes, categories=pd.Index(seen, dtype=_STR_DTYPE))


#: Text that looks as Arrow's cast takes a date or date-time (it may still refuse some, such as
#: 30 February): :func:`_times` leaves text of any other look to pandas.
_CASTABLE = {
    DATE: r"^\d{4}-\d{2}-\d{2}$",
    DATETIME: r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$",
}


def _times(text: pa.Array | pa.ChunkedArray, kind: str) -> Any:
    """Dates (``datetime64[us]``) or UTC date-times from text; anything not ISO 8601 missing.

    Arrow's cast is tried first, being quicker: it is strict (no 30 February, exactly
    ``YYYY-MM-DD`` for dates, an offset or ``Z`` on date-times) and reads what it accepts as
    pandas does (``tests/frames/test_dates.py``). When it refuses any value, date-times are cast
    again with each date alone made its midnight UTC (:func:`_midnights`: dates served for
    date-times are the usual reason); failing that, Arrow casts the text that looks as it
    accepts (:data:`_CASTABLE`) and pandas reads the rest; when Arrow refuses some of that text
    too, pandas reads the whole column. So a value reads the same whichever of the two did the
    work.
    """
    with contextlib.suppress(*ARROW_ERRORS):
        return _cast_times(text, kind)
    midnights = _midnights(text) if kind == DATETIME else None
    if midnights is not None:  # dates served for date-times, the usual reason
        with contextlib.suppress(*ARROW_ERRORS):
            return _cast_times(midnights, kind)
    castable = pc.match_substring_regex(text, _CASTABLE[kind]).fill_null(False)
    with contextlib.suppress(*ARROW_ERRORS):
        by_arrow = _cast_times(text.filter(castable), kind)
        taken = castable.to_numpy(zero_copy_only=False)
        times = pd.array(np.full(len(text), np.datetime64("NaT"), "datetime64[us]"))
        if kind == DATETIME:
            times = times.tz_localize("UTC")
        times[taken] = by_arrow
        times[~taken] = _parse_times(text.filter(pc.invert(castable)), kind)
        return times
    return _parse_times(text, kind)


def _midnights(text: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray | None:
    """``text`` with each date alone (``YYYY-MM-DD``) made its midnight UTC, for Arrow's cast
    (which takes a date-time only with its offset; pandas reads a date alone as midnight UTC);
    ``None`` when no text could be one. Any text of ten characters is extended: the cast
    refuses it unless it was such a date."""
    days = pc.equal(pc.utf8_length(text), 10).fill_null(False)
    if not pc.any(days).as_py():
        return None
    return pc.if_else(days, pc.binary_join_element_wise(text, "T00:00:00Z", ""), text)


def _cast_times(text: pa.Array | pa.ChunkedArray, kind: str) -> Any:
    """Arrow's reading of ``text`` (raises when Arrow refuses a value)."""
    if kind == DATE:
        return text.cast(pa.date32()).cast(pa.timestamp("us")).to_pandas().array
    return text.cast(pa.timestamp("us", "UTC")).to_pandas().array


def _parse_times(text: pa.Array | pa.ChunkedArray, kind: str) -> Any:
    """pandas' reading of ``text``: what it cannot read is missing."""
    served = pd.Series(text, dtype=_STR_DTYPE)
    if kind == DATE:  # format as served; no date-times here
        day = pd.to_datetime(served, format="%Y-%m-%d", errors="coerce")
        return day.astype("datetime64[us]").array
    parsed = pd.to_datetime(served, format="ISO8601", utc=True, errors="coerce")
    return parsed.astype("datetime64[us, UTC]").array


def _flags(values: pa.Array) -> pd.arrays.BooleanArray:
    missing = values.is_null().to_numpy(zero_copy_only=False)
    return pd.arrays.BooleanArray(values.fill_null(False).to_numpy(zero_copy_only=False), missing)


def _typed(
    fields: list[Field], arrow: dict[str, pa.Array], sink: Sink, prefix: str = ""
) -> dict[str, Any]:
    """pandas arrays, by dotted name, for the Arrow-read ``fields``.

    Text that is no date, date-time or level, and a number that is no integer where one is
    expected, go to ``sink`` as served (under ``prefix`` + the field's name).
    """
    texts = pa.table({f.name: arrow[f.name] for f in fields if f.kind == TEXT})
    text = texts.to_pandas(types_mapper={pa.string(): _STR_DTYPE}.get)
    columns: dict[str, Any] = {}
    for f in (f for f in fields if f.kind != RAW):  # spatial.boundary: see _boundaries
        values = arrow[f.name]
        unread: np.ndarray | None = None
        if f.kind == TEXT:
            columns[f.name] = text[f.name].array
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
            columns[f.name] = pd.arrays.ArrowExtensionArray(values)
        if unread is not None and unread.any():
            served = values.is_valid().to_numpy(zero_copy_only=False)
            positions = np.flatnonzero(unread & served)
            if len(positions):
                raw = values.take(pa.array(positions)).to_pylist()
                sink.append((prefix + f.name, positions.tolist(), raw))
    return columns


# -- public -----------------------------------------------------------------------------------


@in_system_pool
def frame(
    records: Iterable[Mapping[str, Any]] | Iterable[bytes | str] | bytes | str,
    *,
    money_unit: Literal["major", "minor"] | None = None,
) -> pd.DataFrame:
    """One typed row per property record, always with the columns of :data:`COLUMNS`.

    Parameters
    ----------
    records
        Property records as the service returns them (parsed JSON objects); anything that is
        not an object becomes a row of missing values. Or the raw response bodies themselves
        (``bytes`` or ``str``, one or a list, each an envelope ``{"result": [...]}`` or a list
        of records): Arrow's JSON reader reads them on every core without decoding them into
        Python first, which is several times quicker (``benchmarks/frames.py``). Leaves it
        refuses (untidy values) alone are decoded, by ``msgspec``; bodies of other shapes are
        decoded with ``json`` and framed as records. The frame is the same either way
        (:mod:`propertykit.frames.from_bodies`).
    money_unit
        The unit of the service's monetary numbers, which its interface does not state:
        ``"major"`` (pounds), ``"minor"`` (pence), or ``None`` to assume major units and warn
        (:class:`MinorUnitsWarning`) when the median sale price looks like pence. Values are
        never converted; the unit is recorded in ``df.attrs["money_unit"]``.

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes as in the module docstring; ``attrs`` holds ``currency``,
        ``money_unit`` and ``money_unit_assumed``.

    Raises
    ------
    InvalidInput
        ``records`` is neither records nor bodies, or a body is not JSON (the message names its
        position and how it starts).

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"propertyId": "PK1", "epc": {"currentEnergyRating": "c"}, "extra": 1}])
    >>> df.loc[0, "epc.currentEnergyRating"], len(df.columns) == len(pk.frames.COLUMNS)
    ('C', True)
    >>> pk.frame(b'{"result": [{"propertyId": "PK1"}], "hasMore": false}')["propertyId"].tolist()
    ['PK1']
    """
    rows = _rows(records)
    kinds = set(map(type, rows))
    sink: Sink = []
    if rows and all(issubclass(kind, BODY_TYPES) for kind in kinds):
        arrow, boundaries = read_bodies(rows, sink)
    else:
        arrow, boundaries = read_records(rows, sink)
    return frame_read(arrow, boundaries, sink, money_unit=money_unit)


@in_system_pool
def frame_read(
    arrow: pa.StructArray,
    boundaries: np.ndarray,
    sink: Sink,
    *,
    money_unit: Literal["major", "minor"] | None = None,
) -> pd.DataFrame:
    """:func:`frame` of records already read into Arrow (``read_bodies`` / ``read_records``)."""
    columns = _typed(RECORD_FIELDS, flatten(arrow), sink)
    columns["spatial.boundary"] = boundaries
    df = pd.DataFrame(columns, columns=list(COLUMNS))
    if sink:
        df.attrs["unparsed"] = report(sink, columns["propertyId"], COLUMNS)
    currencies = df["pricing.currency"].dropna().unique()
    df.attrs["currency"] = str(currencies[0]) if len(currencies) == 1 else None
    df.attrs["money_unit"] = money_unit or "major"
    df.attrs["money_unit_assumed"] = money_unit is None
    if money_unit is None:
        _warn_if_minor_units(df)
    return df


def _rows(records: Any) -> list[Any]:
    if isinstance(records, BODY_TYPES):
        return [records]
    if isinstance(records, Mapping):
        raise InvalidInput(
            "pk.frame takes a list of records, got one record (a mapping); wrap it in a list"
        )
    try:
        return list(records)
    except TypeError:
        raise InvalidInput(
            "pk.frame takes records (a list of dicts) or raw response bodies (bytes or str, one "
            f"or a list), got {type(records).__name__}"
        ) from None


def _warn_if_minor_units(df: pd.DataFrame) -> None:
    prices = pd.concat([df["pricing.currentSalePrice"], df["pricing.estimatedSaleValue"]]).dropna()
    median = float(prices.median()) if len(prices) else math.nan
    if median > PENCE_MEDIAN_THRESHOLD:
        warnings.warn(
            f"The median sale price is {median:,.0f}, which looks like minor units (pence), not "
            "pounds. Values are kept as served; pass money_unit='minor' to pk.frame to record "
            "that, or divide the money columns by 100.",
            MinorUnitsWarning,
            stacklevel=outside_stacklevel(),
        )


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    """``df[name]``, or a missing column of the type :func:`frame` gives it."""
    if name in df.columns:
        return df[name]
    return _EMPTY[name].reindex(df.index)


@in_system_pool
def explode_sales(df: pd.DataFrame) -> pd.DataFrame:
    """One row per sale in ``saleHistory``, with the property's id and address for grouping.

    Parameters
    ----------
    df
        A frame from :func:`frame`. Non-list ``saleHistory`` values and entries that are not
        objects are skipped; fields of a sale follow the same rules as :func:`frame`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SALES_COLUMNS`: ``propertyId``, ``date`` (``datetime64[us]``), ``price``
        (``float64``, as served), ``propertyType`` (``category``, as recorded for that sale),
        ``newBuild`` (``boolean``), ``address.postcode``, ``address.outcode``, ``address.town``,
        ``councilTax.localAuthority``. Rows keep the order of properties, then of their
        histories. ``attrs`` are copied from ``df``.

    Examples
    --------
    >>> import propertykit as pk
    >>> sale = {"date": "2020-05-01", "price": 250000}
    >>> df = pk.frame([{"propertyId": "PK1", "saleHistory": [sale]}])
    >>> pk.frames.explode_sales(df)[["propertyId", "price"]].to_dict("records")
    [{'propertyId': 'PK1', 'price': 250000.0}]
    """
    histories = _column(df, "saleHistory")
    lists: pa.Array | pa.ChunkedArray | None = None
    if isinstance(histories.dtype, pd.ArrowDtype):  # as frame() makes it; chunks not copied
        with contextlib.suppress(*ARROW_ERRORS, pa.ArrowNotImplementedError):
            lists = pa.array(histories.array).cast(SALES_LIST)
    odd: Sink = []  # values a column of raw lists holds that a sale cannot, by df's rows
    if lists is None:  # e.g. a column of raw lists
        lists = read_values(histories.tolist(), SALES_LIST, "saleHistory", odd)
    owners = pc.list_parent_indices(lists)
    sales = pc.list_flatten(lists)
    if sales.null_count:
        valid = sales.is_valid()
        owners, sales = owners.filter(valid), sales.filter(valid)
    taken = owners.to_numpy(zero_copy_only=False).astype(np.intp)
    sink: Sink = []  # text that is no date, by rows of the sales
    typed = _typed(SALE_FIELDS, flatten(sales), sink, "saleHistory.")
    result = pd.DataFrame(typed, columns=list(SALES_COLUMNS[1:5]))
    for position, name in enumerate(("propertyId", *SALES_COLUMNS[5:])):
        carried = _column(df, name).take(taken).reset_index(drop=True)
        result.insert(0 if position == 0 else len(result.columns), name, carried)
    result.attrs = dict(df.attrs)
    if sink or odd:  # values frame() kept as served in saleHistory that a sale cannot hold
        ids = _column(df, "propertyId").array
        by_id: Sink = [(c, [ids[r] for r in rows], raw) for c, rows, raw in odd]
        ids = result["propertyId"].array
        by_id += [(c, [ids[r] for r in rows], raw) for c, rows, raw in sink]
        order = ["saleHistory", *(f"saleHistory.{f.name}" for f in SALE_FIELDS)]
        found = report(by_id, None, order)
        result.attrs["unparsed"] = Unparsed((*df.attrs.get("unparsed", ()), *found))
    return result


@in_system_pool
def epc_table(df: pd.DataFrame, *, today: date | datetime | str | None = None) -> pd.DataFrame:
    """One row per property: EPC ratings, efficiencies, the gap between them, and validity.

    Parameters
    ----------
    df
        A frame from :func:`frame`.
    today
        The day ``validToday`` is judged on (default: today in UTC).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`EPC_COLUMNS`. ``efficiencyGap`` is potential minus current efficiency;
        ``validToday`` is ``validFrom <= today <= validTo`` with missing dates unknown (so an
        expired certificate is ``False`` even without ``validFrom``). ``attrs`` copied from
        ``df``; the index is ``df``'s.

    Examples
    --------
    >>> import propertykit as pk
    >>> epc = {"currentEnergyEfficiency": 60, "potentialEnergyEfficiency": 80,
    ...        "validFrom": "2020-01-01", "validTo": "2030-01-01"}
    >>> table = pk.frames.epc_table(pk.frame([{"epc": epc}]), today="2025-06-01")
    >>> int(table.loc[0, "efficiencyGap"]), bool(table.loc[0, "validToday"])
    (20, True)
    """
    day = pd.Timestamp.now(tz="UTC").tz_localize(None) if today is None else pd.Timestamp(today)
    if day.tzinfo is not None:
        day = day.tz_convert("UTC").tz_localize(None)
    day = day.normalize()
    table = pd.DataFrame(index=df.index)
    table["propertyId"] = _column(df, "propertyId")
    for name in EPC_COLUMNS[1:5] + EPC_COLUMNS[6:8]:
        table[name] = _column(df, "epc." + name)
    table.insert(
        5, "efficiencyGap", table["potentialEnergyEfficiency"] - table["currentEnergyEfficiency"]
    )
    started = pd.array(table["validFrom"] <= day, dtype="boolean")
    started[table["validFrom"].isna().to_numpy()] = pd.NA
    ongoing = pd.array(table["validTo"] >= day, dtype="boolean")
    ongoing[table["validTo"].isna().to_numpy()] = pd.NA
    table["validToday"] = started & ongoing
    table.attrs = dict(df.attrs)
    return table


_EMPTY = frame([])
