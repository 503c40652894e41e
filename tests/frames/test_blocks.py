"""A batch with odd values is read a block at a time; it reads as its records do one by one, and
what it keeps of the values without meaning travels with every frame derived from it."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
import propertykit.views._accessor
from propertykit.frames import _records as reading
from propertykit.frames._coercion import Unparsed
from propertykit.sandbox import generate_records

pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 8 records, so that a hundred records span many blocks: what Arrow refuses in
    one is read apart in every later one, whose values must all still be read."""
    monkeypatch.setattr(reading, "BLOCK", 8)


@pytest.fixture(scope="module")
def untidy() -> list[dict[str, Any]]:
    """113 records (15 blocks): odd values early on, and hollow ones in later blocks."""
    records = copy.deepcopy(generate_records(113, seed=8))
    records[3]["pricing"]["estimatedSaleValue"] = "350000"
    records[5]["yearBuilt"] = "c. 1930"
    with_history = [r for r in records[75:] if r.get("saleHistory")]
    with_history[0]["saleHistory"][0]["price"] = "199000"
    with_history[1]["saleHistory"][0]["price"] = "n/a"
    with_history[2]["saleHistory"] = ""  # Arrow reads it as an empty list
    records[87]["tenure"] = ""  # Arrow reads it as an object of missing values
    records[100] = None  # type: ignore[call-overload]
    return records


@pytest.fixture(scope="module")
def alone(untidy: list[Any], each_alone: Callable[..., list[pd.DataFrame]]) -> list[pd.DataFrame]:
    """The frame of each record read by itself."""
    return each_alone(untidy, money_unit="major")


def test_sales_of_a_batch_read_in_blocks_are_the_sales_of_its_records(
    untidy: list[Any], alone: list[pd.DataFrame]
) -> None:
    together = pk.frame(untidy, money_unit="major").pk.sales()
    one_by_one = pd.concat([df.pk.sales() for df in alone], ignore_index=True)
    assert len(together) == len(one_by_one) > 125
    for column in together.columns:
        got = together[column].astype(object).tolist()
        expected = one_by_one[column].astype(object).tolist()
        assert [None if pd.isna(v) else v for v in got] == [
            None if pd.isna(v) else v for v in expected
        ], column
    assert 199000.0 in together["price"].tolist()


def test_hollow_values_in_later_blocks_are_counted_once_and_missing(
    untidy: list[Any], alone: list[pd.DataFrame]
) -> None:
    df = pk.frame(untidy, money_unit="major")
    table = df.pk.unparsed()
    by_place = {(pid, column): value for pid, column, value in table.itertuples(index=False)}
    emptied = next(r for r in untidy[75:] if r is not None and r.get("saleHistory") == "")
    assert by_place[(untidy[87]["propertyId"], "tenure")] == ""
    assert by_place[(emptied["propertyId"], "saleHistory")] == ""
    assert by_place[(untidy[5]["propertyId"], "yearBuilt")] == "c. 1930"
    assert len(table) == 4  # the three above and the sale price "n/a"
    assert df.filter(like="tenure.").iloc[87].isna().all()
    assert df["saleHistory"].isna().iloc[untidy.index(emptied)]
    assert df.iloc[100].drop(["saleHistory", "spatial.boundary"]).isna().all()
    entries = [e for f in alone for e in f.attrs.get("unparsed", ())]
    assert sorted(map(repr, df.attrs["unparsed"])) == sorted(map(repr, entries))


def test_prices_in_pounds_from_a_batch_read_in_blocks(untidy: list[Any]) -> None:
    df = pk.frame(untidy, money_unit="minor")
    pounds = df.pk.in_pounds()
    before = df.pk.sales()["price"]
    after = pounds.pk.sales()["price"]
    assert after.tolist() == pytest.approx((before / 100).tolist(), nan_ok=True)


def test_unparsed_values_are_one_tuple_shared_by_every_frame_derived() -> None:
    records = copy.deepcopy(generate_records(3, seed=2))
    records[1]["yearBuilt"] = "c. 1930"
    records[2]["roomDetails"]["beds"] = {"x": [1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pk.frame(records)
    entries = df.attrs["unparsed"]
    assert isinstance(entries, tuple) and isinstance(entries, Unparsed)
    assert entries == (
        (records[1]["propertyId"], "yearBuilt", "c. 1930"),
        (records[2]["propertyId"], "roomDetails.beds", {"x": [1]}),
    )
    assert df["yearBuilt"].attrs["unparsed"] is entries  # not a deep copy per column
    assert df.copy(deep=True).attrs["unparsed"] == entries
    assert copy.deepcopy(df).attrs["unparsed"] == entries
    again = pickle.loads(pickle.dumps(df))
    assert again.attrs["unparsed"] == entries and type(again.attrs["unparsed"]) is Unparsed
    assert pd.concat([df, df]).attrs["unparsed"] == entries
    assert df.pk.unparsed()["value"].tolist() == ["c. 1930", {"x": [1]}]


def test_empty_text_for_an_object_or_entry_whose_fields_were_refused_is_counted() -> None:
    records = copy.deepcopy(generate_records(100, seed=1))
    records[0]["roomDetails"]["beds"] = "x"  # beds is read from Python from here on
    records[1]["roomDetails"] = ""
    records[2]["saleHistory"] = [{"date": "2020-01-01", "price": "n/a"}, ""]
    df = pk.frame(records)
    ids = [r["propertyId"] for r in records[:3]]
    assert sorted(df.attrs["unparsed"]) == [
        (ids[0], "roomDetails.beds", "x"),
        (ids[1], "roomDetails", ""),
        (ids[2], "saleHistory", ""),
        (ids[2], "saleHistory.price", "n/a"),
    ]
    assert pd.isna(df.loc[0, "roomDetails.beds"]) and df.loc[0, "roomDetails.baths"] > 0
    assert df.filter(like="roomDetails.").iloc[1].isna().all()
    sales = df.pk.sales()
    assert sales.loc[sales["propertyId"] == ids[2], "price"].isna().tolist() == [True]
