"""An appraisal a reader can follow and a question refused before any work: every estimate
recomputes from its schedule, the subject is described, the reconciliation sets the estimate
beside the home's own last sale and the service's figure, the range says whether it was
calibrated, and impossible searches, subjects and dates are refused naming the problem."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames import ValuationSearch, appraise, check_as_of, check_subject
from propertykit.frames._appraisal import OWN_SALE_SOURCE
from propertykit.frames._point_in_time import NOT_SIZED, TAKEN_AS_SOLD, TOO_FEW_TO_SIZE

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    """5,000 real-shaped homes: a calibrated range (on 399 earlier sales)."""
    from propertykit.sandbox import generate_records

    return pk.frame(generate_records(5_000, realism="real"))


@pytest.fixture(scope="module")
def appraisal(df: pd.DataFrame) -> pk.frames.Appraisal:
    """Every home valued as of 1 March 2025."""
    return appraise(df, as_of="2025-03-01")


@pytest.mark.slow  # a schedule per valued subject
def test_every_estimate_recomputes_from_its_schedule(appraisal: pk.frames.Appraisal) -> None:
    values = appraisal.values
    valued = np.flatnonzero(~values["thin"].to_numpy())
    assert len(valued) > 300
    for position in valued[:: len(valued) // 300]:  # 300 of them, spread over the frame
        table = appraisal.schedule(int(position))
        area = table.attrs["subject_details"]["floorAreaSqM"]
        weight, used = table["weight"].to_numpy(), table["used_price_per_sqm"].to_numpy()
        assert weight.sum() == pytest.approx(1.0)
        again = area * np.exp(np.sum(weight * np.log(used)))
        assert again == pytest.approx(values["estimate"].iloc[position], rel=1e-3)
        assert len(table) == values["comparables"].iloc[position]
        # every adjustment shown: used = adjusted £/m² x size adjustment, unless clipped
        shown = table["adjusted_price_per_sqm"] * table["size_adjustment"]
        free = ~table["clipped"].to_numpy()
        np.testing.assert_allclose(used[free], shown[free], rtol=1e-9)
        np.testing.assert_allclose(
            table["adjusted_price"], table["price"] * table["time_adjustment"], rtol=1e-12
        )


def test_sizes_are_brought_to_the_subjects_with_price_per_sqm_falling_as_homes_grow(
    appraisal: pk.frames.Appraisal,
) -> None:
    position = int(np.flatnonzero(~appraisal.values["thin"].to_numpy())[0])
    table = appraisal.schedule(position)
    area = table.attrs["subject_details"]["floorAreaSqM"]
    larger = table["floorAreaSqM"] > area  # a larger comparable's £/m² is raised, and back
    assert (table.loc[larger, "size_adjustment"] > 1).all()
    assert (table.loc[table["floorAreaSqM"] < area, "size_adjustment"] < 1).all()


def test_the_range_is_calibrated_by_rank_on_at_least_200_blind_valuations_and_says_so(
    appraisal: pk.frames.Appraisal,
) -> None:
    band = appraisal.values.attrs["band"]
    assert band["calibrated"] and band["calibrated_on"] >= 200
    assert appraisal.values["calibrated"].all()
    assert f"calibrated on {band['calibrated_on']:,}" in band["how"]
    rank = math.ceil((band["calibrated_on"] + 1) * 0.8)  # the conformal rank, said
    assert f"the {rank:,}-th smallest of their errors" in band["how"]
    values = appraisal.values[~appraisal.values["thin"]]
    ratio = values["upper"] / values["lower"]
    expected = np.where(ratio <= 1.35, "high", np.where(ratio <= 1.85, "medium", "low"))
    assert (values["confidence"].to_numpy() == expected).all()
    assert "upper end is at most 1.35 times" in appraisal.values.attrs["confidence_rule"]
    assert appraisal.values.loc[appraisal.values["thin"], "confidence"].isna().all()


def test_a_small_frame_says_its_range_is_not_calibrated_and_never_8_in_10() -> None:
    from propertykit.sandbox import generate_records

    small = pk.frame(generate_records(1_000))
    values = appraise(small, small["propertyId"].iloc[:50].tolist(), as_of="2025-01-01").values
    band = values.attrs["band"]
    assert band["calibrated_on"] < 200 and not band["calibrated"]
    assert not values["calibrated"].any()
    assert band["how"].startswith("not calibrated") and "8 in 10" not in band["how"]


def test_the_subject_is_described_and_reconciled(
    df: pd.DataFrame, appraisal: pk.frames.Appraisal
) -> None:
    sales = df.pk.sales()
    sold = sales[sales["date"] < "2025-03-01"].groupby("propertyId")["date"].max()
    values = appraisal.values
    chosen = next(
        p for p in np.flatnonzero(~values["thin"].to_numpy()) if values["propertyId"][p] in sold
    )
    name = values["propertyId"].iloc[chosen]
    described = appraisal.subject(int(chosen))
    home = df.set_index("propertyId").loc[name]
    assert described["address"] == home["address.displayAddress"]
    assert described["floorAreaSqM"] == home["floorAreaSqM"]
    assert described["tenure"] == home["tenure.type"]
    rating = home["epc.currentEnergyRating"]
    assert described["epc"] == (None if pd.isna(rating) else rating)  # None where unknown
    table = appraisal.reconciliation(int(chosen)).set_index("source")
    assert table.loc["comparables", "value"] == values["estimate"].iloc[chosen]
    own = table.loc[OWN_SALE_SOURCE]
    assert own["date"] == sold[name]
    assert own["value"] == pytest.approx(own["price"] * own["factor"])
    month = f"{own['date']:%b %Y}"
    assert own["detail"].startswith(f"brought from {month} to Mar 2025 by the repeat-sales")
    assert f"{(own['factor'] - 1) * 100:+.1f} %" in own["detail"]
    schedule = appraisal.schedule(int(chosen))
    mine = schedule.index[schedule["own_sale"].to_numpy() & (schedule["date"] == own["date"])]
    if len(mine):  # the words agree with the schedule: the same sale, the same factor
        rank, share = int(mine[0]) + 1, schedule["weight"].iloc[mine[0]]
        assert f"in the schedule as comparable {rank} ({share:.0%} of the weight)" in own["detail"]
        assert schedule["time_adjustment"].iloc[mine[0]] == pytest.approx(own["factor"])
    else:
        assert "not among the comparables" in own["detail"]
    service = table.loc["the service's estimatedSaleValue", "value"]
    assert service == home["pricing.estimatedSaleValue"]


def test_an_index_that_does_not_move_prices_says_they_were_taken_as_sold(df: pd.DataFrame) -> None:
    flat = pd.DataFrame({"period": pd.period_range("1995", "2024", freq="Y"), "index": 100.0})
    values = df.pk.valuation(df["propertyId"].iloc[:200].tolist(), as_of="2025-03-01", index=flat)
    said = values.loc[values["comparables"] > 0, "index"]
    assert len(said) and said.str.startswith(TAKEN_AS_SOLD + ": the index given").all()
    merged = pd.DataFrame({"period": pd.period_range("1995", "2018", freq="Y"), "index": 100.0})
    merged["index"] = np.linspace(100, 300, len(merged))
    home = df.set_index("propertyId").loc["PK00000042"]
    alike = {  # described by hand: no earlier sale of its own, which the index would move
        "lat": home["spatial.lat"],
        "lng": home["spatial.lng"],
        "floorAreaSqM": home["floorAreaSqM"],
        "propertyType": home["propertyType"],
    }
    moved = df.pk.valuation([alike], as_of="2025-03-01", index=merged, months=12)
    assert moved["index"].iloc[0].startswith(TAKEN_AS_SOLD)  # the index ends before the sales


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"limit": 3}, "limit 3 is below min_comparables 5: .* raise limit to at least 5"),
        ({"radius_m": 0}, "radius_m must be a number of metres above 0"),
        ({"radius_m": 9_000}, "at most 8,000"),
        ({"months": 0}, "months must be a positive whole number"),
        ({"min_comparables": 2.5}, "min_comparables must be a positive whole number"),
        ({"index": pd.DataFrame({"x": [1]})}, "index must be a price index table"),
    ],
)
def test_an_impossible_search_is_refused_when_it_is_made(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        ValuationSearch(**fields)


def test_the_accessor_refuses_a_thin_by_construction_search_before_any_work() -> None:
    empty = pd.DataFrame({"propertyId": ["PK1"], "saleHistory": [[]]})
    with pytest.raises(InvalidInput, match="limit 3 is below min_comparables 5"):
        empty.pk.valuation(limit=3)
    with pytest.raises(InvalidInput, match=r"unknown search field.*radius"):
        empty.pk.comparables("PK1", radius=500)


GOOD = {"lat": 52.95, "lng": -1.15, "floorAreaSqM": 90, "propertyType": "terraced", "beds": 3}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"lat": 95}, "lat 95.0 / lng -1.15 is not a place"),
        ({"lat": -1.15, "lng": 52.95}, "look swapped"),
        ({"propertyType": "semi"}, "'semi' is not a type this frame holds: .*semi-detached"),
        ({"floorAreaSqM": 2_400}, "outside 10-2,000 m² .*square feet.* 223.0 m²"),
        ({"floorAreaSqM": 5}, "outside 10-2,000 m²"),
        ({"floorAreaSqM": None}, "lacks floorAreaSqM"),
        ({"beds": 2.5}, "beds must be a whole number from 0 to 50"),
        ({"lng": "west"}, "lng must be a number"),
    ],
)
def test_an_impossible_subject_is_refused_naming_the_problem(
    change: dict[str, Any], message: str
) -> None:
    types = ("flat", "terraced", "semi-detached", "detached")
    with pytest.raises(InvalidInput, match=message):
        check_subject(GOOD | change, types=types)
    assert check_subject(GOOD, types=types)["beds"] == 3


def test_a_floor_area_over_twice_the_largest_of_its_type_is_refused_as_square_feet(
    df: pd.DataFrame,
) -> None:
    largest = df.loc[df["propertyType"] == GOOD["propertyType"], "floorAreaSqM"].max()
    typed = GOOD | {"floorAreaSqM": 1_100}  # 1,100 sq ft typed as m²: before, valued "thin"
    assert 2 * largest < 1_100
    with pytest.raises(InvalidInput, match=r"over twice the largest .* square feet.* 102\.2 m²"):
        appraise(df, [typed], as_of="2025-03-01")
    fine = appraise(df, [GOOD | {"floorAreaSqM": largest}], as_of="2025-03-01")
    assert len(fine.values) == 1


@pytest.mark.parametrize(
    ("as_of", "message"),
    [
        ("2025-13-45", "as_of must be a date"),
        ("2030-01-01", "after today \\(2026-11-28\\)"),
        (float("nan"), "missing date"),
    ],
)
def test_an_impossible_date_is_refused(as_of: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        check_as_of(as_of, today="2026-11-28")
    assert check_as_of(None) is None


def test_a_table_that_is_not_the_property_frame_is_refused_naming_what_it_lacks() -> None:
    with pytest.raises(InvalidInput, match="needs the property frame"):
        pd.DataFrame({"price": [1]}).pk.valuation()


def test_appraise_refuses_a_bad_date_or_subject_before_gathering_any_evidence() -> None:
    # a frame whose evidence could not even be gathered: the checks come first, naming the input
    broken = pd.DataFrame({"propertyId": ["PK1"], "saleHistory": [[{"date": "x"}]]})
    with pytest.raises(InvalidInput, match="as_of must be a date"):
        appraise(broken, ["PK1"], as_of="2025-13-45")
    with pytest.raises(InvalidInput, match="after today"):
        appraise(broken, ["PK1"], as_of="2030-01-01", today="2026-11-28")
    with pytest.raises(InvalidInput, match=r"subject 1: lat 95\.0"):
        appraise(broken, [GOOD | {"lat": 95}])


def test_the_index_note_says_what_the_schedule_shows() -> None:
    from propertykit.sandbox import generate_records

    small = pk.frame(generate_records(1_000, realism="real"))  # a yearly index, often flat
    appraisal = appraise(small, small["propertyId"].iloc[:300].tolist(), as_of="2019-03-01")
    said = appraisal.values["index"]
    assert said.str.startswith("prices brought").any()
    for position in np.flatnonzero(appraisal.values["comparables"].to_numpy() > 0):
        moved = appraisal.schedule(int(position))["time_adjustment"].to_numpy()
        if said.iloc[position].startswith(TAKEN_AS_SOLD):
            assert (moved == 1).all()
        else:
            assert said.iloc[position].startswith(
                "prices brought to 1 Mar 2019 by the repeat-sales index of the frame"
            )
            assert (moved != 1).any()


def test_the_size_note_says_what_the_schedule_shows(appraisal: pk.frames.Appraisal) -> None:
    small = appraisal.frame.iloc[:12]  # too few sales to fit a size elasticity on
    wide = ValuationSearch(radius_m=8000, min_comparables=1, months=600)
    thin = appraise(small, small["propertyId"].tolist(), as_of="2025-03-01", search=wide)
    for each in (appraisal, thin):
        said = each.values["size"]
        compared = np.flatnonzero(each.values["comparables"].to_numpy() > 0)
        for position in compared[:: max(1, len(compared) // 200)]:  # at most ~200, spread
            schedule = each.schedule(int(position))
            sized = schedule["size_adjustment"].to_numpy()
            if said.iloc[position].startswith((NOT_SIZED, TOO_FEW_TO_SIZE)):
                assert (sized == 1).all()  # before: "adjusted to the subject's size", at +0.0 %
            else:
                assert said.iloc[position].startswith("price per m² brought to the subject's")
                other = (
                    schedule["floorAreaSqM"] != schedule.attrs["subject_details"]["floorAreaSqM"]
                )
                assert (sized[other.to_numpy()] != 1).all()
    assert appraisal.values["size"].str.startswith("price per m²").any()
    assert thin.values["size"].dropna().str.startswith(TOO_FEW_TO_SIZE).all()
    assert not thin.values["size"].dropna().str.contains("+0.00", regex=False).any()


def test_a_frame_without_sales_is_valued_as_of_today_and_says_so() -> None:
    lone = pk.frame(
        [{"propertyId": "X1", "spatial": {"lat": 51.5, "lng": -0.1}, "floorAreaSqM": 50,
          "propertyType": "flat"}]
    )  # fmt: skip
    appraisal = appraise(lone, ["X1"], today="2026-11-28")
    assert appraisal.values["as_of"].iloc[0] == pd.Timestamp("2026-11-28")
    assert appraisal.values["thin"].iloc[0] and appraisal.values["comparables"].iloc[0] == 0
    assert appraisal.basis["as_of_why"] == (
        "no date was given and the frame holds no sale: valued as of today, 28 November 2026"
    )
    unsized = pk.frame([{"propertyId": "X2", "propertyType": "flat"}])
    assert appraise(unsized, ["X2"], as_of="2025-01-01").subject(0)["floorAreaSqM"] is None
