"""Every field the service sends is in the frame, named or not (issue 26).

Fields the interface does not name, at any depth (the top, inside a named object, inside each
sale, inside another unnamed object), are kept after the named columns: objects flattened to
dotted names, lists whole, each typed as Arrow's JSON reader infers it; from records and from
raw bodies alike. A field whose values mix kinds is read as text, the values without one counted.
"""

from __future__ import annotations

import copy
import json
import math
import warnings
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import propertykit as pk
import propertykit.views._accessor  # (df.pk)
from propertykit.sandbox import generate_records
from tests._hypothesis import examples
from tests.frames._exact import assert_same_frame

POOL = generate_records(12, seed=26)
#: Where a field is added: the record, a named object, each sale, or a new object of its own.
PLACES = ("", "address", "pricing", "epc", "saleHistory", "x_new")
KINDS = (
    "int",
    "number",
    "text",
    "flag",
    "object",
    "ints",
    "objects",
    "int or text",
    "object or int",
)
NAMES = ("x_a", "x_b", "x_c", "x_d")
LETTERS = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=6)  # never an ISO 8601 time


def body_of(records: list[Any]) -> bytes:
    return json.dumps({"success": True, "result": records, "hasMore": False}).encode()


def framed(records_or_body: Any) -> tuple[pd.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = pk.frame(records_or_body, money_unit="major")
    return df, [str(w.message) for w in caught]


def value_of(kind: str, draw: st.DrawFn) -> Any:
    if kind == "int":
        return draw(st.integers(-(10**9), 10**9))
    if kind == "number":  # whole numbers among them: Arrow reads the field as float64
        return draw(st.integers(-1000, 1000) | st.floats(-1e6, 1e6))
    if kind == "text":
        return draw(LETTERS)
    if kind == "flag":
        return draw(st.booleans())
    if kind == "object":
        return {"k": draw(st.integers(0, 99)), "t": draw(LETTERS)}
    if kind == "ints":
        return draw(st.lists(st.integers(0, 99), max_size=3))
    if kind == "objects":
        return [{"k": draw(st.integers(0, 9))} for _ in range(draw(st.integers(1, 3)))]
    if kind == "int or text":
        return draw(st.integers(0, 99) | LETTERS)
    return draw(st.integers(0, 99) | st.builds(lambda k: {"k": k}, st.integers(0, 9)))


@st.composite
def bent_records(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """Records from the pool, with fields added at random places, and what was added."""
    picks = draw(st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=6))
    records = [copy.deepcopy(POOL[i]) for i in picks]
    for i, record in enumerate(records):
        record["propertyId"] = f"PK{i}"
    added = draw(
        st.lists(
            st.tuples(st.sampled_from(PLACES), st.sampled_from(NAMES), st.sampled_from(KINDS)),
            min_size=1,
            max_size=5,
            unique_by=lambda a: (a[0], a[1]),
        )
    )
    for place, name, kind in added:
        for record in records:
            if not draw(st.booleans()):
                continue
            if place == "saleHistory":
                for sale in record.get("saleHistory") or ():
                    sale[name] = value_of(kind, draw)
            elif place == "x_new":
                record.setdefault("x_new", {})[name] = value_of(kind, draw)
            elif place and isinstance(record.get(place), dict):
                record[place][name] = value_of(kind, draw)
            elif not place:
                record[name] = value_of(kind, draw)
    return records, added


def served(record: dict[str, Any], place: str, name: str) -> list[Any]:
    """The values of an added field in one record: one per sale, else one."""
    if place == "saleHistory":
        return [sale.get(name) for sale in record.get("saleHistory") or ()]
    holder = record.get(place) if place else record
    return [holder.get(name) if isinstance(holder, dict) else None]


def expected(values: list[Any]) -> tuple[list[Any], list[Any]]:
    """What Arrow types ``values`` as, and the values without a clear meaning (counted)."""
    kinds = {type(v) for v in values if v is not None}
    if {int, float} >= kinds and kinds:  # one kind of number: float64 when any is not whole
        return [None if v is None else float(v) if float in kinds else v for v in values], []
    if len(kinds) <= 1:
        return values, []
    texts = [None if v is None or isinstance(v, dict) else str(v) for v in values]
    return texts, [v for v in values if isinstance(v, dict)]


def cells(column: pd.Series) -> list[Any]:
    out = []
    for value in column.tolist():
        if (isinstance(value, float) and math.isnan(value)) or value is None or value is pd.NA:
            out.append(None)
        elif hasattr(value, "tolist"):
            out.append(value.tolist())
        else:
            out.append(value)
    return out


def leaves_of(name: str, values: list[Any]) -> dict[str, list[Any]]:
    """The columns ``values`` of field ``name`` make: objects by dotted name, else itself."""
    objects = [v for v in values if v is not None]
    if objects and all(isinstance(v, dict) for v in objects):
        keys = dict.fromkeys(k for v in objects for k in v)
        return {f"{name}.{k}": [None if v is None else v.get(k) for v in values] for k in keys}
    return {name: values}


@pytest.mark.timeout(600)
@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # each example frames twice and explodes the sales
@given(bent_records())
def test_every_added_field_is_reachable_under_its_dotted_name_as_arrow_types_it(
    case: tuple[list[dict[str, Any]], list[tuple[str, str, str]]],
) -> None:
    records, added = case
    df, said = framed(records)
    from_body, said_too = framed(body_of(records))
    # from records and from bodies alike
    assert_same_frame(df, from_body)
    assert df.attrs == from_body.attrs and said == said_too
    assert list(df.columns[: len(pk.frames.COLUMNS)]) == list(pk.frames.COLUMNS)
    sales = df.pk.sales()
    columns: dict[str, list[Any]] = {}
    sale_columns: dict[str, list[Any]] = {}
    counted: list[Any] = []
    for place, name, _ in added:
        if place == "saleHistory":
            values = [v for r in records for v in served(r, place, name)]
            if any(v is not None for v in values):
                typed, odd = expected(values)
                sale_columns |= leaves_of(name, typed)
                counted += odd
            continue
        values = [served(r, place, name)[0] for r in records]
        if not any(v is not None for v in values):
            continue
        typed, odd = expected(values)
        counted += odd
        dotted = f"{place}.{name}" if place else name
        columns |= leaves_of(dotted, typed)
    assert set(df.attrs["extra_columns"]) == set(columns)
    assert list(df.columns[len(pk.frames.COLUMNS) :]) == list(df.attrs["extra_columns"])
    for dotted, values in columns.items():
        assert cells(df[dotted]) == values, dotted
    assert set(sales.attrs["extra_columns"]) == set(sale_columns)
    for name, values in sale_columns.items():
        assert cells(sales[name]) == values, name
    unparsed = df.pk.unparsed()["value"].tolist() if "unparsed" in df.attrs else []
    assert sorted(map(repr, unparsed)) == sorted(map(repr, counted))
    assert len(said) == len({c for c in df.pk.unparsed()["column"]} if counted else ())


def test_the_fields_of_the_services_own_types_are_kept_and_nothing_is_said() -> None:
    record = copy.deepcopy(POOL[0])
    record["lastSale"] = {"date": "2021-03-04", "price": 310000}
    record["listings"] = [{"agent": "Hunters", "price": 325000}, {"agent": "Savills"}]
    record["pricing"]["newPriceField"] = 12.5
    for sale in record["saleHistory"]:
        sale["buyerType"] = "first-time"
    for data in ([record], body_of([record])):
        df, said = framed(data)
        assert said == []  # nothing was lost
        assert df.attrs["extra_columns"] == (
            "pricing.newPriceField",
            "lastSale.date",
            "lastSale.price",
            "listings",
        )
        assert df.loc[0, "pricing.newPriceField"] == 12.5
        assert df.loc[0, "lastSale.date"] == pd.Timestamp("2021-03-04")  # as Arrow infers it
        assert df.loc[0, "lastSale.price"] == 310000
        assert [x["agent"] for x in df.loc[0, "listings"]] == ["Hunters", "Savills"]
        assert df.loc[0, "listings"][1]["price"] is None
        sales = df.pk.sales()
        assert sales.attrs["extra_columns"] == ("buyerType",)
        assert sales["buyerType"].tolist() == ["first-time"] * len(record["saleHistory"])
        assert list(sales.columns[: len(pk.frames.SALES_COLUMNS)]) == list(pk.frames.SALES_COLUMNS)


def test_a_frame_without_extra_fields_says_so_and_keeps_other_attrs() -> None:
    df, _ = framed(POOL)
    assert df.attrs["extra_columns"] == () and list(df.columns) == list(pk.frames.COLUMNS)
    df.attrs["missing_ids"] = ("PK9",)
    assert df.pk.sales().attrs["missing_ids"] == ("PK9",)
    assert df.pk.epc().attrs["missing_ids"] == ("PK9",)


def test_untidy_bodies_with_extra_fields_frame_as_their_records() -> None:
    records = copy.deepcopy(POOL)
    records[1]["roomDetails"]["beds"] = "3"  # Arrow's reader refuses the bodies
    records[2]["yearBuilt"] = "c. 1930"
    records[3]["x_note"] = "viewing by appointment"
    records[4]["x_note"] = 7  # mixed kinds: text
    records[5]["epc"]["x_score"] = {"value": 1}
    df, said = framed(records)
    again, said_too = framed([body_of(records[:6]), body_of(records[6:])])
    assert_same_frame(df, again)
    assert said == said_too and len(said) == 1  # the year; the mixed field has text for both
    assert df["x_note"].tolist()[3:5] == ["viewing by appointment", "7"]
    assert df.loc[5, "epc.x_score.value"] == 1


def test_nan_and_infinities_of_unknown_fields_are_kept_from_records_as_from_bodies() -> None:
    # json reads NaN and Infinity (so do the service's clients); msgspec writes them as null
    records = copy.deepcopy(POOL[:2])
    records[0] |= {"x_inf": math.inf, "x_list": [math.nan, 1.0], "x_obj": {"a": -math.inf}}
    records[1] |= {"x_inf": 1.5, "x_obj": {"a": 2.0}}
    for data in (records, body_of(records)):
        df, said = framed(data)
        assert said == []
        assert df["x_inf"].tolist() == [math.inf, 1.5]
        assert math.isnan(df.loc[0, "x_list"][0])
        assert df["x_obj.a"].tolist() == [-math.inf, 2.0]
