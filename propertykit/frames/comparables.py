"""Comparable sales: the sales near a subject, of its kind and size, sold shortly before a date.

A *subject* is a property of the frame (its ``propertyId``) or a mapping describing one: ``lat``,
``lng``, ``floorAreaSqM``, ``propertyType`` and, when known, ``beds``. Its comparables are the
frame's sales that

- were sold strictly before ``as_of`` and at most ``months`` months before it;
- are of the same ``propertyType`` (as recorded for that sale);
- have a floor area within 35 % of the subject's (a ratio between 1/1.35 and 1.35);
- have at most one bedroom more or fewer, when both are known;
- lie within a radius that widens, 250 m, 500 m, 1 km, 2 km, 4 km, 8 km, until at least
  ``min_comparables`` are found (or exactly ``radius_m`` when it is given).

Prices are brought to ``as_of`` by a repeat-sales index (:func:`~propertykit.frames.price_index`,
quarterly where every quarter of the span holds enough pairs, else yearly; or an ``index`` the
caller passes), and each comparable gets a ``weight``: nearer (``exp(-(d / radius)²)``), more
recent (halved per year), closer in size (``exp(-(log area ratio / 0.25)²)``), 0.7 for another
number of bedrooms, and three times for the subject's own earlier sale, which counts and is
flagged ``own_sale``. A home sold more than once in the window counts once, by its sale of the
highest weight.

Sales of properties without coordinates or floor area cannot be compared: they are left out and
counted in ``attrs["left_out"]``, never guessed. Neighbours are found for all subjects at once
with a :class:`shapely.STRtree` over the sales' points, projected to metres (Lambert azimuthal
equal-area about the sales' middle: distances within a few metres per kilometre over Britain).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.frames.evidence import Evidence, Subjects, gather_evidence, read_subjects

__all__ = [
    "COMPARABLE_COLUMNS",
    "RADII_M",
    "check_search",
    "comparables",
    "criteria_text",
    "find_comparables",
]

#: Columns of :func:`comparables`, in order.
COMPARABLE_COLUMNS = (
    "propertyId", "date", "price", "adjusted_price", "price_per_sqm", "adjusted_price_per_sqm",
    "distance_m", "beds", "floorAreaSqM", "propertyType", "weight", "own_sale",
)  # fmt: skip
#: The radii tried in turn (metres) until enough comparables are found.
RADII_M = (250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
_AREA_RATIO = 1.35  # the largest floor-area ratio a comparable may have (either way)
_AREA_SCALE = 0.25  # log-ratio of floor area at which a comparable's weight falls to 1/e
_OTHER_BEDS = 0.7  # weight of a comparable with another number of bedrooms
_OWN_SALE = 3.0  # weight of the subject's own earlier sale
_EARTH_RADIUS_M = 6_371_008.8
_DAY = np.timedelta64(1, "D")


@dataclass
class Matches:
    """Comparable sales found, one item per (subject, sale), grouped by subject."""

    subject: np.ndarray
    sale: np.ndarray
    distance: np.ndarray
    weight: np.ndarray
    radius: np.ndarray  # per subject: the radius searched last (NaN when not searched)


def comparables(
    df: pd.DataFrame,
    subject: str | Mapping[str, Any],
    *,
    as_of: str | date | datetime | pd.Timestamp | None = None,
    radius_m: float | None = None,
    months: int = 24,
    limit: int = 20,
    index: pd.DataFrame | None = None,
    min_comparables: int = 5,
) -> pd.DataFrame:
    """A subject's comparable sales, sold strictly before ``as_of``, best first.

    Parameters
    ----------
    df
        The property frame (:func:`propertykit.frame`): sale histories, coordinates, floor
        areas, bedrooms and types.
    subject
        A ``propertyId`` of ``df``, or a mapping with ``lat``, ``lng``, ``floorAreaSqM``,
        ``propertyType`` and optionally ``beds`` and ``propertyId``.
    as_of
        The date of the valuation; ``None``: the day after the frame's latest sale.
    radius_m
        Search exactly this radius (metres); ``None`` widens 250 m ... 8 km until
        ``min_comparables`` are found.
    months
        How far back before ``as_of`` a sale may be.
    limit
        The most comparables returned (the highest weights).
    index
        A price index to bring prices to ``as_of`` (columns ``period`` and ``index``, as
        :func:`~propertykit.frames.price_index` returns, without ``by``); ``None``: the
        frame's own repeat-sales index.
    min_comparables
        How many the widening radius looks for.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COMPARABLE_COLUMNS`, highest ``weight`` first. ``attrs``: ``subject``
        (its ``propertyId``, or ``None``), ``subject_details`` (``lat``, ``lng``,
        ``floorAreaSqM``, ``beds``, ``propertyType``: for a map or a report), ``as_of``,
        ``radius_m`` (searched), ``months``, ``criteria`` (in plain words), ``index`` (which
        index adjusted the prices) and ``left_out`` (sales that could not be compared, by
        reason).

    Raises
    ------
    InvalidInput
        A subject not in the frame or missing a field; a radius, months or limit not positive.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> df = pk.frame(generate_records(2000))
    >>> found = comparables(df, "PK00000042", as_of="2025-01-01", months=36)
    >>> list(found.columns[:4]), bool((found["date"] < "2025-01-01").all())
    (['propertyId', 'date', 'price', 'adjusted_price'], True)
    """
    check_search(radius_m, months, limit, min_comparables)
    evidence = gather_evidence(df, index=index)
    subjects = read_subjects(df, [subject], evidence, as_of)
    if not subjects.usable[0]:
        raise InvalidInput(
            f"the subject {subjects.property_id[0]} has no coordinates or floor area in the "
            "frame, so nothing can be compared with it"
        )
    matches = find_comparables(evidence, subjects, radius_m, months, min_comparables, limit)
    sale = matches.sale
    as_of_day = int(subjects.as_of[0])
    factor = np.exp(evidence.log_level(np.array([as_of_day])) - evidence.log_level(evidence.day))
    adjusted = evidence.price[sale] * factor[sale]
    area = evidence.area[sale]
    table = pd.DataFrame(
        {
            "propertyId": evidence.property_id[sale],
            "date": (evidence.day[sale] * _DAY + np.datetime64(0, "D")).astype("datetime64[us]"),
            "price": evidence.price[sale],
            "adjusted_price": adjusted,
            "price_per_sqm": evidence.price[sale] / area,
            "adjusted_price_per_sqm": adjusted / area,
            "distance_m": matches.distance,
            "beds": pd.array(evidence.beds[sale], dtype="Float64").astype("Int64"),
            "floorAreaSqM": area,
            "propertyType": pd.Categorical.from_codes(evidence.kind[sale], evidence.kinds),
            "weight": matches.weight,
            "own_sale": evidence.property_id[sale] == subjects.property_id[0],
        },
        columns=list(COMPARABLE_COLUMNS),
    )
    table = table.sort_values("weight", ascending=False, kind="stable").reset_index(drop=True)
    table.attrs = {
        "subject": subjects.property_id[0],
        "subject_details": {
            "lat": float(subjects.lat[0]),
            "lng": float(subjects.lng[0]),
            "floorAreaSqM": float(subjects.area[0]),
            "beds": None if np.isnan(subjects.beds[0]) else int(subjects.beds[0]),
            "propertyType": _kind_name(evidence, subjects, 0),
        },
        "as_of": pd.Timestamp(as_of_day, unit="D"),
        "radius_m": float(matches.radius[0]),
        "months": months,
        "criteria": criteria_text(radius_m, months, min_comparables, limit),
        "index": evidence.index_name,
        "left_out": dict(evidence.left_out),
    }
    return table


def _kind_name(evidence: Evidence, subjects: Subjects, position: int) -> str | None:
    code = int(subjects.kind[position])
    if code >= 0:
        return str(evidence.kinds[code])
    given = subjects.kind_text[position] if subjects.kind_text is not None else None
    return None if given is None else str(given)


def criteria_text(radius_m: float | None, months: int, min_comparables: int, limit: int) -> str:
    """The comparables' criteria in plain words.

    Examples
    --------
    >>> criteria_text(500, 24, 5, 20)[:46]
    'sales of the same property type, sold in the 2'
    """
    where = (
        f"within {radius_m:,.0f} m"
        if radius_m is not None
        else f"within 250 m, widened step by step to at most 8 km until {min_comparables} are found"
    )
    return (
        f"sales of the same property type, sold in the {months} months before the valuation "
        f"date, with a floor area within 35 % and at most one bedroom more or fewer, {where}; "
        f"the {limit} with the highest weight (nearer, more recent, closer in size) are kept"
    )


def check_search(radius_m: float | None, months: int, limit: int, min_comparables: int) -> None:
    """Refuse, naming it, a radius that is not a positive number, or months, limit or
    min_comparables that are not positive whole numbers.

    Examples
    --------
    >>> check_search(None, 0, 20, 5)
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: months must be a positive whole number, got 0
    """
    if radius_m is not None and not (_is_number(radius_m) and radius_m > 0):
        raise InvalidInput(f"radius_m must be a positive number of metres, got {radius_m!r}")
    for name, value in (("months", months), ("limit", limit), ("min_comparables", min_comparables)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidInput(f"{name} must be a positive whole number, got {value!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def find_comparables(
    evidence: Evidence,
    subjects: Subjects,
    radius_m: float | None,
    months: int,
    min_comparables: int,
    limit: int,
) -> Matches:
    """Every subject's comparables at once, the best ``limit`` each, grouped by subject.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.frames.evidence import gather_evidence, read_subjects
    >>> from propertykit.sandbox.data import generate_records
    >>> df = pk.frame(generate_records(2000))
    >>> evidence = gather_evidence(df)
    >>> subjects = read_subjects(df, ["PK00000010", "PK00000011"], evidence, "2025-01-01")
    >>> found = find_comparables(evidence, subjects, None, 24, 5, 20)
    >>> sorted(set(found.subject.tolist())), found.radius.tolist()  # the second is thin
    ([0], [8000.0, 8000.0])
    """
    import shapely

    count = len(subjects.as_of)
    starts = _months_before(subjects.as_of, months)
    radii = (float(radius_m),) if radius_m is not None else RADII_M
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
    centre = (float(np.median(evidence.lat)), float(np.median(evidence.lng)))
    pool_x, pool_y = _project(evidence.lat[pool], evidence.lng[pool], centre)
    subject_x, subject_y = _project(subjects.lat, subjects.lng, centre)
    tree = shapely.STRtree(shapely.points(pool_x, pool_y))
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for step, searched in enumerate(radii):
        if not len(pending):
            break
        points = shapely.points(subject_x[pending], subject_y[pending])
        asked, hit = tree.query(points, predicate="dwithin", distance=searched)
        who, sale = pending[asked], pool[hit]
        distance = np.hypot(subject_x[who] - pool_x[hit], subject_y[who] - pool_y[hit])
        size = np.log(evidence.area[sale] / subjects.area[who])
        fits = (evidence.day[sale] < subjects.as_of[who]) & (evidence.day[sale] >= starts[who])
        fits &= evidence.kind[sale] == subjects.kind[who]
        fits &= np.abs(size) <= np.log(_AREA_RATIO)
        fits &= ~(np.abs(evidence.beds[sale] - subjects.beds[who]) > 1)  # NaN: unknown, fits
        who, sale, distance = who[fits], sale[fits], distance[fits]
        radius[pending] = searched
        homes = np.unique(who * len(evidence.day) + evidence.home[sale]) // len(evidence.day)
        enough = np.bincount(homes, minlength=count) >= min_comparables
        done = enough[pending] | (step == len(radii) - 1)
        kept = np.isin(who, pending[done])
        found.append((who[kept], sale[kept], distance[kept]))
        pending = pending[~done]
    who = np.concatenate([item[0] for item in found])
    sale = np.concatenate([item[1] for item in found])
    distance = np.concatenate([item[2] for item in found])
    weight = _weights(evidence, subjects, who, sale, distance, radius[who])
    order = np.lexsort((-weight, evidence.home[sale], who))  # a home counts once: its best sale
    who, sale, distance, weight = who[order], sale[order], distance[order], weight[order]
    home = evidence.home[sale]
    once = np.ones(len(who), dtype=bool)
    once[1:] = (who[1:] != who[:-1]) | (home[1:] != home[:-1])
    who, sale, distance, weight = who[once], sale[once], distance[once], weight[once]
    order = np.lexsort((-weight, who))
    who, sale, distance, weight = who[order], sale[order], distance[order], weight[order]
    first = np.searchsorted(who, who)  # each subject's first row
    best = (np.arange(len(who)) - first) < limit
    return Matches(who[best], sale[best], distance[best], weight[best], radius)


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
    weight = np.exp(-((distance / searched) ** 2)) * 0.5**age_years
    weight *= np.exp(-((size / _AREA_SCALE) ** 2))
    weight *= np.where(evidence.beds[sale] != subjects.beds[who], _OTHER_BEDS, 1.0)
    own = evidence.property_id[sale] == subjects.property_id[who]
    weighted: np.ndarray = np.where(own, weight * _OWN_SALE, weight)
    return weighted


def _months_before(days: np.ndarray, months: int) -> np.ndarray:
    """The day ``months`` calendar months before each day (days since 1970)."""
    moments = pd.DatetimeIndex(days.astype("datetime64[D]").astype("datetime64[ns]"))
    shifted = moments - pd.DateOffset(months=months)
    return np.asarray(shifted.to_numpy().astype("datetime64[D]").astype(np.int64))


def _project(lat: np.ndarray, lng: np.ndarray, centre: tuple[float, float]) -> tuple[Any, Any]:
    """Lambert azimuthal equal-area coordinates (metres) about ``centre`` (lat, lng)."""
    phi, lam = np.radians(lat), np.radians(lng)
    phi0, lam0 = np.radians(centre[0]), np.radians(centre[1])
    cos_c = np.sin(phi0) * np.sin(phi) + np.cos(phi0) * np.cos(phi) * np.cos(lam - lam0)
    scale = _EARTH_RADIUS_M * np.sqrt(2 / np.maximum(1 + cos_c, 1e-12))
    x = scale * np.cos(phi) * np.sin(lam - lam0)
    y = scale * (np.cos(phi0) * np.sin(phi) - np.sin(phi0) * np.cos(phi) * np.cos(lam - lam0))
    return x, y
