"""A batch read a block at a time, refused leaves put back once per block, and date columns that
Arrow's cast reads but in part: the frame is what its records give one by one."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
import propertykit.views._accessor  # registers df.pk
from propertykit.frames import _records as reading
from propertykit.sandbox import generate_records

pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")

# 68 records: nine blocks of 8 (small_blocks), the last one short.
COUNT = 68


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 8 records, so that a few dozen records span many blocks: what Arrow refuses
    in one is read apart in every later one, whose values must all still be read."""
    monkeypatch.setattr(reading, "BLOCK", 8)


def as_served(values: pd.Series) -> list[Any]:
    """Each value, missing ones as None (a list column's cells as lists)."""
    return [
        v.tolist()
        if isinstance(v, np.ndarray)
        else None
        if pd.api.types.is_scalar(v) and pd.isna(v)
        else v
        for v in values
    ]


def same_as_one_by_one(
    records: list[Any], each_alone: Callable[..., list[pd.DataFrame]]
) -> pd.DataFrame:
    """The frame of ``records``, checked against the frames of each record alone."""
    together = pk.frame(records, money_unit="major")
    alone = each_alone(records, money_unit="major")
    one_by_one = pd.concat(alone, ignore_index=True)
    for column in together.columns:
        got = as_served(together[column].astype(object))
        expected = as_served(one_by_one[column].astype(object))
        assert got == expected, column
    entries = [e for f in alone for e in f.attrs.get("unparsed", ())]
    assert sorted(map(repr, together.attrs.get("unparsed", ()))) == sorted(map(repr, entries))
    sales = pd.concat([f.pk.sales() for f in alone], ignore_index=True)
    for column in ("propertyId", "date", "price", "newBuild"):
        assert as_served(together.pk.sales()[column].astype(object)) == as_served(
            sales[column].astype(object)
        ), column
    return together


@pytest.fixture(scope="module")
def tidy() -> list[dict[str, Any]]:
    return generate_records(COUNT, seed=21)


def test_odd_values_in_the_first_and_last_record_only(
    tidy: list[dict[str, Any]], each_alone: Callable[..., list[pd.DataFrame]]
) -> None:
    records = copy.deepcopy(tidy)
    records[0]["roomDetails"]["beds"] = "3"
    records[0]["lastUpdated"] = "2024-01-02"
    records[-1]["roomDetails"]["beds"] = "many"
    records[-1]["floorAreaSqM"] = "unknown"  # a leaf first refused in the last block
    df = same_as_one_by_one(records, each_alone)
    assert df["roomDetails.beds"].iloc[0] == 3 and pd.isna(df["roomDetails.beds"].iloc[-1])
    assert ("floorAreaSqM", "unknown") in [(c, v) for _, c, v in df.attrs["unparsed"]]


def test_leaves_refused_late_in_objects_lists_and_records(
    tidy: list[dict[str, Any]], each_alone: Callable[..., list[pd.DataFrame]]
) -> None:
    records: list[Any] = copy.deepcopy(tidy)
    with_history = [i for i, r in enumerate(records) if r.get("saleHistory")]
    early, late = with_history[2], with_history[-3]
    records[early]["saleHistory"][0]["price"] = "199000"
    records[late]["saleHistory"][-1]["price"] = "n/a"
    records[with_history[-2]]["saleHistory"] = ""  # Arrow reads it as an empty list
    records[with_history[-1]]["saleHistory"] = [{"price": "1", "date": 5}, "", None, 3]
    records[57]["marketStatus"] = "for sale"  # an object that is none, late
    records[58]["marketStatus"]["forSale"] = True
    records[59]["tenure"] = ""
    records[60]["tags"] = {"newBuild": "true", "auction": 0}
    records[61] = None
    records[62] = 7
    same_as_one_by_one(records, each_alone)


def test_one_odd_value_in_each_refused_leaf_of_every_block(
    tidy: list[dict[str, Any]], each_alone: Callable[..., list[pd.DataFrame]]
) -> None:
    records = copy.deepcopy(tidy)
    for start in (0, 8, 24, 56):
        records[start + 2]["pricing"]["estimatedSaleValue"] = " 250000 "
        records[start + 3]["yearBuilt"] = "c. 1930"
        records[start + 5]["epc"]["currentEnergyRating"] = "c"
    same_as_one_by_one(records, each_alone)


def test_a_batch_read_a_block_at_a_time_is_one_array_as_a_tidy_one_is(
    tidy: list[dict[str, Any]], each_alone: Callable[..., list[pd.DataFrame]]
) -> None:
    """The blocks are joined: an odd value does not leave the user text and list columns in a
    chunk per block, each of their operations a loop over those chunks."""
    records = copy.deepcopy(tidy)
    records[3]["roomDetails"]["beds"] = "3"  # Arrow refuses it: read a block at a time
    for df in (pk.frame(tidy), same_as_one_by_one(records, each_alone)):
        for column in ("propertyId", "address.postcode", "saleHistory"):
            assert df[column].array.__arrow_array__().num_chunks == 1, column


def pandas_time(text: Any) -> Any:
    parsed = pd.to_datetime(
        pd.Series([text], dtype="str"), format="ISO8601", utc=True, errors="coerce"
    )
    return parsed.astype("datetime64[us, UTC]").iloc[0]


def pandas_day(text: Any) -> Any:
    return pd.to_datetime(pd.Series([text], dtype="str"), format="%Y-%m-%d", errors="coerce")[0]


MIXES = {
    "refused values only": (["2024-01-02", "x", "2024-01-02T03:04:05"], ["2024-1-2", "x"]),
    "one that looks accepted but is not": (
        ["2024-01-02", "2024-02-30T00:00:00Z", "2024-01-02T24:00:00Z"],
        ["2024-02-30", "20240102"],
    ),
    "dates alone, each its midnight UTC": (
        ["2024-01-02", "2023-05-17", "9999-12-31"],
        ["2024-01-02", "2024-02-29"],
    ),
    "other forms Arrow accepts": (
        ["2024-01-02", "2024-01-02 03:04:05+0200", "2024-01-02T03:04:05.5Z", "2024-01-02T03Z"],
        ["2024-01-02T03:04", " 2024-01-02"],
    ),
}


@pytest.mark.parametrize("mix", MIXES, ids=list(MIXES))
def test_dates_arrow_refuses_read_as_pandas_reads_them_the_rest_as_before(mix: str) -> None:
    odd_times, odd_days = MIXES[mix]
    times = ["2021-06-30T12:00:00Z", "2021-07-01T00:00:00+01:00", None] * 200
    days = ["2021-06-30", "2021-07-01", None] * 200
    for position, value in zip((0, 300, 599, 450), odd_times, strict=False):
        times[position] = value
    for position, value in zip((0, 599), odd_days, strict=False):
        days[position] = value
    records = [
        {"lastUpdated": time, "epc": {"validFrom": day}, "saleHistory": [{"date": day}]}
        for time, day in zip(times, days, strict=True)
    ]
    table = pk.frame(records)
    # pandas reads each value by itself: once per distinct value, the same for its repeats
    time_of = {text: pandas_time(text) for text in set(times)}
    day_of = {text: pandas_day(text) for text in set(days)}
    assert str(table["lastUpdated"].dtype) == "datetime64[us, UTC]"
    assert str(table["epc.validFrom"].dtype) == "datetime64[us]"
    assert as_served(table["lastUpdated"]) == as_served(pd.Series(map(time_of.get, times)))
    assert as_served(table["epc.validFrom"]) == as_served(pd.Series(map(day_of.get, days)))
    assert as_served(table.pk.sales()["date"]) == as_served(pd.Series(map(day_of.get, days)))
