"""The comparable evidence, seen: the map, the range, the table and the caveats."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from propertykit.errors import InvalidInput
from propertykit.views.valuation import (
    ComparableEvidence,
    comparable_evidence,
    comparables_map,
    evidence_html,
)
from tests.views.conftest import VALUED_AS_OF, VALUED_SUBJECT

AS_OF = VALUED_AS_OF
SUBJECT = VALUED_SUBJECT  # a London house with a dozen comparables in 3,000 records
THIN = "PK00000007"  # a Nottingham house with none


@pytest.fixture
def df(valued_frame: pd.DataFrame) -> pd.DataFrame:
    return valued_frame


@pytest.fixture(scope="module")
def evidence(valued_frame: pd.DataFrame) -> ComparableEvidence:
    """The comparable evidence of :data:`SUBJECT`, gathered once for the tests that read it."""
    return comparable_evidence(valued_frame, SUBJECT, as_of=AS_OF)


def metres(lng1: float, lat1: float, lng2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return 2 * 6_371_008.8 * math.asin(math.sqrt(h))


def traces(figure: Any) -> dict[str, Any]:
    return {trace.name: trace for trace in figure.data}


def test_the_map_marks_the_subject_its_comparables_and_the_searched_circle(df):
    found = df.pk.comparables(SUBJECT, as_of=AS_OF)
    figure = df.pk.comparables_map(SUBJECT, as_of=AS_OF, basemap="outline")
    drawn = traces(figure)
    row = df.set_index("propertyId").loc[SUBJECT]
    star = drawn["Subject"]
    assert star.marker.symbol == "star"
    assert (star.x[0], star.y[0]) == pytest.approx((row["spatial.lng"], row["spatial.lat"]))
    points = drawn["£ per m², brought to the valuation date"]
    best = found.drop_duplicates("propertyId")  # one marker a property: its best-weighted sale
    assert len(points.x) == len(best) >= 4 and len(found) >= 5
    assert list(points.marker.color) == pytest.approx(best["adjusted_price_per_sqm"].tolist())
    homes = df.set_index("propertyId").loc[best["propertyId"]]
    assert list(points.x) == pytest.approx(homes["spatial.lng"].tolist(), abs=1e-6)
    sales = found["propertyId"].value_counts()  # a home sold twice: both sales in its hover
    for pid, text in zip(best["propertyId"], points.text, strict=True):
        assert text.count("Sold ") == sales[pid]
    circle = drawn[f"Searched within {found.attrs['radius_m'] / 1000:g} km"]
    away = [
        metres(row["spatial.lng"], row["spatial.lat"], x, y)
        for x, y in zip(circle.x, circle.y, strict=True)
    ]
    assert away == pytest.approx([found.attrs["radius_m"]] * len(away), rel=0.01)
    assert any(trace.meta == "basemap" for trace in figure.data)  # the offline outline


def test_a_frame_served_in_pence_is_mapped_in_pounds(df, valued_frame_in_pence):
    in_pence = valued_frame_in_pence  # the same records, every sale price in pence
    pounds = traces(comparables_map(df, SUBJECT, as_of=AS_OF, basemap="none"))
    served = traces(comparables_map(in_pence, SUBJECT, as_of=AS_OF, basemap="none"))
    name = "£ per m², brought to the valuation date"
    assert list(served[name].marker.color) == pytest.approx(list(pounds[name].marker.color))


def test_a_subject_the_frame_does_not_hold_is_mapped_where_it_is(df):
    home = df.set_index("propertyId").loc[SUBJECT]
    subject = {"lat": home["spatial.lat"] + 0.001, "lng": home["spatial.lng"], "beds": 5,
               "floorAreaSqM": home["floorAreaSqM"], "propertyType": "detached"}  # fmt: skip
    figure = comparables_map(df, subject, as_of=AS_OF, basemap="none")
    star = traces(figure)["Subject"]
    assert star.y[0] == pytest.approx(subject["lat"])
    assert "the subject" in figure.layout.title.text


def test_bad_subjects_are_refused_in_words(df):
    with pytest.raises(InvalidInput, match="not a propertyId"):
        comparables_map(df, "NO-SUCH-ID", basemap="none")
    with pytest.raises(InvalidInput, match="lacks"):
        comparables_map(df, {"lat": 51.5, "lng": -0.1}, basemap="none")


def test_the_range_and_the_table_agree_with_the_valuation(df, evidence):
    found = evidence  # comparable_evidence(df, SUBJECT, as_of=AS_OF)
    value = df.pk.valuation([SUBJECT], as_of=AS_OF).iloc[0]
    page = evidence_html(found)
    for amount in (value["estimate"], value["lower"], value["upper"]):
        assert f"£{amount:,.0f}" in page
    assert page.count("<tr>") == 1 + len(found.comparables)
    assert "8 in 10" in page and "repeat-sales index" in page
    assert "attrs" not in page and "adjusted_price" not in page and "NaN" not in page


def test_too_little_evidence_says_so_and_gives_no_value(df):
    page = evidence_html(comparable_evidence(df, THIN, as_of=AS_OF))
    assert "No estimate" in page and "rather than a guess" in page
    assert "£" not in page.split("</strong>")[0]


def test_text_from_the_data_is_escaped_in_the_map_and_the_table(df):
    df = df.copy()  # the shared frame is left as it is
    near = df["propertyId"].isin([SUBJECT, "PK00002234"])
    assert near.sum() == 2
    df.loc[near, "address.displayAddress"] = '<img src=x onerror="alert(1)">'
    page = evidence_html(comparable_evidence(df, SUBJECT, as_of=AS_OF))
    figure = comparables_map(df, SUBJECT, as_of=AS_OF, basemap="none")
    assert "<img" not in page and "&lt;img src=x" in page
    assert "<img" not in figure.layout.title.text
    assert all("<img" not in text for text in traces(figure)["Subject"].text)


def test_the_own_earlier_sale_is_said_in_words(evidence):
    found = evidence  # comparable_evidence(df, SUBJECT, as_of=AS_OF)
    assert found.comparables["own_sale"].any()
    assert "own earlier sale" in evidence_html(found)
    assert np.isfinite(found.lat) and np.isfinite(found.lng)
