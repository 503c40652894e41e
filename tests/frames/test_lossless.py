"""No value is lost silently: off-spec values are coerced where their meaning is clear, and the
rest are missing, counted in one warning per column and kept raw in ``df.pk.unparsed()``."""

from __future__ import annotations

import copy
import functools
import json
import math
import random
import re
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import propertykit as pk
import propertykit.views._accessor  # df.pk
from propertykit.frames._schema import RECORD_FIELDS, Field
from propertykit.sandbox import generate_records
from tests._hypothesis import examples

TEMPLATES = generate_records(6, seed=5)
LEAVES = [f for f in RECORD_FIELDS if f.kind not in ("raw", "list") and f.name != "propertyId"]
OBJECTS = sorted({f.path[0] for f in LEAVES if len(f.path) > 1})
UNREAD = object()  # what the oracle says of a value with no clear meaning

# Deviations a real feed shows, and values with no clear meaning at all.
odd_values = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**66), max_value=2**66),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["12", " 3.5 ", "1e3", "-0", "abc", "", "true", "FALSE", " c", "h", "b"]),
    st.sampled_from(["2024-01-02", "2024-02-30", "2024-06-01T12:00:00+02:00", "2024-06-01T12:00"]),
    st.sampled_from(["2024-01-02T03:04:05Z", "c. 1930", "unknown", "N/A", "Nan", "inf"]),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def oracle(field: Field, value: Any) -> Any:
    """What a served value means in ``field``'s column: a value, None (missing) or UNREAD."""
    if value is None:
        return None
    kind = field.kind
    if kind in ("text", "category") and field.levels is None:
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return json.dumps(value) if isinstance(value, float) else UNREAD
    if kind == "category":
        level = value.strip().upper() if isinstance(value, str) else None
        return level if level in field.levels else UNREAD  # type: ignore[operator]
    if kind in ("date", "datetime"):
        return read_alone(kind, value) if isinstance(value, str) else UNREAD
    if kind == "flag":
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return {"true": True, "false": False}.get(value.strip().lower(), UNREAD)
        return bool(value) if isinstance(value, int | float) and value in (0, 1) else UNREAD
    number = number_of(value)
    if kind == "int" and number is not UNREAD:
        whole = number.is_integer() and abs(number) < 2.0**63
        return int(number) if whole else UNREAD
    return number


@functools.cache
def read_alone(kind: str, value: str) -> Any:
    """What pandas reads ``value`` as, by itself, in a date or date-time column (kept: the same
    text is read the same way each time it is drawn)."""
    served = pd.Series([value], dtype="str")
    if kind == "date":
        read = pd.to_datetime(served, format="%Y-%m-%d", errors="coerce")
    else:
        read = pd.to_datetime(served, format="ISO8601", utc=True, errors="coerce")
    return UNREAD if pd.isna(read[0]) else read[0]


def number_of(value: Any) -> Any:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return UNREAD
        return number if math.isfinite(number) else UNREAD
    return UNREAD


def served_at(record: dict[str, Any], field: Field) -> tuple[bool, Any]:
    """(whether the leaf is reachable through objects, the value served there)."""
    parent: Any = record
    for key in field.path[:-1]:
        parent = parent.get(key)
        if not isinstance(parent, dict):
            return False, None
    return True, parent.get(field.path[-1])


def canonical(value: Any) -> str:
    """Raw values compared as JSON, numbers as floats (integers pass through float64)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(float(value))
    return json.dumps(value, sort_keys=True)


# Built once, not per value drawn: the same draws.
TEMPLATE = st.sampled_from(TEMPLATES)
WHOLE_OBJECT = st.sampled_from(OBJECTS)
NONE_OR_ODD = st.none() | odd_values
LEAF = st.sampled_from(LEAVES)


@st.composite
def deviating_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    records = []
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        record = copy.deepcopy(draw(TEMPLATE))
        record["propertyId"] = f"P{i}"
        for _ in range(draw(st.integers(min_value=0, max_value=8))):
            if draw(st.integers(min_value=0, max_value=9)) == 0:  # a whole object off-spec
                record[draw(WHOLE_OBJECT)] = draw(NONE_OR_ODD)
                continue
            field = draw(LEAF)
            reachable, _ = served_at(record, field)
            parent = record
            for key in field.path[:-1]:
                parent = parent[key] if reachable else {}
            parent[field.path[-1]] = draw(odd_values)
        if draw(st.booleans()):
            record["agentNote"] = draw(odd_values)  # a field the interface does not name
        records.append(record)
    return records


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deviating_records())
def test_every_value_is_coerced_or_counted_and_kept_raw(records: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = pk.frame(records, money_unit="major")
    named = len(pk.frames.COLUMNS)
    assert len(df) == len(records) and list(df.columns[:named]) == list(pk.frames.COLUMNS)
    assert set(df.attrs["extra_columns"]) == set(df.columns[named:])  # agentNote: kept (issue 26)

    expected_raw: Counter[tuple[str, str, str]] = Counter()
    columns = {field.name: df[field.name] for field in LEAVES}
    for row, record in enumerate(records):
        for name in OBJECTS:
            if record.get(name) is not None and not isinstance(record[name], dict):
                expected_raw[(record["propertyId"], name, canonical(record[name]))] += 1
        for field in LEAVES:
            reachable, value = served_at(record, field)
            meaning = oracle(field, value) if reachable else None
            cell = columns[field.name].iloc[row]
            if meaning is UNREAD:
                expected_raw[(record["propertyId"], field.name, canonical(value))] += 1
                assert pd.isna(cell), (field.name, value, cell)
            elif meaning is None:
                assert pd.isna(cell), (field.name, value, cell)
            else:
                assert cell == meaning, (field.name, value, cell, meaning)

    table = df.pk.unparsed()
    assert list(table.columns) == ["propertyId", "column", "value"]
    entries = zip(table["propertyId"], table["column"], table["value"], strict=True)
    found = Counter((pid, column, canonical(value)) for pid, column, value in entries)
    noted = {(pid, column) for pid, column, _ in found if column.startswith("agentNote")}
    for row, record in enumerate(records):  # a field the interface does not name: in a column
        if record.get("agentNote") not in (None, {}):  # of its own, or counted and kept raw
            cells = df.filter(regex=r"^agentNote(\.|$)").iloc[row]
            assert cells.notna().any() or any(p == record["propertyId"] for p, _ in noted)
    found = Counter({k: n for k, n in found.items() if not k[1].startswith("agentNote")})
    assert found == expected_raw

    counted = Counter(column for _, column, _ in expected_raw)
    said = [str(w.message) for w in caught if issubclass(w.category, pk.UnparsedValuesWarning)]
    said = [m for m in said if " of 'agentNote" not in m]
    assert len(said) == len(counted)  # one warning per column
    for column, count in counted.items():
        (message,) = [m for m in said if f" of {column!r} " in m]
        assert re.match(rf"{count:,} values? of ", message)


def test_a_real_feeds_deviations_keep_their_meaning() -> None:
    record = copy.deepcopy(TEMPLATES[1])
    record["marketStatus"] |= {"forSale": True, "forRent": False, "listingDate": "2024-01-02"}
    record["lastUpdated"] = "2024-06-01T12:00:00+02:00"
    record["pricing"]["estimatedSaleValue"] = "350000"
    record["epc"]["currentEnergyRating"] = "c"
    record["tenure"] = None
    record["surprise"] = {"new": "field"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing here lacks a clear meaning
        df = pk.frame([record, TEMPLATES[2]])
    row = df.iloc[0]
    assert [row["marketStatus.forSale"], row["marketStatus.forRent"]] == ["true", "false"]
    assert row["marketStatus.listingDate"] == pd.Timestamp("2024-01-02T00:00:00Z")
    assert row["lastUpdated"] == pd.Timestamp("2024-06-01T10:00:00Z")
    assert row["pricing.estimatedSaleValue"] == 350000.0
    assert row["epc.currentEnergyRating"] == "C"
    assert df.filter(like="tenure.").iloc[0].isna().all()
    assert df.pk.unparsed().empty and "unparsed" not in df.attrs


def test_values_without_meaning_warn_once_per_column_and_stay_reachable() -> None:
    records = copy.deepcopy(TEMPLATES[:3])
    for i, record in enumerate(records):
        record["yearBuilt"] = f"c. 19{i}0"
    records[0]["roomDetails"]["beds"] = 2.5
    with pytest.warns(pk.UnparsedValuesWarning) as caught:
        df = pk.frame(records)
    assert sorted(str(w.message).split(" had")[0] for w in caught) == [
        "1 value of 'roomDetails.beds'",
        "3 values of 'yearBuilt'",
    ]
    assert df["yearBuilt"].isna().all()
    table = df.pk.unparsed()
    assert table.to_dict("records") == [
        {"propertyId": records[0]["propertyId"], "column": "roomDetails.beds", "value": 2.5},
        {"propertyId": records[0]["propertyId"], "column": "yearBuilt", "value": "c. 1900"},
        {"propertyId": records[1]["propertyId"], "column": "yearBuilt", "value": "c. 1910"},
        {"propertyId": records[2]["propertyId"], "column": "yearBuilt", "value": "c. 1920"},
    ]
    both = pd.concat([df, df])  # attrs hold a tuple, which pandas can compare
    assert both.attrs["unparsed"] == df.attrs["unparsed"]


def test_a_sale_price_without_meaning_is_counted_and_a_bad_sale_date_warns_in_sales() -> None:
    record = copy.deepcopy(TEMPLATES[0])
    record["saleHistory"] = [
        {"date": "2020-05-01", "price": "n/a"},
        {"date": "spring 2019", "price": "199000"},
    ]
    with pytest.warns(pk.UnparsedValuesWarning, match="'saleHistory.price'"):
        df = pk.frame([record])
    with pytest.warns(pk.UnparsedValuesWarning, match="'saleHistory.date'"):
        sales = df.pk.sales()
    assert sales["price"].tolist()[1] == 199000.0 and pd.isna(sales["price"].tolist()[0])
    assert set(sales.pk.unparsed()["value"]) == {"n/a", "spring 2019"}


def test_a_big_untidy_batch_reads_as_its_records_read_one_by_one(
    each_alone: Callable[..., list[pd.DataFrame]],
) -> None:
    """Blocks, narrowing to the refused leaves and the Arrow path agree with reading alone.

    88 records, 15 odd values and 3 odd sale prices among them (each record read alone is the
    oracle's cost: 175 records drew the same kinds of odd values in as many fields)."""
    generator = random.Random(3)
    records = generate_records(88, seed=4)
    fields = LEAVES + [f for f in RECORD_FIELDS if f.kind == "list"]
    for record in generator.sample(records, 15):  # a few odd values, in different blocks
        field = generator.choice(fields)
        reachable, _ = served_at(record, field)
        if reachable:
            parent = record
            for key in field.path[:-1]:
                parent = parent[key]
            parent[field.path[-1]] = generator.choice(
                [True, "12", "c. 1930", 2.5, {"x": 1}, [3], "2024-01-02", "b", None]
            )
    for record in generator.sample(records, 3):
        if record.get("saleHistory"):
            record["saleHistory"][0]["price"] = generator.choice(["199000", "n/a", False])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        together = pk.frame(records)
        alone = each_alone(records)
    for column in together.columns:
        if column in ("spatial.boundary", "saleHistory"):
            continue
        expected = [frame[column].astype(object).iloc[0] for frame in alone]
        got = together[column].astype(object).tolist()
        assert [None if pd.isna(v) else v for v in got] == [
            None if pd.isna(v) else v for v in expected
        ], column
    sales_alone = [len(frame.pk.sales()) for frame in alone]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sales = together.pk.sales()
    assert len(sales) == sum(sales_alone)
    entries = sorted(map(repr, together.attrs["unparsed"]))
    assert entries == sorted(repr(e) for frame in alone for e in frame.attrs.get("unparsed", ()))


def test_an_object_whose_every_leaf_was_refused_can_still_be_no_object_later() -> None:
    records = generate_records(300, seed=6)
    for record in records[:5]:  # every leaf of roomDetails refused early on
        record["roomDetails"] = {"beds": "x", "baths": "y", "receptions": "z"}
    records[250]["roomDetails"] = ["not", "an", "object"]  # in a later block
    records[260]["saleHistory"] = [{"date": 1, "price": "p", "propertyType": 2, "newBuild": 3}]
    records[290]["saleHistory"] = [7, None]
    with pytest.warns(pk.UnparsedValuesWarning):
        df = pk.frame(records)
    raw = {(e[0], e[1]): e[2] for e in df.attrs["unparsed"]}
    assert raw[(records[250]["propertyId"], "roomDetails")] == ["not", "an", "object"]
    assert raw[(records[290]["propertyId"], "saleHistory")] == 7
    assert df.filter(like="roomDetails.").iloc[:5].isna().all(axis=None)
    assert df["roomDetails.beds"].iloc[6:250].notna().any()


def test_a_missing_record_is_a_row_of_missing_values_with_nothing_counted() -> None:
    records: list[Any] = [None, copy.deepcopy(TEMPLATES[0]), None, copy.deepcopy(TEMPLATES[1])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a null record has no value to lose
        df = pk.frame(records)
    assert df.iloc[[0, 2]].drop(columns=["saleHistory", "spatial.boundary"]).isna().all(axis=None)
    ids = [TEMPLATES[0]["propertyId"], TEMPLATES[1]["propertyId"]]
    assert df["propertyId"].tolist()[1::2] == ids
    assert df.pk.unparsed().empty and "unparsed" not in df.attrs


def test_a_count_served_as_text_beyond_int64_is_kept_as_served() -> None:
    records = generate_records(2, seed=7)
    records[0]["yearBuilt"] = "1E100"
    records[1]["roomDetails"]["beds"] = "9223372036854775808"  # 2**63
    with pytest.warns(pk.UnparsedValuesWarning):
        df = pk.frame(records)
    assert pd.isna(df["yearBuilt"].iloc[0]) and pd.isna(df["roomDetails.beds"].iloc[1])
    kept = {(column, value) for _, column, value in df.attrs["unparsed"]}
    assert kept == {("yearBuilt", "1E100"), ("roomDetails.beds", "9223372036854775808")}
