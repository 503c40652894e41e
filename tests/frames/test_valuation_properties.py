"""The valuation's promises as properties over random small worlds (random homes, histories,
types, dates): a subject's row is the same valued alone as in random company with random dates,
and as of D it is the same with and without the sales made on or after D."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import propertykit as pk
from propertykit.frames import ValuationSearch, appraise
from tests._hypothesis import examples

pytestmark = pytest.mark.timeout(600)

TODAY = "2026-01-01"
_TYPES = ("flat", "terraced")
_FIRST_DAY, _LAST_DAY = pd.Timestamp("1999-01-01"), pd.Timestamp("2025-12-01")
_SPAN_DAYS = (_LAST_DAY - _FIRST_DAY).days


def _day(offset: int) -> str:
    return str((_FIRST_DAY + pd.Timedelta(days=offset)).strftime("%Y-%m-%d"))


@st.composite
def homes(draw: st.DrawFn, number: int) -> dict[str, Any]:
    """One home with the frame's schema: place, type, size, beds, age and a sale history."""
    days = draw(st.lists(st.integers(0, _SPAN_DAYS), min_size=0, max_size=4, unique=True))
    base = draw(st.integers(60_000, 400_000))
    history = [
        {
            "date": _day(day),
            "price": int(base * (1 + day / _SPAN_DAYS) * draw(st.floats(0.8, 1.25))),
        }
        for day in sorted(days)
    ]
    beds = draw(st.none() | st.integers(1, 4))
    return {
        "propertyId": f"PK{number:08d}",
        "spatial": {
            "lat": 52.48 + draw(st.integers(-40, 40)) / 4000,
            "lng": -1.90 + draw(st.integers(-40, 40)) / 2500,
        },
        "propertyType": draw(st.sampled_from(_TYPES)),
        "roomDetails": {"beds": beds},
        "floorAreaSqM": float(draw(st.integers(45, 110))),
        "yearBuilt": draw(st.none() | st.integers(1900, 2020)),
        "saleHistory": history,
    }


@st.composite
def worlds(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Between 8 and 30 homes."""
    count = draw(st.integers(8, 30))
    return [draw(homes(number)) for number in range(count)]


def _subjects(
    draw: Callable[[st.SearchStrategy[Any]], Any], records: list[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    ids = [record["propertyId"] for record in records]
    chosen = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=4, unique=True))
    dates = [_day(draw(st.integers(365 * 4, _SPAN_DAYS))) for _ in chosen]
    return chosen, dates


def _before(records: list[dict[str, Any]], day: str) -> list[dict[str, Any]]:
    return [
        {**record, "saleHistory": [sale for sale in record["saleHistory"] if sale["date"] < day]}
        for record in records
    ]


_SETTINGS = settings(
    max_examples=examples(12),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_SETTINGS
@given(records=worlds(), data=st.data())
def test_each_row_valued_alone_equals_the_row_in_random_company(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    df = pk.frame(records)
    ids, dates = _subjects(data.draw, records)
    together = appraise(df, ids, as_of=dates, today=TODAY)
    for position, (name, day) in enumerate(zip(ids, dates, strict=True)):
        alone = appraise(df, [name], as_of=day, today=TODAY)
        pd.testing.assert_frame_equal(
            alone.values,
            together.values.iloc[[position]].reset_index(drop=True),
            check_exact=True,
        )
        if together.values["comparables"].iloc[position]:
            pd.testing.assert_frame_equal(
                alone.schedule(0), together.schedule(position), check_exact=True
            )
            pd.testing.assert_frame_equal(
                alone.reconciliation(0), together.reconciliation(position), check_exact=True
            )


@_SETTINGS
@given(records=worlds(), data=st.data())
def test_as_of_a_date_the_sales_on_or_after_it_change_nothing(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    ids, dates = _subjects(data.draw, records)
    day = data.draw(st.sampled_from(dates))
    everything = appraise(pk.frame(records), ids, as_of=day, today=TODAY)
    known = appraise(pk.frame(_before(records, day)), ids, as_of=day, today=TODAY)
    pd.testing.assert_frame_equal(everything.values, known.values, check_exact=True)
    for position in range(len(ids)):
        if everything.values["comparables"].iloc[position]:
            pd.testing.assert_frame_equal(
                everything.schedule(position), known.schedule(position), check_exact=True
            )


def test_an_own_sale_older_than_the_window_and_any_index_stays_out_in_company_too() -> None:
    """The world Hypothesis first found: alone, PK6's 2007 sale is too old for the window of 2015
    and no index reaches it; before, PK7's date of 2003 widened the sales searched and let it in,
    taken as sold, as PK6's one comparable."""
    place = {"PK6": (52.47125, -1.8844), "PK7": (52.47875, -1.9104), "PK4": (52.47775, -1.9136)}
    sold = {
        "PK6": [("2007-08-21", 214_471)],
        "PK7": [("1999-03-08", 139_372), ("2000-01-11", 157_888)],
        "PK4": [("2011-03-14", 452_085)],
    }
    records = [
        {"propertyId": name, "spatial": {"lat": lat, "lng": lng}, "propertyType": "flat",
         "floorAreaSqM": 95.0, "saleHistory": [{"date": d, "price": p} for d, p in sold[name]]}
        for name, (lat, lng) in place.items()
    ]  # fmt: skip
    df, search = pk.frame(records), ValuationSearch(min_comparables=1)
    together = appraise(
        df, ["PK6", "PK7"], as_of=["2015-10-07", "2003-03-14"], search=search, today=TODAY
    )
    alone = appraise(df, ["PK6"], as_of="2015-10-07", search=search, today=TODAY)
    assert alone.values["comparables"].iloc[0] == 0
    pd.testing.assert_frame_equal(
        alone.values, together.values.iloc[[0]].reset_index(drop=True), check_exact=True
    )
