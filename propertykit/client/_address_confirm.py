"""A place the answer cannot show, confirmed from the candidate's own record.

Where a search answers with the display text alone (no postcode, no postcode or town field), an
address typed with a postcode and no town (or only a county) cannot be confirmed by the answer,
and the matcher never takes what an answer cannot show as agreeing
(:mod:`propertykit.client._address_match`). When that place is the only part a suggestion cannot
confirm, the suggestions that fit on every other part (:func:`to_confirm`: at most
:data:`MOST_CONFIRMED`, best ranked first) have their records looked up, one a round, until one
agrees (``client.property_records``: billable, batched for the whole list, cached): the typed
postcode (and town, locality or county) compared with the record's address
(:func:`next_to_confirm`, :func:`confirmed`). Matched only when a record agrees (a postcode,
number, street, flat and name agreeing are one address); else unmatched with the part that
disagrees. Nothing here sends anything.

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

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from propertykit.client._address_match import (
    Candidate,
    Decision,
    compare,
    in_a_place,
)
from propertykit.client._addresses import ReadAddress, normalise, read_address
from propertykit.text import listed

#: The most records looked up for one address (its best-ranked fitting suggestions, one a round).
MOST_CONFIRMED = 3
#: The parts of a record's address that place it, as a typed town may name them.
PLACE_FIELDS = ("locality", "town", "county")


class PlaceRecords(Mapping[str, Mapping[str, Any]]):
    """The records bought to confirm places, by location id: read-only, so a frame's ``attrs``
    holding them is not deep-copied by every pandas operation (pandas copies ``attrs`` deeply).

    Examples
    --------
    >>> import copy
    >>> kept = PlaceRecords({"L1": {"locationId": "L1"}})
    >>> copy.deepcopy(kept) is kept, list(kept), len(kept)
    (True, ['L1'], 1)
    """

    def __init__(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        self._records = dict(records)

    def __getitem__(self, location_id: str) -> Mapping[str, Any]:
        return self._records[location_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __deepcopy__(self, memo: dict[int, Any]) -> PlaceRecords:
        return self  # never changed after matching: one copy serves every frame

    def __repr__(self) -> str:
        return f"<PlaceRecords: {len(self)} records looked up to confirm places>"


def confirm_all(
    records_of: Callable[[list[str]], list[dict[str, Any]]],
    read: Mapping[str, ReadAddress],
    suggested: Mapping[str, Sequence[Candidate]],
    decided: dict[str, Decision],
) -> tuple[dict[str, dict[str, Any]], int]:
    """Confirm from their records the places of the unmatched addresses of ``decided`` that
    call for it (:func:`to_confirm`), in place: in at most :data:`MOST_CONFIRMED` rounds, each
    looking up every address's next best suggestion at once (``records_of``: batched, cached).
    The records found, by location id, and how many ids were looked up."""
    confirming = {key: to_confirm(read[key], suggested[key]) for key in suggested
                  if decided[key].status == "unmatched"}  # fmt: skip
    records: dict[str, dict[str, Any]] = {}
    asked: set[str] = set()
    for _ in range(MOST_CONFIRMED):
        ids = list(dict.fromkeys(
            next_id for key, fitting in confirming.items()
            if (next_id := next_to_confirm(read[key], fitting, records, asked))
        ))  # fmt: skip
        if not ids:
            break
        records.update({str(r.get("locationId")): r for r in records_of(ids)})
        asked.update(ids)
    for key, fitting in confirming.items():
        if fitting:
            decided[key] = confirmed(read[key], decided[key], suggested[key], records)
    return records, len(asked)


def to_confirm(typed: ReadAddress, suggestions: Sequence[Candidate]) -> tuple[str, ...]:
    """The suggestions whose records may confirm the place, best ranked first (in the order
    the answers listed them), at most :data:`MOST_CONFIRMED` (``()``: none to look up).

    Only where the typed place is a postcode the suggestions do not show (or a town where they
    show no place at all), every suggestion that fits on every other part (numbers, street,
    name, flat) agrees on them (no building's flat stands for it) and was listed with every
    address as good as it.
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
    if not fitting or len(fitting) > MOST_CONFIRMED:
        return ()
    for candidate, agrees in fitting:
        if not agrees or not candidate.listed_in_full or candidate.read.postcode:
            return ()
        if not typed.postcode and candidate.places:  # a town it shows, and not the typed one
            return ()
    return tuple(candidate.location_id for candidate, _ in fitting)


def next_to_confirm(
    typed: ReadAddress,
    ids: Sequence[str],
    records: Mapping[str, Mapping[str, Any]],
    looked_up: set[str],
) -> str | None:
    """The next of ``ids`` to look up: ``None`` once a record looked up agrees or all were.

    Examples
    --------
    >>> typed = read_address("12 Mill Lane, MK40 1NN")
    >>> elsewhere = {"L1": {"address": {"postcode": "LU1 1AA"}}}
    >>> next_to_confirm(typed, ["L1", "L2"], {}, set()), next_to_confirm(typed, ["L1", "L2"],
    ...                                                                 elsewhere, {"L1"})
    ('L1', 'L2')
    """
    for location_id in ids:
        if location_id not in looked_up:
            return location_id
        record = records.get(location_id)
        if record is not None and not _record_differs(typed, record):
            return None
    return None


def confirmed(
    typed: ReadAddress,
    decision: Decision,
    suggestions: Sequence[Candidate],
    records: Mapping[str, Mapping[str, Any]],
) -> Decision:
    """``decision`` once the records of its fitting suggestions are read: matched with the
    first whose record's postcode (and place) agree with the typed ones, else unmatched saying
    which part differs."""
    ids = to_confirm(typed, suggestions)
    if not ids:
        return decision
    shown = {c.location_id: c.display for c in suggestions}
    displays = tuple(shown[i] for i in ids)
    agreeing = [i for i in ids if i in records and not _record_differs(typed, records[i])]
    if not agreeing:
        first = ids[0]
        if first not in records:
            why = f"its record was not returned to confirm the place ({shown[first]})"
        else:
            why = f"its record says {_record_differs(typed, records[first])} ({shown[first]})"
            if len(ids) > 1:
                why += f"; the records of the {len(ids) - 1} others that fit do not agree either"
        return Decision("unmatched", None, None, decision.score, ids, displays, why)
    candidate = next(c for c in suggestions if c.location_id == agreeing[0])
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
