"""``client.neighbourhood(subject)``: a home and the homes like it around it, whose sales are its
evidence (for ``propertykit report --subject`` and the valuation form); the subject's id checks.
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from propertykit.client._ids import parse_ids
from propertykit.errors import InvalidInput, MissingIdsWarning
from propertykit.frames import ValuationSearch, check_subject

#: Records per page of the neighbourhood's query (the service's largest).
NEIGHBOURHOOD_PAGE = 100
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
        raise InvalidInput(f"Subject {parsed.invalid[0][0]!r}: {parsed.invalid[0][1]}")
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


class NeighbourhoodMixin:
    """``neighbourhood`` for :class:`~propertykit.Client`."""

    def neighbourhood(
        self,
        subject: str,
        *,
        radius_m: float = 2000.0,
        max_results: int | None = None,
    ) -> pd.DataFrame:
        """A home and the homes like it within ``radius_m``: the frame to value it from.

        Parameters
        ----------
        subject
            One location id or ``<provider>::<id>`` source id.
        radius_m
            How far about the subject to fetch, in metres (above 0, at most 8,000).
        max_results
            Most neighbours to fetch (all of them when ``None``).

        Returns
        -------
        pandas.DataFrame
            The subject's record, then the homes of its type with a floor area within 1.5 times
            its own within ``radius_m``. ``attrs["neighbourhood"]``: ``subject``,
            ``propertyId``, ``radius_m``, ``fetched`` and ``stopped`` (``None``, or why nothing
            more was fetched after the subject's record: ``"no record"``, ``"no floor area"``,
            ...).

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
            own = client.properties(location_ids) if location_ids else client.sources(source_ids)
        own = own.head(1)
        said: dict[str, Any] = {
            "subject": subject.strip(),
            "propertyId": None if own.empty else str(own["propertyId"].iloc[0]),
            "radius_m": radius,
            "fetched": 0,
            "stopped": _not_valuable(own),
        }
        if said["stopped"] is not None:
            own.attrs["neighbourhood"] = said
            return own
        first = own.iloc[0]
        area, point = float(first["floorAreaSqM"]), [first["spatial.lng"], first["spatial.lat"]]
        like = [  # its type, a floor area within 1.5 times its own: homes it can be compared with
            {"field": "propertyType", "comparator": "eq", "value": str(first["propertyType"])},
            {"field": "floorAreaSqM", "comparator": "gte", "value": round(area / 1.5, 1)},
            {"field": "floorAreaSqM", "comparator": "lte", "value": round(area * 1.5, 1)},
        ]
        nearby = client.query(
            {"type": "point", "coordinates": [float(v) for v in point], "radius": radius},
            page_size=NEIGHBOURHOOD_PAGE,
            max_results=max_results,
            query=[{"operator": "AND", "groups": [{"conditions": like}]}],
        )
        nearby = nearby[nearby["propertyId"] != said["propertyId"]]
        said["fetched"] = len(nearby)
        df = pd.concat([own, nearby], ignore_index=True) if len(nearby) else own.copy()
        df.attrs = {**own.attrs, "neighbourhood": said}
        return df
