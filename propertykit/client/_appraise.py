"""``client.appraise(ids)``: a client's book valued, each home from the evidence around it.

Each home's row is exactly its row valued alone (``client.neighbourhood(id, radius_m=r)`` then
``.pk.valuation([its propertyId], as_of=..., radius_m=r)``: comparables within the radius fetched):
the same requests build the same frame, valued on its own. The book shares what its homes have in
common, so it never costs more than its homes one by one: the subjects' records in batched lookups,
and each area query (a neighbourhood, an outcode borrowed by thin homes) sent once per call; the
cache answers what was fetched before, so the same book again costs nothing and an interrupted one,
run again, pays only for the rest.

``dry_run=True`` sends nothing: :class:`AppraisalPlan` prices the call from the cache and the cost
rule of :class:`~propertykit.Endpoints` (``credits_per_record``, ``least_credits_per_request``):
exact where the cache holds the answers, an upper bound where records per page decide it."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from propertykit.client._appraisal_plan import AppraisalPlan, price_book
from propertykit.client._ids import parse_ids
from propertykit.client._neighbourhood import (
    NEIGHBOURHOOD_MOST,
    AreaQueries,
    gather_neighbourhood,
)
from propertykit.errors import InvalidInput, MissingIdsWarning
from propertykit.frames import (
    VALUATION_COLUMNS,
    VALUATION_MONEY,
    Appraisal,
    ValuationSearch,
    appraise,
    check_as_of,
    money_attrs,
)
from propertykit.jsonio import Record

#: Columns of :attr:`BookAppraisal.values`: the id asked for, the valuation's, then the wider
#: area borrowed (``None``: none) and why a home was not valued (``None``: it was).
BOOK_COLUMNS = ("id", *VALUATION_COLUMNS, "wider", "why")


def check_book_ids(ids: object) -> list[str]:
    """The book's ids, one each, in order; :class:`InvalidInput` for anything not an id.

    Examples
    --------
    >>> check_book_ids(["L1", "rightmove::9"])
    ['L1', 'rightmove::9']
    >>> check_book_ids(["L1", "a,b"])
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: id 2 of the book, 'a,b', is not one id: give one id per home
    """
    if isinstance(ids, str):
        ids = [ids]
    if not isinstance(ids, Iterable):
        raise InvalidInput(f"ids must be location or source ids, got {type(ids).__name__}")
    asked = list(ids)
    if not asked:
        raise InvalidInput("ids is empty: give the book's location or source ids")
    for number, given in enumerate(asked, start=1):
        if not isinstance(given, str):
            raise InvalidInput(f"id {number} of the book is {type(given).__name__}, not text")
        parsed = parse_ids(given)
        if parsed.invalid:
            raise InvalidInput(f"id {number} of the book: {parsed.invalid[0][1]}")
        if parsed.count != 1:
            raise InvalidInput(
                f"id {number} of the book, {given!r}, is not one id: give one id per home"
            )
    return [given.strip() for given in asked]


def check_dates(as_of: Any, count: int) -> list[pd.Timestamp | None]:
    """One valuation date per home (one for all, one each, or ``None``: each frame's default)."""
    one = as_of is None or isinstance(as_of, (str, date, datetime, pd.Timestamp, np.datetime64))
    if one:
        return [check_as_of(as_of)] * count
    try:
        given = list(as_of)
    except TypeError:
        raise InvalidInput(f"as_of must be a date or one date per id, got {as_of!r}") from None
    if len(given) != count:
        raise InvalidInput(f"as_of holds {len(given)} dates for {count} ids: give one, or one each")
    return [check_as_of(day) for day in given]


def check_radius(radius_m: object) -> float:
    """The neighbourhood's radius: above 0, at most 8 km (as ``ValuationSearch`` takes it)."""
    return float(ValuationSearch(radius_m=radius_m).radius_m or 0)  # type: ignore[arg-type]


@dataclass(frozen=True)
class BookAppraisal:
    """A book valued: :attr:`values` (one row per id asked, in order) and, per row, the
    :class:`~propertykit.frames.Appraisal` of its neighbourhood (``None`` when the home could
    not be valued: its row's ``why`` says so) and that neighbourhood's frame."""

    values: pd.DataFrame
    appraisals: tuple[Appraisal | None, ...]
    frames: tuple[pd.DataFrame, ...]

    def schedule(self, position: int = 0) -> pd.DataFrame:
        """The sales the home's estimate rests on (:meth:`Appraisal.schedule`)."""
        return self._appraisal(position).schedule(0)

    def subject(self, position: int = 0) -> dict[str, Any]:
        """The home described (:meth:`Appraisal.subject`)."""
        return self._appraisal(position).subject(0)

    def reconciliation(self, position: int = 0) -> pd.DataFrame:
        """The estimate beside the home's own last sale and the service's (see
        :meth:`Appraisal.reconciliation`)."""
        return self._appraisal(position).reconciliation(0)

    @property
    def basis(self) -> list[dict[str, Any] | None]:
        """Each home's basis of value (the date and why, the method, the disclosure)."""
        return [None if found is None else found.basis for found in self.appraisals]

    def _appraisal(self, position: int) -> Appraisal:
        if not isinstance(position, (int, np.integer)) or not 0 <= position < len(self.values):
            raise InvalidInput(
                f"position must be a whole number from 0 to {len(self.values) - 1}, "
                f"got {position!r}"
            )
        found = self.appraisals[position]
        if found is None:
            why = self.values["why"].iloc[position]
            raise InvalidInput(f"{self.values['id'].iloc[position]} was not valued: {why}")
        return found


def _unvalued(asked: str, neighbourhood: dict[str, Any], day: pd.Timestamp | None) -> pd.DataFrame:
    """The row of a home that could not be valued, saying why."""
    row = dict.fromkeys(VALUATION_COLUMNS) | {
        "propertyId": neighbourhood.get("propertyId"),
        "as_of": day,
        "comparables": 0,
        "months": 0,  # not searched
        "radius_m": neighbourhood.get("radius_m"),
        "thin": True,
        "method": neighbourhood.get("stopped"),
        "calibrated": False,
    }
    return pd.DataFrame([row], columns=list(VALUATION_COLUMNS))


def _typed(values: pd.DataFrame) -> pd.DataFrame:
    """The book's rows with the valuation's dtypes, whichever rows came first."""
    kinds = {"propertyId": "string", "confidence": "string", "index": "string", "size": "string",
             "method": "string", "wider": "string", "why": "string", "id": "string",
             "estimate": "float64", "lower": "float64", "upper": "float64",
             "price_per_sqm": "float64", "radius_m": "float64", "comparables": "int64",
             "months": "int64", "thin": "bool", "calibrated": "bool"}  # fmt: skip
    typed = values.astype(kinds)
    typed["as_of"] = pd.to_datetime(typed["as_of"]).astype("datetime64[us]")
    return typed


class AppraiseMixin:
    """``appraise`` for :class:`~propertykit.Client`."""

    @overload
    def appraise(
        self,
        ids: str | Iterable[str],
        *,
        as_of: Any = ...,
        radius_m: float = ...,
        search: ValuationSearch | None = ...,
        dry_run: Literal[False] = ...,
    ) -> BookAppraisal: ...

    @overload
    def appraise(
        self,
        ids: str | Iterable[str],
        *,
        as_of: Any = ...,
        radius_m: float = ...,
        search: ValuationSearch | None = ...,
        dry_run: Literal[True],
    ) -> AppraisalPlan: ...

    def appraise(
        self,
        ids: str | Iterable[str],
        *,
        as_of: Any = None,
        radius_m: float = 2000.0,
        search: ValuationSearch | None = None,
        dry_run: bool = False,
    ) -> BookAppraisal | AppraisalPlan:
        """Value a book of homes, each from the evidence around it, as if valued alone.

        Parameters
        ----------
        ids
            Location ids or ``<provider>::<id>`` source ids, one per home (a repeat is a row
            again, at no cost).
        as_of
            One valuation date, or one per id, never after today; ``None``: each home's
            default (the day after the latest sale of its neighbourhood; ``basis`` says so).
        radius_m
            How far about each home to fetch its neighbourhood (above 0, at most 8,000 m).
        search
            What the valuation searches for (:class:`~propertykit.frames.ValuationSearch`;
            ``None``: its defaults). Without a ``radius_m`` of its own, comparables are searched
            within ``radius_m``, the radius fetched: homes of a wider area borrowed by a thin
            neighbourhood fit its index and elasticity, and are comparables only within it.
        dry_run
            Send nothing: return an :class:`AppraisalPlan` (``billable`` requests and
            ``credits``, each at most; exact where the cache holds the answers).

        Returns
        -------
        BookAppraisal
            ``values``: one row per id, in order (``id``, the valuation's columns, ``wider``:
            the area borrowed by a thin neighbourhood, ``why``: why a home was not valued, e.g.
            ``"no record"``, ``"no floor area"``); ``schedule(i)``, ``subject(i)``,
            ``reconciliation(i)``, ``basis``. Row ``i`` equals
            ``client.neighbourhood(ids[i], radius_m=radius_m).pk.valuation([its propertyId],
            as_of=..., search=search)`` (the search's radius the one fetched, as said above).

        Raises
        ------
        InvalidInput
            An id that is not one id, a date unreadable or after today, a radius out of range,
            a search that is not a ``ValuationSearch``: nothing is sent.

        Examples
        --------
        >>> book = client.appraise(sb.location_ids[:3], as_of="2025-01-01")
        >>> list(book.values["id"]) == sb.location_ids[:3]
        True
        >>> client.appraise(sb.location_ids[:3], as_of="2025-01-01", dry_run=True).billable
        0
        """
        asked = check_book_ids(ids)
        days = check_dates(as_of, len(asked))
        radius = check_radius(radius_m)
        if search is not None and not isinstance(search, ValuationSearch):
            raise InvalidInput(f"search must be a ValuationSearch, got {type(search).__name__}")
        if search is None or search.radius_m is None:  # comparables within the radius fetched
            search = replace(search or ValuationSearch(), radius_m=radius)
        client: Any = self
        if dry_run:
            return price_book(client, asked, radius)
        records = self._subjects(asked)
        queries = AreaQueries(client)
        rows, found, frames = [], [], []
        for number, (given, day) in enumerate(zip(asked, days, strict=True)):
            df = gather_neighbourhood(queries, given, records[number], radius, NEIGHBOURHOOD_MOST)
            neighbourhood = df.attrs["neighbourhood"]
            appraisal = None
            if neighbourhood["stopped"] is None:
                subject = neighbourhood["propertyId"]
                appraisal = appraise(df, [subject], as_of=day, search=search)
                row = appraisal.values.copy()
            else:
                row = _unvalued(given, neighbourhood, day)
            row.insert(0, "id", given)
            row["wider"], row["why"] = neighbourhood["wider"], neighbourhood["stopped"]
            rows.append(row)
            found.append(appraisal)
            frames.append(df)
        values = _typed(pd.concat(rows, ignore_index=True))
        values.attrs = {
            "radius_m": radius,
            "homes": len(asked),
            **money_attrs(frames[0], VALUATION_MONEY),  # one client: one unit for every home
        }
        return BookAppraisal(values, tuple(found), tuple(frames))

    def _subjects(self, asked: Sequence[str]) -> list[list[Record]]:
        """Each home's record (or nothing), the location ids looked up together in batches, as
        ``client.neighbourhood`` looks each up alone."""
        client: Any = self
        location_ids = [given for given in asked if not parse_ids(given).source_ids]
        by_id: dict[str, Record] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingIdsWarning)  # a row says "no record"
            if location_ids:
                for record in client.property_records(list(dict.fromkeys(location_ids))):
                    by_id.setdefault(str(record.get("locationId")), record)
            found: dict[str, list[Record]] = {}
            for given in asked:
                if given in found:
                    continue
                if parse_ids(given).source_ids:
                    found[given] = client.source_records([given])[:1]
                else:
                    found[given] = [by_id[given]] if given in by_id else []
        return [found[given] for given in asked]
