"""The evidence comparables are drawn from (the frame's sales, as arrays), the subjects compared
with it, and the valuation date when none is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from propertykit.frames._valuation_checks import Day, check_as_of

_HOME_COLUMNS = {"lat": "spatial.lat", "lng": "spatial.lng", "floorAreaSqM": "floorAreaSqM",
                 "beds": "roomDetails.beds"}  # fmt: skip


@dataclass
class Evidence:
    """The frame's comparable sales, as arrays (one item per sale kept)."""

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
    sale_day: np.ndarray  # per row of ``sales``: its day (NaT as the smallest integer)
    row: np.ndarray  # each kept sale's row in ``sales``
    home: np.ndarray  # each kept sale's home (a code)
    homes: pd.DataFrame  # the frame's homes, one row per ``propertyId``
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


def gather_evidence(df: pd.DataFrame) -> Evidence:
    """The frame's sales with their home's location, size, bedrooms and type (the sale's own type
    when recorded); those that cannot be compared left out and counted."""
    from propertykit.frames._tables import explode_sales

    sales = explode_sales(df)
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    where = homes.index.get_indexer(sales["propertyId"])
    lat, lng, area, beds = (_take(homes, column, where) for column in _HOME_COLUMNS.values())
    kind_text = sales["propertyType"].astype("object")
    if "propertyType" in homes.columns:  # a sale without its own type takes the home's
        kind_text = kind_text.where(
            kind_text.notna(), homes["propertyType"].astype("object").to_numpy()[where]
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
        property_id, day[keep], price[keep], codes.astype(np.int64), area[keep], beds[keep],
        lat[keep], lng[keep], pd.Index(kinds), sales, day, np.flatnonzero(keep),
        pd.factorize(property_id)[0].astype(np.int64), homes, left_out,
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
    """Subjects as arrays: ids looked up in the frame's homes, mappings (checked already) read;
    ``as_of`` one day per subject."""
    homes = evidence.homes
    named = np.array([isinstance(subject, str) for subject in subjects], dtype=bool)
    given: list[Mapping[str, Any]] = [
        {} if isinstance(subject, str) else subject for subject in subjects
    ]
    ids = np.array([s if isinstance(s, str) else s.get("propertyId") for s in subjects], object)
    where = homes.index.get_indexer(pd.Index(ids[named], dtype=object))
    read: dict[str, np.ndarray] = {}
    for name, column in _HOME_COLUMNS.items():
        values = [np.nan if item.get(name) is None else float(item[name]) for item in given]
        read[name] = np.array(values, dtype=float)
        read[name][named] = _take(homes, column, where)
    kind_text = np.array([item.get("propertyType") for item in given], dtype=object)
    if "propertyType" in homes.columns:
        types = homes["propertyType"].astype("object").to_numpy()[where]
        kind_text[named] = np.where(pd.isna(types), None, types)
    lat, lng, area = read["lat"], read["lng"], read["floorAreaSqM"]
    kind = evidence.kinds.get_indexer(pd.Index(kind_text, dtype=object))
    usable = np.isfinite(lat) & np.isfinite(lng) & np.isfinite(area) & (area > 0)
    usable &= pd.notna(kind_text)
    days = as_of.astype(np.int64)
    return Subjects(ids, days, lat, lng, area, read["beds"], kind, usable, kind_text)


def default_as_of(evidence: Evidence, *, today: Day | None = None) -> tuple[int, str]:
    """The valuation day when none is given (days since 1970), and why: the day after the frame's
    latest sale (the last day its evidence reaches), never after today."""
    given = check_as_of(today) if today is not None else None
    now = given if given is not None else pd.Timestamp.now().normalize()
    now_day = int(now.to_datetime64().astype("datetime64[D]").astype(np.int64))
    said = now.strftime("%-d %B %Y")
    if not len(evidence.day):
        return now_day, f"no date was given and the frame holds no sale: valued as of today, {said}"
    day = int(evidence.day.max()) + 1
    if day > now_day:
        return (
            now_day,
            f"no date was given: valued as of today, {said} (the frame holds later sales)",
        )
    said = pd.Timestamp(day, unit="D").strftime("%-d %B %Y")
    return day, (
        f"no date was given: valued as of {said}, the day after the frame's latest sale, the "
        "last day its evidence reaches (a later date would only carry the same sales further)"
    )
