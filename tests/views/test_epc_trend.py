"""EPC trends: band shares per period of lodgement recover the sandbox's known drift; thin
periods are pooled or left out and named; certificates without a date or a rating are counted."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import propertykit as pk
from propertykit.errors import EpcTrendWarning, InvalidInput
from propertykit.frames import UnparsedValuesWarning
from propertykit.frames._epc_trend import epc_trend, trend_columns
from propertykit.sandbox import generate_records
from propertykit.sandbox._epc_trend import (
    REGION_DRIFT,
    TYPE_DRIFT,
    draw_certificate,
    expected_epc_shares,
)
from propertykit.sandbox._tables import TOWNS
from propertykit.views import epc_trend_chart
from propertykit.views._figures import EPC_COLOURS
from tests._hypothesis import examples

BANDS = list("ABCDEFG")
SHARES = [f"share_{band}" for band in BANDS]
REGION_OF_TOWN = {town.name: town.region for town in TOWNS}


def certificate(day: str | None, rating: str | None = "D", efficiency: int = 60) -> dict[str, Any]:
    return {
        "currentEnergyRating": rating,
        "potentialEnergyRating": "B",
        "currentEnergyEfficiency": efficiency,
        "potentialEnergyEfficiency": 85,
        "validFrom": day,
    }


def properties(per_year: dict[int, int], kind: str = "flat") -> list[dict[str, Any]]:
    records = []
    for year, count in per_year.items():
        for i in range(count):
            day = f"{year}-{1 + i % 12:02d}-15"
            records.append(
                {
                    "propertyId": f"{kind}-{year}-{i}",
                    "propertyType": kind,
                    "epc": certificate(day, *(("C", 70), ("D", 60))[(i + i // 12) % 2]),
                }
            )
    return records


def quiet_trend(df: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EpcTrendWarning)
        return epc_trend(df, **kwargs)


def expected_for_mix(cells: pd.DataFrame) -> np.ndarray:
    """The true shares A-G for certificates of the given (year, region, type) rows."""
    mix = cells.groupby(["year", "region", "type"]).size()
    total = np.zeros(7)
    for (year, region, kind), count in mix.items():
        shares = expected_epc_shares(int(year), region=region, property_type=kind)
        total += count * np.array(list(shares.values()))
    return total / mix.sum()


def certificates_table(count: int, seed: int = 0) -> pd.DataFrame:
    """The sandbox's certificates for indexes 0 to ``count`` - 1, drawn by the generator its
    records use, with every (region, property type) cell equally often: an EPC table."""
    regions, kinds = list(REGION_DRIFT), list(TYPE_DRIFT)
    rows = []
    for index in range(count):
        region = regions[index % len(regions)]
        kind = kinds[(index // len(regions)) % len(kinds)]
        epc = draw_certificate(index, seed, region=region, property_type=kind)
        rows.append((region, kind, epc["currentEnergyRating"], epc["currentEnergyEfficiency"],
                     epc["potentialEnergyEfficiency"], epc["validFrom"]))  # fmt: skip
    columns = ["region", "type", "currentEnergyRating", "currentEnergyEfficiency"]
    table = pd.DataFrame(rows, columns=[*columns, "potentialEnergyEfficiency", "validFrom"])
    table["year"] = table["validFrom"].str[:4].astype(int)
    return table


@pytest.fixture(scope="module")
def drift_certificates() -> pd.DataFrame:
    """200,000 of the sandbox's certificates: about 12,500 per year lodged."""
    return certificates_table(200_000)


@pytest.fixture(scope="module")
def sandbox_frame(world_frame: pd.DataFrame) -> pd.DataFrame:
    """20,000 sandbox records (about 1,200 certificates per year lodged): tests/views/conftest."""
    return world_frame


@pytest.fixture(scope="module")
def cells(sandbox_frame: pd.DataFrame) -> pd.DataFrame:
    """Each counted certificate's year, region and property type, for the true shares."""
    epc = sandbox_frame.pk.epc(today="2025-06-01")
    rated = epc["currentEnergyRating"].notna() & epc["validFrom"].notna()
    return pd.DataFrame(
        {
            "year": epc["validFrom"].dt.year,
            "region": sandbox_frame["address.town"].map(REGION_OF_TOWN),
            "type": sandbox_frame["propertyType"].astype(str),
        }
    )[rated]


def within_four_standard_errors(share: float, truth: float, n: int) -> bool:
    return abs(share - truth) <= 4 * np.sqrt(truth * (1 - truth) / n)


# --- recovery of the sandbox's drift ---------------------------------------------------------


def test_sandbox_records_carry_the_certificates_of_the_drift_generator() -> None:
    for index, record in enumerate(generate_records(300, seed=3)):
        if record["epc"] is not None:
            region = REGION_OF_TOWN[record["address"]["town"]]
            kind = record["propertyType"]
            assert record["epc"] == draw_certificate(index, 3, region=region, property_type=kind)


@pytest.mark.timeout(600)
def test_shares_per_year_are_recovered_within_two_points(drift_certificates: pd.DataFrame) -> None:
    """Every year with 300 certificates or more: each band's share within 2 points of the truth.

    A share's sampling error is sqrt(p (1 - p) / n): 2.8 points for p = 0.4 at n = 300, so 2
    points can only be promised for samples far larger than 300 a year; here every year holds
    about 12,500 certificates (0.44 points), so 2 points is over four standard errors.
    """
    certificates = drift_certificates
    trend = epc_trend(certificates, min_count=300, pool=False)
    assert trend["label"].tolist() == [str(year) for year in range(2009, 2025)]
    assert (trend["n"] >= 300).all()
    for row in trend.itertuples():
        expected = expected_for_mix(certificates[certificates["year"] == row.period.year])
        observed = np.array([getattr(row, name) for name in SHARES])
        assert np.abs(observed - expected).max() <= 0.02, (row.label, observed, expected)
        np.testing.assert_allclose(observed.sum(), 1.0)
    early, late = trend.iloc[0], trend.iloc[-1]
    assert late["share_A_to_C"] - early["share_A_to_C"] > 0.25  # the drift is there to see
    assert late["mean_efficiency"] - early["mean_efficiency"] > 10


@pytest.mark.timeout(600)
@pytest.mark.parametrize("by", ["region", "type"])
def test_each_region_and_type_follows_its_own_drift(
    drift_certificates: pd.DataFrame, by: str
) -> None:
    certificates = drift_certificates
    trend = epc_trend(certificates, by=by, min_count=300)
    assert len(trend) == 16 * certificates[by].nunique() and not trend["pooled"].any()
    for row in trend.itertuples():
        group = getattr(row, by)
        mine = certificates[(certificates[by] == group) & (certificates["year"] == row.period.year)]
        truth = expected_for_mix(mine)
        for position, name in enumerate(SHARES):
            assert within_four_standard_errors(getattr(row, name), truth[position], row.n)
    first = trend.groupby(by).first()["share_A_to_C"]
    gain = trend.groupby(by).last()["share_A_to_C"] - first
    if by == "type":  # flats start better than detached houses, which improve faster
        assert first["flat"] > first["detached"] + 0.1 and gain["detached"] > gain["flat"]
    else:  # the South East improves faster than Wales
        assert gain["South East"] > gain["Wales"] + 0.05


@pytest.mark.timeout(600)
@pytest.mark.parametrize("by", [None, "propertyType", "address.town"])
def test_sandbox_records_recover_the_drift_within_sampling_error(
    sandbox_frame: pd.DataFrame, cells: pd.DataFrame, by: str | None
) -> None:
    """Through pk.frame and the typed EPC table, per year and group: every band's share within
    four standard errors of the truth for the records' own mix of regions and types."""
    trend = quiet_trend(sandbox_frame, by=by, min_count=300)
    rows = cells.assign(group=sandbox_frame.loc[cells.index, by] if by else "All")
    for row in trend.itertuples(index=False):
        group = row[1] if by else "All"
        years = range(row.period.year, row.period_end.year + 1)
        mine = rows[(rows["group"] == group) & rows["year"].isin(years)]
        assert len(mine) == row.n
        truth = expected_for_mix(mine)
        for position, name in enumerate(SHARES):
            share = getattr(row, name)
            assert within_four_standard_errors(share, truth[position], row.n), (row, name)


def test_shares_sum_to_one_and_counts_add_up(sandbox_frame: pd.DataFrame) -> None:
    df = sandbox_frame.iloc[:5000]
    for by in (None, "propertyType", "address.outcode"):
        trend = quiet_trend(df, by=by, freq="quarter")
        assert list(trend.columns) == trend_columns(by)
        np.testing.assert_allclose(trend[SHARES].sum(axis=1), 1.0)
        counts = trend[[f"count_{band}" for band in BANDS]].sum(axis=1)
        assert (counts == trend["n"]).all()
        attrs = trend.attrs
        assert attrs["counted"] == trend["n"].sum()
        assert attrs["counted"] + sum(attrs["left_out"].values()) == attrs["certificates"]
        assert attrs["certificates"] + attrs["without_certificate"] == len(df)
    assert quiet_trend(df)["period"].dtype == pd.PeriodDtype("Y-DEC")


def test_the_same_numbers_as_the_obvious_pandas_route(sandbox_frame: pd.DataFrame) -> None:
    df = sandbox_frame.iloc[:5000]
    trend = quiet_trend(df, by="propertyType", min_count=1).sort_values(["period", "propertyType"])
    epc = df.pk.epc(today="2025-06-01")
    keys = [epc["validFrom"].dt.year, df["propertyType"]]
    grouped = epc.groupby(keys, observed=True)
    shares = grouped["currentEnergyRating"].value_counts(normalize=True).unstack(fill_value=0)
    np.testing.assert_allclose(trend[SHARES].to_numpy(), shares[BANDS].to_numpy())
    means = grouped["currentEnergyEfficiency"].mean().to_numpy(dtype=float)
    np.testing.assert_allclose(trend["mean_efficiency"].to_numpy(), means)


# --- thin periods: pooled or left out, and said so --------------------------------------------


def test_thin_periods_are_pooled_with_neighbours_and_named() -> None:
    df = pk.frame(properties({2019: 5, 2020: 60, 2021: 60, 2022: 3}))
    with pytest.warns(EpcTrendWarning, match="pooled with their neighbours") as said:
        trend = epc_trend(df, min_count=50)
    assert trend["label"].tolist() == ["2019 to 2020", "2021 to 2022"]
    assert trend["pooled"].tolist() == [True, True] and trend["n"].tolist() == [65, 63]
    assert [str(p) for p in trend["period"]] == ["2019", "2021"]
    assert [str(p) for p in trend["period_end"]] == ["2020", "2022"]
    assert trend.attrs["pooled"] == ["2019 to 2020", "2021 to 2022"]
    assert "2019 to 2020, 2021 to 2022" in str(said[0].message)


def test_thin_periods_can_be_left_out_instead_and_are_counted() -> None:
    df = pk.frame(properties({2019: 5, 2020: 60, 2021: 60, 2022: 3}))
    with pytest.warns(EpcTrendWarning, match=r"left out \(2019, 2022: 8 certificates\)"):
        trend = epc_trend(df, min_count=50, pool=False)
    assert trend["label"].tolist() == ["2020", "2021"] and not trend["pooled"].any()
    assert trend.attrs["left_out_periods"] == ["2019", "2022"]
    assert trend.attrs["left_out"]["in periods or groups with too few certificates"] == 8


def test_a_group_with_too_few_certificates_in_all_is_left_out_and_named() -> None:
    records = properties({2020: 80}, "flat") + properties({2020: 10, 2021: 10}, "bungalow")
    with pytest.warns(EpcTrendWarning, match="bungalow: 2020, bungalow: 2021"):
        trend = epc_trend(pk.frame(records), by="propertyType", min_count=50)
    assert trend["propertyType"].tolist() == ["flat"]
    assert trend.attrs["left_out_periods"] == ["bungalow: 2020", "bungalow: 2021"]


def test_quarters_are_labelled_and_solid_periods_say_nothing() -> None:
    df = pk.frame(properties({2021: 120}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trend = epc_trend(df, freq="quarter", min_count=30)
    assert trend["label"].tolist() == ["2021 Q1", "2021 Q2", "2021 Q3", "2021 Q4"]
    assert trend["n"].tolist() == [30, 30, 30, 30]
    assert (
        trend["share_C"].tolist() == [0.5] * 4 and trend["mean_efficiency"].tolist() == [65.0] * 4
    )


# --- missing and unreadable values: counted, never a crash -------------------------------------


def test_missing_and_unreadable_dates_and_ratings_are_counted() -> None:
    records: list[dict[str, Any]] = properties({2020: 60})
    records += [
        {"propertyId": "no-date", "epc": certificate(None)},
        {"propertyId": "bad-date", "epc": certificate("2020-02-30")},
        {"propertyId": "prose-date", "epc": certificate("spring 2020")},
        {"propertyId": "no-rating", "epc": certificate("2020-05-01", None)},
        {"propertyId": "bad-rating", "epc": certificate("2020-05-01", "H")},
        {"propertyId": "no-certificate", "epc": None},
        {"propertyId": "empty-certificate", "epc": {}},
    ]
    with pytest.warns(UnparsedValuesWarning):
        df = pk.frame(records)
    with pytest.warns(EpcTrendWarning, match="5 of 65 certificates left out") as said:
        trend = epc_trend(df, min_count=10)
    assert trend["n"].tolist() == [60]
    assert trend.attrs["left_out"] == {
        "without a lodgement date (validFrom)": 1,
        "with a lodgement date that could not be read": 2,
        "without a current rating": 1,
        "with a current rating that could not be read": 1,
        "in periods or groups with too few certificates": 0,
    }
    assert trend.attrs["without_certificate"] == 2
    assert "2 with a lodgement date that could not be read" in str(said[0].message)


def test_an_epc_table_with_dates_as_text_is_read_and_odd_text_counted() -> None:
    table = pd.DataFrame(
        {
            "currentEnergyRating": [" c", "d", "D", "x", None],
            "currentEnergyEfficiency": ["70", "60", "61", "50", None],
            "potentialEnergyEfficiency": [80, 80, 80, 80, None],
            "validFrom": ["2020-01-02", "2020-03-04", "not a day", "2020-05-06", "2020-07-08"],
        }
    )
    with pytest.warns(EpcTrendWarning, match="3 of 5 certificates left out"):
        trend = epc_trend(table, min_count=1)
    assert trend[["n", "count_C", "count_D", "mean_efficiency"]].to_dict("records") == [
        {"n": 2, "count_C": 1, "count_D": 1, "mean_efficiency": 65.0}
    ]
    assert trend.attrs["left_out"]["with a lodgement date that could not be read"] == 1


ODD = st.one_of(
    st.none(),
    st.sampled_from(["2020-01-01", "2021-06-30", "2020-02-30", "", "20200101", "soon"]),
    st.sampled_from(["A", "c", " g ", "H", "", "AB"]),
    st.integers(-5, 150),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    name: ODD
                    for name in (
                        "currentEnergyRating",
                        "currentEnergyEfficiency",
                        "potentialEnergyEfficiency",
                        "validFrom",
                    )
                },
            ),
        ),
        max_size=30,
    ),
    st.sampled_from([None, "propertyType"]),
)
def test_untidy_certificates_never_raise_and_every_one_is_accounted_for(
    certificates: list[Any], by: str | None
) -> None:
    records = [
        {"propertyId": f"P{i}", "propertyType": "flat" if i % 3 else None, "epc": copy.copy(c)}
        for i, c in enumerate(certificates)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pk.frame(records)
        trend = epc_trend(df, by=by, min_count=2)
    attrs = trend.attrs
    assert attrs["counted"] + sum(attrs["left_out"].values()) == attrs["certificates"]
    if len(trend):
        np.testing.assert_allclose(trend[SHARES].sum(axis=1), 1.0)


def test_wrong_arguments_are_refused_before_any_work() -> None:
    df = pk.frame(properties({2020: 3}))
    for kwargs in ({"freq": "month"}, {"min_count": 0}, {"min_count": True}, {"by": "nope"}):
        with pytest.raises(InvalidInput):
            epc_trend(df, **kwargs)


# --- the chart -----------------------------------------------------------------------------------


def test_chart_draws_seven_bands_in_their_colours_and_pooled_bars_pale() -> None:
    df = pk.frame(properties({2019: 5, 2020: 60, 2021: 60}))
    with pytest.warns(EpcTrendWarning):
        figure = df.pk.epc_trend_chart(min_count=50)
    bars = [trace for trace in figure.data if trace.type == "bar"]
    assert [bar.name for bar in bars] == BANDS
    assert [bar.marker.color for bar in bars] == [EPC_COLOURS[band] for band in BANDS]
    assert list(bars[0].marker.opacity) == [0.45, 1.0]  # 2019 to 2020 pooled, 2021 solid
    assert bars[0].width[0] > 1.9 * bars[0].width[1]  # a pooled bar spans its two years
    assert [trace.name for trace in figure.data[7:]] == [
        "Mean efficiency now",
        "Mean potential efficiency",
    ]
    assert figure.data[7].yaxis == "y2"
    title = figure.layout.title.text
    assert "Each home's latest certificate, by the year it was lodged" in title
    assert "not of the whole housing stock" in title and "Pale bars pool years" in title


def test_chart_by_group_draws_small_multiples_and_counts_the_groups_not_drawn(
    sandbox_frame: pd.DataFrame,
) -> None:
    df = sandbox_frame.iloc[:8000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EpcTrendWarning)
        figure = epc_trend_chart(df, by="propertyType", max_groups=4)
    panels = {trace.xaxis for trace in figure.data}
    assert len(panels) == 4 and len(figure.data) == 4 * 9
    assert sum(trace.showlegend is not False for trace in figure.data) == 9  # one legend
    assert "2 smaller groups" in figure.layout.title.text


def test_chart_of_a_trend_table_draws_it_as_it_is() -> None:
    trend = quiet_trend(pk.frame(properties({2020: 60, 2021: 60})), min_count=50)
    figure = trend.pk.epc_trend_chart()
    assert list(figure.data[2].y) == [50.0, 50.0]  # share C in percent


def test_chart_with_nothing_to_draw_says_why() -> None:
    figure = pk.frame([]).pk.epc_trend_chart()
    assert figure.layout.title.text.endswith("no data (no year with 50 or more certificates)")
