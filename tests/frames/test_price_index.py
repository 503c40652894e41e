"""Index weights that hold on real-shaped sales: interval weights only where dispersion grows with
the time held, outlier pairs damped (the sandbox's ``realism="real"`` data against its truth)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames import price_index
from propertykit.frames._pair_weights import huber_weights
from propertykit.sandbox import generate_records, true_price_index
from propertykit.sandbox._tables import TOWNS

pytestmark = pytest.mark.timeout(300)

REGIONS = {town.local_authority: town.region for town in TOWNS}


def region_sales(realism: str, region: str = "South East", homes: int = 20_000) -> pd.DataFrame:
    sales = pk.frame(generate_records(homes, realism=realism)).pk.sales()
    return sales[sales["councilTax.localAuthority"].map(REGIONS) == region]


@pytest.fixture(scope="module")
def real_sales() -> pd.DataFrame:
    """Sales of the South East's homes among 20,000 real-shaped ones: quick resales vary most,
    3.5 % of sales are outliers."""
    return region_sales("real")


def worst_error(index: pd.DataFrame, region: str = "South East") -> float:
    truth = true_price_index(region)
    both = index.assign(year=index["period"].dt.year).merge(truth, on="year")
    assert len(both) == len(truth)
    return float((both["index_x"] / both["index_y"] - 1).abs().max())


def quiet_index(sales: pd.DataFrame, **options: object) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.frames.FewPairsWarning)
        return price_index(sales, min_pairs=20, **options)  # type: ignore[arg-type]


def test_on_real_shaped_sales_auto_uses_equal_weights_and_says_why(
    real_sales: pd.DataFrame,
) -> None:
    index = quiet_index(real_sales)
    said = index.attrs["weights"]
    assert (said["asked"], said["used"]) == ("auto", "equal")
    group = said["groups"]["all sales"]
    # the raw residuals' dispersion falls with the time held (slope -0.0007, t -1.8): down 25 %
    assert group["slope"] < 0 and group["growth"] < -0.15
    assert "does not grow significantly and markedly" in said["reason"]
    assert f"(down {-group['growth']:.0%} over the holds, t = {group['t']:.1f})" in said["reason"]
    assert said["rule"].startswith("interval weights where the squared first-stage residuals")
    assert said["outlier_pairs"] > 0 and "outlying pairs given less weight" in said["reason"]


def raw_dispersion_slope(sales: pd.DataFrame) -> float:
    """The slope of the squared residuals of plain least squares (a dense design matrix, no
    outlier damped) on the years held: what ``"auto"`` decides on."""
    table = sales[["propertyId", "date", "price"]].sort_values(["propertyId", "date"])
    table["year"] = table["date"].dt.year
    earlier = table.groupby("propertyId").shift()
    pairs = table.assign(first=earlier["year"], before=earlier["price"],
                         held=(table["date"] - earlier["date"]).dt.days / 365.25)  # fmt: skip
    pairs = pairs.dropna(subset=["first"])
    pairs = pairs[pairs["first"] != pairs["year"]]
    periods = np.unique(np.concatenate([pairs["first"], pairs["year"]]))
    design = np.zeros((len(pairs), len(periods)))
    rows = np.arange(len(pairs))
    design[rows, np.searchsorted(periods, pairs["first"])] = -1
    design[rows, np.searchsorted(periods, pairs["year"])] = 1
    target = np.log(pairs["price"].to_numpy() / pairs["before"].to_numpy())
    beta = np.linalg.lstsq(design[:, 1:], target, rcond=None)[0]
    squared = (target - design[:, 1:] @ beta) ** 2
    return float(np.polyfit(pairs["held"].to_numpy(), squared, 1)[0])


def test_auto_decides_on_the_residuals_before_outliers_are_damped(
    real_sales: pd.DataFrame,
) -> None:
    # Damping first shrinks the quick resales, which vary most; the test must not see that.
    town = real_sales[real_sales["address.town"] == real_sales["address.town"].mode()[0]]
    robust = price_index(town, min_pairs=1).attrs["weights"]["groups"]["all sales"]
    textbook = price_index(town, min_pairs=1, robust=False).attrs["weights"]["groups"]
    assert robust["outlier_pairs"] > 0
    assert (robust["slope"], robust["t"]) == (textbook["all sales"]["slope"],
                                              textbook["all sales"]["t"])  # fmt: skip
    assert robust["slope"] == pytest.approx(raw_dispersion_slope(town), rel=1e-9)


def held_pairs(homes: int, variance: Callable[[np.ndarray], np.ndarray]) -> pd.DataFrame:
    """Homes sold twice, prices up 4 % a year, each pair's log ratio of the given variance for
    its years held (0.1 to 12)."""
    draws = np.random.default_rng(45)
    start, held = draws.uniform(0, 12, homes), draws.uniform(0.1, 12, homes)
    log_ratio = 0.04 * held + draws.normal(0, 1, homes) * np.sqrt(variance(held))
    day = pd.Timestamp("2000-01-01") + pd.to_timedelta(
        np.column_stack([start, start + held]).ravel() * 365.25, unit="D"
    )
    prices = np.column_stack([np.full(homes, 1e5), 1e5 * np.exp(log_ratio)]).ravel()
    return pd.DataFrame({"propertyId": np.repeat(np.arange(homes), 2), "date": day,
                         "price": prices})  # fmt: skip


def test_a_significant_but_small_growth_of_dispersion_keeps_equal_weights() -> None:
    # the variance grows by 2 % a year: significant on 20,000 pairs, too little to weight by
    index = quiet_index(held_pairs(20_000, lambda held: 0.004 * (1 + 0.02 * held)))
    said = index.attrs["weights"]
    group = said["groups"]["all sales"]
    assert group["t"] > 1.96 and 0 < group["growth"] < 0.5
    assert said["used"] == "equal"
    assert f"(up {group['growth']:.0%} over the holds" in said["reason"]


def test_a_marked_growth_of_dispersion_takes_interval_weights() -> None:
    index = quiet_index(held_pairs(3_000, lambda held: 0.002 + 0.0008 * held))
    group = index.attrs["weights"]["groups"]["all sales"]
    assert index.attrs["weights"]["used"] == "interval"
    assert group["t"] > 1.96 and group["growth"] > 1.5


def test_on_real_shaped_sales_the_index_stays_within_2_percent_of_the_truth(
    real_sales: pd.DataFrame,
) -> None:
    robust = worst_error(quiet_index(real_sales))
    textbook = worst_error(quiet_index(real_sales, weights="interval", robust=False))
    print(f"worst yearly error: auto {robust:.1%}, Case-Shiller as in the textbook {textbook:.1%}")
    assert robust < 0.02
    assert textbook > 0.04  # the outliers bend the textbook regression


def test_where_dispersion_grows_with_the_time_held_auto_chooses_interval_weights() -> None:
    # The 5,000 homes of the sandbox's world, often drawn already in the process (919 pairs in
    # the South East): t = 7.0 against 1.96 (6,000 gave 7.7, 12,000 gave 11.0)
    sales = region_sales("textbook", homes=5_000)
    index = quiet_index(sales)
    said = index.attrs["weights"]
    assert said["used"] == "interval" and said["groups"]["all sales"]["t"] > 1.96
    assert said["reason"].startswith("interval weights: the pairs' dispersion grows")
    assert index["index"].equals(quiet_index(sales, weights="interval")["index"])


def test_weights_by_group_are_chosen_per_group_and_named(real_sales: pd.DataFrame) -> None:
    index = quiet_index(real_sales, by="address.town", weights="equal")
    said = index.attrs["weights"]
    assert said["used"] == "equal" and said["reason"].startswith("equal weights, as asked;")
    assert set(said["groups"]) == set(index["address.town"])


def test_unknown_weights_are_refused() -> None:
    sales = pd.DataFrame(
        {"propertyId": ["A"], "date": pd.to_datetime(["2020-01-01"]), "price": [1]}
    )
    with pytest.raises(InvalidInput, match="weights must be one of auto, interval, equal"):
        price_index(sales, weights="case-shiller")  # type: ignore[arg-type]


def test_huber_distances_are_measured_from_the_median_residual() -> None:
    # residuals centred at 0.3 (as a group's residuals can be, when its outliers lie on one
    # side): only the one far from the rest is damped, however far the centre is from 0
    residuals = 0.3 + np.random.default_rng(1).uniform(-0.03, 0.03, 200)
    residuals[0] = 0.9
    damped = huber_weights(residuals)
    assert damped[0] < 0.5 and (damped[1:] == 1).all()  # from 0, all 200 were


@pytest.mark.parametrize("freq", ["year", "quarter", "month"])
def test_every_period_is_a_row_or_named_as_merged_at_every_frequency(
    real_sales: pd.DataFrame, freq: str
) -> None:
    # a thin town: its last years share one level, which attrs must say as the warning does
    town = real_sales[real_sales["address.town"] == real_sales["address.town"].mode()[0]]
    with pytest.warns(pk.frames.FewPairsWarning, match="periods merged"):
        index = price_index(town, freq=freq)  # type: ignore[arg-type]
    merged = [item["periods"] for item in index.attrs["merged"]]
    assert merged and all(item["group"] == "all sales" for item in index.attrs["merged"])
    runs = {run[0]: run for run in merged}
    covered = [p for period in index["period"].astype(str) for p in runs.get(period, [period])]
    first, last = index["period"].iloc[0], pd.Period(covered[-1], freq=index["period"].dt.freq)
    assert covered == [str(p) for p in pd.period_range(first, last)]
