"""What a valuation says it did: an index given is never used before it was known, the
reconciliation says how far the index brought the own sale, a borrowed wider area is named, an
elasticity too thin to fit says so, and an unchecked range is never more than low confidence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames import ValuationSearch, appraise
from propertykit.frames._appraisal import OWN_SALE_SOURCE
from propertykit.frames._point_in_time import TOO_FEW_TO_SIZE
from propertykit.sandbox import generate_records

pytestmark = pytest.mark.timeout(300)

AS_OF = "2025-01-01"


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    """2,000 real-shaped homes: too few earlier sales to calibrate a range."""
    return pk.frame(generate_records(2_000, realism="real"))


def _resold(df: pd.DataFrame) -> list[str]:
    """Homes with a floor area sold before 2012 and not again before :data:`AS_OF`."""
    sales = df.pk.sales()
    last = sales[sales["date"] < AS_OF].groupby("propertyId")["date"].max()
    sized = set(df.loc[df["floorAreaSqM"].notna(), "propertyId"])
    return [name for name, day in last.items() if day.year < 2012 and name in sized][:40]


def test_an_index_given_that_reaches_past_the_valuation_date_is_refused(df: pd.DataFrame) -> None:
    ids = df["propertyId"].iloc[:3].tolist()
    reaching = pd.DataFrame({"period": pd.period_range("2000", "2025", freq="Y"), "index": 100.0})
    with pytest.raises(InvalidInput, match="index reaches past the valuation date") as refused:
        appraise(df, ids, as_of=AS_OF, search=ValuationSearch(index=reaching))
    assert "price_index()" not in str(refused.value)  # never the index fitted on every sale
    assert "before the earliest valuation date" in str(refused.value)
    known = pd.DataFrame({"period": pd.period_range("2000", "2024", freq="Y"), "index": 100.0})
    assert len(appraise(df, ids, as_of=AS_OF, search=ValuationSearch(index=known)).values) == 3


def test_the_reconciliation_says_how_far_the_index_brought_the_own_sale(df: pd.DataFrame) -> None:
    later = pd.period_range("2015", "2024", freq="Y")
    rising = pd.DataFrame({"period": later, "index": np.linspace(100, 150, len(later))})
    ids = _resold(df)
    appraisal = appraise(df, ids, as_of=AS_OF, search=ValuationSearch(index=rising))
    for position in range(len(ids)):
        table = appraisal.reconciliation(position).set_index("source")
        own = table.loc[OWN_SALE_SOURCE]
        detail = str(own["detail"])
        assert "brought forward by the index" not in detail
        assert detail.startswith(
            "the index starts in Jan 2015: brought from then only, the time before taken as "
            "flat; brought from Jan 2015 to Jan 2025 by the index given"
        )
        assert f"{(own['factor'] - 1) * 100:+.1f} %" in detail


def test_a_borrowed_wider_area_is_named_with_its_pairs(df: pd.DataFrame) -> None:
    borrowed = df.copy()
    borrowed.attrs = {"neighbourhood": {"wider": "outcode B13 (412 homes)"}}
    ids = df["propertyId"].iloc[:60].tolist()
    appraisal = appraise(borrowed, ids, as_of=AS_OF)
    said = appraisal.values["index"].dropna()
    assert len(said)
    whose = "the repeat-sales index of the neighbourhood and outcode B13 (412 homes)"
    assert said.str.contains(whose, regex=False).all() and said.str.contains(" pairs ").all()
    assert (
        appraisal.values["size"]
        .dropna()
        .str.contains("the sales of the neighbourhood and outcode B13 (412 homes)", regex=False)
        .all()
    )
    assert "the neighbourhood and outcode B13 (412 homes)" in appraisal.basis["method"]
    plain = appraise(df, ids, as_of=AS_OF).values["index"].dropna()
    assert plain.str.contains("the repeat-sales index of the frame", regex=False).all()


def test_too_few_sales_to_fit_an_elasticity_say_so_never_a_zero_slope(df: pd.DataFrame) -> None:
    few = df.iloc[:15]
    wide = ValuationSearch(radius_m=8000, min_comparables=1, months=600)
    said = appraise(few, few["propertyId"].tolist(), as_of=AS_OF, search=wide).values["size"]
    assert len(said.dropna()) and said.dropna().str.startswith(TOO_FEW_TO_SIZE).all()
    assert not said.dropna().str.contains("+0.00", regex=False).any()


def test_an_uncalibrated_range_is_low_confidence_and_a_range_in_the_reconciliation(
    df: pd.DataFrame,
) -> None:
    small = pk.frame(generate_records(1_000, realism="real"))  # too few sales to calibrate
    appraisal = appraise(small, small["propertyId"].iloc[:300].tolist(), as_of=AS_OF)
    values = appraisal.values
    assert not values["calibrated"].any()
    valued = np.flatnonzero(~values["thin"].to_numpy())
    assert len(valued) and (values["confidence"].iloc[valued] == "low").all()
    line = appraisal.reconciliation(int(valued[0])).set_index("source").loc["comparables"]
    assert pd.isna(line["value"]) and line["lower"] < line["upper"]
    assert "low confidence: a range, not one figure" in line["detail"]
    assert "as the frame holds it today" in appraisal.basis["method"]
