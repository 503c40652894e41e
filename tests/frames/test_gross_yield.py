"""Gross yield: the rent's period is always named by the caller; price per m² on every sale."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from propertykit.errors import InvalidInput
from propertykit.frames import explode_sales, frame, gross_yield, in_major_units


@pytest.mark.parametrize("rent_per", [None, "", "monthly", "pcm", 12, "Month"])
def test_a_missing_or_unknown_rent_period_is_refused_in_words(
    df: pd.DataFrame, rent_per: Any
) -> None:
    with pytest.raises(InvalidInput, match=r"week.*month.*year"):
        df.pk.gross_yield(rent_per=rent_per)


@pytest.mark.parametrize(("rent_per", "per_year"), [("week", 52), ("month", 12), ("year", 1)])
def test_the_named_period_sets_the_rent_for_a_year(rent_per: str, per_year: int) -> None:
    pricing = {"estimatedSaleValue": 312_000, "estimatedRentValue": 1_300}
    table = gross_yield(frame([{"propertyId": "P1", "pricing": pricing}]), rent_per=rent_per)
    assert table.loc[0, "rent_per_year"] == 1_300 * per_year
    assert table.loc[0, "gross_yield"] == pytest.approx(1_300 * per_year / 312_000 * 100)
    assert table.attrs["rent_per"] == rent_per


def test_sandbox_rents_per_month_give_yields_an_analyst_expects(df: pd.DataFrame) -> None:
    # The sandbox's estimated rents are monthly, 3.8 % to 5.8 % of the value a year.
    table = df.pk.gross_yield(rent_per="month")
    known = table["gross_yield"].dropna()
    assert len(known) == len(df) - table.attrs["yield_missing"]
    assert known.between(3.5, 6.2).all()
    assert list(table.index) == list(df.index)


def test_missing_or_zero_values_give_no_yield_and_are_counted() -> None:
    records = [
        {"propertyId": "A", "pricing": {"estimatedSaleValue": 0, "estimatedRentValue": 900}},
        {"propertyId": "B", "pricing": {"estimatedRentValue": 900}},
        {"propertyId": "C", "pricing": {"estimatedSaleValue": 200_000}},
        {"propertyId": "D", "pricing": {"estimatedSaleValue": 216_000, "estimatedRentValue": 900}},
    ]
    table = gross_yield(frame(records), rent_per="month")
    assert table["gross_yield"].isna().tolist() == [True, True, True, False]
    assert table.attrs["yield_missing"] == 3


def test_the_yield_is_the_same_in_pence_and_the_money_columns_rescale() -> None:
    pricing = {"estimatedSaleValue": 30_000_000, "estimatedRentValue": 125_000}
    pence = frame([{"propertyId": "P1", "pricing": pricing}], money_unit="minor")
    table = pence.pk.gross_yield(rent_per="month")
    assert table.loc[0, "gross_yield"] == pytest.approx(5.0)
    pounds = in_major_units(table)
    assert pounds.loc[0, "rent_per_year"] == 15_000 and pounds.loc[0, "gross_yield"] == 5.0


def test_price_per_sqm_is_the_price_over_the_floor_area_where_known() -> None:
    sales = [{"date": "2020-01-01", "price": 240_000}, {"date": "2023-01-01", "price": 300_000}]
    records = [
        {"propertyId": "A", "floorAreaSqM": 80, "saleHistory": sales},
        {"propertyId": "B", "saleHistory": sales[:1]},
        {"propertyId": "C", "floorAreaSqM": 0, "saleHistory": sales[:1]},
    ]
    table = explode_sales(frame(records))
    per_sqm = table["price_per_sqm"].tolist()
    assert per_sqm[:2] == [3_000.0, 3_750.0]
    assert all(math.isnan(value) for value in per_sqm[2:])


def test_price_per_sqm_follows_the_price_into_pounds(records: list[dict[str, Any]]) -> None:
    def in_pence(record: dict[str, Any]) -> dict[str, Any]:
        history = [{**s, "price": s["price"] * 100} for s in record.get("saleHistory") or []]
        return {**record, "saleHistory": history}

    pence = frame([in_pence(r) for r in records[:50]], money_unit="minor")
    in_pence = pence.pk.sales()
    pounds = in_major_units(in_pence)
    served = frame(records[:50]).pk.sales()
    pd.testing.assert_series_equal(pounds["price_per_sqm"], served["price_per_sqm"])
    assert in_pence["price_per_sqm"].dropna().gt(served["price_per_sqm"].dropna() * 99).all()
