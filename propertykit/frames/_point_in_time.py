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
TOO_FEW_TO_SIZE = "too few sales to fit: floor areas not adjusted"
#: The most days past the middle of an index's last period it is carried by its trend.
CARRY_DAYS = 183
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
    elasticity_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    fitted_on: str = "the sales of the frame"  # whose sales the elasticity is fitted on
    index_ends: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # day after

    def log_level(self, day: np.ndarray) -> np.ndarray:
        """The index's log level on each day: each period's level at its middle, straight lines
        between; before the first middle its level (the index knows nothing earlier); after the
        last middle the last level carried on by the index's trend over its last year, for at
        most :data:`CARRY_DAYS` (the index knows nothing later)."""
        day = np.asarray(day, dtype=float)
        if len(self.index_days) == 0:
            return np.zeros(len(day))
        middles, levels = self._middles(), self.index_levels
        found: np.ndarray = np.interp(day, middles, levels)
        carried = np.clip(day - middles[-1], 0, CARRY_DAYS)
        level: np.ndarray = found + self.trend_per_day() * carried
        return level

    def trend_per_day(self) -> float:
        """The index's log change per day over its last year (0 with under a year of it)."""
        middles, levels = self._middles(), self.index_levels
        year_before = np.flatnonzero(middles <= middles[-1] - 300)
        if not len(year_before):
            return 0.0
        first = int(year_before[-1])
        return float((levels[-1] - levels[first]) / (middles[-1] - middles[first]))

    def _middles(self) -> np.ndarray:
        ends = (
            self.index_ends
            if len(self.index_ends) == len(self.index_days)
            else np.append(self.index_days[1:], self.index_days[-1] + 91)
        )
        middles: np.ndarray = (self.index_days + ends) / 2
        return middles


class Knowledge:
    """:class:`Known` per quarter, fitted once each and kept for the call."""

    def __init__(
        self, evidence: Evidence, index: pd.DataFrame | None, *, wider: str | None = None
    ) -> None:
        self.evidence = evidence
        self.index = index
        self.wider = wider  # the wider area the frame holds beside the neighbourhood, if any
        self.fitted: dict[int, Known] = {}

    @property
    def sales_of(self) -> str:
        """Whose sales the index and the elasticity are fitted on, in plain words: ``the
        frame``, or ``the neighbourhood and outcode B13 (412 homes)`` where the frame holds a
        wider area borrowed for a thin neighbourhood."""
        return "the frame" if self.wider is None else f"the neighbourhood and {self.wider}"

    def at(self, start: int) -> Known:
        """What was known before the day ``start`` (the first day of a quarter)."""
        if start not in self.fitted:
            self.fitted[start] = self._fit(start)
        return self.fitted[start]

    def on(self, day: int) -> Known:
        """What was known before the quarter of ``day``."""
        return self.at(int(quarter_start(np.array([day]))[0]))

    def _fit(self, start: int) -> Known:
        days, ends, levels, text, merged = self._index(start)
        known = Known(index_days=days, index_levels=levels, index_text=text, merged=merged,
                      index_ends=ends)  # fmt: skip
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
        known.elasticity_counts = np.asarray(fitted.count)
        known.fitted_on = f"the sales of {self.sales_of}"
        return known

    def _index(self, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, list[str]]:
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
                        f"the repeat-sales index of {self.sales_of}, {every} "
                        f"({found.attrs['pairs']:,} pairs of sales made before {since})"
                    )
                    merged = [
                        f"{item['periods'][0]} to {item['periods'][-1]}"
                        for item in found.attrs["merged"]
                    ]
                    break
            if table is None:
                none = np.zeros(0, dtype=np.int64)
                return none, none, np.zeros(0), "no index", []
        periods = pd.PeriodIndex(table["period"])
        order = np.argsort(periods.start_time.to_numpy())
        starts = periods.start_time.to_numpy()[order].astype("datetime64[D]").astype(np.int64)
        ends = (periods.end_time.to_numpy()[order].astype("datetime64[D]").astype(np.int64)) + 1
        levels = np.log(table["index"].to_numpy(dtype=float)[order])
        return starts, ends, levels, text, merged


def index_note(known: Known, as_of: int, *, moved_at_all: bool) -> str:
    """How a subject's comparables were brought to its date, in the words every route shows."""
    if len(known.index_days) == 0:
        return f"{TAKEN_AS_SOLD}: no index could be fitted on the sales before the valuation date"
    if not moved_at_all:
        if known.merged:
            why = f"{known.index_text} merged {'; '.join(known.merged)} for lack of pairs"
        elif known.index_text == "the index given":
            why = "the index given does not move between their dates and the valuation date"
        else:
            why = f"{known.index_text} does not move between their dates and the valuation date"
        return f"{TAKEN_AS_SOLD}: {why}"
    day = pd.Timestamp(as_of, unit="D").strftime("%-d %b %Y")
    merged = (
        f" (periods merged for lack of pairs: {'; '.join(known.merged)})" if known.merged else ""
    )
    return f"prices brought to {day} by {known.index_text}{merged}{carried_words(known, as_of)}"


def carried_words(known: Known, as_of: int) -> str:
    """How the index reached the date past its last period (``""`` when it covers it)."""
    last_end = int(known.index_ends[-1]) if len(known.index_ends) else int(known.index_days[-1])
    if as_of <= last_end:
        return ""
    yearly = float(np.expm1(known.trend_per_day() * 365.25))
    ends = pd.Timestamp(last_end - 1, unit="D").strftime("%-d %b %Y")
    return (
        f"; it ends on {ends}, carried on to the date by its trend over its last year "
        f"({yearly * 100:+.1f} % a year, for at most {CARRY_DAYS} days)"
    )


def reach_words(known: Known, sold: int, as_of: int, factor: float) -> str:
    """How far the index brought one sale: from when to when, by how much, and what it left."""
    if len(known.index_days) == 0:
        return f"{TAKEN_AS_SOLD}: no index could be fitted on the sales before the valuation date"
    month = "%b %Y"
    first = int(known.index_days[0])
    start = max(sold, first)
    change = f"{(factor - 1) * 100:+.1f} %"
    text = (
        f"brought from {pd.Timestamp(start, unit='D'):{month}} to "
        f"{pd.Timestamp(as_of, unit='D'):{month}} by {known.index_text}, {change}"
    )
    if sold < first:
        text = (
            f"the index starts in {pd.Timestamp(first, unit='D'):{month}}: brought from then "
            f"only, the time before taken as flat; {text}"
        )
    return text + carried_words(known, as_of)


def size_note(known: Known, kinds: pd.Index, kind: int) -> str:
    """How a subject's comparables' £/m² were brought to its floor area (every route's words)."""
    if not 0 <= kind < len(known.elasticity):
        return f"{NOT_SIZED}: no sales of its type before the valuation date"
    slope = float(known.elasticity[kind])
    why = known.elasticity_notes.get(str(kinds[kind]), "")
    years = (
        f"{known.fitted_on} of the {_ELASTICITY_YEARS} years before the valuation date's quarter"
    )
    if slope == 0 and why.startswith("too few sales"):
        count = int(known.elasticity_counts[kind]) if len(known.elasticity_counts) else 0
        return f"{TOO_FEW_TO_SIZE} ({count:,} usable sales of its type in {years})"
    if slope == 0:
        return f"{NOT_SIZED}: {why}" if why else NOT_SIZED
    return (
        f"price per m² brought to the subject's floor area by a size elasticity of {slope:+.2f} "
        f"for its type, fitted on {years} ({why})"
    )


def _cells(lat: np.ndarray, lng: np.ndarray) -> np.ndarray:
    """A code for each point's ~1 km cell."""
    row = np.floor(lat / _CELL_DEGREES).astype(np.int64)
    column = np.floor(lng / (_CELL_DEGREES * 1.6)).astype(np.int64)
    return row * 1_000_003 + column
