"""The estimate from every subject's comparables, and its 80 % range, calibrated by the conformal
rank on the frame's own earlier sales valued blind (the method: ``docs/valuation.md``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from propertykit.frames._comparables import Matches, ValuationSearch, find_comparables
from propertykit.frames._evidence import Evidence, Subjects
from propertykit.frames._point_in_time import Knowledge, index_note, quarter_start, size_note

#: What every report of a valuation says it is.
DISCLOSURE = "an automated estimate from comparable sales, not a RICS Red Book valuation"
#: The most blind valuations the range is calibrated on (whole quarters, latest first).
CALIBRATION_SALES = 600
#: The fewest blind valuations a calibrated range rests on.
LEAST_CALIBRATION = 200
#: log £/m²: how far from the weighted median one comparable may pull.
CLIP = 0.35
COVERAGE = 0.8
_Z80 = 1.2815515655446004  # the normal quantile of a two-sided 80 % interval
_LEAST_SPREAD = 0.03  # log £/m²: comparables that agree exactly still leave this uncertainty
_LOOKBACK_QUARTERS = 20
_CHUNK = 8  # the most quarters valued blind at once
#: How ``confidence`` is read from the range: upper ÷ lower at most these for high, medium.
CONFIDENCE_LIMITS = (1.35, 1.85)
CONFIDENCE_RULE = (
    "from the width of the 80 % range: high when the upper end is at most 1.35 times the "
    "lower (about ±15 %), medium up to 1.85 times (about ±30 %), low beyond; a low-confidence "
    "value is a range, not a figure"
)


@dataclass
class Valued:
    """Per comparable (one item per match) and per subject: how each estimate was made."""

    matches: Matches
    moved: np.ndarray  # per match: log time adjustment
    sized: np.ndarray  # per match: log size adjustment
    used: np.ndarray  # per match: log £/m² as it enters the estimate
    clipped: np.ndarray  # per match
    share: np.ndarray  # per match: weight share of its subject
    estimate: np.ndarray  # per subject (NaN without comparables)
    spread: np.ndarray  # per subject: the range's unscaled half-width in logs
    count: np.ndarray  # per subject
    notes: np.ndarray  # per subject: how prices were brought to the date (None: not wanted)
    size_notes: np.ndarray  # per subject: how £/m² was brought to its floor area (likewise)


def value_subjects(
    evidence: Evidence,
    subjects: Subjects,
    search: ValuationSearch,
    knowledge: Knowledge,
    *,
    notes_wanted: bool = True,
) -> Valued:
    """Every subject's estimate from its comparables, as known before its date."""
    size = len(subjects.as_of)
    starts = quarter_start(subjects.as_of)
    never = np.iinfo(np.int64).max  # an own sale older than the window counts only if indexed
    index_reach = np.full(size, never)
    for start in np.unique(starts[subjects.usable]) if len(evidence.day) else []:
        days = knowledge.at(int(start)).index_days
        index_reach[starts == start] = days[0] if len(days) > 1 else never
    matches = find_comparables(evidence, subjects, search, index_reach)
    subject, sale, weight = matches.subject, matches.sale, matches.weight
    moved, sized = np.zeros(len(subject)), np.zeros(len(subject))
    notes, size_notes = np.full(size, None, dtype=object), np.full(size, None, dtype=object)
    for start in np.unique(starts[subject]) if len(subject) else []:
        known = knowledge.at(int(start))
        in_quarter = starts[subject] == start
        its_subject, its_sale = subject[in_quarter], sale[in_quarter]
        moved[in_quarter] = known.log_level(subjects.as_of[its_subject]) - known.log_level(
            evidence.day[its_sale]
        )
        ratio = np.log(subjects.area[its_subject] / evidence.area[its_sale])
        sized[in_quarter] = known.elasticity[evidence.kind[its_sale]] * ratio
    if notes_wanted:
        unmoved = np.bincount(subject, np.abs(moved) > 1e-12, size) == 0
        said_index: dict[tuple[int, bool], str] = {}  # the words depend on these alone
        said_size: dict[tuple[int, int], str] = {}
        for one in np.unique(subject):
            known = knowledge.at(int(starts[one]))
            day, kind = int(subjects.as_of[one]), int(subjects.kind[one])
            if (day, bool(unmoved[one])) not in said_index:
                said_index[day, bool(unmoved[one])] = index_note(
                    known, day, moved_at_all=not unmoved[one]
                )
            if (int(starts[one]), kind) not in said_size:
                said_size[int(starts[one]), kind] = size_note(known, evidence.kinds, kind)
            notes[one] = said_index[day, bool(unmoved[one])]
            size_notes[one] = said_size[int(starts[one]), kind]
    rate = np.log(evidence.price[sale] / evidence.area[sale]) + moved + sized
    count = np.bincount(subject, minlength=size)
    lower, middle, upper = _weighted_quantiles(subject, rate, weight, (0.25, 0.5, 0.75), size)
    used = middle[subject] + np.clip(rate - middle[subject], -CLIP, CLIP)
    total = np.bincount(subject, weight, size)
    share = weight / np.where(total > 0, total, 1)[subject]
    mean = np.bincount(subject, share * used, size)
    effective = 1 / np.maximum(np.bincount(subject, share**2, size), 1e-12)
    spread = np.maximum((upper - lower) / 1.349, _LEAST_SPREAD) * np.sqrt(1 + 1 / effective)
    estimate = np.where(count > 0, subjects.area * np.exp(mean), np.nan)
    clipped = np.abs(rate - middle[subject]) > CLIP
    return Valued(
        matches=matches, moved=moved, sized=sized, used=used, clipped=clipped, share=share,
        estimate=estimate, spread=spread, count=count, notes=notes, size_notes=size_notes,
    )  # fmt: skip


def _weighted_quantiles(
    group: np.ndarray, values: np.ndarray, weights: np.ndarray, levels: tuple[float, ...], size: int
) -> list[np.ndarray]:
    """Per group, the first value whose cumulative weight share reaches each level (or NaN).

    Each group's shares are summed within the group alone, so a group's quantiles never depend
    on the groups before it (a row is the same alone and in company, to the last bit)."""
    order = np.lexsort((values, group))
    group, values, weights = group[order], values[order], weights[order]
    total = np.bincount(group, weights, size)
    running = pd.Series(weights).groupby(group).cumsum().to_numpy()
    share = running / np.where(total[group] > 0, total[group], 1)
    found = []
    present = np.bincount(group, minlength=size) > 0
    for level in levels:
        # within a group, reached is False then True: the first True per group, by one search
        reached = (share >= level - 1e-12).astype(np.int64)
        at = np.searchsorted(group * 2 + reached, np.arange(size) * 2 + 1)
        at = np.minimum(at, max(len(values) - 1, 0))
        found.append(np.where(present, values[at] if len(values) else np.nan, np.nan))
    return found


class Calibration:
    """The range's scale per quarter, from the frame's sales valued blind, each valued once."""

    def __init__(self, evidence: Evidence, search: ValuationSearch, knowledge: Knowledge) -> None:
        self.evidence, self.search, self.knowledge = evidence, search, knowledge
        self.errors: dict[int, np.ndarray] = {}  # per quarter: normalised errors of its sales

    def bands(self, starts: np.ndarray) -> dict[int, dict[str, Any]]:
        """The band (``scale``, ``calibrated_on``, ``calibrated``, ``how``) for each quarter."""
        firsts = np.unique(starts)  # each date's quarter, and the quarters before it, latest first
        months = firsts.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
        back = (months[:, None] - 3 * np.arange(1, _LOOKBACK_QUARTERS + 1)).astype("datetime64[M]")
        before = back.astype("datetime64[D]").astype(np.int64).tolist()
        wanted = dict(zip(firsts.tolist(), before, strict=True))
        # the latest quarter of every date at once (one search), more only where too few
        self._value_blind(sorted({quarters[0] for quarters in wanted.values()}))
        return {start: self._band(quarters) for start, quarters in wanted.items()}

    def _value_blind(self, quarters: list[int]) -> None:
        missing = [quarter for quarter in quarters if quarter not in self.errors]
        if not missing:
            return
        evidence = self.evidence
        begun = quarter_start(evidence.day)
        chosen = np.flatnonzero(np.isin(begun, missing))
        named = ("property_id", "lat", "lng", "area", "beds", "kind", "built")  # sale: subject
        read = {name: getattr(evidence, name)[chosen] for name in named}
        sales = Subjects(as_of=evidence.day[chosen], usable=np.ones(len(chosen), bool), **read)
        valued = value_subjects(evidence, sales, self.search, self.knowledge, notes_wanted=False)
        fine = valued.count >= self.search.min_comparables
        error = np.abs(np.log(evidence.price[chosen] / valued.estimate)) / valued.spread
        for quarter in missing:
            self.errors[quarter] = error[fine & (begun[chosen] == quarter)]

    def _band(self, quarters: list[int]) -> dict[str, Any]:
        taken: list[np.ndarray] = []
        for position, quarter in enumerate(quarters):  # latest first, whole quarters
            have = sum(map(len, taken))
            if have >= CALIBRATION_SALES:
                break
            if quarter not in self.errors:  # as many more quarters as the rate so far needs
                rate = have / position if have else 0
                more = math.ceil((CALIBRATION_SALES - have) / rate) if rate else _CHUNK
                self._value_blind(quarters[position : position + min(max(more, 1), _CHUNK)])
            taken.append(self.errors[quarter])
        errors = np.sort(np.concatenate(taken)) if taken else np.zeros(0)
        count = len(errors)
        if count >= LEAST_CALIBRATION:
            rank = math.ceil((count + 1) * COVERAGE)
            scale = float(errors[rank - 1])
            how = (
                f"calibrated on {count:,} of the frame's own sales made before the valuation "
                "date's quarter, each valued blind on the sales before it: the range is the "
                f"comparables' spread times {scale:.2f}, the {rank:,}-th smallest of their "
                "errors in that unit, so that 8 in 10 fell inside"
            )
            return {"scale": scale, "calibrated_on": count, "calibrated": True, "how": how}
        how = (
            f"not calibrated: only {count} of the frame's own sales before the valuation "
            f"date's quarter could be valued blind ({LEAST_CALIBRATION} needed); the range is "
            "the normal 80 % quantile of the comparables' spread, not checked on data"
        )
        return {"scale": _Z80, "calibrated_on": count, "calibrated": False, "how": how}


def confidence(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``"high"``, ``"medium"`` or ``"low"`` from the width of the range (``None`` without one)."""
    ratio = upper / lower
    high, medium = CONFIDENCE_LIMITS
    level = np.where(ratio <= high, "high", np.where(ratio <= medium, "medium", "low"))
    found: np.ndarray = np.where(np.isfinite(ratio), level.astype(object), np.array(None))
    return found


def basis_of(
    default_why: str | None,
    search: ValuationSearch,
    *,
    calibrated: bool,
    sales_of: str = "the frame",
) -> dict[str, Any]:
    """The date and why (``default_why`` when no date was given), the method, the disclosure;
    ``sales_of``: whose sales the index and elasticity are fitted on (``Knowledge.sales_of``)."""
    index = f"the repeat-sales index of {sales_of}, fitted on its sales before the date's quarter"
    index = index if search.index is None else "the price index given"
    band = (
        "The 80 % range is the comparables' spread, scaled so that 8 in 10 of the frame's own "
        "earlier sales, each valued blind on the sales before it, fell inside."
        if calibrated
        else "The range is the comparables' spread times the normal 80 % quantile: too few of "
        "the frame's own earlier sales could be valued blind to check it (200 needed), so it "
        "is not calibrated."
    )
    method = (
        "Comparable sales: " + search.describe() + ". Each comparable's price per m² is brought "
        f"to the valuation date by {index} (or taken as sold where it does not move), and to "
        "the subject's floor area by how price per m² falls with size (fitted on the sales "
        "before the date's quarter); one more than 42 % above or 30 % below the weighted median "
        "is pulled back to that bound. The estimate is the subject's floor area times the "
        "weighted geometric mean of the price per m² used, by the weights shown. "
        + band
        + " Only sales made before the valuation date are used. Each sale is described by its "
        "home as the frame holds it today (floor area, bedrooms, type, year built): a home "
        "extended, converted or refitted since it sold is compared as it is now."
    )
    why = default_why if default_why is not None else "the date asked for"
    return {"as_of_default": default_why is not None, "as_of_why": why, "method": method,
            "disclosure": DISCLOSURE}  # fmt: skip


def band_summary(bands: dict[int, dict[str, Any]], starts: np.ndarray) -> dict[str, Any]:
    """``attrs["band"]``: the latest date's quarter's; ``calibrated`` only when every row's is."""
    if not bands:
        return {"coverage": COVERAGE, "scale": None, "calibrated_on": 0, "calibrated": False,
                "how": "nothing was valued"}  # fmt: skip
    latest = bands[int(starts.max())]
    many = (f" (for the latest date; {len(bands)} quarters in all, each calibrated on its own "
            "earlier sales: the column calibrated says per row)")  # fmt: skip
    return {"coverage": COVERAGE, "scale": latest["scale"], "calibrated_on":
            latest["calibrated_on"], "calibrated": all(b["calibrated"] for b in bands.values()),
            "how": latest["how"] + (many if len(bands) > 1 else "")}  # fmt: skip
