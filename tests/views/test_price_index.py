"""The repeat-sales price index recovers the sandbox's known index, where the median does not."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from benchmarks.price_index import dense_index, synthetic_sales
from propertykit.errors import InvalidInput
from propertykit.frames import FewPairsWarning, price_index
from propertykit.sandbox import true_price_index
from propertykit.sandbox._tables import TOWNS
from propertykit.views import price_trend
from propertykit.views._price_index import index_chart

pytestmark = pytest.mark.timeout(300)

REGIONS = {town.local_authority: town.region for town in TOWNS}


@pytest.fixture(scope="module")
def world_sales(world_frame: pd.DataFrame) -> pd.DataFrame:
    """The sales of 20,000 sandbox homes (tests/views/conftest.py), with each home's region."""
    sales = world_frame.pk.sales()
    return sales.assign(region=sales["councilTax.localAuthority"].map(REGIONS))


def sales_of(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    ids, dates, prices = zip(*rows, strict=True)
    return pd.DataFrame({"propertyId": ids, "date": pd.to_datetime(dates), "price": prices})


def test_index_recovers_the_true_index_within_2_percent_a_year_where_the_median_misses(
    world_sales: pd.DataFrame,
) -> None:
    index = price_index(world_sales, by="region", min_pairs=20)
    truth = true_price_index()
    both = index.assign(year=index["period"].dt.year).merge(truth, on=["region", "year"])
    assert len(both) == len(index) == len(truth)  # every region, every year 1995-2025
    london = both[both["region"] == "London"]
    error = (london["index_x"] / london["index_y"] - 1).abs()
    assert error.max() < 0.02, london.assign(error=error).to_string()
    covered = (both["lower"] <= both["index_y"]) & (both["index_y"] <= both["upper"])
    assert covered.mean() >= 0.9  # the 95 % band holds the truth (nearly) everywhere
    # the median per year, rebased the same way, is pulled up by more detached houses later
    sold = world_sales[world_sales["region"] == "London"]
    median = sold.groupby(sold["date"].dt.year)["price"].median()
    median_error = (median / median.iloc[0] * 100 / london["index_y"].to_numpy() - 1).abs()
    assert (median_error > 0.10).sum() >= 20 and median_error.max() > 0.25


def test_the_sums_of_pairs_give_the_textbook_three_stage_regression() -> None:
    sales = synthetic_sales(60_000)
    # 10 outcodes of ~400 sales, each indexed apart (the dense regression's cost grows with
    # the square of the outcodes: 30 of them took three times as long and checked the same)
    sales = sales[sales["address.outcode"] < "OC010"]
    fast = price_index(sales, by="address.outcode", min_pairs=1, weights="interval", robust=False)
    dense = dense_index(sales, by="address.outcode")
    assert list(fast["address.outcode"]) == list(dense["address.outcode"])
    assert list(fast["period"].dt.year) == list(dense["period"])
    for column in ("index", "lower", "upper"):
        np.testing.assert_allclose(fast[column], dense[column], rtol=1e-9)


def test_the_first_period_is_100_exactly_and_later_ones_carry_a_band(
    world_sales: pd.DataFrame,
) -> None:
    index = world_sales.pipe(price_index)
    assert list(index.columns) == ["period", "index", "lower", "upper", "pairs"]
    first, rest = index.iloc[0], index.iloc[1:]
    assert (str(first["period"]), first["index"], first["lower"], first["upper"]) == (
        "1995", 100.0, 100.0, 100.0,
    )  # fmt: skip
    assert ((rest["lower"] < rest["index"]) & (rest["index"] < rest["upper"])).all()
    assert index.attrs["pairs"] == index["pairs"].sum() // 2 > 10_000
    assert index.attrs["sales"] == len(world_sales)


def test_same_home_pairs_only_and_prices_compared_in_date_order() -> None:
    sales = sales_of(
        [
            ("B", "2020-03-01", 330_000),  # rows out of order: sorted by date per home
            ("A", "2019-06-01", 100_000),
            ("B", "2019-01-01", 300_000),
            ("A", "2021-06-01", 121_000),
            ("C", "2020-01-01", 999_999),  # sold once: no pair
        ]
    )
    index = price_index(sales, min_pairs=1)
    assert index["index"].round(6).tolist() == [100.0, 110.0, 121.0]
    assert index["pairs"].tolist() == [2, 1, 1]


def test_a_period_with_too_few_pairs_is_merged_with_its_neighbour_and_said() -> None:
    rows = []
    for home in range(6):
        rows += [(f"H{home}", "2019-05-01", 100_000), (f"H{home}", "2020-05-01", 110_000)]
        rows += [(f"G{home}", "2020-02-01", 110_000), (f"G{home}", "2021-02-01", 121_000)]
    rows += [("Z", "2019-09-01", 100_000), ("Z", "2022-09-01", 133_100)]  # 2022's only pair
    with pytest.warns(FewPairsWarning, match="2021 to 2022") as said:
        index = price_index(sales_of(rows), min_pairs=3)
    assert "fewer than 3" in str(said[0].message)
    assert [str(p) for p in index["period"]] == ["2019", "2020", "2021"]
    assert index.attrs["merged"] == [{"group": "all sales", "periods": ["2021", "2022"]}]


def test_a_group_with_too_few_pairs_is_left_out_and_named(world_sales: pd.DataFrame) -> None:
    few = world_sales.assign(region=world_sales["region"].where(world_sales.index % 50 > 0, "X"))
    with pytest.warns(FewPairsWarning, match=r"left out \(1, too few pairs in all\): X"):
        index = price_index(few, by="region", min_pairs=30)
    assert "X" not in set(index["region"]) and "X" in index.attrs["groups_left_out"]


def test_sales_it_cannot_use_are_counted_not_dropped_silently() -> None:
    sales = sales_of([("A", "2019-01-01", 100), ("A", "2020-01-01", 110), ("A", "2020-06-01", 0)])
    sales.loc[len(sales)] = ["A", pd.NaT, 120]
    index = price_index(sales, min_pairs=1)
    assert index.attrs["left_out"] == {"sales without a date, a price above 0 or a propertyId": 2}
    assert index.attrs["sales"] == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"freq": "week"}, "freq must be one of"),
        ({"min_pairs": 0}, "min_pairs must be"),
        ({"by": "colour"}, "'colour'"),
    ],
)
def test_wrong_arguments_are_refused_in_plain_words(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        price_index(sales_of([("A", "2019-01-01", 100)]), **options)  # type: ignore[arg-type]


def test_the_accessor_takes_the_property_frame_and_quarters(valued_frame: pd.DataFrame) -> None:
    df = valued_frame  # 3,000 sandbox records
    by_year = df.pk.price_index()
    by_quarter = df.pk.price_index(freq="quarter", min_pairs=5)
    assert by_year.equals(price_index(df.pk.sales()))
    assert str(by_quarter["period"].iloc[0]) == "1995Q1"
    assert len(by_quarter) > 3 * len(by_year)


def test_index_chart_draws_each_group_with_its_band(world_sales: pd.DataFrame) -> None:
    figure = index_chart(world_sales, by="region", max_groups=3, min_pairs=20)
    bands, lines = figure.data[0::2], figure.data[1::2]
    pairs = price_index(world_sales, by="region", min_pairs=20).groupby("region")["pairs"].sum()
    assert [line.name for line in lines] == list(pairs.nlargest(3).index)  # the most pairs
    assert all(band.fill == "toself" and band.showlegend is False for band in bands)
    assert len(bands[0].y) == 2 * len(lines[0].y)  # upper out, lower back
    assert figure.layout.title.text.endswith("3 of 11 regions drawn)")
    assert figure.layout.yaxis.title.text == "Index (first period = 100)"


def test_index_chart_of_a_single_home_says_there_is_nothing_to_draw() -> None:
    with pytest.warns(FewPairsWarning):
        figure = index_chart(sales_of([("A", "2019-01-01", 100), ("A", "2020-01-01", 110)]))
    assert figure.data == ()
    assert "no period with 30 or more pairs of sales" in figure.layout.title.text


def test_price_trend_leaves_years_without_sales_blank() -> None:
    df = pk.frame(
        [
            {"propertyId": f"P{year}", "saleHistory": [{"date": f"{year}-05-01", "price": year}]}
            for year in (2001, 2002, 2006, 2007)
        ],
        money_unit="major",
    )
    (trace,) = price_trend(df, by=None, min_sales=1).data
    drawn = [None if np.isnan(y) else int(y) for y in trace.y]
    assert drawn == [2001, 2002, None, 2006, 2007]  # no straight line across 2003-2005
    assert trace.connectgaps in (None, False)


def test_the_report_shows_the_index_beside_the_median_and_says_which_to_trust(
    valued_page: str,
) -> None:
    page = valued_page  # the report of 3,000 sandbox records (one property valued in it)
    section = page[page.index("<h2>A price index you can trust</h2>") :]
    section = section[: section.index("</section>")].replace("\\u003cbr\\u003e", " ")
    assert "Repeat-sales index" in section and "Median sale price" in section
    found = re.search(r"Here they differ by up to (\d+)% \((\d{4})\)", section)
    assert "Trust the repeat-sales index" in section and found and int(found[1]) > 10
