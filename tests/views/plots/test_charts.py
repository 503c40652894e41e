"""Price trend and EPC charts: the right traces, the data behind them, units on the axes."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from propertykit.errors import InvalidInput
from propertykit.frames import frame
from propertykit.views._figures import EPC_COLOURS
from propertykit.views._plots import epc_chart, epc_price_chart, price_trend


def sale(date: str, price: float, kind: str = "flat") -> dict[str, object]:
    return {"date": date, "price": price, "propertyType": kind, "newBuild": False}


def record(pid: str, sales: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {"propertyId": pid, "pricing": {"currency": "GBP"}, "saleHistory": sales, **extra}


@pytest.fixture
def known_sales() -> pd.DataFrame:
    return frame(
        [
            record("P1", [sale("2020-02-01", 100_000), sale("2021-06-01", 120_000)]),
            record("P2", [sale("2020-07-15", 300_000), sale("2020-09-01", 200_000, "terraced")]),
            record("P3", [sale("2021-01-01", 180_000, "terraced")]),
        ],
        money_unit="major",
    )


def test_price_trend_draws_yearly_medians_with_counts_per_property_type(
    known_sales: pd.DataFrame,
) -> None:
    fig = price_trend(known_sales, min_sales=1)  # every sale its own point, as before pooling
    assert isinstance(fig, go.Figure)
    traces = {t.name: t for t in fig.data}
    assert set(traces) == {"flat", "terraced"}
    flat = traces["flat"]
    assert [pd.Timestamp(x).year for x in flat.x] == [2020, 2021]
    assert list(flat.y) == [statistics.median([100_000, 300_000]), 120_000]
    assert [c[0] for c in flat.customdata] == [2, 1]
    assert [c[1] for c in flat.customdata] == ["2020", "2021"]
    assert "sales" in flat.hovertemplate and "GBP" in flat.hovertemplate
    assert fig.layout.yaxis.title.text == "Median sale price (GBP)"
    assert fig.layout.xaxis.title.text == "Year of sale"


def test_price_trend_without_grouping_and_by_quarter(known_sales: pd.DataFrame) -> None:
    fig = price_trend(known_sales, by=None, freq="quarter", min_sales=1)
    (trace,) = fig.data
    drawn = [not np.isnan(y) for y in trace.y]  # a blank point breaks the line at each gap
    assert [str(pd.Timestamp(x).date()) for x, d in zip(trace.x, drawn, strict=True) if d] == [
        "2020-01-01",
        "2020-07-01",
        "2021-01-01",
        "2021-04-01",
    ]
    # 2020 Q2 and Q4 had no sales: the line breaks there
    assert [y if d else None for y, d in zip(trace.y, drawn, strict=True)] == [
        100_000, None, 250_000, None, 180_000, 120_000,
    ]  # fmt: skip
    assert [c[0] for c in trace.customdata] == [1, 0, 2, 0, 1, 1]
    assert fig.layout.xaxis.title.text == "Quarter of sale"


def test_price_trend_pools_thin_periods_and_says_how_many_sales_each_point_holds(
    known_sales: pd.DataFrame,
) -> None:
    # 5 sales from 2020 Q1 to 2021 Q2; at least 2 per point
    fig = price_trend(known_sales, by=None, freq="quarter", min_sales=2)
    (trace,) = fig.data
    counts = [c[0] for c in trace.customdata]
    assert counts == [3, 0, 2]  # 0: a blank point, as 2020 Q4 had no sales
    assert [c[1] for c in trace.customdata] == [
        "2020 Q1 to 2020 Q3", "no sales", "2021 Q1 to 2021 Q2",
    ]  # fmt: skip
    assert trace.y[0] == statistics.median([100_000, 300_000, 200_000]) and trace.y[2] == 150_000
    assert np.isnan(trace.y[1])
    assert "%{customdata[0]:,} sales" in trace.hovertemplate
    # a group with fewer sales than min_sales in all is left out, and the title says so
    assert price_trend(known_sales, min_sales=3).data[0].name == "flat"
    assert "at least 2 a point" in fig.layout.title.text
    none = price_trend(known_sales, min_sales=50)
    assert len(none.data) == 0 and "50 or more" in none.layout.title.text
    with pytest.raises(InvalidInput, match="min_sales"):
        price_trend(known_sales, min_sales=0)


def test_price_trend_legend_swatches_are_all_distinct(properties: pd.DataFrame) -> None:
    fig = price_trend(properties, by="address.town", max_groups=9)
    swatches = [(t.line.color, t.marker.symbol) for t in fig.data]
    assert len(set(swatches)) == len(swatches) >= 5
    assert len({colour for colour, _ in swatches}) == len(swatches)


def test_price_trend_by_area_lumps_small_groups_into_other(properties: pd.DataFrame) -> None:
    fig = price_trend(properties, by="address.town", max_groups=4)
    names = [t.name for t in fig.data]
    assert len(names) == 4 and names[-1] == "Other"
    sales_shown = sum(int(np.sum(t.customdata[:, 0])) for t in fig.data)
    from propertykit.frames import explode_sales

    assert sales_shown == explode_sales(properties)["date"].notna().sum()


def test_price_trend_shows_minor_units_in_major_units_and_leaves_the_frame_alone() -> None:
    # Issue 16: charts are labelled (and drawn) in pounds whatever unit the prices were served in.
    df = frame(
        [{"propertyId": "P", "saleHistory": [sale("2020-01-01", 25_000_000)]}], money_unit="minor"
    )
    fig = price_trend(df, min_sales=1)
    assert fig.layout.yaxis.title.text == "Median sale price (currency not stated)"
    assert list(fig.data[0].y) == [250_000]
    assert df.attrs["money_unit"] == "minor"
    assert df["saleHistory"].iloc[0][0]["price"] == 25_000_000


def test_price_trend_rejects_unknown_grouping_and_frequency(properties: pd.DataFrame) -> None:
    with pytest.raises(InvalidInput, match="nowhere"):
        price_trend(properties, by="nowhere")
    with pytest.raises(InvalidInput, match="fortnight"):
        price_trend(properties, freq="fortnight")  # type: ignore[arg-type]


def test_epc_chart_counts_current_and_potential_in_official_colours(
    properties: pd.DataFrame,
) -> None:
    fig = epc_chart(properties)
    current, potential = fig.data
    assert (current.name, potential.name) == ("Current", "Potential")
    assert list(current.x[0]) == ["Current rating"] * 7 and list(current.x[1]) == list("ABCDEFG")
    assert list(potential.x[0]) == ["Potential rating"] * 7
    expected = (
        properties["epc.currentEnergyRating"].value_counts().reindex(list("ABCDEFG"), fill_value=0)
    )
    assert list(current.y) == expected.tolist()
    expected = (
        properties["epc.potentialEnergyRating"]
        .value_counts()
        .reindex(list("ABCDEFG"), fill_value=0)
    )
    assert list(potential.y) == expected.tolist()
    assert list(current.marker.color) == [
        "#008054",
        "#19b459",
        "#8dce46",
        "#ffd500",
        "#fcaa65",
        "#ef8023",
        "#e9153b",
    ]
    assert current.marker.opacity == 1 and potential.marker.opacity < 1
    assert fig.layout.yaxis.title.text == "Properties (count)"


def test_the_epc_count_axis_ticks_in_whole_numbers(properties: pd.DataFrame) -> None:
    few = epc_chart(properties.head(3))
    assert few.layout.yaxis.tickformat == ",d" and few.layout.yaxis.dtick == 1
    assert few.layout.yaxis.rangemode == "tozero"
    many = epc_chart(properties)
    assert many.layout.yaxis.tickformat == ",d"


def test_epc_price_chart_boxes_follow_band_order_with_true_quartiles(
    properties: pd.DataFrame,
) -> None:
    fig = epc_price_chart(properties)
    bands = [t.x[0] for t in fig.data]
    assert bands == sorted(bands) and set(bands) <= set("ABCDEFG")
    for trace in fig.data:
        band = trace.x[0]
        prices = properties.loc[
            properties["epc.currentEnergyRating"] == band, "pricing.estimatedSaleValue"
        ].dropna()
        assert trace.median[0] == pytest.approx(prices.median())
        assert trace.q1[0] == pytest.approx(prices.quantile(0.25))
        assert trace.fillcolor == EPC_COLOURS[band]
        assert trace.name == f"{band} ({len(prices):,})"
    assert fig.layout.yaxis.title.text == "Estimated sale value (GBP)"


@pytest.mark.parametrize("chart", [price_trend, epc_chart, epc_price_chart])
def test_empty_frames_give_an_empty_figure_that_says_so(
    properties: pd.DataFrame, chart: object
) -> None:
    fig = chart(properties.iloc[:0])  # type: ignore[operator]
    assert isinstance(fig, go.Figure) and len(fig.data) == 0
    assert "no data" in fig.layout.title.text
