"""Values equal json_normalize's on realistic records; the sales and EPC tables say the same."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from propertykit.frames import COLUMNS, epc_table, explode_sales, frame

# Untidy values here are the point: UnparsedValuesWarning is tested in test_lossless.py.
pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")


def plain(series: pd.Series) -> list[Any]:
    """Python values with every kind of missing as None, for comparing across dtypes."""
    if isinstance(series.dtype, pd.DatetimeTZDtype) or str(series.dtype).startswith("datetime64"):
        return [None if pd.isna(v) else pd.Timestamp(v) for v in series]
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return [None if pd.isna(v) else float(v) for v in series]
    return [
        None if not isinstance(v, list | dict) and pd.isna(v) else v for v in series.astype(object)
    ]


SCALAR_COLUMNS = [c for c in COLUMNS if c not in ("spatial.boundary", "saleHistory")]


@pytest.fixture(scope="module")
def normalized(records: list[dict[str, Any]]) -> pd.DataFrame:
    """json_normalize's frame of the records: the oracle of every column, made once."""
    return pd.json_normalize(records)


@pytest.mark.parametrize("column", SCALAR_COLUMNS)
def test_each_column_equals_json_normalize(
    records: list[dict[str, Any]], normalized: pd.DataFrame, df: pd.DataFrame, column: str
) -> None:
    naive = normalized
    theirs = naive[column] if column in naive else pd.Series([None] * len(records), dtype=object)
    ours = df[column]
    if str(ours.dtype).startswith("datetime64"):
        utc = isinstance(ours.dtype, pd.DatetimeTZDtype)
        theirs = pd.to_datetime(theirs, utc=utc, format="ISO8601")
    elif pd.api.types.is_numeric_dtype(ours.dtype) and not pd.api.types.is_bool_dtype(ours.dtype):
        theirs = pd.to_numeric(theirs)
    assert plain(ours) == plain(theirs)


def test_sale_history_cells_equal_the_served_lists(
    records: list[dict[str, Any]], df: pd.DataFrame
) -> None:
    served = [r.get("saleHistory") for r in records]
    assert any(h is None for h in served) and any(h for h in served)
    assert [None if h is pd.NA else h for h in df["saleHistory"].tolist()] == served


def test_sales_equal_json_normalize_record_path(
    records: list[dict[str, Any]], df: pd.DataFrame
) -> None:
    with_history = [r for r in records if r.get("saleHistory") is not None]
    naive = pd.json_normalize(with_history, record_path="saleHistory", meta=["propertyId"])
    sales = df.pk.sales()
    assert len(sales) == len(naive) > len(records)
    assert plain(sales["propertyId"]) == plain(naive["propertyId"])
    assert plain(sales["date"]) == plain(pd.to_datetime(naive["date"], format="%Y-%m-%d"))
    assert plain(sales["price"]) == plain(naive["price"].astype(float))
    assert plain(sales["propertyType"]) == plain(naive["propertyType"])
    assert plain(sales["newBuild"]) == plain(naive["newBuild"])
    by_id = df.set_index("propertyId")
    for column in (
        "address.postcode",
        "address.outcode",
        "address.town",
        "councilTax.localAuthority",
    ):
        assert sales[column].tolist() == by_id.loc[sales["propertyId"], column].tolist()


def test_sales_keep_the_order_of_properties_then_histories() -> None:
    records = [
        {
            "propertyId": "B",
            "saleHistory": [{"date": "2001-01-01", "price": 1}, {"date": "1999-01-01", "price": 2}],
        },
        {"propertyId": "A", "saleHistory": [{"date": "2010-01-01", "price": 3}]},
    ]
    sales = explode_sales(frame(records))
    assert sales["propertyId"].tolist() == ["B", "B", "A"]
    assert sales["price"].tolist() == [1.0, 2.0, 3.0]
    assert list(sales.index) == [0, 1, 2]


def test_sales_skip_missing_null_and_garbage_histories() -> None:
    records: list[Any] = [
        {"propertyId": "none"},
        {"propertyId": "null", "saleHistory": None},
        {"propertyId": "text", "saleHistory": "sold in 2001"},
        {"propertyId": "object", "saleHistory": {"date": "2001-01-01"}},
        {
            "propertyId": "mixed",
            "saleHistory": [None, 5, "x", [1], {"date": "2001-02-03", "price": "100"}],
        },
        {
            "propertyId": "typo",
            "saleHistory": [{"date": "03/02/2001", "price": "n/a", "newBuild": "yes"}],
        },
    ]
    sales = explode_sales(frame(records))
    assert sales["propertyId"].tolist() == ["mixed", "typo"]
    assert sales["date"].tolist()[0] == pd.Timestamp("2001-02-03") and pd.isna(
        sales["date"].iloc[1]
    )
    assert sales["price"].tolist()[0] == 100.0 and np.isnan(sales["price"].iloc[1])
    assert pd.isna(sales["newBuild"].iloc[1])


def test_sales_work_on_a_frame_without_the_column_or_with_raw_lists(
    records: list[dict[str, Any]],
) -> None:
    assert explode_sales(pd.DataFrame({"propertyId": ["X"]}))["propertyId"].tolist() == []
    naive = pd.json_normalize(records[:20])  # saleHistory as plain Python lists
    assert (
        explode_sales(naive)["price"].tolist()
        == explode_sales(frame(records[:20]))["price"].tolist()
    )


def test_epc_table_gap_and_validity_on_an_injected_day() -> None:
    records = [
        {"propertyId": "ok", "epc": {"currentEnergyRating": "D", "potentialEnergyRating": "B",
                                     "currentEnergyEfficiency": 60, "potentialEnergyEfficiency": 85,
                                     "validFrom": "2020-01-01", "validTo": "2030-01-01"}},
        {"propertyId": "expired", "epc": {"validFrom": "2010-01-01", "validTo": "2020-01-01"}},
        {"propertyId": "no-start", "epc": {"validTo": "2020-01-01"}},
        {"propertyId": "future", "epc": {"validFrom": "2026-01-01", "validTo": "2036-01-01"}},
        {"propertyId": "last-day", "epc": {"validFrom": "2015-06-01", "validTo": "2025-06-01"}},
        {"propertyId": "unknown", "epc": None},
    ]  # fmt: skip
    table = epc_table(frame(records), today="2025-06-01")
    assert table["propertyId"].tolist() == [r["propertyId"] for r in records]
    assert table.loc[0, "efficiencyGap"] == 25
    assert (
        table.loc[0, "currentEnergyRating"] == "D" and table.loc[0, "potentialEnergyRating"] == "B"
    )
    assert table["validToday"].tolist() == [True, False, False, False, True, pd.NA]
    assert epc_table(frame(records), today="2035-01-01")["validToday"].tolist()[0] is False


def test_epc_table_default_day_is_today_utc() -> None:
    table = epc_table(frame([{"epc": {"validFrom": "2000-01-01", "validTo": "2999-01-01"}}]))
    assert table["validToday"].tolist() == [True]


def test_epc_table_matches_the_frame(df: pd.DataFrame) -> None:
    table = df.pk.epc(today="2025-06-01")
    assert table.index.equals(df.index)
    assert table["currentEnergyRating"].equals(
        df["epc.currentEnergyRating"].rename("currentEnergyRating")
    )
    gap = (df["epc.potentialEnergyEfficiency"] - df["epc.currentEnergyEfficiency"]).rename(
        "efficiencyGap"
    )
    assert table["efficiencyGap"].equals(gap)
    assert table["validToday"].notna().sum() == df["epc.validTo"].notna().sum() > 0
