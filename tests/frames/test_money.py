"""Money keeps the service's numbers; the unit and currency travel in df.attrs."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pandas as pd
import pytest

from propertykit.frames import MinorUnitsWarning, frame


def in_pence(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pence = copy.deepcopy(records)
    for record in pence:
        for key, value in (record.get("pricing") or {}).items():
            if isinstance(value, int | float):
                record["pricing"][key] = value * 100
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
    return pence


def test_attrs_record_currency_and_assumed_major_units(df: pd.DataFrame) -> None:
    assert df.attrs == {
        "extra_columns": (),  # no field the interface does not name
        "currency": "GBP",
        "money_unit": "major",
        "money_unit_assumed": True,
    }


def test_generator_prices_do_not_warn(records: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame(records)


def test_pence_like_prices_warn_and_are_kept_as_served(records: list[dict[str, Any]]) -> None:
    pence = in_pence(records)
    with pytest.warns(MinorUnitsWarning, match="minor units"):
        table = frame(pence)
    assert table.attrs["money_unit"] == "major" and table.attrs["money_unit_assumed"]
    assert table["pricing.estimatedSaleValue"].iloc[0] == pence[0]["pricing"]["estimatedSaleValue"]


def test_a_given_unit_is_recorded_and_silences_the_warning(records: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = frame(in_pence(records), money_unit="minor")
    assert table.attrs == {
        "extra_columns": (),
        "currency": "GBP",
        "money_unit": "minor",
        "money_unit_assumed": False,
    }


def test_currency_is_none_when_absent_or_mixed() -> None:
    assert frame([{"pricing": {"currentSalePrice": 1}}]).attrs["currency"] is None
    mixed = [{"pricing": {"currency": "GBP"}}, {"pricing": {"currency": "EUR"}}]
    assert frame(mixed).attrs["currency"] is None


def test_attrs_survive_the_sales_and_epc_tables(df: pd.DataFrame) -> None:
    assert df.pk.sales().attrs == df.attrs
    assert df.pk.epc().attrs == df.attrs
