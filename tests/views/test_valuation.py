"""The comparable evidence, seen: one appraisal drawn as a map and as a page a reader can follow
with a calculator (the value, the property, the schedule, the reconciliation, the basis)."""

from __future__ import annotations

import html as markup
import math
import re
from typing import Any

import pandas as pd
import pytest

import propertykit.frames as frames
from propertykit.errors import InvalidInput
from propertykit.frames import Appraisal
from propertykit.views._valuation import (
    COLOUR_TITLE,
    comparable_evidence,
    comparables_map,
)
from propertykit.views._valuation_page import (
    evidence_html,
    range_only,
    rounded,
    value_range_text,
)
from tests.views.conftest import VALUED_AS_OF, VALUED_SUBJECT

AS_OF = VALUED_AS_OF
SUBJECT = VALUED_SUBJECT  # a London house with a dozen comparables in 3,000 records
THIN = "PK00000007"  # a Nottingham house with none


@pytest.fixture
def df(valued_frame: pd.DataFrame) -> pd.DataFrame:
    return valued_frame


@pytest.fixture(scope="module")
def evidence(valued_frame: pd.DataFrame) -> Appraisal:
    """The appraisal of :data:`SUBJECT`, made once for the tests that read it."""
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


def shown_schedule(page: str) -> list[list[str]]:
    """The schedule's rows as a reader sees them: each cell's text."""
    table = page[page.index('<table class="comparables">') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    return [[markup.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]


def number(text: str) -> float:
    return float(
        text.replace("\N{MINUS SIGN}", "-").replace(",", "").replace("%", "").replace("*", "")
    )


def test_the_map_marks_the_subject_its_comparables_and_the_searched_circle(df, evidence):
    found = evidence.schedule(0)
    figure = df.pk.comparables_map(SUBJECT, as_of=AS_OF, basemap="outline")
    drawn = traces(figure)
    row = df.set_index("propertyId").loc[SUBJECT]
    star = drawn["Subject"]
    assert star.marker.symbol == "star"
    assert (star.x[0], star.y[0]) == pytest.approx((row["spatial.lng"], row["spatial.lat"]))
    points = drawn[COLOUR_TITLE]
    best = found.drop_duplicates("propertyId")  # one marker a property: its best-weighted sale
    assert len(points.x) == len(best) >= 4 and len(found) >= 5
    assert list(points.marker.color) == pytest.approx(best["used_price_per_sqm"].tolist())
    homes = df.set_index("propertyId").loc[best["propertyId"]]
    assert list(points.x) == pytest.approx(homes["spatial.lng"].tolist(), abs=1e-6)
    sales = found["propertyId"].value_counts()  # a home sold twice: both sales in its hover
    for pid, hover in zip(best["propertyId"], points.customdata, strict=True):
        assert hover.count("Sold ") == sales[pid]
    # each marker is labelled with its rows of the schedule: every row once, the same home's
    numbered = {int(n): pid for pid, label in zip(best["propertyId"], points.text, strict=True)
                for n in label.split(", ")}  # fmt: skip
    assert numbered == dict(enumerate(found["propertyId"], start=1))
    assert list(star.text) == ["Subject"]
    circle = drawn[f"Searched within {found.attrs['radius_m'] / 1000:g} km"]
    away = [
        metres(row["spatial.lng"], row["spatial.lat"], x, y)
        for x, y in zip(circle.x, circle.y, strict=True)
    ]
    assert away == pytest.approx([found.attrs["radius_m"]] * len(away), rel=0.01)
    assert any(trace.meta == "basemap" for trace in figure.data)  # the offline outline


def test_the_accessor_passes_the_search_on(df):
    narrow = traces(df.pk.comparables_map(SUBJECT, as_of=AS_OF, radius_m=500, basemap="none"))
    assert "Searched within 500 m" in narrow
    with pytest.raises(InvalidInput, match="at most 8,000"):
        df.pk.comparables_map(SUBJECT, as_of=AS_OF, radius_m=9000, basemap="none")


def test_every_view_draws_one_appraisal_and_computes_nothing_again(
    df, evidence, monkeypatch: pytest.MonkeyPatch
):
    made: list[object] = []
    real = frames.appraise
    monkeypatch.setattr(frames, "appraise", lambda *a, **k: made.append(a) or real(*a, **k))
    comparables_map(df, SUBJECT, appraisal=evidence, basemap="none")
    evidence_html(evidence)
    assert made == []
    comparable_evidence(df, SUBJECT, as_of=AS_OF)
    assert len(made) == 1  # the evidence gathered once for a subject


def test_a_frame_served_in_pence_is_mapped_in_pounds(df, valued_frame_in_pence):
    in_pence = valued_frame_in_pence  # the same records, every sale price in pence
    pounds = traces(comparables_map(df, SUBJECT, as_of=AS_OF, basemap="none"))
    served = traces(comparables_map(in_pence, SUBJECT, as_of=AS_OF, basemap="none"))
    assert list(served[COLOUR_TITLE].marker.color) == pytest.approx(
        list(pounds[COLOUR_TITLE].marker.color)
    )


def test_a_subject_the_frame_does_not_hold_is_mapped_where_it_is(df):
    home = df.set_index("propertyId").loc[SUBJECT]
    subject = {"lat": home["spatial.lat"] + 0.001, "lng": home["spatial.lng"], "beds": 5,
               "floorAreaSqM": home["floorAreaSqM"], "propertyType": "detached"}  # fmt: skip
    figure = comparables_map(df, subject, as_of=AS_OF, basemap="none")
    star = traces(figure)["Subject"]
    assert star.y[0] == pytest.approx(subject["lat"])
    assert "the subject" in figure.layout.title.text


def test_bad_subjects_are_refused_in_words(df):
    with pytest.raises(InvalidInput, match="NO-SUCH-ID"):
        comparables_map(df, "NO-SUCH-ID", basemap="none")
    with pytest.raises(InvalidInput, match="floorAreaSqM"):
        comparables_map(df, {"lat": 51.5, "lng": -0.1}, basemap="none")


def test_a_reader_recomputes_the_estimate_from_the_page(evidence):
    page = evidence_html(evidence)
    row = evidence.values.iloc[0]
    schedule = shown_schedule(page)
    assert [int(cells[0]) for cells in schedule] == list(range(1, len(schedule) + 1))
    assert len(schedule) == int(row["comparables"]) == len(evidence.schedule(0))
    area = float(evidence.subject(0)["floorAreaSqM"])
    logs = 0.0
    for cells in schedule:  # floor area, price, time %, size %, £/m² used, weight %
        floor, price, time, size, used, weight = (number(c) for c in cells[3:9])
        if "*" not in cells[7]:  # not pulled back: the £/m² used is the row's own arithmetic
            assert used == pytest.approx(price / floor * (1 + time / 100) * (1 + size / 100),
                                         rel=0.002, abs=1)  # fmt: skip
        logs += weight / 100 * math.log(used)
    assert area * math.exp(logs) == pytest.approx(row["estimate"], rel=0.003)
    for cells, sale in zip(schedule, evidence.schedule(0).itertuples(), strict=True):
        home = cells[1]  # the address, and under it the type, bedrooms, tenure and new build
        assert f"{sale.propertyType}, " in home and f", {sale.tenure}, " in home
        assert "new build" in home
    weights = sum(number(cells[8]) for cells in schedule)
    assert weights == pytest.approx(100.0)  # tenths by largest remainder: exactly 100.0 %
    what = "the centre of the range" if range_only(evidence) else "the estimate"
    assert f"= £{row['estimate']:,.0f}, {what} before rounding" in markup.unescape(page)


def test_the_page_says_what_a_client_needs(evidence):
    page = markup.unescape(evidence_html(evidence))
    row = evidence.values.iloc[0]
    assert "not a RICS Red Book valuation" in page
    for heading in ("The property", "Comparable sales", "Reconciliation", "Basis"):
        assert f"<h3>{heading}</h3>" in page
    described = evidence.subject(0)
    assert f"{described['floorAreaSqM']:,.1f} m²" in page and str(described["propertyType"]) in page
    assert "Valuation date: " in page and str(row["index"]) in page
    assert "This valuation (comparable sales)" in page  # labelled beside the service's figure
    assert "attrs" not in page and "adjusted_price" not in page and "NaN" not in page
    assert re.search(r'<td class="n">[\d,.]+</td>', page)  # numbers right-aligned


def test_headline_figures_are_rounded_and_a_range_is_calibrated_before_8_in_10(evidence):
    text = value_range_text(evidence)
    row = evidence.values.iloc[0]
    assert f"£{row['lower']:,.0f}" not in text  # never to the pound
    assert rounded(row["lower"]) in text and rounded(row["upper"]) in text
    if row["confidence"] == "low":
        assert "about" not in text and "low confidence" in text
    else:
        assert f"about {rounded(row['estimate'])}" in text
    calibrated = bool(row["calibrated"])
    assert ("8 in 10" in text) == calibrated
    if calibrated:
        assert f"{evidence.values.attrs['band']['calibrated_on']:,} earlier sales" in text


def test_too_little_evidence_says_how_many_of_how_many_and_what_to_change(df):
    found = comparable_evidence(df, THIN, as_of=AS_OF, radius_m=2000)
    text = value_range_text(found)
    count = int(found.values["comparables"].iloc[0])
    sales = "1 comparable sale" if count == 1 else f"{count} comparable sales"
    assert f"{sales} found of the 5 needed, within 2 km" in text
    assert "wider radius" in text and "£" not in text
    assert "8 km" not in text.split("Try")[0]  # never a widening that was not searched


def test_text_from_the_data_is_escaped_in_the_map_and_the_page(df):
    df = df.copy()  # the shared frame is left as it is
    near = df["propertyId"].isin([SUBJECT, "PK00002234"])
    assert near.sum() == 2
    df.loc[near, "address.displayAddress"] = '<img src=x onerror="alert(1)">'
    found = comparable_evidence(df, SUBJECT, as_of=AS_OF)
    page = evidence_html(found)
    figure = comparables_map(df, SUBJECT, appraisal=found, basemap="none")
    assert "<img" not in page and "&lt;img src=x" in page
    assert "<img" not in figure.layout.title.text
    assert all("<img" not in text for text in traces(figure)["Subject"].customdata)


def test_a_low_confidence_value_is_a_range_not_a_figure(df):
    found = comparable_evidence(df, "PK00000024", as_of=AS_OF)  # a 4.4x range
    row = found.values.iloc[0]
    assert row["confidence"] == "low"
    text = value_range_text(found)
    assert f"between {rounded(row['lower'])} and {rounded(row['upper'])}" in text
    assert "about" not in text and rounded(row["estimate"]) not in text
    page = markup.unescape(evidence_html(found))  # the reconciliation gives the range too
    reconciled = page.split("<h3>Reconciliation</h3>")[1].split("<h3>")[0]
    assert f"{rounded(row['lower'])} to {rounded(row['upper'])}</td>" in reconciled
    assert rounded(row["estimate"]) not in page and "too wide" not in page


def test_the_schedule_says_distance_and_bedrooms_and_marks_the_own_sale(df):
    found = comparable_evidence(df, SUBJECT, as_of=AS_OF, radius_m=3000)
    table = found.schedule(0)
    page = markup.unescape(evidence_html(found))
    rows = page.split('class="comparables">')[1].split("</table>")[0].split("<tr>")[2:]
    assert len(rows) == len(table)
    for shown, sale in zip(rows, table.itertuples(index=False), strict=True):
        away = sale.distance_m
        said = (
            f"{away:,.0f}\N{NO-BREAK SPACE}m"
            if away < 1000
            else f"{away / 1000:,.1f}\N{NO-BREAK SPACE}km"
        )
        assert said in shown
        beds = "bedrooms not recorded" if pd.isna(sale.beds) else f"{sale.beds} bedroom"
        assert beds in shown
        assert ("own earlier sale" in shown) == bool(sale.own_sale)
        assert f"{sale.date.day}\N{NO-BREAK SPACE}{sale.date:%B} {sale.date:%Y}" in shown


def test_the_own_earlier_sale_is_marked_and_tied_to_the_reconciliation(df):
    sold = df.loc[df["propertyId"] == SUBJECT, "saleHistory"].iloc[0]
    later = pd.Timestamp(max(sale["date"] for sale in sold)) + pd.Timedelta(days=30)
    found = comparable_evidence(df, SUBJECT, as_of=later, radius_m=3000)
    table = found.schedule(0)
    assert table["own_sale"].sum() == 1
    number = int(table.index[table["own_sale"]][0]) + 1
    page = markup.unescape(evidence_html(found))
    assert f"Row {number}: this property's own earlier sale" in page
    assert f"in the schedule as comparable {number} (" in page


def test_8_in_10_is_said_of_a_calibrated_range_with_how_many_sales(world_frame):
    found = comparable_evidence(world_frame, "PK00000010", as_of="2025-06-01")
    row, band = found.values.iloc[0], found.values.attrs["band"]
    assert bool(row["calibrated"]) and band["calibrated_on"] >= 200
    text = value_range_text(found)
    assert f"8 in 10 of {band['calibrated_on']:,} earlier sales" in text


def test_no_comparable_is_drawn_in_the_sea(df):
    """A home's place 3 km or more off the land outline is implausible: not drawn as if fine,
    the title says which rows; a home outside the coarse coastline leaves the coastline out."""
    found = comparable_evidence(df, SUBJECT, as_of=AS_OF)
    rows = len(found.schedule(0))
    at_sea = df.copy()  # the same homes, every one moved 200 km east: the North Sea
    at_sea["spatial.lng"] = at_sea["spatial.lng"] + 3.0
    figure = comparables_map(at_sea, SUBJECT, as_of=AS_OF, basemap="outline")
    drawn = traces(figure)
    assert len(drawn[COLOUR_TITLE].x) == 0
    listed = ", ".join(str(n) for n in range(1, rows + 1))
    assert f"not drawn: row {listed}, whose recorded place is not plausible" in (
        figure.layout.title.text
    )
    assert not any(trace.meta == "basemap" for trace in figure.data)  # no sea drawn round it
    assert "no coastline" in figure.layout.title.text
    at_home = comparables_map(df, SUBJECT, as_of=AS_OF, basemap="outline")
    assert "not drawn" not in at_home.layout.title.text and at_home.layout.meta["coastline"]
