"""The real-shaped sandbox world: sale prices follow a known price-per-m² surface, and the
default world is left exactly as it was."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

import propertykit as pk
from propertykit.sandbox import generate_record, generate_records
from propertykit.sandbox._geography import home
from propertykit.sandbox._tables import TOWNS
from propertykit.sandbox._valuation import HOME_SPREAD, true_price_per_sqm, true_value

pytestmark = pytest.mark.timeout(120)


def test_real_sale_prices_follow_the_surface_moved_by_the_index() -> None:
    gaps = []
    for record in generate_records(3_000, realism="real"):
        for sale in record.get("saleHistory") or []:
            on = date.fromisoformat(sale["date"])
            gaps.append(math.log(sale["price"] / true_value(record, on)))
    gaps_array = np.array([gap for gap in gaps if np.isfinite(gap)])
    assert abs(np.median(gaps_array)) < 0.03  # centred on the surface
    spread = 1.4826 * np.median(np.abs(gaps_array - np.median(gaps_array)))
    assert HOME_SPREAD < spread < 2.5 * HOME_SPREAD  # a home's own factor, drift and noise
    assert np.mean(gaps_array < -0.3) > 0.02  # and outliers sold well below value


def test_the_surface_is_smooth_over_space_and_larger_homes_cost_less_per_sqm() -> None:
    here = {"region": "London", "property_type": "flat", "floor_area": 60.0}
    step = true_price_per_sqm(51.5, -0.13, **here) / true_price_per_sqm(51.5009, -0.13, **here)
    assert abs(step - 1) < 0.02  # 100 m apart: nearly the same
    rates = [true_price_per_sqm(51.5 + k * 0.01, -0.13, **here) for k in range(10)]
    assert max(rates) / min(rates) > 1.2  # a few km: neighbourhoods differ
    larger = true_price_per_sqm(51.5, -0.13, region="London", property_type="flat", floor_area=90)
    assert larger < true_price_per_sqm(51.5, -0.13, **here)


def test_the_default_world_is_unchanged_and_real_keeps_every_other_field() -> None:
    textbook, real = generate_record(11), generate_record(11, realism="real")
    assert generate_record(11, realism="textbook") == textbook
    for name in ("propertyId", "roomDetails", "epc", "tenure", "floorAreaSqM", "tags", "yearBuilt"):
        assert real[name] == textbook[name]
    assert real["address"]["town"] == textbook["address"]["town"]  # in a postcode unit of it
    assert [sale["date"] for sale in real["saleHistory"]] == [
        sale["date"] for sale in textbook["saleHistory"]
    ]
    with pytest.raises(ValueError, match="realism must be one of textbook, real"):
        generate_record(11, realism="fancy")


def test_one_home_in_sixteen_stands_out_in_the_country() -> None:
    homes = [home(index) for index in range(20_000)]  # postcode units of 10-40: ~800 of them
    centres = {town.name: [] for town in TOWNS}
    for town in TOWNS:
        centres[town.name].append((town.lat, town.lng))
    out = [
        min(
            abs(h.lat - lat) * 111 + abs(h.lng - lng) * 70
            for lat, lng in centres[h.address["town"]]
        )
        > 5.5
        for h in homes
    ]
    assert 0.04 < np.mean(out) < 0.09


@pytest.mark.timeout(60)
def test_serve_real_answers_with_the_real_shaped_records() -> None:
    with pk.sandbox.serve(n_properties=20, realism="real") as sb:
        client = pk.Client(api_key=sb.api_key, base_url=sb.url, cache=False, progress=False)
        df = client.properties(["L00000007"])
    served = [float(sale["price"]) for sale in df["saleHistory"].iloc[0]]
    expected = [sale["price"] for sale in generate_record(7, realism="real")["saleHistory"]]
    textbook = [sale["price"] for sale in generate_record(7)["saleHistory"]]
    assert served == expected and len(served) and expected != textbook
    with pytest.raises(ValueError, match="realism must be one of"):
        pk.sandbox.Sandbox(realism="fancy")
