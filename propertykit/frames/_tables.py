"""Property records -> typed pandas DataFrames: the main table, sale histories and EPC data.

The main table (:func:`frame`) has one row per record and always the same columns, in the order of
:data:`COLUMNS`: nested objects flatten to json_normalize-style dotted names (``address.postcode``,
``epc.currentEnergyRating``); ``spatial.boundary`` stays one column holding the raw value as
served; ``saleHistory`` stays a list column (Arrow-backed ``list<struct<date: string, price:
double, propertyType: string, newBuild: bool>>``; each cell a list of dicts) until
:func:`explode_sales`.

Their dtypes, the rules for untidy values, the unit of money and the fields the interface does
not name are described on the docs site's Tables page (``docs/tables.md``, "Columns and types").
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

from propertykit.errors import (
    InvalidInput,
    MinorUnitsWarning,
    outside_stacklevel,
)
from propertykit.frames._bodies import read_bodies
from propertykit.frames._coercion import Sink, Unparsed, report
from propertykit.frames._dtypes import as_arrow, typed_columns
from propertykit.frames._money import PENCE_MEDIAN_THRESHOLD
from propertykit.frames._records import read_histories, read_records
from propertykit.frames._schema import (
    ARROW_ERRORS,
    BODY_TYPES,
    RECORD_FIELDS,
    RECORD_TYPE,
    SALE_FIELDS,
    SALE_TYPE,
)

#: Columns of :func:`frame`, in order.
COLUMNS: tuple[str, ...] = tuple(f.name for f in RECORD_FIELDS)
#: Columns of :func:`explode_sales`, in order.
SALES_COLUMNS: tuple[str, ...] = (
    "propertyId", "date", "price", "propertyType", "newBuild",
    "address.postcode", "address.outcode", "address.town", "councilTax.localAuthority",
    "price_per_sqm",
)  # fmt: skip
#: Columns of :func:`epc_table`, in order.
EPC_COLUMNS: tuple[str, ...] = (
    "propertyId", "currentEnergyRating", "potentialEnergyRating", "currentEnergyEfficiency",
    "potentialEnergyEfficiency", "efficiencyGap", "validFrom", "validTo", "validToday",
)  # fmt: skip


# -- public -----------------------------------------------------------------------------------


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
        Python first, which is several times quicker (``benchmarks/frames.py``). Bodies it
        refuses (untidy values, other shapes) are decoded, by ``msgspec``, and framed as
        records. The frame is the same either way (:mod:`propertykit.frames._bodies`).
    money_unit
        The unit of the service's monetary numbers, which its interface does not state:
        ``"major"`` (pounds), ``"minor"`` (pence), or ``None`` to assume major units and warn
        (:class:`MinorUnitsWarning`) when the median sale price looks like pence. Values are
        never converted; the unit is recorded in ``df.attrs["money_unit"]``.

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes as in ``docs/tables.md``; ``attrs`` holds ``currency``,
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
    >>> df.loc[0, "epc.currentEnergyRating"], df.attrs["extra_columns"], int(df.loc[0, "extra"])
    ('C', ('extra',), 1)
    >>> pk.frame(b'{"result": [{"propertyId": "PK1"}], "hasMore": false}')["propertyId"].tolist()
    ['PK1']
    """
    rows = _rows(records)
    kinds = set(map(type, rows))
    sink: Sink = []
    if rows and all(issubclass(kind, BODY_TYPES) for kind in kinds):
        arrow, boundaries, _ = read_bodies(rows, sink)
    else:
        arrow, boundaries = read_records(rows, sink)
    return frame_from_arrow(arrow, boundaries, sink, money_unit=money_unit)


def frame_from_arrow(
    arrow: pa.StructArray,
    boundaries: np.ndarray,
    sink: Sink,
    *,
    money_unit: Literal["major", "minor"] | None = None,
) -> pd.DataFrame:
    """:func:`frame` of records already read into Arrow (``read_bodies`` / ``read_records``):
    the named fields of :data:`RECORD_TYPE` typed, then every other field as Arrow typed it."""
    children = dict(zip(arrow.type.names, arrow.flatten(), strict=True))
    named: dict[str, pa.Array] = {}
    for name in RECORD_TYPE.names:
        named |= _leaves(name, children.pop(name))
    extras: dict[str, pa.Array] = {}
    for name, child in children.items():
        extras |= _leaves(name, child)
    typed = typed_columns(RECORD_FIELDS, named, sink)
    typed["spatial.boundary"] = boundaries
    columns = {name: typed[name] for name in COLUMNS}  # in order: no reindexing by pandas
    columns |= {name: as_arrow(values) for name, values in extras.items() if name not in COLUMNS}
    df = pd.DataFrame(columns)
    df.attrs["extra_columns"] = tuple(df.columns[len(COLUMNS) :])
    if sink:
        df.attrs["unparsed"] = report(sink, columns["propertyId"], list(df.columns))
    currency = columns["pricing.currency"]  # the categories of the values present
    currencies = currency.categories[np.unique(currency.codes[currency.codes >= 0])]
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
    both = (df["pricing.currentSalePrice"], df["pricing.estimatedSaleValue"])
    prices = np.concatenate([column.to_numpy(dtype=np.float64) for column in both])
    prices = prices[~np.isnan(prices)]
    median = float(np.median(prices)) if len(prices) else math.nan
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
        ``councilTax.localAuthority``, ``price_per_sqm`` (``float64``: the price over the
        property's ``floorAreaSqM``, in the unit of ``price``; missing where the floor area is
        missing or not above 0; the floor area is the one the record holds now, which may
        differ from the one at an old sale). Rows keep the order of properties, then of their
        histories. ``attrs`` are copied from ``df``.

    Examples
    --------
    >>> import propertykit as pk
    >>> sale = {"date": "2020-05-01", "price": 250000}
    >>> df = pk.frame([{"propertyId": "PK1", "saleHistory": [sale], "floorAreaSqM": 80}])
    >>> pk.frames.explode_sales(df)[["propertyId", "price", "price_per_sqm"]].to_dict("records")
    [{'propertyId': 'PK1', 'price': 250000.0, 'price_per_sqm': 3125.0}]
    """
    histories = _column(df, "saleHistory")
    odd: Sink = []  # values a column of raw lists holds that a sale cannot, by df's rows
    lists = _sale_lists(histories)
    if lists is None:  # e.g. a column of raw lists
        lists = read_histories(histories.tolist(), odd)
    owners = pc.list_parent_indices(lists)
    sales = pc.list_flatten(lists)
    if sales.null_count:
        valid = sales.is_valid()
        owners, sales = owners.filter(valid), sales.filter(valid)
    taken = owners.to_numpy(zero_copy_only=False).astype(np.intp)
    sink: Sink = []  # text that is no date, by rows of the sales
    named = {f.name: sales.field(f.name) for f in SALE_FIELDS}
    result = pd.DataFrame(
        typed_columns(SALE_FIELDS, named, sink, "saleHistory."), columns=list(SALES_COLUMNS[1:5])
    )
    for position, name in enumerate(("propertyId", *SALES_COLUMNS[5:-1])):
        carried = _column(df, name).take(taken).reset_index(drop=True)
        result.insert(0 if position == 0 else len(result.columns), name, carried)
    area = _column(df, "floorAreaSqM").take(taken).reset_index(drop=True)
    result["price_per_sqm"] = (result["price"] / area.where(area > 0)).astype("float64")
    extras: dict[str, pa.Array] = {}
    for field in sales.type:
        if field.name not in SALE_TYPE.names:
            extras |= _leaves(field.name, sales.field(field.name))
    for name, values in extras.items():
        if name not in result.columns:
            result[name] = as_arrow(values)
    result.attrs = dict(df.attrs)
    result.attrs["extra_columns"] = tuple(result.columns[len(SALES_COLUMNS) :])
    if sink or odd:  # values frame() kept as served in saleHistory that a sale cannot hold
        ids = _column(df, "propertyId").array
        by_id: Sink = [(c, [ids[r] for r in rows], raw) for c, rows, raw in odd]
        ids = result["propertyId"].array
        by_id += [(c, [ids[r] for r in rows], raw) for c, rows, raw in sink]
        order = ["saleHistory", *(f"saleHistory.{f.name}" for f in SALE_FIELDS)]
        found = report(by_id, None, order)
        result.attrs["unparsed"] = Unparsed((*df.attrs.get("unparsed", ()), *found))
    return result


def _sale_lists(histories: pd.Series) -> pa.ListArray | None:
    """A ``saleHistory`` column as :func:`frame` makes it, as lists of sales with the named
    fields of their type (a sale's own fields after them); ``None`` for a column of another kind."""
    if not isinstance(histories.dtype, pd.ArrowDtype):
        return None
    with contextlib.suppress(*ARROW_ERRORS, pa.ArrowNotImplementedError):
        lists = pa.array(histories.array)
        if isinstance(lists, pa.ChunkedArray):
            lists = lists.combine_chunks()
        sale = lists.type.value_type
        own = [f for f in sale if f.name not in SALE_TYPE.names]
        result: pa.ListArray = lists.cast(pa.list_(pa.struct([*SALE_TYPE, *own])))
        return result
    return None


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
    day = judged_day(today)
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
    table.attrs["extra_columns"] = ()
    return table


def judged_day(today: date | datetime | str | None) -> pd.Timestamp:
    """The day certificates are judged on: ``today`` (default: today in UTC), as a naive UTC
    midnight."""
    day = pd.Timestamp.now(tz="UTC").tz_localize(None) if today is None else pd.Timestamp(today)
    if day.tzinfo is not None:
        day = day.tz_convert("UTC").tz_localize(None)
    return day.normalize()


def _leaves(name: str, array: pa.Array) -> dict[str, pa.Array]:
    """``array`` by dotted name: objects flattened (a parent's nulls carried down), lists and
    objects without fields kept whole."""
    if not isinstance(array.type, pa.StructType) or array.type.num_fields == 0:
        return {name: array}
    found: dict[str, pa.Array] = {}
    for field, child in zip(array.type, array.flatten(), strict=True):
        found |= _leaves(f"{name}.{field.name}", child)
    return found


_EMPTY = frame([])
