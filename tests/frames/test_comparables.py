"""A subject's comparable sales: sold strictly before the date, of its kind and size, nearby,
prices brought to the date by the index, the subject's own earlier sale flagged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames import COMPARABLE_COLUMNS, comparables
from propertykit.sandbox import generate_records

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    """3,000 real-shaped homes: subjects with five comparables within 4 km, homes sold twice."""
    return pk.frame(generate_records(3_000, realism="real"))


@pytest.fixture(scope="module")
def subject(df: pd.DataFrame) -> str:
    """The first of the first 200 homes with at least 5 comparables within 4 km in the two years
    to July 2024 (valued 50 at a time, up to the first batch that has one)."""
    for start in range(0, 200, 50):
        ids = [f"PK{i:08d}" for i in range(start, start + 50)]
        values = df.pk.valuation(ids, as_of="2024-07-01")
        fit = values.loc[~values["thin"] & (values["radius_m"] <= 4000), "propertyId"]
        if len(fit):
            return str(fit.iloc[0])
    raise AssertionError("none of the first 200 homes has 5 comparables within 4 km")


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    """50 homes, one of them (PK00000023) without a floor area: the frame each refusal reads."""
    return pk.frame(generate_records(50))


def a_subject_sold_twice(df: pd.DataFrame) -> tuple[str, pd.Timestamp]:
    """A home with a floor area whose last sale (from 2022 on) follows an earlier one."""
    sales = df.pk.sales()
    counts = sales.groupby("propertyId")["date"].agg(["count", "max"])
    sized = set(df.loc[df["floorAreaSqM"].notna() & df["spatial.lat"].notna(), "propertyId"])
    chosen = counts[(counts["count"] >= 2) & (counts["max"] >= "2022-01-01")]
    name = next(name for name in chosen.index if name in sized)
    return name, chosen.loc[name, "max"]


def test_comparables_are_sold_strictly_before_as_of_and_fit_the_subject(
    df: pd.DataFrame, subject: str
) -> None:
    home = df.set_index("propertyId").loc[subject]
    found = df.pk.comparables(subject, as_of="2024-07-01", months=24)
    assert list(found.columns[: len(COMPARABLE_COLUMNS)]) == list(COMPARABLE_COLUMNS)
    assert len(found) >= 5
    others = found[~found["own_sale"]]  # the subject's own earlier sale counts at any age
    assert (found["date"] < "2024-07-01").all() and (others["date"] >= "2022-07-01").all()
    assert (found["propertyType"] == home["propertyType"]).all()
    assert found["propertyId"].is_unique  # a home sold twice in the window counts once
    ratio = found["floorAreaSqM"] / home["floorAreaSqM"]
    assert ratio.between(1 / 1.5, 1.5).all()
    assert (found["distance_m"] <= found.attrs["radius_m"]).all()
    assert found["weight"].is_monotonic_decreasing
    assert found.attrs["criteria"].startswith("sales of the same property type")
    np.testing.assert_allclose(found["price_per_sqm"], found["price"] / found["floorAreaSqM"])


def test_the_radius_widens_only_until_enough_are_found(df: pd.DataFrame, subject: str) -> None:
    wide = df.pk.comparables(subject, as_of="2024-07-01")
    fixed = df.pk.comparables(subject, as_of="2024-07-01", radius_m=100)
    assert fixed.attrs["radius_m"] == 100 and (fixed["distance_m"] <= 100).all()
    assert wide.attrs["radius_m"] > 100 and len(wide) >= 5


def test_prices_are_brought_to_as_of_by_the_index_fitted_before_its_quarter_or_the_one_given(
    df: pd.DataFrame, subject: str
) -> None:
    found = df.pk.comparables(subject, as_of="2024-07-01")
    assert found.attrs["index"].startswith(
        "prices brought to 1 Jul 2024 by the repeat-sales index of the frame"
    )
    assert (
        "quarterly" in found.attrs["index"]
        and "sales made before 1 Jul 2024" in (found.attrs["index"])
    )
    before = df.pk.sales()
    index = pk.frames.price_index(before[before["date"] < "2024-07-01"], freq="quarter")
    periods = pd.PeriodIndex(index["period"])
    day = np.datetime64("1970-01-01", "D")
    starts = (periods.start_time.to_numpy().astype("datetime64[D]") - day).astype(float)
    ends = (periods.end_time.to_numpy().astype("datetime64[D]") - day).astype(float) + 1
    middles, logs = (starts + ends) / 2, np.log(index["index"].to_numpy(dtype=float))
    year = np.flatnonzero(middles <= middles[-1] - 300)[-1]
    trend = (logs[-1] - logs[year]) / (middles[-1] - middles[year])

    def level(when: pd.Timestamp) -> float:
        """Each quarter's level at its middle, straight lines between; past the last middle,
        its last year's trend for at most 183 days."""
        days = float((np.datetime64(when.date(), "D") - day).astype(float))
        return float(np.interp(days, middles, logs) + trend * np.clip(days - middles[-1], 0, 183))

    for _, row in found.iterrows():  # the last quarter fitted (2024Q2) carried on to the date
        moved = np.exp(level(pd.Timestamp("2024-07-01")) - level(row["date"]))
        assert row["time_adjustment"] == pytest.approx(moved)
        assert row["adjusted_price"] == pytest.approx(row["price"] * moved)
    flat = pd.DataFrame({"period": pd.period_range("1995", "2023", freq="Y"), "index": 100.0})
    unmoved = df.pk.comparables(subject, as_of="2024-07-01", index=flat)
    assert unmoved.attrs["index"].startswith("prices taken as sold: the index given")
    np.testing.assert_allclose(unmoved["adjusted_price"], unmoved["price"])


def test_the_subjects_own_earlier_sale_counts_and_is_flagged(df: pd.DataFrame) -> None:
    name, last = a_subject_sold_twice(df)
    found = df.pk.comparables(name, as_of=last + pd.Timedelta(days=1), months=600, radius_m=50)
    own = found[found["own_sale"]]
    assert len(own) >= 1 and (own["propertyId"] == name).all() and (own["distance_m"] == 0).all()
    at_the_sale = df.pk.comparables(name, as_of=last, months=600, radius_m=50)
    assert (at_the_sale["date"] < last).all()  # the sale on as_of itself is not evidence


def test_the_subjects_own_earlier_sale_counts_at_any_age_others_only_within_months(
    df: pd.DataFrame,
) -> None:
    sales = df.pk.sales().sort_values(["propertyId", "date"])
    sales["before"] = sales.groupby("propertyId")["date"].shift()
    sized = df.loc[df["floorAreaSqM"].notna() & df["spatial.lat"].notna(), "propertyId"]
    old = sales[
        sales["propertyId"].isin(sized)
        & (sales["date"] >= "2020-01-01")
        & (sales["date"] - sales["before"] > pd.Timedelta(days=5 * 365))
    ].iloc[0]
    found = df.pk.comparables(old["propertyId"], as_of=old["date"], months=24)
    own = found[found["own_sale"]]
    assert list(own["date"]) == [old["before"]]  # five years and more before: still evidence
    others = found[~found["own_sale"]]
    searched = df.pk.valuation([old["propertyId"]], as_of=old["date"], months=24)["months"]
    # others within the months asked, or (a thin subject) the months its search widened to
    assert (others["date"] >= old["date"] - pd.DateOffset(months=int(searched.iloc[0]))).all()
    # ... but only where an index brings it to the date: one that starts after it does not
    later = pd.period_range(str(old["before"].year + 1), str(old["date"].year - 1), freq="Y")
    rising = pd.DataFrame({"period": later, "index": np.linspace(100, 150, len(later))})
    unindexed = df.pk.comparables(old["propertyId"], as_of=old["date"], months=24, index=rising)
    asked = old["date"] - pd.DateOffset(months=24)
    older = unindexed[unindexed["date"] < asked]
    assert not (older["date"] < later[0].start_time).any()  # older ones only where it reaches
    assert len(unindexed) and not unindexed["own_sale"].any()


def test_a_subject_given_as_a_mapping(df: pd.DataFrame) -> None:
    subject = {"lat": 51.5, "lng": -0.13, "floorAreaSqM": 70, "beds": 2, "propertyType": "flat"}
    found = df.pk.comparables(subject, as_of="2025-01-01")
    assert len(found) and not found["own_sale"].any() and (found["propertyType"] == "flat").all()
    assert found.attrs["subject"] is None and found.attrs["subject_details"] == subject


@pytest.mark.parametrize(
    ("subject", "options", "message"),
    [
        ("PK99999999", {}, "not a propertyId of this frame"),
        (
            {"lat": 51.5, "lng": -0.1, "propertyType": "flat"},
            {},
            "subject 1: the subject lacks floorAreaSqM",
        ),
        ({"lat": "north", "lng": -0.1, "floorAreaSqM": 50, "propertyType": "flat"}, {}, "lat"),
        ("PK00000001", {"radius_m": -5}, "radius_m must be a number of metres above 0"),
        ("PK00000001", {"months": 0}, "months must be a positive whole number"),
        ("PK00000001", {"limit": 0}, "limit must be a positive whole number"),
        ("PK00000001", {"as_of": "not a date"}, "as_of must be a date"),
        ("PK00000001", {"index": pd.DataFrame({"x": [1]})}, "index must be a price index table"),
        (
            "PK00000001",
            {"index": pd.DataFrame({"period": pd.PeriodIndex(["2020"] * 2, freq="Y"), "index": 1})},
            "index must hold one index",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_problem(
    small: pd.DataFrame, subject: object, options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        comparables(small, subject, **options)  # type: ignore[arg-type]


def test_a_subject_without_floor_area_is_refused_never_guessed(small: pd.DataFrame) -> None:
    name = small.loc[small["floorAreaSqM"].isna(), "propertyId"].iloc[0]
    with pytest.raises(InvalidInput, match="no coordinates or floor area"):
        comparables(small, name)
