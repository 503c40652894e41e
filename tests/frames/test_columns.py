"""The main table always has the same columns, in the same order, with the same dtypes."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from propertykit.frames import (
    COLUMNS,
    EPC_COLUMNS,
    SALES_COLUMNS,
    epc_table,
    explode_sales,
    frame,
)

# Untidy values here are the point: UnparsedValuesWarning is tested in test_lossless.py.
pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")

STR, CAT = "str", "category"
EXPECTED = [
    ("propertyId", STR), ("locationId", STR),
    ("address.displayAddress", STR), ("address.postcode", STR), ("address.streetName", STR),
    ("address.streetNumber", STR), ("address.locality", STR), ("address.town", STR),
    ("address.county", STR), ("address.postcodeNoSpace", STR), ("address.outcode", STR),
    ("address.incode", STR), ("address.country", STR),
    ("spatial.lat", "float64"), ("spatial.lng", "float64"), ("spatial.boundary", "object"),
    ("classificationCode", STR), ("propertyType", CAT), ("propertySubType", CAT),
    ("roomDetails.beds", "Int64"), ("roomDetails.baths", "Int64"),
    ("roomDetails.receptions", "Int64"),
    ("pricing.currentSalePrice", "float64"), ("pricing.currentRentPrice", "float64"),
    ("pricing.estimatedSaleValue", "float64"), ("pricing.estimatedRentValue", "float64"),
    ("pricing.pricePerSqFt", "float64"), ("pricing.currency", CAT),
    ("marketStatus.forSale", CAT), ("marketStatus.forRent", CAT),
    ("marketStatus.listingDate", "datetime64[us, UTC]"),
    ("marketStatus.soldDate", "datetime64[us, UTC]"),
    ("marketStatus.daysOnMarket", "Int64"),
    ("epc.currentEnergyRating", CAT), ("epc.potentialEnergyRating", CAT),
    ("epc.currentEnergyEfficiency", "Int64"), ("epc.potentialEnergyEfficiency", "Int64"),
    ("epc.validFrom", "datetime64[us]"), ("epc.validTo", "datetime64[us]"),
    ("saleHistory", "list<item: struct<date: string, price: double, propertyType: string, "
                    "newBuild: bool>>[pyarrow]"),
    ("tenure.type", CAT), ("tenure.leaseYearsRemaining", "Int64"), ("tenure.groundRent", "float64"),
    ("tenure.serviceCharge", "float64"),
    ("councilTax.taxBand", CAT), ("councilTax.annualCharge", "float64"),
    ("councilTax.localAuthority", STR),
    ("tags.newBuild", "boolean"), ("tags.chainFree", "boolean"), ("tags.auction", "boolean"),
    ("tags.sharedOwnership", "boolean"), ("tags.retirement", "boolean"),
    ("tags.cashBuyersOnly", "boolean"),
    ("tags.investment", "boolean"),
    ("floorAreaSqM", "float64"), ("plotSizeSqM", "float64"), ("yearBuilt", "Int64"),
    ("lastUpdated", "datetime64[us, UTC]"),
]  # fmt: skip
EXPECTED_SALES = [
    ("propertyId", STR), ("date", "datetime64[us]"), ("price", "float64"), ("propertyType", CAT),
    ("newBuild", "boolean"), ("address.postcode", STR), ("address.outcode", STR),
    ("address.town", STR), ("councilTax.localAuthority", STR), ("price_per_sqm", "float64"),
]  # fmt: skip
EXPECTED_EPC = [
    ("propertyId", STR), ("currentEnergyRating", CAT), ("potentialEnergyRating", CAT),
    ("currentEnergyEfficiency", "Int64"), ("potentialEnergyEfficiency", "Int64"),
    ("efficiencyGap", "Int64"), ("validFrom", "datetime64[us]"), ("validTo", "datetime64[us]"),
    ("validToday", "boolean"),
]  # fmt: skip


def dtypes(table: pd.DataFrame) -> list[tuple[str, str]]:
    return [(str(name), str(dtype)) for name, dtype in table.dtypes.items()]


@pytest.mark.parametrize(
    "records",
    [
        pytest.param([], id="empty"),
        pytest.param([{}], id="one-empty-object"),
        pytest.param([None, "text", 7, ["list"]], id="not-objects"),
        pytest.param(
            [{"address": "1 High St", "epc": [], "tags": None, "unknown": {"x": 1}}], id="untidy"
        ),
    ],
)
def test_columns_and_dtypes_never_change(records: list[Any]) -> None:
    table = frame(records)
    extra = [("unknown.x", "int64[pyarrow]")] if "unknown" in str(records) else []
    assert dtypes(table) == EXPECTED + extra  # a field the interface does not name: kept, after
    assert len(table) == len(records)
    assert dtypes(explode_sales(table)) == EXPECTED_SALES
    assert dtypes(epc_table(table, today="2025-06-01")) == EXPECTED_EPC


def test_realistic_records_give_the_pinned_columns(df: pd.DataFrame) -> None:
    assert dtypes(df) == EXPECTED
    assert dtypes(df.pk.sales()) == EXPECTED_SALES
    assert dtypes(df.pk.epc(today="2025-06-01")) == EXPECTED_EPC


def test_public_column_constants_match_the_tables() -> None:
    assert list(COLUMNS) == [name for name, _ in EXPECTED]
    assert list(SALES_COLUMNS) == [name for name, _ in EXPECTED_SALES]
    assert list(EPC_COLUMNS) == [name for name, _ in EXPECTED_EPC]


def test_epc_ratings_are_ordered_a_to_g_with_a_the_minimum(df: pd.DataFrame) -> None:
    rating = df["epc.currentEnergyRating"]
    assert list(rating.cat.categories) == list("ABCDEFG")
    assert rating.cat.ordered
    assert rating.min() == "A" or (rating.dropna() > "A").all()
    best = frame([{"epc": {"currentEnergyRating": r}} for r in "GCA"])["epc.currentEnergyRating"]
    assert best.min() == "A" and best.max() == "G"
    assert list(best <= "C") == [False, True, True]


def test_council_tax_bands_are_ordered_a_to_i() -> None:
    band = frame([{"councilTax": {"taxBand": b}} for b in ["I", "a", "Z"]])["councilTax.taxBand"]
    assert list(band.cat.categories) == list("ABCDEFGHI") and band.cat.ordered
    assert band.tolist()[:2] == ["I", "A"] and pd.isna(band.iloc[2])


def test_unordered_categories_are_the_values_seen_sorted(df: pd.DataFrame) -> None:
    kinds = df["propertyType"].cat
    assert not kinds.ordered
    assert list(kinds.categories) == sorted(df["propertyType"].dropna().unique())


def test_boundary_stays_one_column_holding_the_raw_value(
    records: list[dict[str, Any]], df: pd.DataFrame
) -> None:
    assert not [c for c in df.columns if c.startswith("spatial.boundary.")]
    served = [r.get("spatial", {}).get("boundary") for r in records]
    assert df["spatial.boundary"].tolist() == served
    assert any(isinstance(b, dict) and b["type"] == "Polygon" for b in served)
    odd = frame(
        [
            {"spatial": {"boundary": "POLYGON ((0 0, 1 0, 1 1, 0 0))"}},
            {"spatial": {"boundary": [[0, 0]]}},
        ]
    )
    assert odd["spatial.boundary"].tolist() == ["POLYGON ((0 0, 1 0, 1 1, 0 0))", [[0, 0]]]
