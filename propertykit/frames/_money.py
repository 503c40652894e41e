"""Prices in pounds on request: a rescaled copy, never a silent change of stored values.

A frame records the unit its prices were served in (``df.attrs["money_unit"]``: ``"major"``,
pounds, or ``"minor"``, pence, as Vepler serves them). :func:`in_major_units`
(``df.pk.in_pounds()``) returns a copy with the prices in pounds: the ``pricing`` sale and rent
prices and estimates, every ``saleHistory`` price, the ``price`` and ``price_per_sqm`` columns of
a sales table and the money columns of a gross-yield table.
``pricing.pricePerSqFt`` is left as served (Vepler serves it in pounds, its prices in pence).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

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


def is_minor(df: pd.DataFrame) -> bool:
    """Whether the frame says its prices are in minor units (pence)."""
    return bool(df.attrs.get("money_unit") == "minor")


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
    for column in MINOR_UNIT_COLUMNS:
        if column in result.columns:
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
