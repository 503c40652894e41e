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
#: A thin subject's search reaches back this many times the months asked, in turn, at the widest
#: radius: only to sales the index brings to the date (a valuer's older evidence, adjusted).
_LONGER_BACK = (2, 4)
_OTHER_BEDS = 0.7  # weight of a comparable with another number of bedrooms
_OWN_SALE = 3.0  # weight of the subject's own earlier sale
# years between build dates at which a comparable's weight falls to 1/e (both known; unknown:
# no change): a 1930s semi and a 2010s one differ in more than floor area says
_BUILT_SCALE_YEARS = 40.0
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
        returns without ``by``) whose periods all end before the valuation date (one reaching
        past it was fitted with later sales, and is refused when the dates are known).

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
        reach_words = (
            f"within {self.radius_m:,.0f} m"
            if self.radius_m is not None
            else "within 250 m, widened step by step to at most 8 km until "
            f"{self.min_comparables} are found"
        )
        return (
            f"sales of the same property type, sold in the {self.months} months before the "
            f"valuation date (where fewer than {self.min_comparables} are found, then in the "
            f"{self.months * _LONGER_BACK[0]} and the {self.months * _LONGER_BACK[-1]} months "
            "before it, as far back as the index reaches; the subject's own earlier sale at any "
            "age the index reaches), with a "
            "floor area from two-thirds to one and a half times the subject's and at most one "
            f"bedroom more or fewer, {reach_words}; the {self.limit} with the highest weight "
            "(nearer, more recent, closer in size, built in similar years where known) are kept"
        )


@dataclass
class Matches:
    """Comparable sales found, one item per (subject, sale), grouped by subject, best first."""

    subject: np.ndarray
    sale: np.ndarray
    distance: np.ndarray
    weight: np.ndarray
    radius: np.ndarray  # per subject: the radius searched last (NaN when not searched)
    months: np.ndarray  # per subject: the months before the date searched last (0: not searched)


def find_comparables(
    evidence: Evidence, subjects: Subjects, search: ValuationSearch, index_reach: np.ndarray
) -> Matches:
    """Every subject's best ``limit`` comparables at once (none depends on another subject).

    ``index_reach``: per subject, the first day its index brings a price from (see
    :func:`may_compare`)."""
    import shapely

    count = len(subjects.as_of)
    radii = (float(search.radius_m),) if search.radius_m is not None else RADII_M
    # nearer first, then (at the widest radius) further back, where the index reaches
    steps = [(radius_m, search.months) for radius_m in radii] + [
        (radii[-1], search.months * times) for times in _LONGER_BACK
    ]
    window_starts = {months: _window_start(subjects.as_of, months) for _, months in steps}
    asked_start = window_starts[search.months]
    radius, months_searched = np.full(count, np.nan), np.zeros(count, dtype=np.int64)
    pending = np.flatnonzero(subjects.usable & (subjects.kind >= 0))
    without_kind = np.flatnonzero(subjects.usable & (subjects.kind < 0))  # none of its kind
    radius[without_kind], months_searched[without_kind] = steps[-1]
    if not len(pending) or not len(evidence.day):
        radius[pending], months_searched[pending] = steps[-1]
        none = np.zeros(0, dtype=np.int64)
        return Matches(subject=none, sale=none, distance=np.zeros(0), weight=np.zeros(0),
                       radius=radius, months=months_searched)  # fmt: skip
    # the sales any subject's widest window holds, searched by place; each pair then passes the
    # rule
    windows = (evidence.day >= window_starts[steps[-1][1]][pending].min()) & (
        evidence.day < subjects.as_of[pending].max()
    )
    searched_sales = np.flatnonzero(windows)
    own_subject, own_sale = _own_sales(evidence, subjects, pending)
    # one tree per property type: a subject meets only sales of its own type
    kind_sales = [searched_sales[evidence.kind[searched_sales] == kind]
                  for kind in range(len(evidence.kinds))]  # fmt: skip
    trees = [
        shapely.STRtree(shapely.points(*_project(evidence.lat[of_kind], evidence.lng[of_kind])))
        for of_kind in kind_sales
    ]
    points = np.full(count, None, dtype=object)
    points[pending] = shapely.points(*_project(subjects.lat[pending], subjects.lng[pending]))
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for step, (radius_m, months) in enumerate(steps):
        if not len(pending):
            break
        nearby_subject, nearby_sale = _nearby(
            trees, kind_sales, points, pending, subjects.kind, radius_m * 1.1 + 50
        )
        others = evidence.property_id[nearby_sale] != subjects.property_id[nearby_subject]
        still_pending = np.isin(own_subject, pending)
        subject = np.concatenate([nearby_subject[others], own_subject[still_pending]])
        sale = np.concatenate([nearby_sale[others], own_sale[still_pending]])
        distance = _great_circle(subjects.lat[subject], subjects.lng[subject], sale, evidence)
        size = np.log(evidence.area[sale] / subjects.area[subject])
        fits = may_compare(
            evidence, subjects, subject, sale, asked_start, window_starts[months], index_reach
        )
        fits &= (evidence.kind[sale] == subjects.kind[subject]) & (distance <= radius_m)
        fits &= np.abs(size) <= np.log(_AREA_RATIO)
        fits &= ~(np.abs(evidence.beds[sale] - subjects.beds[subject]) > 1)  # NaN: unknown, fits
        subject, sale, distance = subject[fits], sale[fits], distance[fits]
        radius[pending], months_searched[pending] = radius_m, months
        pair = subject * len(evidence.day) + evidence.home[sale]  # (subject, home), once each
        homes_found = np.bincount(np.unique(pair) // len(evidence.day), minlength=count)
        enough = homes_found >= search.min_comparables
        done = enough[pending] | (step == len(steps) - 1)
        kept = np.isin(subject, pending[done])
        found.append((subject[kept], sale[kept], distance[kept]))
        pending = pending[~done]
    subject, sale, distance = (np.concatenate(parts) for parts in zip(*found, strict=True))
    weight = _weights(evidence, subjects, subject, sale, distance, radius[subject])
    # a home counts once, by its best sale; ties broken by the sale's date, then its price
    ties = (evidence.price[sale], evidence.day[sale], -weight)
    order = np.lexsort((*ties, evidence.home[sale], subject))
    home = evidence.home[sale[order]]
    first_of_home = (np.diff(subject[order], prepend=-1) != 0) | (np.diff(home, prepend=-1) != 0)
    order = order[first_of_home]
    order = order[np.lexsort((*(tie[order] for tie in ties), subject[order]))]
    rank = np.arange(len(order)) - np.searchsorted(subject[order], subject[order])
    order = order[rank < search.limit]  # the best of each subject
    return Matches(subject=subject[order], sale=sale[order], distance=distance[order],
                   weight=weight[order], radius=radius, months=months_searched)  # fmt: skip


def _nearby(
    trees: list[Any],
    kind_sales: list[np.ndarray],
    points: np.ndarray,
    pending: np.ndarray,
    kind: np.ndarray,
    distance_m: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(subject, sale) pairs of the same type about ``distance_m`` apart (projected metres)."""
    subjects_found, sales_found = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for code, (tree, of_kind) in enumerate(zip(trees, kind_sales, strict=True)):
        asking = pending[kind[pending] == code]
        if not len(asking) or not len(of_kind):
            continue
        asked, hit = tree.query(points[asking], predicate="dwithin", distance=distance_m)
        subjects_found.append(asking[asked])
        sales_found.append(of_kind[hit])
    return np.concatenate(subjects_found), np.concatenate(sales_found)


def may_compare(
    evidence: Evidence,
    subjects: Subjects,
    subject: np.ndarray,
    sale: np.ndarray,
    asked_start: np.ndarray,
    widened_start: np.ndarray,
    index_reach: np.ndarray,
) -> np.ndarray:
    """The pool and the reach rule, per (subject, sale) pair, from that subject's own date only.

    A sale may be compared with a subject when it was made before the subject's valuation date
    and either on or after ``asked_start`` (the day the search's ``months`` before that date);
    or on or after ``widened_start`` (the day a thin subject's search reached back to, never
    before ``asked_start`` unless widened) and on or after ``index_reach`` (the first day the
    index known before the date's quarter brings a price from; the largest integer where no
    index moves prices); or it is the subject's own sale made on or after ``index_reach``. So a
    sale older than the months asked never comes in unadjusted. Nothing another subject asks for
    (its date, its window) enters, so a row is the same alone and in any company.
    """
    day = evidence.day[sale]
    own = evidence.property_id[sale] == subjects.property_id[subject]
    reached = day >= index_reach[subject]
    in_window = day >= asked_start[subject]
    further_back = (day >= widened_start[subject]) & reached
    allowed: np.ndarray = (day < subjects.as_of[subject]) & (
        in_window | further_back | (own & reached)
    )
    return allowed


def _window_start(as_of: np.ndarray, months: int) -> np.ndarray:
    """Per valuation day, the day ``months`` calendar months before it."""
    moments = pd.DatetimeIndex(as_of.astype("datetime64[D]").astype("datetime64[ns]"))
    shifted = (moments - pd.DateOffset(months=months)).to_numpy()
    return np.asarray(shifted.astype("datetime64[D]").astype(np.int64))


def _own_sales(
    evidence: Evidence, subjects: Subjects, pending: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every sale of each subject's own home, as (subject, sale) pairs (:func:`may_compare`
    decides which count)."""
    home_ids = np.empty(int(evidence.home.max(initial=-1)) + 1, dtype=object)
    home_ids[evidence.home] = evidence.property_id
    subject_home = pd.Index(home_ids).get_indexer(
        pd.Index(subjects.property_id[pending], dtype=object)
    )
    by_home = np.argsort(evidence.home, kind="stable")
    first = np.searchsorted(evidence.home[by_home], subject_home, side="left")
    last = np.searchsorted(evidence.home[by_home], subject_home, side="right")
    counts = np.where(subject_home >= 0, last - first, 0)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(pending, counts).astype(np.int64), by_home[np.repeat(first, counts) + offsets]


def _weights(
    evidence: Evidence,
    subjects: Subjects,
    subject: np.ndarray,
    sale: np.ndarray,
    distance: np.ndarray,
    searched: np.ndarray,
) -> np.ndarray:
    """Nearer, more recent, closer in size, same bedrooms, built in similar years (where both
    are known): higher; the subject's own sale x3."""
    age_years = (subjects.as_of[subject] - evidence.day[sale]) / 365.25
    size = np.log(evidence.area[sale] / subjects.area[subject])
    weight = np.exp(-((distance / searched) ** 2)) * 0.5 ** (age_years / _HALF_LIFE_YEARS)
    weight *= np.exp(-((size / _AREA_SCALE) ** 2))
    weight *= np.where(evidence.beds[sale] != subjects.beds[subject], _OTHER_BEDS, 1.0)
    if subjects.built is not None:
        apart = np.nan_to_num(evidence.built[sale] - subjects.built[subject], nan=0.0)
        weight *= np.exp(-((apart / _BUILT_SCALE_YEARS) ** 2))
    own = evidence.property_id[sale] == subjects.property_id[subject]
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
