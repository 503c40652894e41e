"""What a valuation rests on, checked before any work and read as arrays: its dates and subjects
(the refusals are pure, no request, so the CLI and the form run them before anything is fetched
or charged), and the frame's sales comparables are drawn from."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput

#: What a subject given as a mapping must hold (``beds`` and ``propertyId`` are optional).
SUBJECT_FIELDS = ("lat", "lng", "floorAreaSqM", "propertyType")
#: The floor areas (m²) a home can have; outside, the subject is refused.
FLOOR_AREA_SQM = (10.0, 2_000.0)
_SQFT_PER_SQM = 10.7639
_GREAT_BRITAIN = ((49.8, 60.9), (-8.7, 1.8))  # latitude, longitude
Day: TypeAlias = str | date | datetime | pd.Timestamp
_HOME_COLUMNS = {"lat": "spatial.lat", "lng": "spatial.lng", "floorAreaSqM": "floorAreaSqM",
                 "beds": "roomDetails.beds", "yearBuilt": "yearBuilt"}  # fmt: skip


def check_as_of(as_of: Day | None, *, today: Day | None = None) -> pd.Timestamp | None:
    """A valuation date read and checked (midnight, no time zone): ``None`` stays ``None``.

    Parameters
    ----------
    as_of
        The valuation date.
    today
        The day it is (``None``: the real date).

    Raises
    ------
    InvalidInput
        A date that cannot be read (``"2025-13-45"``), a missing one, or one after today.

    Examples
    --------
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


def read_as_of(as_of: Any, count: int, *, today: Day | None = None) -> np.ndarray | None:
    """One valuation day per subject (one date for all, or one each); ``None``: the default."""
    if as_of is None:
        return None
    many = not isinstance(as_of, (str, date, datetime, pd.Timestamp, np.datetime64))
    try:
        values = list(as_of) if many else [as_of]
    except TypeError:
        raise InvalidInput(f"as_of must be a date or dates, got {as_of!r}") from None
    if many and len(values) != count:
        raise InvalidInput(
            f"as_of holds {len(values)} dates for {count} subjects: "
            "give one date, or one per subject"
        )
    now = check_as_of(today) if today is not None else None
    read = {value: check_as_of(value, today=now) for value in dict.fromkeys(values)}
    days = pd.DatetimeIndex([read[value] for value in values]).to_numpy()
    picked = days.astype("datetime64[D]").astype(np.int64)
    return picked if many else np.full(count, picked[0], dtype=np.int64)


def check_subject(
    subject: Mapping[str, Any],
    *,
    types: Collection[str] | None = None,
    largest: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """A subject described by hand, checked and normalised (floats, text, ``beds`` a whole
    number or ``None``, ``propertyId`` or ``None``).

    Parameters
    ----------
    subject
        ``lat``, ``lng``, ``floorAreaSqM`` (m²), ``propertyType``; optionally ``beds`` and
        ``propertyId``.
    types
        The property types the frame holds (``None``: any).
    largest
        The largest floor area (m²) of each type the frame holds: twice that is refused (square
        feet typed as m², most often).

    Raises
    ------
    InvalidInput
        A field missing or not a number; a latitude outside -90..90 or longitude outside
        -180..180, or the two swapped; a floor area outside 10-2,000 m²; beds not a whole number
        0-50; a type the frame does not hold (listing those it does).

    Examples
    --------
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
    area, (low, high) = _number(subject, "floorAreaSqM"), FLOOR_AREA_SQM
    feet = area / _SQFT_PER_SQM
    if not low <= area <= high:
        hint = f" (square feet typed by mistake? {area:,.0f} sq ft is {feet:,.1f} m²)"
        fits = area > high and low <= feet <= high
        raise InvalidInput(
            f"floorAreaSqM {area:,.1f} is outside {low:,.0f}-{high:,.0f} m²{hint if fits else ''}"
        )
    kind = str(subject["propertyType"])
    if types is not None and kind not in set(types):
        raise InvalidInput(
            f"propertyType {kind!r} is not a type this frame holds: "
            f"{', '.join(sorted(map(str, types)))}"
        )
    biggest = (largest or {}).get(kind)
    if biggest is not None and area > 2 * biggest:
        hint = f"; square feet typed by mistake? {area:,.0f} sq ft is {feet:,.1f} m²"
        raise InvalidInput(
            f"floorAreaSqM {area:,.1f} is over twice the largest {kind} this frame holds "
            f"({biggest:,.1f} m²){hint if feet <= biggest else ''}"
        )
    beds, named = subject.get("beds"), subject.get("propertyId")
    whole = None if _missing(beds) else _number(subject, "beds")
    if whole is not None and not (whole == int(whole) and 0 <= whole <= 50):
        raise InvalidInput(f"beds must be a whole number from 0 to 50, got {beds!r}")
    return {
        "lat": lat,
        "lng": lng,
        "floorAreaSqM": area,
        "propertyType": kind,
        "beds": None if whole is None else int(whole),
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


def check_subjects(
    df: pd.DataFrame, subjects: Sequence[str | Mapping[str, Any]]
) -> list[str | dict[str, Any]]:
    """Every subject checked before any work: an id of ``df``, or a mapping against its types."""
    if "saleHistory" not in df.columns or "propertyId" not in df.columns:
        raise InvalidInput(
            "a valuation needs the property frame (pk.frame of the records), with "
            "propertyId and saleHistory"
        )
    types = set(df["propertyType"].dropna().astype(str)) if "propertyType" in df.columns else None
    largest = None
    if {"propertyType", "floorAreaSqM"} <= set(df.columns) and any(
        isinstance(subject, Mapping) for subject in subjects
    ):
        area = pd.to_numeric(df["floorAreaSqM"], errors="coerce")
        found = area.groupby(df["propertyType"].astype("object"), observed=True).max().dropna()
        largest = {str(name): float(value) for name, value in found.items()}
    checked: list[str | dict[str, Any]] = []
    for position, subject in enumerate(subjects, 1):
        if isinstance(subject, str):
            checked.append(subject)
            continue
        if not isinstance(subject, Mapping):
            raise InvalidInput(
                f"subject {position} must be a propertyId or a mapping, "
                f"got {type(subject).__name__}"
            )
        try:
            checked.append(check_subject(subject, types=types, largest=largest))
        except InvalidInput as error:
            raise InvalidInput(f"subject {position}: {error}") from None
    ids = pd.Index([item for item in checked if isinstance(item, str)], dtype=object)
    unknown = ids[~ids.isin(df["propertyId"].dropna().unique())]
    if len(unknown):
        shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
        raise InvalidInput(f"{len(unknown)} subject(s) are not a propertyId of this frame: {shown}")
    return checked


@dataclass
class Evidence:
    """The frame's comparable sales, as arrays (one item per sale kept)."""

    property_id: np.ndarray
    day: np.ndarray  # days since 1970-01-01
    price: np.ndarray
    kind: np.ndarray  # property type code (into ``kinds``)
    area: np.ndarray
    beds: np.ndarray  # float, NaN when unknown
    built: np.ndarray  # the home's yearBuilt (float, NaN when unknown)
    lat: np.ndarray
    lng: np.ndarray
    kinds: pd.Index
    sales: pd.DataFrame  # every sale of the frame (explode_sales), for the index
    sale_day: np.ndarray  # per row of ``sales``: its day (NaT as the smallest integer)
    row: np.ndarray  # each kept sale's row in ``sales``
    home: np.ndarray  # each kept sale's home (a code)
    homes: pd.DataFrame  # the frame's homes, one row per ``propertyId``
    place: np.ndarray  # each kept sale's row in ``homes``
    left_out: dict[str, int]


@dataclass
class Subjects:
    """The subjects to compare, as arrays; ``usable`` is False where location or area lacks."""

    property_id: np.ndarray
    as_of: np.ndarray  # days since 1970-01-01
    lat: np.ndarray
    lng: np.ndarray
    area: np.ndarray
    beds: np.ndarray
    kind: np.ndarray  # code into the evidence's kinds; -1 for a type no sale has
    usable: np.ndarray
    kind_text: np.ndarray | None = None  # the type as given
    built: np.ndarray | None = None  # yearBuilt (NaN when unknown; None: not read)


def gather_evidence(df: pd.DataFrame) -> Evidence:
    """The frame's sales with their home's place, size, beds and type; the rest counted out."""
    from propertykit.frames._tables import explode_sales

    sales = explode_sales(df)
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    home_row = homes.index.get_indexer(sales["propertyId"])
    lat, lng, area, beds, built = (
        _take(homes, column, home_row) for column in _HOME_COLUMNS.values()
    )
    kind_text = sales["propertyType"].astype("object")
    if "propertyType" in homes.columns:  # a sale without its own type takes the home's
        kind_text = kind_text.where(
            kind_text.notna(), homes["propertyType"].astype("object").to_numpy()[home_row]
        )
    dates = pd.to_datetime(sales["date"])
    if isinstance(dates.dtype, pd.DatetimeTZDtype):
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    day = dates.to_numpy().astype("datetime64[D]").astype(np.int64)
    price = pd.to_numeric(sales["price"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    left_out: dict[str, int] = {}
    checks = [
        ("sales without a date or a price above 0", dates.notna().to_numpy() & (price > 0)),
        ("sales of properties without coordinates", np.isfinite(lat) & np.isfinite(lng)),
        ("sales of properties without a floor area", np.isfinite(area) & (area > 0)),
        ("sales without a property type", kind_text.notna().to_numpy()),
    ]
    keep = np.ones(len(sales), dtype=bool)
    for reason, fine in checks:
        if int((keep & ~fine).sum()):
            left_out[reason] = int((keep & ~fine).sum())
        keep &= fine
    codes, kinds = pd.factorize(kind_text[keep], sort=True)
    property_id = sales["propertyId"].to_numpy(dtype=object)[keep]
    return Evidence(
        property_id=property_id, day=day[keep], price=price[keep], kind=codes.astype(np.int64),
        area=area[keep], beds=beds[keep], built=built[keep], lat=lat[keep], lng=lng[keep],
        kinds=pd.Index(kinds),
        sales=sales, sale_day=day, row=np.flatnonzero(keep),
        home=pd.factorize(property_id)[0].astype(np.int64), homes=homes,
        place=home_row[keep], left_out=left_out,
    )  # fmt: skip


def _take(homes: pd.DataFrame, column: str, where: np.ndarray) -> np.ndarray:
    if column not in homes.columns:
        return np.full(len(where), np.nan)
    values = pd.to_numeric(homes[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    taken: np.ndarray = values[where]
    return taken


def read_subjects(
    evidence: Evidence, subjects: Sequence[str | Mapping[str, Any]], as_of: np.ndarray
) -> Subjects:
    """Subjects as arrays: ids looked up in the frame's homes, mappings (checked) read."""
    homes = evidence.homes
    named = np.array([isinstance(subject, str) for subject in subjects], dtype=bool)
    given: list[Mapping[str, Any]] = [
        {} if isinstance(subject, str) else subject for subject in subjects
    ]
    ids = np.array([s if isinstance(s, str) else s.get("propertyId") for s in subjects], object)
    home_row = homes.index.get_indexer(pd.Index(ids[named], dtype=object))
    read: dict[str, np.ndarray] = {}
    for name, column in _HOME_COLUMNS.items():
        values = [np.nan if item.get(name) is None else float(item[name]) for item in given]
        read[name] = np.array(values, dtype=float)
        read[name][named] = _take(homes, column, home_row)
    kind_text = np.array([item.get("propertyType") for item in given], dtype=object)
    if "propertyType" in homes.columns:
        types = homes["propertyType"].astype("object").to_numpy()[home_row]
        kind_text[named] = np.where(pd.isna(types), None, types)
    lat, lng, area = read["lat"], read["lng"], read["floorAreaSqM"]
    kind = evidence.kinds.get_indexer(pd.Index(kind_text, dtype=object))
    usable = np.isfinite(lat) & np.isfinite(lng) & np.isfinite(area) & (area > 0)
    usable &= pd.notna(kind_text)
    days = as_of.astype(np.int64)
    return Subjects(
        property_id=ids,
        as_of=days,
        lat=lat,
        lng=lng,
        area=area,
        beds=read["beds"],
        kind=kind,
        usable=usable,
        kind_text=kind_text,
        built=read["yearBuilt"],
    )


def default_as_of(evidence: Evidence, *, today: Day | None = None) -> tuple[int, str]:
    """The day after the frame's latest sale (never after today) when no date is given, and why."""
    given = check_as_of(today) if today is not None else None
    now = given if given is not None else pd.Timestamp.now().normalize()
    now_day = int(now.to_datetime64().astype("datetime64[D]").astype(np.int64))
    day_text = now.strftime("%-d %B %Y")
    if not len(evidence.day):
        return (
            now_day,
            f"no date was given and the frame holds no sale: valued as of today, {day_text}",
        )
    day = int(evidence.day.max()) + 1
    if day > now_day:
        return (
            now_day,
            f"no date was given: valued as of today, {day_text} (the frame holds later sales)",
        )
    day_text = pd.Timestamp(day, unit="D").strftime("%-d %B %Y")
    return day, (
        f"no date was given: valued as of {day_text}, the day after the frame's latest sale, the "
        "last day its evidence reaches (a later date would only carry the same sales further)"
    )
