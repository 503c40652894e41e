"""Money as data: every table says its unit, and prices are in pounds on request (a rescaled
copy, never a silent change of stored values).

A frame records the unit its prices were served in (``df.attrs["money_unit"]``: ``"major"``,
pounds, or ``"minor"``, pence, as Vepler serves them), and every table made from it carries the
same keys (:func:`money_attrs`): the sales, EPC and gross-yield tables, and a valuation's values,
schedule and reconciliation, which also list their money columns (``attrs["money_columns"]``).
:func:`in_major_units` (``df.pk.in_pounds()``) returns a copy with the prices in pounds: the
``pricing`` sale and rent prices and estimates, every ``saleHistory`` price, the ``price`` and
``price_per_sqm`` columns of a sales table, the money columns of a gross-yield table and the
columns a table lists. ``pricing.pricePerSqFt`` is left as served (Vepler serves it in pounds,
its prices in pence).

The unit travels in ``attrs``, which pandas carries through copies, slices, ``groupby``
reductions and Parquet, and through ``pd.concat`` and ``merge`` only when every input's
``attrs`` are equal: a concat of a frame in pence with one in pounds has no unit at all, never a
wrong one. Writers therefore read the unit of each table they are given (:func:`in_pounds_for`),
never assume it: known units are converted to pounds and said; a table without one is written as
given and said (:class:`~propertykit.errors.MoneyUnitWarning`); a table without a unit beside
one with a unit is refused before anything is written.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from propertykit.errors import (
    InvalidInput,
    MinorUnitsWarning,
    MoneyUnitWarning,
    outside_stacklevel,
)
from propertykit.text import visible

MoneyUnit = Literal["major", "minor"]

#: Pence in a pound.
MINOR_PER_MAJOR = 100
#: The frame columns holding prices in the served unit (``pricePerSqFt`` is not one of them).
MINOR_UNIT_COLUMNS = (
    "pricing.currentSalePrice",
    "pricing.currentRentPrice",
    "pricing.estimatedSaleValue",
    "pricing.estimatedRentValue",
    "price",  # a sales table (df.pk.sales())
    "price_per_sqm",  # a sales table: the price over the floor area, in the unit of the price
    "estimatedSaleValue",  # a gross-yield table (df.pk.gross_yield())
    "estimatedRentValue",
    "rent_per_year",
)
#: The money columns of a valuation's values, schedule and reconciliation (``money_columns``).
VALUATION_MONEY = ("estimate", "lower", "upper", "price_per_sqm")
SCHEDULE_MONEY = (
    "price", "adjusted_price", "price_per_sqm", "adjusted_price_per_sqm", "used_price_per_sqm",
)  # fmt: skip
RECONCILIATION_MONEY = ("value", "lower", "upper", "price")
#: The ``attrs`` that say what a table's money is, carried to every table made from a frame.
MONEY_ATTRS = ("currency", "money_unit", "money_unit_assumed")
#: Each unit in words.
UNIT_WORDS: dict[str, str] = {"major": "pounds", "minor": "pence"}
#: A median above this (5 million in pounds) is taken as a sign of pence.
PENCE_MEDIAN_THRESHOLD = 5_000_000


def is_minor(df: pd.DataFrame) -> bool:
    """Whether the frame says its prices are in minor units (pence)."""
    return bool(df.attrs.get("money_unit") == "minor")


def money_unit_of(table: pd.DataFrame) -> MoneyUnit | None:
    """The unit a table says its money is in: ``"major"`` (pounds), ``"minor"`` (pence), or
    ``None`` when it does not say (its ``attrs`` lost, or a table of the user's own).

    Examples
    --------
    >>> import pandas as pd, propertykit as pk
    >>> money_unit_of(pk.frame([], money_unit="minor")), money_unit_of(pd.DataFrame())
    ('minor', None)
    """
    unit = table.attrs.get("money_unit")
    return unit if unit in ("major", "minor") else None


def money_attrs(df: pd.DataFrame, columns: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``attrs`` a table made from ``df`` carries to say what its money is (those of
    :data:`MONEY_ATTRS` that ``df`` has), with ``money_columns`` when the table names its own.

    Examples
    --------
    >>> import propertykit as pk
    >>> money_attrs(pk.frame([], money_unit="minor"), ("estimate",))
    {'currency': None, 'money_unit': 'minor', 'money_unit_assumed': False, \
'money_columns': ('estimate',)}
    """
    carried = {key: df.attrs[key] for key in MONEY_ATTRS if key in df.attrs}
    return carried | ({"money_columns": columns} if columns else {})


def money_columns_of(table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that hold money in its unit: the frame's and sales table's
    (:data:`MINOR_UNIT_COLUMNS`) and those its ``attrs["money_columns"]`` list."""
    listed = (*MINOR_UNIT_COLUMNS, *table.attrs.get("money_columns", ()))
    return [column for column in dict.fromkeys(listed) if column in table.columns]


def in_major_units(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with its prices in major units (pounds); ``df`` is left as it is.

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"pricing": {"currentSalePrice": 50000000, "pricePerSqFt": 850}}],
    ...               money_unit="minor")
    >>> pounds = df.pk.in_pounds()
    >>> row = pounds.iloc[0]
    >>> float(row["pricing.currentSalePrice"]), float(row["pricing.pricePerSqFt"])
    (500000.0, 850.0)
    >>> pounds.attrs["money_unit"], float(df.loc[0, "pricing.currentSalePrice"])
    ('major', 50000000.0)
    """
    result = df.copy()
    result.attrs = dict(df.attrs)
    if not is_minor(df):
        return result
    for column in money_columns_of(df):
        result[column] = pd.to_numeric(result[column], errors="coerce") / MINOR_PER_MAJOR
    if "saleHistory" in result.columns:
        result["saleHistory"] = _histories_in_major_units(result["saleHistory"])
    result.attrs["money_unit"] = "major"
    result.attrs["money_unit_assumed"] = False
    return result


def _histories_in_major_units(histories: pd.Series) -> pd.Series:
    array = histories.array
    if isinstance(histories.dtype, pd.ArrowDtype) and hasattr(array, "__arrow_array__"):
        chunked: pa.ChunkedArray = array.__arrow_array__()
        item = chunked.type.value_type if pa.types.is_list(chunked.type) else None
        if item is not None and pa.types.is_struct(item) and item.get_field_index("price") >= 0:
            chunks = [_chunk_in_major_units(chunk) for chunk in chunked.chunks]
            scaled = pa.chunked_array(chunks, type=chunked.type)
            return pd.Series(pd.arrays.ArrowExtensionArray(scaled), index=histories.index)
    return histories.map(_history_in_major_units)


def _chunk_in_major_units(chunk: pa.ListArray) -> pa.ListArray:
    if chunk.offset:  # a slice (rows taken, frames concatenated): its own buffers, from 0
        chunk = pa.concat_arrays([chunk])
    values: pa.StructArray = chunk.values
    fields = [values.field(i) for i in range(values.type.num_fields)]
    position = values.type.get_field_index("price")
    price = fields[position]
    fields[position] = pc.divide(price.cast(pa.float64()), MINOR_PER_MAJOR).cast(price.type)
    struct = pa.StructArray.from_arrays(
        fields, fields=list(values.type), mask=values.is_null() if values.null_count else None
    )
    offsets = chunk.offsets
    return pa.ListArray.from_arrays(
        offsets, struct, type=chunk.type, mask=chunk.is_null() if chunk.null_count else None
    )


def _history_in_major_units(history: Any) -> Any:
    if not isinstance(history, list):
        return history
    return [
        {**sale, "price": sale["price"] / MINOR_PER_MAJOR}
        if isinstance(sale, dict) and isinstance(sale.get("price"), int | float)
        else sale
        for sale in history
    ]


@dataclass(frozen=True)
class InPounds:
    """Tables to be written side by side, each in pounds by its own unit (:func:`in_pounds_for`).

    ``tables`` by the name the output gives them (as given where no unit is stated);
    ``stated``: whether every table said its unit; ``note``: one sentence on the money for the
    output's notes."""

    tables: dict[str, pd.DataFrame]
    stated: bool
    note: str


def in_pounds_for(
    tables: Mapping[str, pd.DataFrame | None],
    *,
    output: str,
    money: Mapping[str, tuple[str, ...]] | None = None,
) -> InPounds:
    """Tables a writer shows side by side, each converted to pounds by the unit it says, or
    refused when they cannot be reconciled, before anything is written.

    Parameters
    ----------
    tables
        The tables by the name the output shows them under (``None`` values are left out).
    output
        What is being written, for the messages (``"the workbook"``).
    money
        Money columns by table name beyond those a table lists (``attrs["money_columns"]``):
        what the output shows as money (a valuation of one's own lists none).

    Raises
    ------
    InvalidInput
        A table says no unit while another says one: which unit its figures are in cannot be
        known, so nothing is written (one line naming both, and how to say the unit).

    Warns
    -----
    MoneyUnitWarning
        No table says its unit: the figures are written as given (the note says so);
        :class:`~propertykit.errors.MinorUnitsWarning` where they look like pence.

    Examples
    --------
    >>> import propertykit as pk
    >>> pence = pk.frame([{"pricing": {"currentSalePrice": 50000000}}], money_unit="minor")
    >>> pounds = in_pounds_for({"Properties": pence}, output="the workbook")
    >>> float(pounds.tables["Properties"].loc[0, "pricing.currentSalePrice"]), pounds.note
    (500000.0, 'Prices are shown in pounds: Properties served in pence, divided by 100.')
    """
    given = {name: table for name, table in tables.items() if table is not None}
    units = {name: money_unit_of(table) for name, table in given.items()}
    unstated = [name for name, unit in units.items() if unit is None]
    if unstated and len(unstated) < len(units):
        stated = next(name for name, unit in units.items() if unit is not None)
        unit = UNIT_WORDS[str(units[stated])]
        raise InvalidInput(
            f"Not writing {output}: {_names(unstated)} {_says(unstated)} no money unit while "
            f"{stated} is in {unit}, so its figures could be 100 times off; say its unit "
            "(table.attrs['money_unit'] = 'minor' for pence, 'major' for pounds) or make it "
            "from the same frame"
        )
    if unstated:
        if any(_holds_money(given[name]) for name in unstated):  # no figure, nothing mislabelled
            _warn_unstated(given, output)
        note = (
            f"Prices: {_names(unstated)} {_says(unstated)} no unit (pounds or pence), so its "
            "figures are as given, not converted, and no currency sign is shown."
        )
        return InPounds(tables=dict(given), stated=False, note=note)
    converted = {
        name: in_major_units(_listing(table, (money or {}).get(name, ())))
        for name, table in given.items()
    }
    served = [name for name, unit in units.items() if unit == "minor"]
    kept = [name for name, unit in units.items() if unit == "major"]
    parts = [f"{_names(served)} served in pence, divided by 100"] if served else []
    parts += [f"{_names(kept)} in pounds as given"] if kept and served else []
    note = "Prices are shown in pounds" + (f": {'; '.join(parts)}." if parts else ", as given.")
    return InPounds(tables=converted, stated=True, note=note)


def _listing(table: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``table`` listing ``columns`` among its money columns too (a shallow copy)."""
    if not columns:
        return table
    listed = table.copy(deep=False)
    listed.attrs = {
        **table.attrs,
        "money_columns": (*table.attrs.get("money_columns", ()), *columns),
    }
    return listed


def _names(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def _says(names: list[str]) -> str:
    return "say" if len(names) > 1 else "says"


def _warn_unstated(tables: Mapping[str, pd.DataFrame], output: str) -> None:
    """One warning for tables that say no unit: pence-like figures named as such."""
    quartiles = [_upper_quartile_price(table) for table in tables.values()]
    highest = max((q for q in quartiles if not np.isnan(q)), default=np.nan)
    names, says = _names(list(tables)), _says(list(tables))
    why = (
        "pandas drops attrs when pd.concat or merge joins frames whose attrs differ, e.g. one "
        "in pence and one in pounds"
    )
    if highest > PENCE_MEDIAN_THRESHOLD:  # a quarter of the prices or more look like pence
        warnings.warn(
            f"{visible(names)} in {output} {says} no money unit ({why}), and prices of "
            f"{highest:,.0f} and more look like pence: written as given; convert each frame with "
            "df.pk.in_pounds() before combining them, or set attrs['money_unit']",
            MinorUnitsWarning,
            stacklevel=outside_stacklevel(),
        )
        return
    warnings.warn(
        f"{visible(names)} in {output} {says} no money unit ({why}): written as given, without "
        "a currency sign; set attrs['money_unit'] ('major' for pounds, 'minor' for pence)",
        MoneyUnitWarning,
        stacklevel=outside_stacklevel(),
    )


def _holds_money(table: pd.DataFrame) -> bool:
    """Whether a table holds any money figure (a money column with a value)."""
    return any(table[column].notna().any() for column in money_columns_of(table))


def _upper_quartile_price(table: pd.DataFrame) -> float:
    """The upper quartile of the prices a table holds (its money columns but rents), NaN when
    none: above the pence threshold when a quarter of them look like pence, as a concat of a
    frame in pence with one in pounds does."""
    columns = [
        c for c in money_columns_of(table)
        if "rent" not in c.lower() and pd.api.types.is_numeric_dtype(table[c])
    ]  # fmt: skip
    if not columns:
        return float("nan")
    values = np.concatenate([table[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in columns])
    values = values[~np.isnan(values)]
    return float(np.quantile(values, 0.75)) if len(values) else float("nan")
