"""The sandbox's EPC certificates, and how they improve over time in a known way.

A certificate's current energy efficiency (SAP points, 1-100) is a logistic draw, rounded and
kept within 1-100, whose centre depends on the year the certificate was lodged (its
``validFrom``), the region and the property type:

    centre = start[type] + offset[region] + gain[type] x pace[region] x (year - 2009)

so every cell of (region, type) drifts towards better bands at its own pace, by whole lodgement
years. The band is the letter of the rounded score (:func:`energy_rating`), so bands always
agree with efficiencies, and the true share of each band follows from the logistic curve:
:func:`expected_epc_shares` gives it exactly, for tests that check a trend is recovered.
``validFrom`` is spread evenly over the days from :data:`LODGED_FROM` to :data:`LODGED_TO`;
``validTo`` is ten years later. The potential efficiency adds up to 60 % of the room left.

The draws come from a stream of their own, keyed by ``(seed, index)`` (BLAKE2b of the pair, three
64-bit words), not from the record's main generator, so the rest of a record does not depend on
how its certificate is drawn.

Examples
--------
>>> shares = expected_epc_shares(2015, region="North East", property_type="flat")
>>> list(shares), round(sum(shares.values()), 12)
(['A', 'B', 'C', 'D', 'E', 'F', 'G'], 1.0)
"""

from __future__ import annotations

import hashlib
import itertools
import math
from datetime import date, timedelta
from typing import Any

#: EPC bands, best first, with the lowest score of each.
_FLOORS = (("A", 92), ("B", 81), ("C", 69), ("D", 55), ("E", 39), ("F", 21), ("G", 1))
BANDS = tuple(letter for letter, _ in _FLOORS)

#: The first and last day a certificate may be lodged (``validFrom``), both included.
LODGED_FROM = date(2009, 1, 1)
LODGED_TO = date(2024, 12, 31)
_FIRST_YEAR = LODGED_FROM.year
_DAYS = (LODGED_TO - LODGED_FROM).days + 1

#: Logistic scale of the efficiency around its centre (SAP points; standard deviation x 1.81).
SPREAD = 7.0

#: property type -> (centre in 2009, gain in SAP points per year)
TYPE_DRIFT: dict[str, tuple[float, float]] = {
    "flat": (60.0, 0.8),
    "maisonette": (58.0, 0.8),
    "terraced": (54.0, 1.0),
    "semi-detached": (53.0, 1.05),
    "detached": (52.0, 1.1),
    "bungalow": (50.0, 0.9),
}
#: region -> (offset in SAP points, pace: a factor on the types' yearly gains)
REGION_DRIFT: dict[str, tuple[float, float]] = {
    "London": (1.0, 0.9),
    "South East": (1.5, 1.1),
    "East of England": (1.0, 1.05),
    "South West": (-0.5, 1.0),
    "West Midlands": (0.0, 1.0),
    "East Midlands": (0.0, 1.0),
    "North West": (-0.5, 0.95),
    "Yorkshire and the Humber": (-1.0, 0.85),
    "North East": (-0.5, 0.95),
    "Wales": (-2.0, 0.8),
    "Scotland": (0.5, 1.1),
}


def energy_rating(efficiency: int) -> str:
    """The EPC letter for an energy-efficiency score (A >= 92 ... G <= 20).

    Examples
    --------
    >>> energy_rating(75)
    'C'
    """
    for letter, lowest in _FLOORS[:-1]:
        if efficiency >= lowest:
            return letter
    return "G"


def _centre(year: int, region: str, property_type: str) -> float:
    if property_type not in TYPE_DRIFT:
        raise ValueError(f"unknown property type {property_type!r}; one of {', '.join(TYPE_DRIFT)}")
    if region not in REGION_DRIFT:
        raise ValueError(f"unknown region {region!r}; one of {', '.join(REGION_DRIFT)}")
    start, gain = TYPE_DRIFT[property_type]
    offset, pace = REGION_DRIFT[region]
    return start + offset + gain * pace * (year - _FIRST_YEAR)


def _below(score: float, centre: float) -> float:
    """P(efficiency drawn around ``centre`` < ``score``), before rounding."""
    return 1.0 / (1.0 + math.exp(-(score - centre) / SPREAD))


def expected_epc_shares(year: int, *, region: str, property_type: str) -> dict[str, float]:
    """The true share of each band A-G among certificates lodged in ``year``, for one cell.

    Parameters
    ----------
    year
        Year of ``validFrom``.
    region
        A region of :data:`REGION_DRIFT` (the ``region`` of the record's town in
        :data:`propertykit.sandbox._tables.TOWNS`).
    property_type
        The record's ``propertyType`` (a key of :data:`TYPE_DRIFT`).

    Returns
    -------
    dict
        Band letter -> probability, A first; the values sum to 1.

    Examples
    --------
    >>> early = expected_epc_shares(2010, region="Wales", property_type="terraced")
    >>> late = expected_epc_shares(2024, region="Wales", property_type="terraced")
    >>> round(early["C"], 3), round(late["C"], 3)
    (0.077, 0.258)
    """
    centre = _centre(year, region, property_type)
    # a rounded score is in a band from its floor - 0.5 to the next floor up - 0.5
    below = [1.0] + [_below(lowest - 0.5, centre) for _, lowest in _FLOORS[:-1]] + [0.0]
    return {letter: below[i] - below[i + 1] for i, letter in enumerate(BANDS)}


def expected_mean_efficiency(year: int, *, region: str, property_type: str) -> float:
    """The true mean current efficiency of certificates lodged in ``year``, for one cell.

    Examples
    --------
    >>> round(expected_mean_efficiency(2009, region="West Midlands", property_type="flat"), 1)
    60.0
    """
    centre = _centre(year, region, property_type)
    below = [_below(score + 0.5, centre) for score in range(1, 100)]  # P(rounded <= score)
    masses = [below[0]] + [b - a for a, b in itertools.pairwise(below)]
    masses.append(1.0 - below[-1])
    return sum(score * mass for score, mass in enumerate(masses, start=1))


def _uniforms(seed: int, index: int) -> tuple[float, float, float]:
    """Three uniforms in (0, 1) from the certificate's own stream."""
    digest = hashlib.blake2b(
        b"%d:%d" % (seed, index), digest_size=24, person=b"propertykit-epc"
    ).digest()
    words = (int.from_bytes(digest[i : i + 8], "big") for i in range(0, 24, 8))
    return tuple((word + 0.5) / 2.0**64 for word in words)  # type: ignore[return-value]


def _add_years(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


def draw_certificate(index: int, seed: int, *, region: str, property_type: str) -> dict[str, Any]:
    """The EPC object of the record at ``index``: ratings, efficiencies and validity dates.

    Examples
    --------
    >>> epc = draw_certificate(7, 0, region="London", property_type="flat")
    >>> epc["currentEnergyRating"] == energy_rating(epc["currentEnergyEfficiency"])
    True
    """
    day_draw, score_draw, gap_draw = _uniforms(seed, index)
    valid_from = LODGED_FROM + timedelta(days=int(day_draw * _DAYS))
    centre = _centre(valid_from.year, region, property_type)
    score = centre + SPREAD * math.log(score_draw / (1.0 - score_draw))
    current = max(1, min(100, math.floor(score + 0.5)))
    potential = current + int(gap_draw * (100 - current) * 0.6)
    return {
        "currentEnergyRating": energy_rating(current),
        "potentialEnergyRating": energy_rating(potential),
        "currentEnergyEfficiency": current,
        "potentialEnergyEfficiency": potential,
        "validFrom": valid_from.isoformat(),
        "validTo": _add_years(valid_from, 10).isoformat(),
    }
