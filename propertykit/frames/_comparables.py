"""What a valuation searches for (:class:`ValuationSearch`), and the comparable sales found for
every subject at once (the criteria and weights: ``docs/valuation.md``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.frames._evidence import Evidence, Subjects

#: The radii tried in turn (metres) until enough comparables are found.
RADII_M = (250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
# The largest floor-area ratio a comparable may have (either way): its price per m² is brought to
# the subject's size, so a wider band than without that adjustment (1.35) keeps more evidence;
# measured on the real-shaped world (benchmarks/valuation_accuracy.py --whole), 1.5 values 14 %
# more homes at 5,000 with a lower median error.
_AREA_RATIO = 1.5
_AREA_SCALE = 0.35  # log-ratio of floor area at which a comparable's weight falls to 1/e
# A comparable's weight halves with each this many years of age: its price is brought to the
# date by the index, so age costs less than it would as sold; on the real-shaped world 2 years
# beats 1 (median error 10.2 % -> 9.8 % at 20,000 homes, benchmarks/valuation_accuracy.py).
_HALF_LIFE_YEARS = 2.0
_OTHER_BEDS = 0.7  # weight of a comparable with another number of bedrooms
_OWN_SALE = 3.0  # weight of the subject's own earlier sale
_EARTH_RADIUS_M = 6_371_008.8
_CENTRE = (54.0, -2.5)  # the projection's fixed centre (Great Britain's middle)


@dataclass(frozen=True)
class ValuationSearch:
    """What a valuation searches for: one value, refused when impossible.

    Parameters
    ----------
    radius_m
        Search exactly this radius (metres, at most 8,000); ``None`` widens 250 m ... 8 km until
        ``min_comparables`` are found.
    months
        How far back before the valuation date a sale may be.
    limit
        The most comparables an estimate rests on (the highest weights).
    min_comparables
        The fewest comparables an estimate may rest on; below, the subject is *thin*.
    index
        ``None``: the frame's own repeat-sales index, fitted point in time; or a price index
        table (columns ``period`` and ``index``, as :func:`~propertykit.frames.price_index`
        returns without ``by``).

    Examples
    --------
    >>> ValuationSearch(limit=3)
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: limit 3 is below min_comparables 5: no estimate could ever \
rest on enough comparables; raise limit to at least 5 or lower min_comparables
    >>> ValuationSearch(radius_m=500).describe()[:46]
    'sales of the same property type, sold in the 2'
    """

    radius_m: float | None = None
    months: int = 24
    limit: int = 20
    min_comparables: int = 5
    index: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        radius = self.radius_m
        if radius is not None and not (
            isinstance(radius, (int, float, np.integer, np.floating))
            and not isinstance(radius, bool)
            and 0 < radius <= RADII_M[-1]
        ):
            raise InvalidInput(
                f"radius_m must be a number of metres above 0 and at most {RADII_M[-1]:,.0f} "
                f"(the widest search), got {radius!r}"
            )
        for name in ("months", "limit", "min_comparables"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InvalidInput(f"{name} must be a positive whole number, got {value!r}")
        if self.limit < self.min_comparables:
            raise InvalidInput(
                f"limit {self.limit} is below min_comparables {self.min_comparables}: no "
                "estimate could ever rest on enough comparables; raise limit to at least "
                f"{self.min_comparables} or lower min_comparables"
            )
        index = self.index
        if index is not None and (
            not isinstance(index, pd.DataFrame) or not {"period", "index"} <= set(index.columns)
        ):
            raise InvalidInput(
                "index must be a price index table with the columns period and index "
                "(as df.pk.price_index() returns)"
            )
        if index is not None and (len(index) == 0 or not pd.PeriodIndex(index["period"]).is_unique):
            raise InvalidInput(
                "index must hold one index (each period once): pass one group's rows of a "
                "price index made with by="
            )

    @classmethod
    def given(cls, search: ValuationSearch | None, fields: dict[str, Any]) -> ValuationSearch:
        """The search given as one value or by its fields' names (as the accessor passes them)."""
        if search is not None and fields:
            raise InvalidInput(
                f"give search= or the search's fields ({', '.join(fields)}), not both"
            )
        names = [item.name for item in dataclasses.fields(cls)]
        if unknown := sorted(set(fields) - set(names)):
            raise InvalidInput(
                f"unknown search field(s) {', '.join(unknown)}: a search takes {', '.join(names)}"
            )
        return search if search is not None else cls(**fields)

    def describe(self) -> str:
        """The criteria in plain words."""
        where = (
            f"within {self.radius_m:,.0f} m"
            if self.radius_m is not None
            else "within 250 m, widened step by step to at most 8 km until "
            f"{self.min_comparables} are found"
        )
        return (
            f"sales of the same property type, sold in the {self.months} months before the "
            "valuation date (the subject's own earlier sale at any age the index reaches), with a "
            "floor area from two-thirds to one and a half times the subject's and at most one "
            f"bedroom more or fewer, {where}; the {self.limit} with the highest weight (nearer, "
            "more recent, closer in size) are kept"
        )


@dataclass
class Matches:
    """Comparable sales found, one item per (subject, sale), grouped by subject, best first."""

    subject: np.ndarray
    sale: np.ndarray
    distance: np.ndarray
    weight: np.ndarray
    radius: np.ndarray  # per subject: the radius searched last (NaN when not searched)


def find_comparables(
    evidence: Evidence, subjects: Subjects, search: ValuationSearch, reach: np.ndarray
) -> Matches:
    """Every subject's best ``limit`` comparables at once (none depends on another subject).

    ``reach``: per subject, the first day its index brings a price from; its own sales before the
    window of ``months`` count from that day on (none where it is beyond every sale)."""
    import shapely

    months, least, limit = search.months, search.min_comparables, search.limit
    count = len(subjects.as_of)
    moments = pd.DatetimeIndex(subjects.as_of.astype("datetime64[D]").astype("datetime64[ns]"))
    shifted = (moments - pd.DateOffset(months=months)).to_numpy()  # calendar months before
    starts = np.asarray(shifted.astype("datetime64[D]").astype(np.int64))
    radii = (float(search.radius_m),) if search.radius_m is not None else RADII_M
    radius = np.full(count, np.nan)
    pending = np.flatnonzero(subjects.usable & (subjects.kind >= 0))
    radius[np.flatnonzero(subjects.usable & (subjects.kind < 0))] = radii[-1]  # none of its kind
    if not len(pending) or not len(evidence.day):
        radius[pending] = radii[-1]
        none = np.zeros(0, dtype=np.int64)
        return Matches(none, none, np.zeros(0), np.zeros(0), radius)
    pool = np.flatnonzero(
        (evidence.day >= starts[pending].min()) & (evidence.day < subjects.as_of[pending].max())
    )
    earlier = _own_earlier(evidence, subjects, pending, starts, reach)
    tree = shapely.STRtree(shapely.points(*_project(evidence.lat[pool], evidence.lng[pool])))
    where = np.full(count, None, dtype=object)
    where[pending] = shapely.points(*_project(subjects.lat[pending], subjects.lng[pending]))
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for step, searched in enumerate(radii):
        if not len(pending):
            break
        asked, hit = tree.query(where[pending], predicate="dwithin", distance=searched * 1.1 + 50)
        mine = np.isin(earlier[0], pending)
        who = np.concatenate([pending[asked], earlier[0][mine]])
        sale = np.concatenate([pool[hit], earlier[1][mine]])
        distance = _great_circle(subjects.lat[who], subjects.lng[who], sale, evidence)
        size = np.log(evidence.area[sale] / subjects.area[who])
        own = evidence.property_id[sale] == subjects.property_id[who]
        fits = (evidence.day[sale] >= starts[who]) | own
        fits &= evidence.day[sale] < subjects.as_of[who]
        fits &= (evidence.kind[sale] == subjects.kind[who]) & (distance <= searched)
        fits &= np.abs(size) <= np.log(_AREA_RATIO)
        fits &= ~(np.abs(evidence.beds[sale] - subjects.beds[who]) > 1)  # NaN: unknown, fits
        who, sale, distance = who[fits], sale[fits], distance[fits]
        radius[pending] = searched
        homes = np.unique(who * len(evidence.day) + evidence.home[sale]) // len(evidence.day)
        enough = np.bincount(homes, minlength=count) >= least
        done = enough[pending] | (step == len(radii) - 1)
        kept = np.isin(who, pending[done])
        found.append((who[kept], sale[kept], distance[kept]))
        pending = pending[~done]
    who, sale, distance = (np.concatenate(parts) for parts in zip(*found, strict=True))
    weight = _weights(evidence, subjects, who, sale, distance, radius[who])
    # a home counts once, by its best sale; ties broken by the sale's date, then its price
    ties = (evidence.price[sale], evidence.day[sale], -weight)
    at = np.lexsort((*ties, evidence.home[sale], who))
    home = evidence.home[sale[at]]
    at = at[(np.diff(who[at], prepend=-1) != 0) | (np.diff(home, prepend=-1) != 0)]
    at = at[np.lexsort((*(tie[at] for tie in ties), who[at]))]
    at = at[(np.arange(len(at)) - np.searchsorted(who[at], who[at])) < limit]  # the best each
    return Matches(who[at], sale[at], distance[at], weight[at], radius)


def _own_earlier(
    evidence: Evidence,
    subjects: Subjects,
    pending: np.ndarray,
    starts: np.ndarray,
    reach: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each subject's own sales from ``reach`` up to its window of ``months`` (those within it
    come from the search), as (subject, sale) pairs."""
    asked = pd.DataFrame({"who": pending, "id": subjects.property_id[pending]})
    sold = pd.DataFrame({"sale": np.arange(len(evidence.day)), "id": evidence.property_id})
    pairs = asked[asked["id"].notna()].merge(sold, on="id")
    who, sale = pairs["who"].to_numpy(np.int64), pairs["sale"].to_numpy(np.int64)
    before = (evidence.day[sale] < starts[who]) & (evidence.day[sale] >= reach[who])
    return who[before], sale[before]


def _weights(
    evidence: Evidence,
    subjects: Subjects,
    who: np.ndarray,
    sale: np.ndarray,
    distance: np.ndarray,
    searched: np.ndarray,
) -> np.ndarray:
    """Nearer, more recent, closer in size, same bedrooms: higher; the subject's own sale x3."""
    age_years = (subjects.as_of[who] - evidence.day[sale]) / 365.25
    size = np.log(evidence.area[sale] / subjects.area[who])
    weight = np.exp(-((distance / searched) ** 2)) * 0.5 ** (age_years / _HALF_LIFE_YEARS)
    weight *= np.exp(-((size / _AREA_SCALE) ** 2))
    weight *= np.where(evidence.beds[sale] != subjects.beds[who], _OTHER_BEDS, 1.0)
    own = evidence.property_id[sale] == subjects.property_id[who]
    weighted: np.ndarray = np.where(own, weight * _OWN_SALE, weight)
    return weighted


def _great_circle(lat: np.ndarray, lng: np.ndarray, sale: np.ndarray, evidence: Evidence) -> Any:
    """Metres from each point to its sale (haversine)."""
    phi1, phi2 = np.radians(lat), np.radians(evidence.lat[sale])
    half = (
        np.sin((phi2 - phi1) / 2) ** 2
        + np.cos(phi1) * np.cos(phi2) * np.sin(np.radians(evidence.lng[sale] - lng) / 2) ** 2
    )
    return 2 * _EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(half, 1.0)))


def _project(lat: np.ndarray, lng: np.ndarray) -> tuple[Any, Any]:
    """Lambert azimuthal equal-area coordinates (metres) about :data:`_CENTRE`."""
    phi, lam = np.radians(lat), np.radians(lng)
    phi0, lam0 = np.radians(_CENTRE[0]), np.radians(_CENTRE[1])
    cos_c = np.sin(phi0) * np.sin(phi) + np.cos(phi0) * np.cos(phi) * np.cos(lam - lam0)
    scale = _EARTH_RADIUS_M * np.sqrt(2 / np.maximum(1 + cos_c, 1e-12))
    x = scale * np.cos(phi) * np.sin(lam - lam0)
    y = scale * (np.cos(phi0) * np.sin(phi) - np.sin(phi0) * np.cos(phi) * np.cos(lam - lam0))
    return x, y
