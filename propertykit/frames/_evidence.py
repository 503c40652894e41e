"""The evidence comparables are drawn from, and the subjects they are compared with, as arrays.

:func:`gather_evidence` joins each sale of the property frame to its home's coordinates, floor
area, bedrooms and type (the sale's own type when recorded), leaving out and counting the sales
that cannot be compared; it keeps the sales table, so what was known before a day can be fitted
from it (:mod:`~propertykit.frames._point_in_time`). :func:`read_subjects` reads subjects
(``propertyId`` of the frame, or mappings) and :func:`read_as_of` their valuation dates. Used by
:mod:`~propertykit.frames._comparables` and :mod:`~propertykit.frames._appraisal`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.frames._valuation_checks import check_as_of, check_subject


@dataclass
class Evidence:
    """The frame's comparable sales, as arrays (one item per sale), and the index behind them."""

    property_id: np.ndarray
    day: np.ndarray  # days since 1970-01-01
    price: np.ndarray
    kind: np.ndarray  # property type code (into ``kinds``)
    area: np.ndarray
    beds: np.ndarray  # float, NaN when unknown
    lat: np.ndarray
    lng: np.ndarray
    kinds: pd.Index
    sales: pd.DataFrame  # every sale of the frame (explode_sales), for the index
    row: np.ndarray  # each kept sale's row in ``sales``
    home: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # per home
    left_out: dict[str, int] = field(default_factory=dict)


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


def gather_evidence(df: pd.DataFrame) -> Evidence:
    """The frame's sales with their property's location, size, bedrooms and type.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> evidence = gather_evidence(pk.frame(generate_records(300)))
    >>> len(evidence.day) > 0, list(evidence.left_out)
    (True, ['sales of properties without a floor area'])
    """
    if "saleHistory" not in df.columns or "propertyId" not in df.columns:
        raise InvalidInput(
            "comparables need the property frame (pk.frame of the records), with "
            "propertyId and saleHistory"
        )
    from propertykit.frames._tables import explode_sales

    sales = explode_sales(df)
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    where = pd.Index(homes.index).get_indexer(sales["propertyId"])
    lat, lng = _take(homes, "spatial.lat", where), _take(homes, "spatial.lng", where)
    area, beds = _take(homes, "floorAreaSqM", where), _take(homes, "roomDetails.beds", where)
    kind_text = sales["propertyType"].astype("object")
    if "propertyType" in homes.columns:  # a sale without its own type takes the home's
        kind_text = kind_text.where(
            kind_text.notna(), homes["propertyType"].astype("object").to_numpy()[where]
        )
    dates = pd.to_datetime(sales["date"])
    if isinstance(dates.dtype, pd.DatetimeTZDtype):
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
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
    evidence = Evidence(
        property_id=sales["propertyId"].to_numpy(dtype=object)[keep],
        day=dates.to_numpy()[keep].astype("datetime64[D]").astype(np.int64),
        price=price[keep],
        kind=codes.astype(np.int64),
        area=area[keep],
        beds=beds[keep],
        lat=lat[keep],
        lng=lng[keep],
        kinds=pd.Index(kinds),
        sales=sales,
        row=np.flatnonzero(keep),
        left_out=left_out,
    )
    evidence.home = pd.factorize(evidence.property_id)[0].astype(np.int64)
    return evidence


def _take(homes: pd.DataFrame, column: str, where: np.ndarray) -> np.ndarray:
    if column not in homes.columns:
        return np.full(len(where), np.nan)
    values = pd.to_numeric(homes[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    taken: np.ndarray = values[where]
    return taken


def read_subjects(
    df: pd.DataFrame,
    subjects: Sequence[str | Mapping[str, Any]],
    evidence: Evidence,
    as_of: np.ndarray,
) -> Subjects:
    """Subjects as arrays: ids looked up in the frame (all at once), mappings read (checked
    already, :func:`check_subjects`); ``as_of`` one day per subject (days since 1970).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> df = pk.frame(generate_records(300))
    >>> flat = {"lat": 51.5, "lng": -0.1, "floorAreaSqM": 60, "propertyType": "flat"}
    >>> days = np.array([20089, 20089])
    >>> read_subjects(df, ["PK00000001", flat], gather_evidence(df), days).usable.tolist()
    [True, True]
    """
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    count = len(subjects)
    ids = np.empty(count, dtype=object)
    lat, lng, area, beds = (np.full(count, np.nan) for _ in range(4))
    kind_text = np.empty(count, dtype=object)
    named = np.array([isinstance(subject, str) for subject in subjects], dtype=bool)
    for position, subject in enumerate(subjects):
        if isinstance(subject, str):
            ids[position] = subject
        else:
            ids[position] = subject.get("propertyId")
            lat[position], lng[position] = float(subject["lat"]), float(subject["lng"])
            area[position] = float(subject["floorAreaSqM"])
            given = subject.get("beds")
            beds[position] = float(given) if given is not None else np.nan
            kind_text[position] = str(subject["propertyType"])
    if named.any():
        where = pd.Index(homes.index).get_indexer(pd.Index(ids[named], dtype=object))
        lat[named], lng[named] = (
            _take(homes, "spatial.lat", where),
            _take(homes, "spatial.lng", where),
        )
        area[named] = _take(homes, "floorAreaSqM", where)
        beds[named] = _take(homes, "roomDetails.beds", where)
        if "propertyType" in homes.columns:
            types = homes["propertyType"].astype("object").to_numpy()[where]
            kind_text[named] = np.where(pd.isna(types), None, types)
    kind = evidence.kinds.get_indexer(pd.Index(kind_text, dtype=object))
    usable = np.isfinite(lat) & np.isfinite(lng) & np.isfinite(area) & (area > 0)
    usable &= pd.notna(kind_text)
    return Subjects(ids, as_of.astype(np.int64), lat, lng, area, beds, kind, usable, kind_text)


def check_subjects(
    df: pd.DataFrame, subjects: Sequence[str | Mapping[str, Any]]
) -> list[str | dict[str, Any]]:
    """Every subject checked before any work: an id must be a ``propertyId`` of ``df``, a
    mapping pass :func:`~propertykit.frames._valuation_checks.check_subject` against the types
    ``df`` holds.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> check_subjects(pk.frame(generate_records(50)), ["PK99999999"])
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: 1 subject(s) are not a propertyId of this frame: 'PK99999999'
    """
    if "saleHistory" not in df.columns or "propertyId" not in df.columns:
        raise InvalidInput(
            "a valuation needs the property frame (pk.frame of the records), with "
            "propertyId and saleHistory"
        )
    types = set(df["propertyType"].dropna().astype(str)) if "propertyType" in df.columns else None
    largest = _largest_by_type(df) if any(isinstance(s, Mapping) for s in subjects) else None
    checked: list[str | dict[str, Any]] = []
    for position, subject in enumerate(subjects):
        if isinstance(subject, str):
            checked.append(subject)
        elif isinstance(subject, Mapping):
            try:
                checked.append(check_subject(subject, types=types, largest=largest))
            except InvalidInput as error:
                raise InvalidInput(f"subject {position + 1}: {error}") from None
        else:
            raise InvalidInput(
                f"subject {position + 1} must be a propertyId or a mapping, "
                f"got {type(subject).__name__}"
            )
    ids = pd.Index([item for item in checked if isinstance(item, str)], dtype=object)
    unknown = ids[pd.Index(df["propertyId"].dropna().unique(), dtype=object).get_indexer(ids) < 0]
    if len(unknown):
        shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
        raise InvalidInput(f"{len(unknown)} subject(s) are not a propertyId of this frame: {shown}")
    return checked


def _largest_by_type(df: pd.DataFrame) -> dict[str, float] | None:
    """The largest floor area of each property type the frame holds (``None``: no such columns)."""
    if not {"propertyType", "floorAreaSqM"} <= set(df.columns):
        return None
    area = pd.to_numeric(df["floorAreaSqM"], errors="coerce")
    kind = df["propertyType"].astype("object")
    found = area.groupby(kind, dropna=True, observed=True).max().dropna()
    return {str(name): float(value) for name, value in found.items()}


def read_as_of(
    as_of: Any, count: int, *, today: str | date | datetime | pd.Timestamp | None = None
) -> np.ndarray | None:
    """One valuation day per subject (days since 1970), checked: one date for all, or one each;
    ``None`` for the default date (set once the evidence is known).

    Examples
    --------
    >>> read_as_of(["2025-01-01", "2025-01-02"], 2, today="2026-01-01").tolist()
    [20089, 20090]
    """
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


def default_as_of(
    evidence: Evidence, *, today: str | date | datetime | pd.Timestamp | None = None
) -> tuple[int, str]:
    """The valuation day when none is given (days since 1970), and why, in words: the day
    after the frame's latest sale (the last day its evidence reaches), never after today; today
    when the frame holds no sale.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> default_as_of(gather_evidence(pk.frame(generate_records(50))))[1][:67]
    'no date was given: valued as of 16 November 2024, the day after the'
    >>> default_as_of(gather_evidence(pk.frame(generate_records(50))), today="2024-01-01")[1]
    'no date was given: valued as of today, 1 January 2024 (the frame holds later sales)'

    """
    given = check_as_of(today) if today is not None else None
    now = given if given is not None else pd.Timestamp.now().normalize()
    now_day = int(now.to_datetime64().astype("datetime64[D]").astype(np.int64))
    if not len(evidence.day):
        said = now.strftime("%-d %B %Y")
        return now_day, f"no date was given and the frame holds no sale: valued as of today, {said}"
    day = int(evidence.day.max()) + 1
    if day > now_day:
        said = now.strftime("%-d %B %Y")
        return (
            now_day,
            f"no date was given: valued as of today, {said} (the frame holds later sales)",
        )
    said = pd.Timestamp(day, unit="D").strftime("%-d %B %Y")
    return day, (
        f"no date was given: valued as of {said}, the day after the frame's latest sale, the "
        "last day its evidence reaches (a later date would only carry the same sales further)"
    )
