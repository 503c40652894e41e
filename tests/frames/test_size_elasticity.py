"""The size elasticity: recovered per type on the sandbox's real-shaped world, net of location and
time, and a fit that cannot be believed falls back and says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.frames import SizeElasticity, fit_size_elasticity
from propertykit.frames._size_elasticity import MIN_SALES, PLAUSIBLE
from propertykit.sandbox import generate_records
from propertykit.sandbox._valuation import SIZE_ELASTICITY

pytestmark = pytest.mark.timeout(300)


def fit_on_sales(sales: pd.DataFrame, period: str = "Q") -> tuple[SizeElasticity, pd.Index]:
    """The fit as a caller makes it from a sales table with floor areas: outcodes and quarters
    as the fixed effects."""
    kind, kinds = pd.factorize(sales["propertyType"].astype(str), sort=True)
    fit = fit_size_elasticity(
        np.log(sales["floorAreaSqM"].to_numpy(dtype=float, na_value=np.nan)),
        np.log(sales["price_per_sqm"].to_numpy(dtype=float, na_value=np.nan)),
        kind,
        len(kinds),
        group=pd.factorize(sales["address.outcode"])[0],
        period=pd.factorize(sales["date"].dt.to_period(period))[0],
    )
    return fit, kinds


@pytest.fixture(scope="module")
def real_sales() -> pd.DataFrame:
    """The sales of 20,000 real-shaped homes (about 38,800), with each home's floor area."""
    df = pk.frame(generate_records(20_000, realism="real"))
    return df.pk.sales().merge(df[["propertyId", "floorAreaSqM"]], on="propertyId")


def test_on_real_shaped_sales_each_type_recovers_the_worlds_size_effect(
    real_sales: pd.DataFrame,
) -> None:
    # The world prices every type's £/m² by (area / 85) ** -0.2 (sandbox/_valuation.py). Per
    # type the fit lands within 0.07 of it (bungalows, 2,239 sales over a narrow range of
    # areas, are furthest: -0.14), the four types with 5,000 sales or more within 0.035, and
    # the pooled slope within 0.01.
    fit, kinds = fit_on_sales(real_sales)
    print(dict(zip(kinds, fit.slope.round(3), strict=True)), round(fit.pooled, 3))
    assert np.abs(fit.slope - SIZE_ELASTICITY).max() < 0.07
    large = fit.count >= 5_000
    assert large.sum() == 4 and np.abs(fit.slope[large] - SIZE_ELASTICITY).max() < 0.035
    assert abs(fit.pooled - SIZE_ELASTICITY) < 0.01
    assert all(note.startswith("fitted on ") for note in fit.notes)
    assert fit.count.sum() > 35_000  # nearly every sale informs the fit


def test_quarters_and_years_as_the_periods_agree(real_sales: pd.DataFrame) -> None:
    quarters, _ = fit_on_sales(real_sales, "Q")
    years, _ = fit_on_sales(real_sales, "Y")
    assert np.abs(quarters.slope - years.slope).max() < 0.03


def confounded_world(draws: np.random.Generator, sales: int = 20_000) -> dict[str, np.ndarray]:
    """Two kinds (elasticity -0.15 and -0.30) where larger homes stand in cheaper places and
    are sold in later, dearer years: a line through all sales mistakes both for size."""
    group = draws.integers(0, 200, sales)
    period = draws.integers(0, 40, sales)
    kind = draws.integers(0, 2, sales)
    place = draws.normal(0, 0.3, 200)  # log £/m² of each place
    log_area = 4.4 - 0.8 * place[group] + 0.01 * period + draws.normal(0, 0.2, sales)
    slope = np.array([-0.15, -0.30])[kind]
    log_price = 8 + place[group] + 0.03 * period + slope * log_area + draws.normal(0, 0.1, sales)
    return {"log_area": log_area, "log_price": log_price, "kind": kind, "group": group,
            "period": period}  # fmt: skip


def test_location_and_time_are_not_taken_for_size() -> None:
    world = confounded_world(np.random.default_rng(45))
    args = (world["log_area"], world["log_price"], world["kind"], 2)
    naive = fit_size_elasticity(*args)
    fit = fit_size_elasticity(*args, group=world["group"], period=world["period"])
    assert np.abs(naive.fitted - [-0.15, -0.30]).min() > 0.25  # the plain line is far off
    assert np.abs(fit.slope - [-0.15, -0.30]).max() < 0.02
    without_time = fit_size_elasticity(*args, group=world["group"])
    assert np.abs(without_time.fitted - [-0.15, -0.30]).min() > 0.3  # time matters too


def test_a_slope_of_the_wrong_sign_falls_back_to_the_pooled_one_and_says_so() -> None:
    draws = np.random.default_rng(3)
    kind = np.repeat([0, 1, 2], 2_000)
    log_area = np.log(draws.uniform(40, 200, len(kind)))
    slope = np.array([-0.2, -0.25, 0.1])[kind]  # kind 2: larger homes dearer per m²
    log_price = 8 + slope * log_area + draws.normal(0, 0.05, len(kind))
    fit = fit_size_elasticity(log_area, log_price, kind, 3)
    assert fit.fitted[2] > 0.05
    assert fit.slope[2] == fit.pooled < 0
    assert fit.notes[2] == (
        f"fitted slope {fit.fitted[2]:+.2f} has the wrong sign: the pooled slope {fit.pooled:+.2f}"
    )
    assert fit.notes[0] == f"fitted on 2,000 sales: {fit.fitted[0]:+.2f}"


def test_when_every_slope_has_the_wrong_sign_no_size_adjustment_is_made() -> None:
    draws = np.random.default_rng(4)
    log_area = np.log(draws.uniform(40, 200, 500))
    fit = fit_size_elasticity(log_area, 8 + 0.2 * log_area, np.zeros(500, dtype=int), 1)
    assert fit.pooled == 0.0 and fit.slope.tolist() == [0.0]
    assert fit.pooled_note == (
        "fitted slope +0.20 has the wrong sign: taken as 0 (no size adjustment)"
    )
    assert fit.adjustment(np.array([0]), np.array([150.0]), np.array([60.0])).tolist() == [1.0]


def test_a_kind_with_too_few_sales_takes_the_pooled_slope_and_says_how_many() -> None:
    draws = np.random.default_rng(5)
    kind = np.array([0] * 1_000 + [1] * (MIN_SALES - 1))
    log_area = np.log(draws.uniform(40, 200, len(kind)))
    log_price = 8 + np.array([-0.2, -0.5])[kind] * log_area + draws.normal(0, 0.05, len(kind))
    fit = fit_size_elasticity(log_area, log_price, kind, 3)  # kind 2 has no sale at all
    assert fit.count.tolist() == [1_000, MIN_SALES - 1, 0]
    assert fit.slope[1] == fit.slope[2] == fit.pooled
    assert fit.notes[1] == f"too few sales ({MIN_SALES - 1}): the pooled slope {fit.pooled:+.2f}"
    assert fit.notes[2] == f"too few sales (0): the pooled slope {fit.pooled:+.2f}"


def test_a_slope_steeper_than_plausible_is_clipped_and_said() -> None:
    draws = np.random.default_rng(6)
    log_area = np.log(draws.uniform(40, 200, 300))
    fit = fit_size_elasticity(log_area, 8 - 0.9 * log_area, np.zeros(300, dtype=int), 1)
    assert fit.slope[0] == PLAUSIBLE[0]
    assert fit.notes[0] == (
        "fitted slope -0.90 on 300 sales is steeper than plausible: clipped to -0.60"
    )


def test_sales_alone_in_their_place_or_time_and_unusable_values_are_not_counted() -> None:
    log_area = np.log([50.0, 60, 70, 80, 90, np.nan, 100])
    group = np.array([0, 0, 0, 0, 1, 0, -1])  # the fifth alone in its group; the last unknown
    fit = fit_size_elasticity(log_area, 8 - 0.2 * log_area, np.zeros(7, dtype=int), 1,
                              group=group)  # fmt: skip
    assert fit.count.tolist() == [4]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": np.array([0, 1, 5])}, "kind codes must be below n_kinds=2, got 5"),
        ({"group": np.array([0, 1])}, "1-D arrays of one length"),
        ({"period": np.array([0.5, 1.0, 2.0])}, "period must be integer codes"),
        ({"n_kinds": 0}, "n_kinds must be a whole number of at least 1"),
    ],
)
def test_bad_input_is_refused_in_one_line(change: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "log_area": np.log([50.0, 60, 70]),
        "log_price_per_sqm": np.log([3000.0, 2900, 2800]),
        "kind": np.array([0, 1, 1]),
        "n_kinds": 2,
    }
    arguments.update(change)
    with pytest.raises(InvalidInput, match=message):
        fit_size_elasticity(**arguments)  # type: ignore[arg-type]
