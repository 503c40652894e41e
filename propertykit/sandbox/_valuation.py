"""The truth a valuation method is checked against: a known price per m² over space.

Under ``realism="real"`` (:func:`propertykit.sandbox.generate_records`, ``serve(realism=...)``)
every home's value follows one surface: a region's price per m² today (its average price over
85 m², from :data:`~propertykit.sandbox._tables.REGION_PRICES`), times a smooth wave over space
(neighbourhoods some kilometres across, up to about a third dearer or cheaper), times the
property type's premium, times ``(floor area / 85) ** -0.2`` (a larger home costs less per m²),
moved back in time by :func:`~propertykit.sandbox._price_index.true_price_index`. Each home then
has its own factor (log standard deviation :data:`HOME_SPREAD`), and each sale its noise (see
:mod:`propertykit.sandbox._price_index`).

:func:`true_value` gives what the surface says a home is worth on a day: the expected price of a
typical home of its kind there, without its own factor or a sale's noise, which no method can
know.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from datetime import date
from typing import Any

from propertykit.sandbox._price_index import log_level
from propertykit.sandbox._tables import PROPERTY_TYPES, REGION_PRICES, TOWNS

#: Log standard deviation of a home's own factor around the surface.
HOME_SPREAD = 0.08
#: How price per m² changes with floor area: ``(area / 85) ** SIZE_ELASTICITY``.
SIZE_ELASTICITY = -0.2
_TYPICAL_AREA = 85.0
_TYPE_PREMIUM = {kind: factor for kind, _, _, _, factor, _ in PROPERTY_TYPES}
_REGION_OF_TOWN = {town.name: town.region for town in TOWNS}
_KM_PER_DEGREE = 111.32
_TODAY = date(2025, 6, 1)  # propertykit.sandbox._data.REFERENCE_DATE (data imports this module)


def _wave(lat: float, lng: float) -> float:
    """The smooth part of the surface (log): neighbourhoods a few kilometres across."""
    x = lng * _KM_PER_DEGREE * math.cos(math.radians(lat))
    y = lat * _KM_PER_DEGREE
    return 0.18 * math.sin(2 * math.pi * x / 4.5) * math.cos(
        2 * math.pi * y / 3.7
    ) + 0.1 * math.sin(2 * math.pi * (x + y) / 9.0)


def true_price_per_sqm(
    lat: float,
    lng: float,
    *,
    region: str,
    property_type: str,
    floor_area: float,
    on: date = _TODAY,
) -> float:
    """The surface's price per m² (pounds) of a typical home of this type and size, on a day.

    Examples
    --------
    >>> round(true_price_per_sqm(51.5, -0.13, region="London", property_type="flat",
    ...                          floor_area=60, on=date(2025, 1, 1)))
    4592
    """
    if region not in REGION_PRICES:
        raise ValueError(f"unknown region {region!r}; choose one of {', '.join(REGION_PRICES)}")
    rate = REGION_PRICES[region][0] / _TYPICAL_AREA
    rate *= math.exp(_wave(lat, lng)) * _TYPE_PREMIUM.get(property_type, 1.0)
    rate *= (floor_area / _TYPICAL_AREA) ** SIZE_ELASTICITY
    return float(rate * math.exp(log_level(region, on.year) - log_level(region, _TODAY.year)))


def true_value(record: Mapping[str, Any], on: date = _TODAY) -> float:
    """What the surface says the home of a sandbox ``record`` is worth on day ``on`` (pounds).

    A real-mode record's sale on ``on`` is this times the home's own factor and the sale's
    noise; ``nan`` when the record has no floor area.

    Examples
    --------
    >>> from propertykit.sandbox import generate_record
    >>> record = generate_record(7, realism="real")
    >>> true_value(record) > 0
    True
    """
    area = record.get("floorAreaSqM")
    if area is None:
        return math.nan
    spatial = record["spatial"]
    rate = true_price_per_sqm(
        spatial["lat"],
        spatial["lng"],
        region=_REGION_OF_TOWN[record["address"]["town"]],
        property_type=record["propertyType"],
        floor_area=area,
        on=on,
    )
    return float(rate * area)


_COUNTRY_SHARE = 1 / 16  # homes out in the country under realism="real"


def real_place(draws: random.Random, lat: float, lng: float) -> tuple[float, float]:
    """Where a real-mode home stands: in town as drawn, or (one in sixteen) 6-20 km out.

    Examples
    --------
    >>> real_place(random.Random(1), 51.5, -0.1)
    (51.5, -0.1)
    """
    if draws.random() >= _COUNTRY_SHARE:
        return lat, lng
    distance_km, angle = draws.uniform(6, 20), draws.uniform(0, 2 * math.pi)
    lat += distance_km * math.sin(angle) / 111.32
    lng += distance_km * math.cos(angle) / (111.32 * math.cos(math.radians(lat)))
    return int(lat * 1e6) / 1e6, int(lng * 1e6) / 1e6


def real_value(
    draws: random.Random,
    *,
    lat: float,
    lng: float,
    region: str,
    kind: str,
    floor_area: float,
    today: date,
) -> float:
    """A real-mode home's value today: the surface's, times its own factor.

    Examples
    --------
    >>> value = real_value(random.Random(1), lat=51.5, lng=-0.1, region="London", kind="flat",
    ...                    floor_area=60, today=date(2025, 6, 1))
    >>> 200_000 < value < 600_000
    True
    """
    typical = true_price_per_sqm(
        lat, lng, region=region, property_type=kind, floor_area=floor_area, on=today
    )
    return typical * floor_area * math.exp(draws.gauss(0.0, HOME_SPREAD))
