"""A valuation as one computed object: :func:`appraise` checks everything, gathers the evidence
once and values every subject point in time; the :class:`Appraisal` holds per subject the
estimate, range, confidence and schedule, and every view draws it without computing again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.frames._comparables import ValuationSearch
from propertykit.frames._evidence import (
    Day,
    Evidence,
    Subjects,
    check_subjects,
    default_as_of,
    gather_evidence,
    read_as_of,
    read_subjects,
)
from propertykit.frames._money import (
    RECONCILIATION_MONEY,
    SCHEDULE_MONEY,
    VALUATION_MONEY,
    money_attrs,
)
from propertykit.frames._point_in_time import Knowledge, quarter_start, reach_words
from propertykit.frames._valuation import (
    CONFIDENCE_RULE,
    Calibration,
    Valued,
    band_summary,
    basis_of,
    confidence,
    value_subjects,
)

#: Columns of :meth:`Appraisal.values`, in order.
VALUATION_COLUMNS = (
    "propertyId", "as_of", "estimate", "lower", "upper", "confidence", "price_per_sqm",
    "comparables", "radius_m", "months", "thin", "method", "calibrated", "index", "size",
)  # fmt: skip
#: Columns of :meth:`Appraisal.schedule` (``address``, ``tenure``, ``newBuild`` follow where the
#: frame has them).
COMPARABLE_COLUMNS = (
    "propertyId", "date", "price", "adjusted_price", "time_adjustment", "size_adjustment",
    "price_per_sqm", "adjusted_price_per_sqm", "used_price_per_sqm", "weight", "clipped",
    "own_sale", "distance_m", "beds", "floorAreaSqM", "propertyType", "yearBuilt",
)  # fmt: skip
METHOD = "comparables"
#: The reconciliation's source of the subject's own last sale (its detail says how far the index
#: brought it, and where it stands in the schedule).
OWN_SALE_SOURCE = "own last sale"
THIN = "too few comparables"
NO_PLACE = "no coordinates or floor area"
_DETAILS = {  # the subject described: its field -> the frame's column
    "address": "address.displayAddress", "propertyType": "propertyType",
    "floorAreaSqM": "floorAreaSqM", "beds": "roomDetails.beds", "tenure": "tenure.type",
    "newBuild": "tags.newBuild", "yearBuilt": "yearBuilt", "epc": "epc.currentEnergyRating",
    "lat": "spatial.lat", "lng": "spatial.lng",
}  # fmt: skip
Subject = str | Mapping[str, Any]


@dataclass(frozen=True)
class Appraisal:
    """One valuation, computed once (by :func:`appraise`): ``values`` (one row per subject), the
    ``search``, the ``basis`` (the date and why, the method, the disclosure), and per subject its
    :meth:`schedule`, :meth:`subject` and :meth:`reconciliation`."""

    values: pd.DataFrame
    search: ValuationSearch
    basis: dict[str, Any]
    frame: pd.DataFrame = field(repr=False)
    evidence: Evidence = field(repr=False)
    subjects: Subjects = field(repr=False)
    valued: Valued = field(repr=False)
    knowledge: Knowledge = field(repr=False)

    def schedule(self, position: int = 0) -> pd.DataFrame:
        """Exactly the sales the subject's estimate rests on, best first (see
        :data:`COMPARABLE_COLUMNS`); the estimate is its floor area x
        ``exp(sum(weight * log(used_price_per_sqm)))``."""
        subjects, evidence, valued = self.subjects, self.evidence, self.valued
        self._check(position)
        if not subjects.usable[position]:
            raise InvalidInput(
                f"the subject {subjects.property_id[position]} has no coordinates or floor "
                "area in the frame, so nothing can be compared with it"
            )
        its_matches = np.flatnonzero(valued.matches.subject == position)
        sale = valued.matches.sale[its_matches]
        area, price = evidence.area[sale], evidence.price[sale]
        time, size = np.exp(valued.moved[its_matches]), np.exp(valued.sized[its_matches])
        table = pd.DataFrame(
            {
                "propertyId": evidence.property_id[sale],
                "date": evidence.day[sale].astype("datetime64[D]").astype("datetime64[us]"),
                "price": price,
                "adjusted_price": price * time,
                "time_adjustment": time,
                "size_adjustment": size,
                "price_per_sqm": price / area,
                "adjusted_price_per_sqm": price * time / area,
                "used_price_per_sqm": np.exp(valued.used[its_matches]),
                "weight": valued.share[its_matches],
                "clipped": valued.clipped[its_matches],
                "own_sale": evidence.property_id[sale] == subjects.property_id[position],
                "distance_m": valued.matches.distance[its_matches],
                "beds": pd.array(evidence.beds[sale], dtype="Float64").astype("Int64"),
                "floorAreaSqM": area,
                "propertyType": pd.Categorical.from_codes(evidence.kind[sale], evidence.kinds),
                "yearBuilt": pd.array(evidence.built[sale], dtype="Float64").astype("Int64"),
            },
            columns=list(COMPARABLE_COLUMNS),
        )
        homes, sales = evidence.homes, evidence.sales
        for name, column in (("address", "address.displayAddress"), ("tenure", "tenure.type")):
            if column in homes.columns:
                table[name] = homes[column].iloc[evidence.place[sale]].astype(object).to_numpy()
        if "newBuild" in sales.columns:
            table["newBuild"] = sales["newBuild"].iloc[evidence.row[sale]].astype(object).to_numpy()
        row = self.values.iloc[position]
        table.attrs = {
            "subject": subjects.property_id[position],
            "subject_details": self._details(position),
            "as_of": pd.Timestamp(row["as_of"]),
            "radius_m": float(row["radius_m"]),
            "months": self.search.months,
            "criteria": self.search.describe(),
            "index": row["index"],
            "size": row["size"],
            "left_out": dict(evidence.left_out),
            **money_attrs(self.frame, SCHEDULE_MONEY),  # in the frame's unit
        }
        return table

    def subject(self, position: int = 0) -> dict[str, Any]:
        """The subject described: ``propertyId``, ``address``, ``propertyType``,
        ``floorAreaSqM``, ``beds``, ``tenure``, ``newBuild``, ``yearBuilt``, ``epc``, ``lat``,
        ``lng`` (``None`` where unknown)."""
        self._check(position)
        named, homes = self.subjects.property_id[position], self.homes
        described: dict[str, Any] = {"propertyId": named} | dict.fromkeys(_DETAILS)
        if isinstance(named, str) and named in homes.index:
            home = homes.loc[named]
            for name, column in _DETAILS.items():
                if column in homes.columns and not pd.isna(value := home[column]):
                    described[name] = value.item() if hasattr(value, "item") else value
        return described | {k: v for k, v in self._details(position).items() if v is not None}

    def reconciliation(self, position: int = 0) -> pd.DataFrame:
        """Side by side, where they exist: the comparables' estimate (and range), the subject's
        own last sale (its ``detail`` says how far the index brought it and whether it is a
        comparable of the schedule), and the service's ``estimatedSaleValue`` (today's, not as of
        the valuation date). A low-confidence estimate is a range: its ``value`` is missing.
        Columns ``source``, ``value``, ``detail``, and
        ``lower``, ``upper``, ``date``, ``price``, ``factor`` where they apply."""
        self._check(position)
        row = self.values.iloc[position]
        rows: list[dict[str, Any]] = []
        if not row["thin"]:
            low = row["confidence"] == "low"  # a range, not one figure
            detail = f"from {row['comparables']} comparable sales" + (
                "; low confidence: a range, not one figure" if low else ""
            )
            rows.append(
                {"source": "comparables", "value": np.nan if low else row["estimate"],
                 "lower": row["lower"], "upper": row["upper"], "detail": detail}
            )  # fmt: skip
        named, day = self.subjects.property_id[position], int(self.subjects.as_of[position])
        own = np.flatnonzero((self.evidence.property_id == named) & (self.evidence.day < day))
        if named is not None and len(own):
            last = own[np.argmax(self.evidence.day[own])]
            known = self.knowledge.on(day)
            sold = int(self.evidence.day[last])
            moved = known.log_level(np.array([day, sold]))
            factor = float(np.exp(moved[0] - moved[1]))
            price = float(self.evidence.price[last])
            rows.append(
                {"source": OWN_SALE_SOURCE, "value": price * factor,
                 "date": pd.Timestamp(sold, unit="D"), "price": price, "factor": factor,
                 "detail": reach_words(known, sold, day, factor) + self._in_schedule(position,
                                                                                    last)}
            )  # fmt: skip
        homes = self.homes
        column = "pricing.estimatedSaleValue"
        if isinstance(named, str) and column in homes.columns and named in homes.index:
            value = homes.loc[named, column]
            if not pd.isna(value):
                rows.append(
                    {"source": "the service's estimatedSaleValue", "value": float(value),
                     "detail": "the service's current estimate, not as of the valuation date"}
                )  # fmt: skip
        columns = ["source", "value", "detail", "lower", "upper", "date", "price", "factor"]
        table = pd.DataFrame(rows, columns=columns)
        table.attrs = money_attrs(self.frame, RECONCILIATION_MONEY)  # in the frame's unit
        return table

    def _in_schedule(self, position: int, sale: int) -> str:
        """Where the own sale stands in the schedule, in the words the schedule bears out."""
        matches = self.valued.matches
        its_matches = np.flatnonzero(matches.subject == position)
        rank = np.flatnonzero(matches.sale[its_matches] == sale)
        if not len(rank):
            return "; not among the comparables (the schedule's own_sale column says which are)"
        share = float(self.valued.share[its_matches[rank[0]]])
        return f"; in the schedule as comparable {int(rank[0]) + 1} ({share:.0%} of the weight)"

    @property
    def homes(self) -> pd.DataFrame:
        """The frame's homes, one row per ``propertyId`` (made once, for every schedule)."""
        return self.evidence.homes

    def _check(self, position: int) -> None:
        if not isinstance(position, (int, np.integer)) or not 0 <= position < len(self.values):
            raise InvalidInput(
                f"position must be a whole number from 0 to {len(self.values) - 1}, "
                f"got {position!r}"
            )

    def _details(self, position: int) -> dict[str, Any]:
        subjects, code = self.subjects, int(self.subjects.kind[position])
        given = subjects.kind_text[position] if subjects.kind_text is not None else None
        kind = (
            str(self.evidence.kinds[code]) if code >= 0 else None if given is None else str(given)
        )
        beds = subjects.beds[position]
        return {
            "lat": _known(subjects.lat[position]),
            "lng": _known(subjects.lng[position]),
            "floorAreaSqM": _known(subjects.area[position]),
            "beds": None if np.isnan(beds) else int(beds),
            "propertyType": kind,
        }


def check_index_known(index: pd.DataFrame, first_day: int) -> None:
    """Refuse an index given with a period ending on or after the earliest valuation date: it
    was fitted with sales not yet made then (its earlier levels too)."""
    periods = pd.PeriodIndex(index["period"])
    last = periods[np.argmax(periods.end_time.to_numpy())]
    last_day = last.end_time.normalize()
    first = pd.Timestamp(first_day, unit="D")
    if last_day >= first:
        raise InvalidInput(
            f"index reaches past the valuation date: its last period {last} ends on "
            f"{last_day:%-d %b %Y}, not before {first:%-d %b %Y}, so it was fitted with sales "
            "made after that date; give an index whose periods all end before the earliest "
            "valuation date, or leave index=None (the frame's own index, fitted on the sales "
            "before each date's quarter)"
        )


def _wider(df: pd.DataFrame) -> str | None:
    """The wider area fetched beside the neighbourhood (``attrs["neighbourhood"]["wider"]``)."""
    about = df.attrs.get("neighbourhood")
    wider = about.get("wider") if isinstance(about, Mapping) else None
    return str(wider) if isinstance(wider, str) and wider.strip() else None


def _known(number: float) -> float | None:
    return None if np.isnan(number) else float(number)


def appraise(
    df: pd.DataFrame,
    subjects: Subject | Sequence[Subject] | None = None,
    *,
    as_of: Any = None,
    search: ValuationSearch | None = None,
    today: Day | None = None,
) -> Appraisal:
    """Value subjects on the frame's sales, point in time: every check first, then the evidence
    gathered once.

    Parameters
    ----------
    df
        The property frame (:func:`propertykit.frame`).
    subjects
        A ``propertyId`` of ``df``, a mapping (as :func:`check_subject` takes), or a sequence of
        them; ``None``: every property of ``df`` with coordinates and a floor area.
    as_of
        One date for all, or one per subject, never after ``today``; ``None``: the day after the
        frame's latest sale (``basis`` says so).
    search
        What to search for (:class:`ValuationSearch`; ``None``: the defaults).
    today
        The day it is (``None``: the real date).

    Raises
    ------
    InvalidInput
        A subject not in the frame or impossible; a date unreadable, after today, or as many as
        the subjects but not one each.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> df = pk.frame(generate_records(2000, realism="real"))
    >>> appraisal = appraise(df, ["PK00000042", "PK00000007"], as_of="2025-01-01")
    >>> list(appraisal.values.columns[:6])
    ['propertyId', 'as_of', 'estimate', 'lower', 'upper', 'confidence']
    """
    search = ValuationSearch() if search is None else search
    if not isinstance(search, ValuationSearch):
        raise InvalidInput(f"search must be a ValuationSearch, got {type(search).__name__}")
    fetched = (df.attrs.get("neighbourhood") or {}).get("radius_m")
    if search.radius_m is None and fetched:  # a neighbourhood is whole only within its radius
        search = replace(search, radius_m=float(fetched))
    every = subjects is None
    asked: list[Subject] = []  # (a table without propertyId is refused by check_subjects)
    if subjects is None and "propertyId" in df.columns:
        asked = list(df["propertyId"].dropna().drop_duplicates())
    elif isinstance(subjects, (str, Mapping)):
        asked = [subjects]
    elif subjects is not None:
        asked = list(subjects)
    checked = check_subjects(df, asked)
    days = read_as_of(as_of, len(checked), today=today)
    evidence = gather_evidence(df)
    latest, why = default_as_of(evidence, today=today) if days is None else (0, None)
    read = read_subjects(evidence, checked, np.full(len(checked), latest) if days is None else days)
    left_out = dict(evidence.left_out)
    if every and int((~read.usable).sum()):
        left_out["properties without coordinates or floor area"] = int((~read.usable).sum())
        keep = np.flatnonzero(read.usable)
        read = read_subjects(evidence, [checked[i] for i in keep], read.as_of[keep])
    if search.index is not None and len(read.as_of):
        check_index_known(search.index, int(read.as_of.min()))
    knowledge = Knowledge(evidence, search.index, wider=_wider(df))
    valued = value_subjects(evidence, read, search, knowledge)
    starts = quarter_start(read.as_of)
    bands = Calibration(evidence, search, knowledge).bands(starts) if len(starts) else {}
    scale = np.array([bands[int(start)]["scale"] for start in starts])
    thin = ~(valued.count >= search.min_comparables) | ~read.usable
    estimate = np.where(thin, np.nan, valued.estimate)
    lower = estimate * np.exp(-scale * valued.spread)
    upper = estimate * np.exp(scale * valued.spread)
    calibrated = np.array([bands[int(start)]["calibrated"] for start in starts], dtype=bool)
    level = confidence(lower, upper)  # never above low on a range not checked on data
    values = pd.DataFrame(
        {
            "propertyId": pd.array(read.property_id, dtype="string"),
            "as_of": read.as_of.astype("datetime64[D]").astype("datetime64[us]"),
            "estimate": estimate,
            "lower": lower,
            "upper": upper,
            "confidence": pd.array(
                np.where(calibrated | pd.isna(level), level, "low"), dtype="string"
            ),
            "price_per_sqm": estimate / read.area,
            "comparables": valued.count.astype(np.int64),
            "radius_m": valued.matches.radius,
            "months": valued.matches.months,
            "thin": thin,
            "method": np.where(~read.usable, NO_PLACE, np.where(thin, THIN, METHOD)),
            "calibrated": calibrated,
            "index": pd.array(valued.notes, dtype="string"),
            "size": pd.array(valued.size_notes, dtype="string"),
        },
        columns=list(VALUATION_COLUMNS),
    )
    band = band_summary(bands, starts)
    basis = basis_of(why, search, calibrated=band["calibrated"], sales_of=knowledge.sales_of)
    values.attrs = {
        "criteria": search.describe(),
        "index": "; ".join(dict.fromkeys(k.index_text for k in knowledge.fitted.values())),
        "band": band,
        "confidence_rule": CONFIDENCE_RULE,
        "left_out": left_out,
        "basis": basis,
        **money_attrs(df, VALUATION_MONEY),  # in the frame's unit, as its sales are
    }
    return Appraisal(values, search, basis, df, evidence, read, valued, knowledge)


def comparables(
    df: pd.DataFrame,
    subject: Subject,
    *,
    as_of: Any = None,
    search: ValuationSearch | None = None,
    today: Day | None = None,
    **fields: Any,
) -> pd.DataFrame:
    """A subject's comparable sales: exactly those its estimate rests on, best first
    (``appraise(...).schedule(0)``; the search's fields may be given by name).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> df = pk.frame(generate_records(2000, realism="real"))
    >>> found = comparables(df, "PK00000042", as_of="2025-01-01", months=36)
    >>> list(found.columns[:5]), bool((found["date"] < "2025-01-01").all())
    (['propertyId', 'date', 'price', 'adjusted_price', 'time_adjustment'], True)
    """
    if not isinstance(subject, (str, Mapping)):
        raise InvalidInput(
            f"subject must be a propertyId or a mapping, got {type(subject).__name__}"
        )
    chosen = ValuationSearch.given(search, fields)
    return appraise(df, [subject], as_of=as_of, search=chosen, today=today).schedule(0)


def valuation(
    df: pd.DataFrame,
    subjects: Subject | Sequence[Subject] | None = None,
    *,
    as_of: Any = None,
    search: ValuationSearch | None = None,
    today: Day | None = None,
    **fields: Any,
) -> pd.DataFrame:
    """An estimate, an 80 % range and a confidence per subject (``appraise(...).values``; the
    search's fields may be given by name).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> df = pk.frame(generate_records(2000, realism="real"))
    >>> values = valuation(df, ["PK00000042", "PK00000007"], as_of="2025-01-01", months=36)
    >>> list(values["propertyId"]), list(values.columns[-3:])
    (['PK00000042', 'PK00000007'], ['calibrated', 'index', 'size'])
    """
    chosen = ValuationSearch.given(search, fields)
    return appraise(df, subjects, as_of=as_of, search=chosen, today=today).values
