"""Point in time: a valuation as of D is what was knowable on D. Removing every sale made on or
after D changes nothing (values, ranges, counts, comparables), and a subject's row is the same
alone as in the company of other subjects and dates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.frames import appraise
from propertykit.sandbox import generate_records

pytestmark = pytest.mark.timeout(300)

#: Valuation dates spread over the world's history, each in another quarter and month.
DATES = ("2012-02-14", "2016-08-01", "2019-11-20", "2022-05-09", "2024-12-31", "2025-05-31")


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    """5,000 real-shaped homes."""
    return generate_records(5_000, realism="real")


@pytest.fixture(scope="module")
def df(records: list[dict[str, Any]]) -> pd.DataFrame:
    return pk.frame(records)


def before(records: list[dict[str, Any]], day: str) -> pd.DataFrame:
    """The frame as it would have been on ``day``: every sale made on or after it removed."""
    return pk.frame(
        [
            {
                **record,
                "saleHistory": [s for s in record.get("saleHistory") or [] if s["date"] < day],
            }
            for record in records
        ]
    )


def subjects_of(df: pd.DataFrame, count: int) -> list[str]:
    """Homes spread over the frame (every ``len // count``-th), with and without a floor area."""
    ids = df["propertyId"].tolist()
    return ids[:: max(1, len(ids) // count)][:count]


@pytest.mark.parametrize("day", DATES)
def test_sales_on_or_after_the_date_change_nothing(
    records: list[dict[str, Any]], df: pd.DataFrame, day: str
) -> None:
    ids = subjects_of(df, 400)
    everything = appraise(df, ids, as_of=day)
    known = appraise(before(records, day), ids, as_of=day)
    pd.testing.assert_frame_equal(everything.values, known.values, check_exact=True)
    valued = np.flatnonzero(~everything.values["thin"].to_numpy())
    assert len(valued) >= 20  # enough valued subjects for the property to bite
    found = np.flatnonzero(everything.values["comparables"].to_numpy() > 0)
    for position in found[:: max(1, len(found) // 60)]:  # 60 of them, spread
        pd.testing.assert_frame_equal(
            everything.schedule(int(position)), known.schedule(int(position)), check_exact=True
        )


@pytest.mark.slow  # nine appraisals alone
def test_a_row_is_the_same_alone_and_in_any_company(df: pd.DataFrame) -> None:
    ids = subjects_of(df, 300)
    dates = [DATES[position % len(DATES)] for position in range(len(ids))]
    together = appraise(df, ids, as_of=dates)
    valued = np.flatnonzero(~together.values["thin"].to_numpy())
    chosen = [*valued[:8], int(np.flatnonzero(together.values["thin"].to_numpy())[0])]
    for position in chosen:
        alone = appraise(df, [ids[position]], as_of=dates[position])
        pd.testing.assert_series_equal(
            alone.values.iloc[0], together.values.iloc[position], check_names=False
        )
        if together.values["comparables"].iloc[position]:
            pd.testing.assert_frame_equal(alone.schedule(0), together.schedule(int(position)))


def test_the_default_date_is_the_day_after_the_latest_sale_and_said(df: pd.DataFrame) -> None:
    appraisal = appraise(df, subjects_of(df, 3))
    latest = df.pk.sales()["date"].max()
    assert (appraisal.values["as_of"] == latest + pd.Timedelta(days=1)).all()
    assert appraisal.basis["as_of_default"] is True
    said = (latest + pd.Timedelta(days=1)).strftime("%-d %B %Y")
    assert said in appraisal.basis["as_of_why"] and "latest sale" in appraisal.basis["as_of_why"]
    given = appraise(df, subjects_of(df, 3), as_of="2024-01-01")
    assert given.basis["as_of_default"] is False
