"""Untidy records never raise: missing, null and wrongly typed values become missing or coerce."""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd
import pytest
from hypothesis import strategies as st

from propertykit.frames import COLUMNS, frame
from propertykit.sandbox import generate_records

TEMPLATES = generate_records(8, seed=11)
OBJECTS = sorted({c.split(".")[0] for c in COLUMNS if "." in c})
LEAVES = [tuple(c.split(".")) for c in COLUMNS if "." in c] + [
    (c,) for c in COLUMNS if "." not in c
]
LEAVES += [("saleHistory", "0", name) for name in ("date", "price", "propertyType", "newBuild")]

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["12", " 3.5 ", "abc", "true", "FALSE", "c", ""]),
    st.sampled_from(["2024-01-02", "2024-02-30", "2024-01-02T03:04:05Z", "9999-12-31T23:59+14:00"]),
)  # fmt: skip
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)

# Untidy values here are the point: UnparsedValuesWarning is tested in test_lossless.py.
pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")
ACTIONS = st.sampled_from(["delete", "null", "replace"])
# Built once, not per record drawn (a filtered strategy is costly to build): the same draws.
NOT_OBJECTS = json_values.filter(lambda v: not isinstance(v, str))
PATHS = st.sampled_from(LEAVES + [(name,) for name in OBJECTS])
CHANGES = st.lists(st.tuples(PATHS, ACTIONS, json_values), max_size=6)
TEMPLATE = st.sampled_from(TEMPLATES)


def change(record: dict[str, Any], path: tuple[str, ...], action: str, value: Any) -> None:
    parent: Any = record
    for key in path[:-1]:
        parent = parent[int(key)] if isinstance(parent, list) else parent.get(key)
        if not isinstance(parent, dict | list) or (isinstance(parent, list) and not parent):
            return
    last = path[-1]
    if isinstance(parent, list):
        return
    if action == "delete":
        parent.pop(last, None)
    else:
        parent[last] = None if action == "null" else value


@st.composite
def untidy_records(draw: st.DrawFn) -> list[Any]:
    records: list[Any] = []
    for _ in range(draw(st.integers(min_value=0, max_value=5))):
        if draw(st.integers(min_value=0, max_value=9)) == 0:
            # not an object at all (text alone would be read as response bodies)
            records.append(draw(NOT_OBJECTS))
            continue
        record = copy.deepcopy(draw(TEMPLATE))
        for path, action, value in draw(CHANGES):
            change(record, path, action, value)
        if draw(st.booleans()):
            record[draw(st.text(max_size=6))] = draw(json_values)  # an extra key
        records.append(record)
    return records


def valid_sales(records: list[Any]) -> int:
    histories = [r.get("saleHistory") for r in records if isinstance(r, dict)]
    return sum(isinstance(s, dict) for h in histories if isinstance(h, list) for s in h)


def test_values_with_a_clear_meaning_are_coerced_and_the_rest_kept_raw() -> None:
    record = {
        "propertyId": 12345,
        "address": {"postcode": ["SW1A", "1AA"], "streetNumber": 7, "town": True},
        "roomDetails": {"beds": "3", "baths": 2.0, "receptions": 2.5},
        "pricing": {
            "currentSalePrice": " 250000 ",
            "estimatedSaleValue": "abc",
            "pricePerSqFt": {},
        },
        "tags": {"newBuild": "TRUE", "chainFree": 0, "auction": 2, "retirement": "maybe"},
        "epc": {
            "currentEnergyRating": " c",
            "potentialEnergyRating": "H",
            "validFrom": "2020-02-30",
        },
        "yearBuilt": 1.0e20,
        "lastUpdated": "2024-06-01T12:00:00+02:00",
        "marketStatus": {"listingDate": "2024-06-01T12:00:00", "soldDate": "yesterday"},
    }
    df = frame([record])
    row = df.iloc[0]
    assert row["propertyId"] == "12345" and row["address.streetNumber"] == "7"
    assert pd.isna(row["address.postcode"]) and row["address.town"] == "true"
    assert row["roomDetails.beds"] == 3 and row["roomDetails.baths"] == 2
    assert pd.isna(row["roomDetails.receptions"]) and pd.isna(row["yearBuilt"])
    assert row["pricing.currentSalePrice"] == 250000.0
    assert pd.isna(row["pricing.estimatedSaleValue"]) and pd.isna(row["pricing.pricePerSqFt"])
    assert [row["tags.newBuild"], row["tags.chainFree"]] == [True, False]
    assert row["tags.auction"] is pd.NA and row["tags.retirement"] is pd.NA
    assert row["epc.currentEnergyRating"] == "C" and pd.isna(row["epc.potentialEnergyRating"])
    assert pd.isna(row["epc.validFrom"])
    assert row["lastUpdated"] == pd.Timestamp("2024-06-01T10:00:00Z")
    assert row["marketStatus.listingDate"] == pd.Timestamp("2024-06-01T12:00:00Z")
    assert pd.isna(row["marketStatus.soldDate"])
    unparsed = {(e[1], repr(e[2])) for e in df.attrs["unparsed"]}
    assert unparsed == {
        ("address.postcode", "['SW1A', '1AA']"),
        ("roomDetails.receptions", "2.5"),
        ("pricing.estimatedSaleValue", "'abc'"),
        ("pricing.pricePerSqFt", "{}"),
        ("tags.auction", "2"),
        ("tags.retirement", "'maybe'"),
        ("epc.potentialEnergyRating", "'H'"),
        ("epc.validFrom", "'2020-02-30'"),
        ("yearBuilt", "1e+20"),
        ("marketStatus.soldDate", "'yesterday'"),
    }
    assert {e[0] for e in df.attrs["unparsed"]} == {"12345"}


def test_objects_of_the_wrong_shape_leave_only_their_own_fields_missing() -> None:
    table = frame(
        [{"propertyId": "P", "address": ["not", "an", "object"], "epc": "B", "tags": None}]
    )
    assert table.loc[0, "propertyId"] == "P"
    assert table.filter(like="address.").isna().all(axis=None)
    assert table.filter(like="epc.").isna().all(axis=None)
    assert table.filter(like="tags.").isna().all(axis=None)


def test_extra_keys_are_kept_after_the_named_columns() -> None:
    table = frame(
        [
            {
                "propertyId": "P",
                "surprise": 1,
                "address": {"postcode": "N1 1AA", "what3words": "x.y.z"},
            }
        ]
    )
    assert list(table.columns) == [*COLUMNS, "address.what3words", "surprise"]
    assert table.attrs["extra_columns"] == ("address.what3words", "surprise")
    assert table.loc[0, "address.postcode"] == "N1 1AA"
    assert table.loc[0, "address.what3words"] == "x.y.z" and table.loc[0, "surprise"] == 1


def test_any_iterable_of_mappings_is_accepted() -> None:
    from types import MappingProxyType

    rows = (
        MappingProxyType({"propertyId": str(i), "address": MappingProxyType({"town": "York"})})
        for i in range(3)
    )
    table = frame(rows)
    assert table["propertyId"].tolist() == ["0", "1", "2"]
    assert table["address.town"].tolist() == ["York"] * 3
