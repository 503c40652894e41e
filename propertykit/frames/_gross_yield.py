"""Gross rental yield per property: a year's estimated rent over the estimated sale value.

The service interface does not say whether ``pricing.estimatedRentValue`` is a rent per week,
per month or per year, so :func:`gross_yield` never assumes one: the caller names it
(``rent_per="week" | "month" | "year"``), and a missing or unknown period raises
:class:`~propertykit.errors.InvalidInput` before anything is computed. Rent and value are in
the same (served) unit, so the yield itself does not depend on it.
"""

from __future__ import annotations

import pandas as pd

from propertykit.errors import InvalidInput

#: Rent periods a year holds, by the name ``rent_per`` takes.
RENT_PERIODS: dict[str, int] = {"week": 52, "month": 12, "year": 1}
#: Columns of :func:`gross_yield`, in order.
GROSS_YIELD_COLUMNS = (
    "propertyId", "estimatedSaleValue", "estimatedRentValue", "rent_per_year", "gross_yield",
)  # fmt: skip


def gross_yield(df: pd.DataFrame, *, rent_per: str | None = None) -> pd.DataFrame:
    """Gross yield of each property: ``estimatedRentValue`` for a year over ``estimatedSaleValue``.

    Parameters
    ----------
    df
        A frame from :func:`propertykit.frame`.
    rent_per
        The period ``pricing.estimatedRentValue`` is for: ``"week"`` (52 a year),
        ``"month"`` (12) or ``"year"``. Required: the service does not say, and a wrong period
        makes every yield wrong by a factor of 4 to 52.

    Returns
    -------
    pandas.DataFrame
        One row per property of ``df`` (same index): ``propertyId``, ``estimatedSaleValue``
        and ``estimatedRentValue`` as served, ``rent_per_year``, and ``gross_yield`` in per cent
        (missing where the rent or a value above 0 is missing). ``attrs`` are ``df``'s, plus
        ``rent_per`` and ``yield_missing`` (how many properties have no yield).

    Raises
    ------
    InvalidInput
        ``rent_per`` is missing or not one of ``"week"``, ``"month"``, ``"year"``.

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"propertyId": "PK1",
    ...                 "pricing": {"estimatedSaleValue": 300000, "estimatedRentValue": 1250}}])
    >>> table = df.pk.gross_yield(rent_per="month")
    >>> float(table.loc[0, "rent_per_year"]), float(table.loc[0, "gross_yield"])
    (15000.0, 5.0)
    >>> df.pk.gross_yield()
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: Say what period the estimated rent is for: \
rent_per="week", "month" or "year" (the service does not state it)
    """
    if rent_per is None:
        raise InvalidInput(
            'Say what period the estimated rent is for: rent_per="week", "month" or "year" '
            "(the service does not state it)"
        )
    if not isinstance(rent_per, str) or rent_per not in RENT_PERIODS:
        raise InvalidInput(f'rent_per must be "week", "month" or "year", got {rent_per!r}')
    table = pd.DataFrame(index=df.index)
    table["propertyId"] = _column(df, "propertyId", "string")
    table["estimatedSaleValue"] = _column(df, "pricing.estimatedSaleValue", "float64")
    table["estimatedRentValue"] = _column(df, "pricing.estimatedRentValue", "float64")
    table["rent_per_year"] = table["estimatedRentValue"] * RENT_PERIODS[rent_per]
    value = table["estimatedSaleValue"].where(table["estimatedSaleValue"] > 0)
    table["gross_yield"] = table["rent_per_year"] / value * 100
    table.attrs = dict(df.attrs)
    table.attrs["extra_columns"] = ()
    table.attrs["rent_per"] = rent_per
    table.attrs["yield_missing"] = int(table["gross_yield"].isna().sum())
    return table


def _column(df: pd.DataFrame, name: str, dtype: str) -> pd.Series:
    if name in df.columns:
        values = df[name]
        if dtype == "float64":
            return pd.to_numeric(values, errors="coerce").astype("float64")
        return values
    return pd.Series(pd.NA if dtype != "float64" else float("nan"), index=df.index, dtype=dtype)
