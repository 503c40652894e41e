"""Index weights that hold on real-shaped sales: interval weights only where dispersion grows with
the time held, outlier pairs damped (the sandbox's ``realism="real"`` data against its truth)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames.price_index import price_index
from propertykit.sandbox.data import generate_records
from propertykit.sandbox.price_index import true_price_index
from propertykit.sandbox.tables import TOWNS

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
    assert group["slope"] < 0 and group["t"] < -1.96  # dispersion falls with the time held
    assert "does not grow significantly" in said["reason"]
    assert said["outlier_pairs"] > 0 and "outlying pairs given less weight" in said["reason"]


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
