"""What was known before a valuation date: the repeat-sales index and the size elasticity, fitted
once per quarter on the sales before its first day, and how every route says what they did."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from propertykit.frames._evidence import Evidence
from propertykit.frames._size_elasticity import fit_size_elasticity

#: What every route says when comparables' floor areas, or prices, were not adjusted.
NOT_SIZED = "floor areas not adjusted for size"
TAKEN_AS_SOLD = "prices taken as sold"
_ELASTICITY_YEARS = 10  # the sales an elasticity is fitted on: the years before the quarter
_CELL_DEGREES = 0.01  # the location cells the elasticity is fitted within (~1 km)


def quarter_start(days: np.ndarray) -> np.ndarray:
    """The first day of each day's calendar quarter (days since 1970)."""
    months = np.asarray(days, dtype=np.int64).astype("datetime64[D]").astype("datetime64[M]")
    first = (months.astype(np.int64) // 3 * 3).astype("datetime64[M]").astype("datetime64[D]")
    return np.asarray(first.astype(np.int64))


@dataclass
class Known:
    """The index and the size elasticity fitted on the sales before a quarter's first day."""

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

    def at(self, start: int) -> Known:
        """What was known before the day ``start`` (the first day of a quarter)."""
        if start not in self.fitted:
            self.fitted[start] = self._fit(start)
        return self.fitted[start]

    def on(self, day: int) -> Known:
        """What was known before the quarter of ``day``."""
        return self.at(int(quarter_start(np.array([day]))[0]))

    def _fit(self, start: int) -> Known:
        days, levels, text, merged = self._index(start)
        known = Known(index_days=days, index_levels=levels, index_text=text, merged=merged)
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
            sales = self.evidence.sales[self.evidence.sale_day < start]
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
    """How a subject's comparables were brought to its date, in the words every route shows."""
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
    """How a subject's comparables' £/m² were brought to its floor area (every route's words)."""
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
