"""A place the answer cannot show, confirmed from the candidate's own record.

Where a search answers with the display text alone (no postcode, no postcode or town field), an
address typed with a postcode and no town (or only a county) cannot be confirmed by the answer,
and the matcher never takes what an answer cannot show as agreeing
(:mod:`propertykit.client._address_match`). When that place is the only part a suggestion cannot
confirm, and exactly one suggestion fits on every other part (:func:`to_confirm`), its record is
looked up (``client.property_records``: billable, batched, cached) and the typed postcode (and
town, locality or county) compared with the record's address (:func:`confirmed`): matched only
if they agree, else unmatched with the part that disagrees. Nothing here sends anything.

Examples
--------
>>> typed = read_address("12 Mill Lane, MK40 1NN")
>>> shown = Candidate.of({"locationId": "L1", "displayAddress": "12 Mill Lane, Bedford"})
>>> to_confirm(typed, [shown])
('L1',)
>>> unconfirmed = Decision("unmatched", None, None, 90.0, ("L1",), (shown.display,), "...")
>>> record = {"locationId": "L1", "address": {"postcode": "MK40 1NN", "town": "Bedford"}}
>>> decision = confirmed(typed, unconfirmed, [shown], {"L1": record})
>>> decision.status, decision.reason
('matched', 'postcode MK40 1NN confirmed from its record')
>>> confirmed(typed, unconfirmed, [shown], {"L1": {"address": {"postcode": "LU1 1AA"}}}).reason
'its record says postcode LU1 1AA, not MK40 1NN (12 Mill Lane, Bedford)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from propertykit.client._address_match import (
    Candidate,
    Decision,
    compare,
    in_a_place,
)
from propertykit.client._addresses import ReadAddress, normalise, read_address
from propertykit.text import listed

#: The parts of a record's address that place it, as a typed town may name them.
PLACE_FIELDS = ("locality", "town", "county")


def to_confirm(typed: ReadAddress, suggestions: Sequence[Candidate]) -> tuple[str, ...]:
    """The one suggestion whose record may confirm the place (``()``: none to look up).

    Only where the typed place is a postcode the suggestion does not show (or a town where it
    shows no place at all), and exactly one suggestion, listed with every address as good as
    it, fits on every other part (numbers, street, name, flat), a building's flats included.
    """
    if not typed.postcode and not typed.places:
        return ()
    unique: dict[str, Candidate] = {}
    for candidate in suggestions:  # listed in full by any of its answers: listed in full
        seen = unique.get(candidate.location_id)
        if seen is None or (candidate.listed_in_full and not seen.listed_in_full):
            unique[candidate.location_id] = candidate
    fitting = []
    for candidate in unique.values():
        whole = compare(typed, candidate, place=False)
        if whole.agrees or whole.flat_of_building:
            fitting.append((candidate, whole.agrees))
    if len(fitting) != 1:
        return ()
    candidate, agrees = fitting[0]
    if not agrees or not candidate.listed_in_full or candidate.read.postcode:
        return ()
    if not typed.postcode and candidate.places:  # a town it shows, and not the typed one
        return ()
    return (candidate.location_id,)


def confirmed(
    typed: ReadAddress,
    decision: Decision,
    suggestions: Sequence[Candidate],
    records: Mapping[str, Mapping[str, Any]],
) -> Decision:
    """``decision`` once the record of its one fitting suggestion is read: matched when the
    record's postcode (and place) agree with the typed ones, else unmatched saying which part
    differs."""
    ids = to_confirm(typed, suggestions)
    if not ids:
        return decision
    candidate = next(c for c in suggestions if c.location_id == ids[0] and c.listed_in_full)
    record = records.get(candidate.location_id)
    if record is None:
        why = f"its record was not returned to confirm the place ({candidate.display})"
        return Decision("unmatched", None, None, decision.score, ids, (candidate.display,), why)
    differs = _record_differs(typed, record)
    if differs:
        why = f"its record says {differs} ({candidate.display})"
        return Decision("unmatched", None, None, decision.score, ids, (candidate.display,), why)
    score = compare(typed, candidate, place=False).score
    parts = [f"postcode {typed.postcode}"] if typed.postcode else []
    parts += [f"town {typed.places[0]}"] if typed.places and not typed.postcode else []
    return Decision("matched", candidate.location_id, candidate.display, round(score, 1), (), (),
                    f"{' and '.join(parts)} confirmed from its record")  # fmt: skip


def _record_differs(typed: ReadAddress, record: Mapping[str, Any]) -> str:
    """What of the typed place the record's address contradicts ("": it agrees)."""
    address = record.get("address")
    address = address if isinstance(address, Mapping) else {}
    text = address.get("postcode")
    postcode = read_address(text).postcode if isinstance(text, str) else None
    if typed.postcode and postcode != typed.postcode:
        return f"postcode {postcode or 'none'}, not {typed.postcode}"
    places = [normalise(address[field]) for field in PLACE_FIELDS
              if isinstance(address.get(field), str) and address[field].strip()]  # fmt: skip
    if typed.places and not in_a_place(typed.places, places):
        return f"{listed(places, most=2) or 'no place'}, not {typed.places[0]}"
    return ""
