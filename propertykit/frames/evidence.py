"""The evidence comparables are drawn from, and the subjects they are compared with, as arrays.

:func:`gather_evidence` joins each sale of the property frame to its home's coordinates, floor
area, bedrooms and type (the sale's own type when recorded), leaving out and counting the sales
that cannot be compared, and attaches the index that brings a price to another day.
:func:`read_subjects` reads subjects (``propertyId`` of the frame, or mappings) and
:func:`read_as_of` their valuation dates. Used by :mod:`~propertykit.frames.comparables` and
:mod:`~propertykit.frames.valuation`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput

__all__ = [
    "SUBJECT_FIELDS",
    "Evidence",
    "Subjects",
    "gather_evidence",
    "read_as_of",
    "read_subjects",
]

#: What a subject given as a mapping must hold (``beds`` and ``propertyId`` are optional).
SUBJECT_FIELDS = ("lat", "lng", "floorAreaSqM", "propertyType")


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
    home: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # per home
    left_out: dict[str, int] = field(default_factory=dict)
    index_days: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    index_levels: np.ndarray = field(default_factory=lambda: np.zeros(0))  # log levels
    index_name: str = "none: prices as sold"

    def log_level(self, day: np.ndarray) -> np.ndarray:
        """The index's log level on each day (the period holding it; the ends held flat)."""
        if len(self.index_days) == 0:
            return np.zeros(len(day))
        at = np.searchsorted(self.index_days, day, side="right") - 1
        return self.index_levels[np.clip(at, 0, len(self.index_levels) - 1)]


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


def gather_evidence(df: pd.DataFrame, *, index: pd.DataFrame | None = None) -> Evidence:
    """The frame's sales with their property's location, size, bedrooms and type.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> evidence = gather_evidence(pk.frame(generate_records(300)))
    >>> len(evidence.day) > 0, list(evidence.left_out)
    (True, ['sales of properties without a floor area'])
    """
    if "saleHistory" not in df.columns or "propertyId" not in df.columns:
        raise InvalidInput(
            "comparables need the property frame (pk.frame of the records), with "
            "propertyId and saleHistory"
        )
    from propertykit.frames.tables import explode_sales

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
        left_out=left_out,
    )
    evidence.home = pd.factorize(evidence.property_id)[0].astype(np.int64)
    _attach_index(evidence, sales, index)
    return evidence


def _take(homes: pd.DataFrame, column: str, where: np.ndarray) -> np.ndarray:
    if column not in homes.columns:
        return np.full(len(where), np.nan)
    values = pd.to_numeric(homes[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    taken: np.ndarray = values[where]
    return taken


def _attach_index(evidence: Evidence, sales: pd.DataFrame, index: pd.DataFrame | None) -> None:
    """Set the log levels that bring a price to another day: the caller's index, or the frame's
    own, quarterly where every quarter holds enough pairs, else yearly."""
    from propertykit.frames.price_index import FewPairsWarning, price_index

    if index is not None:
        if not {"period", "index"} <= set(index.columns) or len(index) == 0:
            raise InvalidInput(
                "index must be a price index table with the columns period and index "
                "(as df.pk.price_index() returns)"
            )
        periods = pd.PeriodIndex(index["period"])
        if not periods.is_unique:
            raise InvalidInput(
                "index must hold one index (each period once): pass one group's rows of a "
                "price index made with by="
            )
        evidence.index_name = "the index given"
        table = pd.DataFrame({"period": periods, "index": index["index"].to_numpy(dtype=float)})
    else:
        table = None
        for freq in ("quarter", "year"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FewPairsWarning)
                found = price_index(sales, freq=freq)
            if len(found) and (freq == "year" or not found.attrs["merged"]):
                table = found
                every = "quarterly" if freq == "quarter" else "yearly"
                evidence.index_name = (
                    f"the frame's repeat-sales index, {every} ({found.attrs['pairs']:,} pairs)"
                )
                break
        if table is None:
            return
    order = np.argsort(table["period"].dt.start_time.to_numpy())
    starts = table["period"].dt.start_time.to_numpy()[order]
    evidence.index_days = starts.astype("datetime64[D]").astype(np.int64)
    evidence.index_levels = np.log(table["index"].to_numpy(dtype=float)[order])


def read_subjects(
    df: pd.DataFrame,
    subjects: Sequence[str | Mapping[str, Any]],
    evidence: Evidence,
    as_of: Any,
) -> Subjects:
    """Subjects as arrays: ids looked up in the frame (all at once), mappings read; ``as_of``
    one per subject.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> df = pk.frame(generate_records(300))
    >>> flat = {"lat": 51.5, "lng": -0.1, "floorAreaSqM": 60, "propertyType": "flat"}
    >>> read_subjects(df, ["PK00000001", flat], gather_evidence(df), "2025-01-01").usable.tolist()
    [True, True]
    """
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    count = len(subjects)
    ids = np.empty(count, dtype=object)
    lat, lng, area, beds = (np.full(count, np.nan) for _ in range(4))
    kind_text = np.empty(count, dtype=object)
    named = np.zeros(count, dtype=bool)
    for position, subject in enumerate(subjects):
        if isinstance(subject, str):
            named[position] = True
            ids[position] = subject
        elif isinstance(subject, Mapping):
            lacking = [name for name in SUBJECT_FIELDS if subject.get(name) is None]
            if lacking:
                raise InvalidInput(
                    f"subject {position + 1} lacks {', '.join(lacking)}: a subject needs "
                    f"{', '.join(SUBJECT_FIELDS)} (and beds when known)"
                )
            ids[position] = subject.get("propertyId")
            lat[position], lng[position] = _number(subject, "lat"), _number(subject, "lng")
            area[position] = _number(subject, "floorAreaSqM")
            beds[position] = _number(subject, "beds") if subject.get("beds") is not None else np.nan
            kind_text[position] = str(subject["propertyType"])
        else:
            raise InvalidInput(
                f"subject {position + 1} must be a propertyId or a mapping, "
                f"got {type(subject).__name__}"
            )
    if named.any():
        where = pd.Index(homes.index).get_indexer(pd.Index(ids[named], dtype=object))
        if (where < 0).any():
            unknown = ids[named][where < 0]
            shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
            raise InvalidInput(
                f"{len(unknown)} subject(s) are not a propertyId of this frame: {shown}"
            )
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
    as_of_days = read_as_of(as_of, count, evidence)
    return Subjects(ids, as_of_days, lat, lng, area, beds, kind, usable, kind_text)


def _number(subject: Mapping[str, Any], name: str) -> float:
    value = subject[name]
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"the subject's {name} must be a number, got {value!r}") from None
    if not np.isfinite(number) or (name == "floorAreaSqM" and number <= 0):
        raise InvalidInput(f"the subject's {name} must be a finite number above 0, got {value!r}")
    return number


def read_as_of(as_of: Any, count: int, evidence: Evidence) -> np.ndarray:
    """One valuation day per subject (days since 1970): one date for all, or one each;
    ``None``: the day after the latest sale.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> evidence = gather_evidence(pk.frame(generate_records(50)))
    >>> read_as_of(["2025-01-01", "2025-01-02"], 2, evidence).tolist()
    [20089, 20090]
    """
    if as_of is None:
        latest = int(evidence.day.max()) + 1 if len(evidence.day) else 0
        return np.full(count, latest, dtype=np.int64)
    many = not isinstance(as_of, (str, date, datetime, pd.Timestamp, np.datetime64))
    values = list(as_of) if many else [as_of]
    if many and len(values) != count:
        raise InvalidInput(
            f"as_of holds {len(values)} dates for {count} subjects: "
            "give one date, or one per subject"
        )
    try:
        stamps = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
    except (ValueError, TypeError) as error:
        raise InvalidInput(f"as_of must be a date or dates, got {as_of!r}") from error
    if stamps.isna().any():
        raise InvalidInput("as_of holds a missing date")
    days = stamps.dt.tz_localize(None).to_numpy().astype("datetime64[D]").astype(np.int64)
    return days if many else np.full(count, days[0], dtype=np.int64)
