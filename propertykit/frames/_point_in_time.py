"""What was known before a valuation date: the index and the size elasticity, fitted per quarter.

A valuation as of D uses only sales before D. The comparables are chosen among them
(:mod:`~propertykit.frames._comparables`); the repeat-sales index that brings their prices to D,
and the elasticity that brings their price per m² to the subject's size, are fitted on the sales
made before the first day of D's quarter (:class:`Known`), once per quarter and kept
(:class:`Knowledge`), so a call with many dates stays fast and no row depends on another.

The index is the frame's own repeat-sales index (:func:`~propertykit.frames.price_index`),
quarterly where no quarter had to be merged for lack of pairs, else yearly; an index the caller
passes is used as given for every date. Where the index does not move a subject's comparables
(their dates and D fall in one period, or one merged run, or the index is flat) the prices are
*taken as sold*, and the valuation says so in the same words on every route
(:func:`index_note`).

Price per m² falls as homes get larger. The elasticity
(:func:`~propertykit.frames._size_elasticity.fit_size_elasticity`) is fitted per property type on
the ten years of sales before the quarter, their £/m² deflated by that index, within ~1 km cells
(so a district of large homes does not pass for a size effect); its checks (too few sales, a
slope of the wrong sign or too steep) fall back to the pooled slope or none, and say so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from propertykit.frames._evidence import Evidence
from propertykit.frames._size_elasticity import fit_size_elasticity

#: How a valuation says its comparables' prices were not moved by an index (every route).
#: What every route says when comparables' floor areas were not adjusted.
NOT_SIZED = "floor areas not adjusted for size"
TAKEN_AS_SOLD = "prices taken as sold"
_ELASTICITY_YEARS = 10  # the sales an elasticity is fitted on: the years before the quarter
_CELL_DEGREES = 0.01  # the location cells the elasticity is fitted within (~1 km)
_EPOCH = np.datetime64(0, "D")


def quarter_start(days: np.ndarray) -> np.ndarray:
    """The first day of each day's calendar quarter (days since 1970).

    Examples
    --------
    >>> quarter_start(np.array([20089, 20180])).tolist()  # 2025-01-01, 2025-04-02
    [20089, 20179]
    """
    moments = (np.asarray(days, dtype=np.int64) * np.timedelta64(1, "D") + _EPOCH).astype(
        "datetime64[M]"
    )
    months = moments.astype(np.int64)
    first = (months - months % 3).astype("datetime64[M]").astype("datetime64[D]")
    return np.asarray(first.astype(np.int64))


@dataclass
class Known:
    """The index and the size elasticity fitted on the sales before ``start`` (a day)."""

    start: int
    index_days: np.ndarray  # the first day of each period of the index, ascending
    index_levels: np.ndarray  # log levels
    index_text: str  # which index, in plain words
    merged: list[str] = field(default_factory=list)  # runs of periods merged, as words
    elasticity: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per type code
    elasticity_notes: dict[str, str] = field(default_factory=dict)  # per type

    def log_level(self, day: np.ndarray) -> np.ndarray:
        """The index's log level on each day (the period holding it; the ends held flat)."""
        if len(self.index_days) == 0:
            return np.zeros(len(day))
        at = np.searchsorted(self.index_days, day, side="right") - 1
        found: np.ndarray = self.index_levels[np.clip(at, 0, len(self.index_levels) - 1)]
        return found


class Knowledge:
    """:class:`Known` per quarter, fitted once each and kept for the call."""

    def __init__(self, evidence: Evidence, index: pd.DataFrame | None) -> None:
        self.evidence = evidence
        self.index = index
        self.fitted: dict[int, Known] = {}
        self._sale_days = _days(evidence.sales["date"])

    def at(self, start: int) -> Known:
        """What was known before the day ``start`` (the first day of a quarter)."""
        if start not in self.fitted:
            self.fitted[start] = self._fit(start)
        return self.fitted[start]

    def _fit(self, start: int) -> Known:
        days, levels, text, merged = self._index(start)
        known = Known(start, days, levels, text, merged)
        evidence = self.evidence
        years = round(_ELASTICITY_YEARS * 365.25)
        before = (evidence.day < start) & (evidence.day >= start - years)
        area, day = evidence.area[before], evidence.day[before]
        fitted = fit_size_elasticity(
            np.log(area),
            np.log(evidence.price[before] / area) - known.log_level(day),
            evidence.kind[before],
            len(evidence.kinds),
            group=_cells(evidence.lat[before], evidence.lng[before]),
        )
        known.elasticity = np.asarray(fitted.slope)
        known.elasticity_notes = {
            str(evidence.kinds[code]): note for code, note in enumerate(fitted.notes)
        }
        return known

    def _index(self, start: int) -> tuple[np.ndarray, np.ndarray, str, list[str]]:
        from propertykit.errors import FewPairsWarning
        from propertykit.frames._price_index import price_index

        if self.index is not None:
            table, text, merged = self.index, "the index given", []
        else:
            sales = self.evidence.sales[self._sale_days < start]
            table, text, merged = None, "", list[str]()
            for freq in ("quarter", "year"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FewPairsWarning)
                    found = price_index(sales, freq=freq)
                if len(found) > 1 and (freq == "year" or not found.attrs["merged"]):
                    table = found
                    every = "quarterly" if freq == "quarter" else "yearly"
                    since = pd.Timestamp(start, unit="D").strftime("%-d %b %Y")
                    text = (
                        f"the frame's repeat-sales index, {every} ({found.attrs['pairs']:,} "
                        f"pairs of sales made before {since})"
                    )
                    merged = [
                        f"{item['periods'][0]} to {item['periods'][-1]}"
                        for item in found.attrs["merged"]
                    ]
                    break
            if table is None:
                return np.zeros(0, dtype=np.int64), np.zeros(0), "no index", []
        periods = pd.PeriodIndex(table["period"])
        order = np.argsort(periods.start_time.to_numpy())
        starts = periods.start_time.to_numpy()[order].astype("datetime64[D]").astype(np.int64)
        levels = np.log(table["index"].to_numpy(dtype=float)[order])
        return starts, levels, text, merged


def index_note(known: Known, as_of: int, *, moved_at_all: bool) -> str:
    """How a subject's comparables were brought to its date, in the words every route shows.

    Examples
    --------
    >>> known = Known(0, np.zeros(0, dtype=np.int64), np.zeros(0), "no index")
    >>> index_note(known, 20089, moved_at_all=False)
    'prices taken as sold: no index could be fitted on the sales before the valuation date'
    """
    if len(known.index_days) == 0:
        return f"{TAKEN_AS_SOLD}: no index could be fitted on the sales before the valuation date"
    if not moved_at_all:
        last = pd.Timestamp(int(known.index_days[-1]), unit="D").strftime("%-d %b %Y")
        if known.merged:
            why = f"{known.index_text} merged {'; '.join(known.merged)} for lack of pairs"
        elif known.index_text == "the index given":
            why = "the index given does not move between their dates and the valuation date"
        else:
            why = (
                f"{known.index_text} ends with the period from {last}, which holds every "
                "comparable's date, and no later sales move it to the valuation date"
            )
        return f"{TAKEN_AS_SOLD}: {why}"
    day = pd.Timestamp(as_of, unit="D").strftime("%-d %b %Y")
    merged = (
        f" (periods merged for lack of pairs: {'; '.join(known.merged)})" if known.merged else ""
    )
    return f"prices brought to {day} by {known.index_text}{merged}"


def size_note(known: Known, kinds: pd.Index, kind: int) -> str:
    """How a subject's comparables' £/m² were brought to its floor area, in the words every route
    shows (the elasticity of its type as known before its date's quarter, and why).

    Examples
    --------
    >>> known = Known(0, np.zeros(0, dtype=np.int64), np.zeros(0), "no index")
    >>> known.elasticity, known.elasticity_notes = np.zeros(1), {"flat": "too few sales (12): 0"}
    >>> size_note(known, pd.Index(["flat"]), 0)
    'floor areas not adjusted for size: too few sales (12): 0'
    """
    if not 0 <= kind < len(known.elasticity):
        return f"{NOT_SIZED}: no sales of its type before the valuation date"
    slope = float(known.elasticity[kind])
    why = known.elasticity_notes.get(str(kinds[kind]), "")
    if slope == 0:
        return f"{NOT_SIZED}: {why}" if why else NOT_SIZED
    return (
        f"price per m² brought to the subject's floor area by a size elasticity of {slope:+.2f} "
        f"for its type, known before the valuation date's quarter ({why})"
    )


def _cells(lat: np.ndarray, lng: np.ndarray) -> np.ndarray:
    """A code for each point's ~1 km cell."""
    row = np.floor(lat / _CELL_DEGREES).astype(np.int64)
    column = np.floor(lng / (_CELL_DEGREES * 1.6)).astype(np.int64)
    return row * 1_000_003 + column


def _days(dates: pd.Series) -> np.ndarray:
    moments = pd.to_datetime(dates)
    if isinstance(moments.dtype, pd.DatetimeTZDtype):
        moments = moments.dt.tz_convert("UTC").dt.tz_localize(None)
    return np.asarray(moments.to_numpy().astype("datetime64[D]").astype(np.int64), dtype=np.int64)
