"""The refusals a valuation makes before any work: its date and a subject described by hand.

Both are pure (no frame, no request), so the CLI and the form call them before anything is
fetched or charged: :func:`check_as_of` refuses a date that cannot be read or lies after today;
:func:`check_subject` refuses a subject no home can be (latitude 95, latitude and longitude
swapped, 1,100 m² typed for 1,100 sq ft, a type the frame does not hold).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from datetime import date, datetime
from typing import Any

import pandas as pd

from propertykit.errors import InvalidInput

#: What a subject given as a mapping must hold (``beds`` and ``propertyId`` are optional).
SUBJECT_FIELDS = ("lat", "lng", "floorAreaSqM", "propertyType")
#: The floor areas (m²) a home can have; outside, the subject is refused.
FLOOR_AREA_SQM = (10.0, 2_000.0)
_SQFT_PER_SQM = 10.7639
_GREAT_BRITAIN = ((49.8, 60.9), (-8.7, 1.8))  # latitude, longitude


def check_as_of(
    as_of: str | date | datetime | pd.Timestamp | None,
    *,
    today: str | date | datetime | pd.Timestamp | None = None,
) -> pd.Timestamp | None:
    """A valuation date read and checked: ``None`` stays ``None`` (the default date).

    Parameters
    ----------
    as_of
        The valuation date.
    today
        The day it is (``None``: the real date); a later ``as_of`` is refused.

    Returns
    -------
    pandas.Timestamp or None
        The day (midnight, no time zone).

    Raises
    ------
    InvalidInput
        A date that cannot be read (``"2025-13-45"``), a missing one, or one after today.

    Examples
    --------
    >>> check_as_of("2025-01-01", today="2026-01-01")
    Timestamp('2025-01-01 00:00:00')
    >>> check_as_of("2030-01-01", today="2026-01-01")
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: as_of 2030-01-01 is after today (2026-01-01): a valuation \
can only use sales already made; give a date up to today
    """
    if as_of is None:
        return None
    day = _day(as_of, "as_of")
    now = _day(today, "today") if today is not None else pd.Timestamp.now().normalize()
    if day > now:
        raise InvalidInput(
            f"as_of {day.date()} is after today ({now.date()}): a valuation can only use sales "
            "already made; give a date up to today"
        )
    return day


def _day(value: Any, name: str) -> pd.Timestamp:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        raise InvalidInput(f"{name} holds a missing date")
    try:
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError) as error:
        raise InvalidInput(f"{name} must be a date (YYYY-MM-DD), got {value!r}") from error
    if pd.isna(stamp):
        raise InvalidInput(f"{name} holds a missing date")
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp.normalize()


def check_subject(
    subject: Mapping[str, Any],
    *,
    types: Collection[str] | None = None,
    largest: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """A subject described by hand, checked and normalised.

    Parameters
    ----------
    subject
        ``lat``, ``lng``, ``floorAreaSqM`` (m²), ``propertyType`` and optionally ``beds`` and
        ``propertyId``.
    types
        The property types the frame holds; ``None``: any type.
    largest
        The largest floor area (m²) of each type the frame holds: a subject over twice the
        largest of its type is refused (square feet typed as m², most often).

    Returns
    -------
    dict
        ``lat``, ``lng``, ``floorAreaSqM`` (floats), ``propertyType`` (text), ``beds`` (a whole
        number or ``None``), ``propertyId`` (or ``None``).

    Raises
    ------
    InvalidInput
        A field missing or not a number; a latitude outside -90..90 or longitude outside
        -180..180, or the two swapped; a floor area outside 10-2,000 m²; beds not a whole number
        0-50; a type the frame does not hold (listing those it does).

    Examples
    --------
    >>> check_subject({"lat": 51.5, "lng": -0.1, "floorAreaSqM": 70, "propertyType": "flat"})
    {'lat': 51.5, 'lng': -0.1, 'floorAreaSqM': 70.0, 'propertyType': 'flat', 'beds': None, \
'propertyId': None}
    >>> check_subject({"lat": -0.1, "lng": 51.5, "floorAreaSqM": 70, "propertyType": "flat"})
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: lat -0.1 and lng 51.5 look swapped (swapped, they fall in \
Great Britain): give lat first
    """
    if not isinstance(subject, Mapping):
        raise InvalidInput(f"a subject must be a mapping, got {type(subject).__name__}")
    lacking = [name for name in SUBJECT_FIELDS if _missing(subject.get(name))]
    if lacking:
        raise InvalidInput(
            f"the subject lacks {', '.join(lacking)}: a subject needs "
            f"{', '.join(SUBJECT_FIELDS)} (and beds when known)"
        )
    lat, lng = _number(subject, "lat"), _number(subject, "lng")
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        raise InvalidInput(
            f"lat {lat} / lng {lng} is not a place: lat must be within -90..90, "
            "lng within -180..180"
        )
    if _in_britain(lng, lat) and not _in_britain(lat, lng):
        raise InvalidInput(
            f"lat {lat} and lng {lng} look swapped (swapped, they fall in Great Britain): "
            "give lat first"
        )
    area = _number(subject, "floorAreaSqM")
    low, high = FLOOR_AREA_SQM
    if not low <= area <= high:
        hint = (
            f" (square feet typed by mistake? {area:,.0f} sq ft is {area / _SQFT_PER_SQM:,.1f} m²)"
            if area > high and low <= area / _SQFT_PER_SQM <= high
            else ""
        )
        raise InvalidInput(f"floorAreaSqM {area:,.1f} is outside {low:,.0f}-{high:,.0f} m²{hint}")
    kind = str(subject["propertyType"])
    if types is not None and kind not in set(types):
        raise InvalidInput(
            f"propertyType {kind!r} is not a type this frame holds: "
            f"{', '.join(sorted(map(str, types)))}"
        )
    biggest = (largest or {}).get(kind)
    if biggest is not None and area > 2 * biggest:
        feet = area / _SQFT_PER_SQM
        hint = f"; square feet typed by mistake? {area:,.0f} sq ft is {feet:,.1f} m²"
        raise InvalidInput(
            f"floorAreaSqM {area:,.1f} is over twice the largest {kind} this frame holds "
            f"({biggest:,.1f} m²){hint if feet <= biggest else ''}"
        )
    beds = subject.get("beds")
    if not _missing(beds):
        number = _number(subject, "beds")
        if not (number == int(number) and 0 <= number <= 50):
            raise InvalidInput(f"beds must be a whole number from 0 to 50, got {beds!r}")
        beds = int(number)
    else:
        beds = None
    named = subject.get("propertyId")
    return {
        "lat": lat,
        "lng": lng,
        "floorAreaSqM": area,
        "propertyType": kind,
        "beds": beds,
        "propertyId": None if _missing(named) else str(named),
    }


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _number(subject: Mapping[str, Any], name: str) -> float:
    value = subject[name]
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"the subject's {name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidInput(f"the subject's {name} must be a finite number, got {value!r}")
    return number


def _in_britain(lat: float, lng: float) -> bool:
    (south, north), (west, east) = _GREAT_BRITAIN
    return south <= lat <= north and west <= lng <= east
