"""``client.neighbourhood(subject)``: a home and the homes like it around it, whose sales are its
evidence (for ``propertykit report --subject``, the valuation form and ``client.appraise``); the
subject's id checks.

Thin neighbourhoods borrow: when the homes around a subject are too few to fit a price index or a
size elasticity (:func:`too_few_to_fit`), the homes of its outcode are fetched too (one area
query, at most :data:`WIDER_MOST` homes) and travel as rows of the same frame, so the valuation
fits its index and elasticity on them and anyone can see it did (``attrs["neighbourhood"]
["wider"]``). Value within the radius fetched (``.pk.valuation(..., radius_m=radius)``, as
``client.appraise``, the valuation form and ``report --subject`` do): those homes are then
comparables only within it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd

from propertykit.client._ids import parse_ids
from propertykit.errors import InvalidInput, MissingIdsWarning
from propertykit.frames import ValuationSearch, check_subject, explode_sales, frame
from propertykit.jsonio import Record
from propertykit.text import plural

#: Records per page of the neighbourhood's query (the service's largest).
NEIGHBOURHOOD_PAGE = 100
#: Most homes fetched around a subject: a bound a plan (``dry_run=True``) can price.
NEIGHBOURHOOD_MOST = 1000
#: Most homes of the wider area (the subject's outcode) fetched when its neighbourhood is thin.
WIDER_MOST = 1000
#: The fewest repeat-sale pairs an index is fitted on (``price_index``'s ``min_pairs``), and the
#: fewest sales of the subject's type a size elasticity rests on (``SizeElasticity``'s least).
LEAST_PAIRS = 30
LEAST_SALES_OF_TYPE = 30
#: What a subject needs before its neighbourhood is worth paying for: field -> how to say it.
_NEEDED = {
    "spatial.lat": "no location",
    "spatial.lng": "no location",
    "propertyType": "no property type",
    "floorAreaSqM": "no floor area",
}


def check_subject_id(subject: object) -> tuple[list[str], list[str]]:
    """One location id or one ``<provider>::<id>`` source id, as (location ids, source ids).

    Examples
    --------
    >>> check_subject_id("rightmove::123")
    ([], ['rightmove::123'])
    >>> check_subject_id("L1,L2")
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: A subject is one id (a location id or <provider>::<id>), \
got 2
    """
    if not isinstance(subject, str):
        raise InvalidInput(f"A subject is an id (text), got {type(subject).__name__}")
    parsed = parse_ids(subject)
    if parsed.invalid:
        raise InvalidInput(f"Subject {parsed.invalid[0][1]}")  # the reason names the id
    if parsed.count != 1:
        raise InvalidInput(
            f"A subject is one id (a location id or <provider>::<id>), got {parsed.count}"
        )
    return parsed.location_ids, parsed.source_ids


def held_in(df: pd.DataFrame | None, given: str) -> str | None:
    """The ``propertyId`` of the home of ``df`` that ``given`` names (its propertyId or
    locationId), or ``None``: what the CLI and the form value without fetching anything.

    Examples
    --------
    >>> held_in(pd.DataFrame({"propertyId": ["PK1"], "locationId": ["L1"]}), "L1")
    'PK1'
    """
    for column in ("propertyId", "locationId"):
        if df is not None and column in df.columns:
            found = df.loc[df[column] == given, "propertyId"]
            if len(found):
                return str(found.iloc[0])
    return None


def _not_valuable(own: pd.DataFrame) -> str | None:
    """Why a subject's record cannot be valued (a field missing, or one no valuation takes)."""
    if own.empty:
        return "no record"
    first = own.iloc[0]
    for field, why in _NEEDED.items():
        if first.get(field) is None or pd.isna(first.get(field)):
            return why
    place = {"lat": first["spatial.lat"], "lng": first["spatial.lng"],
             "floorAreaSqM": first["floorAreaSqM"],
             "propertyType": str(first["propertyType"])}  # fmt: skip
    try:
        check_subject(place)
    except InvalidInput as exc:
        return f"a record no valuation takes ({exc})"
    return None


def too_few_to_fit(df: pd.DataFrame, property_type: str) -> str | None:
    """Why the homes of ``df`` are too few to fit a price index or a size elasticity for a home
    of ``property_type`` (fewer than :data:`LEAST_PAIRS` repeat-sale pairs, or than
    :data:`LEAST_SALES_OF_TYPE` sales of its type), or ``None``. It counts every sale the frame
    holds, whatever the valuation date: a neighbourhood is fetched before a date is chosen.

    Examples
    --------
    >>> too_few_to_fit(frame([]), "flat")
    '0 repeat-sale pairs (an index needs 30)'
    """
    sales = explode_sales(df)
    pairs = int(len(sales) - sales["propertyId"].nunique()) if len(sales) else 0
    if pairs < LEAST_PAIRS:
        return f"{pairs:,} repeat-sale pairs (an index needs {LEAST_PAIRS})"
    of_type = int((sales["propertyType"].astype(object) == property_type).sum())
    if of_type < LEAST_SALES_OF_TYPE:
        return f"{of_type:,} sales of its type (a size elasticity needs {LEAST_SALES_OF_TYPE})"
    return None


def nearby_query(first: pd.Series, radius: float) -> tuple[dict[str, Any], list[Any]]:
    """The area and condition groups of a subject's neighbourhood query: homes of its type with a
    floor area within 1.5 times its own, within ``radius`` metres of it."""
    area = float(first["floorAreaSqM"])
    point = [float(first["spatial.lng"]), float(first["spatial.lat"])]
    like = [  # its type, a floor area within 1.5 times its own: homes it can be compared with
        {"field": "propertyType", "comparator": "eq", "value": str(first["propertyType"])},
        {"field": "floorAreaSqM", "comparator": "gte", "value": round(area / 1.5, 1)},
        {"field": "floorAreaSqM", "comparator": "lte", "value": round(area * 1.5, 1)},
    ]
    circle = {"type": "point", "coordinates": point, "radius": radius}
    return circle, [{"operator": "AND", "groups": [{"conditions": like}]}]


def outcode_of(first: pd.Series) -> str | None:
    """The subject's outcode: its record's, else its postcode's first part; ``None`` if neither."""
    for column in ("address.outcode", "address.postcode"):
        value = first.get(column)
        if isinstance(value, str) and value.strip():
            return value.split()[0].upper()
    return None


class AreaQueries:
    """The area queries of one call, each sent once: the homes of a book share them (an outcode
    asked for by ten homes is fetched once, whatever the cache)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.answers: dict[str, list[Record]] = {}

    def records(
        self, area: dict[str, Any], *, max_results: int | None, query: list[Any] | None = None
    ) -> list[Record]:
        """Every record of the query (at most ``max_results``), fetched the first time asked."""
        key = json.dumps([area, max_results, query], sort_keys=True)
        if key not in self.answers:
            conditions = {} if query is None else {"query": query}
            self.answers[key] = self.client.query_records(
                area, page_size=NEIGHBOURHOOD_PAGE, max_results=max_results, **conditions
            )
        return self.answers[key]


def gather_neighbourhood(
    queries: AreaQueries,
    subject: str,
    own: Sequence[Record],
    radius: float,
    max_results: int | None,
) -> pd.DataFrame:
    """The neighbourhood of a subject whose record (``own``: it, or nothing) is already at
    hand: the one route of ``client.neighbourhood`` and ``client.appraise``."""
    money_unit = queries.client.endpoints.money_unit
    first_only = list(own[:1])
    own_df = frame(first_only, money_unit=money_unit)
    said: dict[str, Any] = {
        "subject": subject.strip(),
        "propertyId": None if own_df.empty else str(own_df["propertyId"].iloc[0]),
        "radius_m": radius,
        "fetched": 0,
        "stopped": _not_valuable(own_df),
        "wider": None,
    }
    if said["stopped"] is not None:
        own_df.attrs["neighbourhood"] = said
        return own_df
    first = own_df.iloc[0]
    area, conditions = nearby_query(first, radius)
    answer = queries.records(area, max_results=max_results, query=conditions)
    nearby = [record for record in answer if record.get("propertyId") != said["propertyId"]]
    said["fetched"] = len(nearby)
    records = first_only + nearby
    df = frame(records, money_unit=money_unit)
    outcode = outcode_of(first)
    if outcode is not None and too_few_to_fit(df, str(first["propertyType"])) is not None:
        homes = queries.records({"type": "outcode", "value": outcode}, max_results=WIDER_MOST)
        held = {record.get("propertyId") for record in records}
        borrowed = [record for record in homes if record.get("propertyId") not in held]
        first_ones = "the first " if len(homes) >= WIDER_MOST else ""
        said["wider"] = f"outcode {outcode} ({first_ones}{plural(len(homes), 'home')})"
        if borrowed:
            df = frame(records + borrowed, money_unit=money_unit)
    df.attrs = {**df.attrs, "neighbourhood": said}
    return df


class NeighbourhoodMixin:
    """``neighbourhood`` for :class:`~propertykit.Client`."""

    def neighbourhood(
        self,
        subject: str,
        *,
        radius_m: float = 2000.0,
        max_results: int | None = NEIGHBOURHOOD_MOST,
    ) -> pd.DataFrame:
        """A home and the homes like it within ``radius_m``: the frame to value it from.

        Parameters
        ----------
        subject
            One location id or ``<provider>::<id>`` source id.
        radius_m
            How far about the subject to fetch, in metres (above 0, at most 8,000).
        max_results
            Most neighbours to fetch (all of them when ``None``; the default,
            :data:`NEIGHBOURHOOD_MOST`, is a bound a plan can price).

        Returns
        -------
        pandas.DataFrame
            The subject's record, then the homes of its type with a floor area within 1.5 times
            its own within ``radius_m``; when those are too few to fit an index or a size
            elasticity (:func:`too_few_to_fit`), the other homes of its outcode after them.
            ``attrs["neighbourhood"]``: ``subject``, ``propertyId``, ``radius_m``, ``fetched``
            (homes around it), ``stopped`` (``None``, or why nothing more was fetched after the
            subject's record: ``"no record"``, ``"no floor area"``, ...) and ``wider`` (``None``,
            or the wider area whose homes were added, e.g. ``"outcode B13 (412 homes)"``).

        Raises
        ------
        InvalidInput
            Not exactly one well-formed id, or a radius out of range: nothing is sent.

        Examples
        --------
        >>> df = client.neighbourhood("L00000067", radius_m=3000)
        >>> said = df.attrs["neighbourhood"]
        >>> said["propertyId"], said["stopped"], said["fetched"] == len(df) - 1
        ('PK00000067', None, True)
        """
        location_ids, source_ids = check_subject_id(subject)
        radius = float(ValuationSearch(radius_m=radius_m).radius_m or 0)  # > 0, at most 8 km
        client: Any = self
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingIdsWarning)  # said in attrs["neighbourhood"]
            own = (
                client.property_records(location_ids)
                if location_ids
                else client.source_records(source_ids)
            )
        return gather_neighbourhood(AreaQueries(client), subject, own, radius, max_results)
