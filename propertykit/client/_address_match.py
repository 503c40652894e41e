"""Whether a suggestion is the address a person typed: rules that never guess, and the queries.

Pure decisions over read addresses (:mod:`propertykit.client._addresses`) and the suggestions
their queries found (:mod:`propertykit.client._address_queries`), the last step of
:meth:`propertykit.Client.match_addresses`:

- :func:`compare`: one suggestion against the typed address. The numbers must agree in their
  roles (building, flat or unit, both ends of a range); the street must be the same street give
  or take a typo (the same kind, ``lane`` or ``road``, and names alike by rapidfuzz's ``ratio``,
  at least :data:`STREET_MIN`; a transposed letter is one slip); the place typed must be shown
  by the suggestion, never assumed: a typed postcode must be the suggestion's (its field or its
  text), and where the suggestion shows no postcode a typed town or locality must be one of its
  places, else the postcode "could not be confirmed"; without a postcode, a typed town must be
  one of its places. A house known only by its name must carry that name as a name: every word
  of one side found in the other (``The Barn`` is not ``The Old Barn``);
- :func:`decide`: from every suggestion of an address's queries, those that fit (agree, or are
  flats of the building typed), keeping the ones that hold the most of the places and names
  typed; ``matched`` when that leaves exactly one and it agrees, ``ambiguous`` when it leaves
  several (or a building's address names none of its flats), ``unmatched`` otherwise, with the
  reason in plain words. One fitting suggestion on a full page (:data:`FULL_ANSWER`) is a match
  only when the page reached weaker answers (its last suggestion shows fewer of the query's
  words than the fitting one: a ranked search has listed every address as good); otherwise
  the matcher asks a narrower question or the next page
  (:mod:`propertykit.client._matching`).

Examples
--------
>>> typed = read_address("92 Mill Lane, MK40 1NN")
>>> ninety = Candidate.of({"locationId": "L1", "displayAddress": "90 Mill Lane, Bedford, MK40 1NN"})
>>> decide(typed, [ninety]).status, decide(typed, [ninety]).reason
('unmatched', 'no 92 among the 1 suggested on Mill Lane, MK40 1NN: 90')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from rapidfuzz import fuzz

from propertykit.client._addresses import STREET_WORDS, ReadAddress, normalise, read_address
from propertykit.text import listed, plural

#: Least similarity (0-100, rapidfuzz's ``ratio`` of the names, once the kinds ``lane``/``road``
#: agree) of two streets taken to be one: a missing or doubled letter in a longer name stays
#: above it ("sprignfield" 91, "westfeld" 94), another name falls below ("mill"/"hill" 75,
#: "manor"/"york" 22); a transposed letter counts 90 whatever the length ("hgih").
STREET_MIN = 80.0
#: Least similarity of a typed town or locality to one of the suggestion's places.
PLACE_MIN = 80.0
#: Least similarity of a house's name, when it has no number to go by.
NAME_MIN = 80.0
#: The most suggestions one answer holds: an answer that full may have left out some.
FULL_ANSWER = 10
#: Between the ends of a run of house numbers (``1`` to ``9``); a building's range keeps ``-``.
DASH = "\N{EN DASH}"
#: Most near misses listed with an unmatched address, for review.
NEAR_MISSES = 5

Status = Literal["matched", "ambiguous", "unmatched"]

MAYBE_MORE = (
    f"one address fits, but the service listed only its first {FULL_ANSWER} answers, all as "
    "good, and did not list more when asked: others may fit too"
)
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Candidate:
    """A suggestion of the service, read: its id, its address as shown, and its parts."""

    location_id: str
    display: str
    read: ReadAddress
    places: tuple[str, ...]
    listed_in_full: bool = True
    shown: frozenset[str] = frozenset()

    @classmethod
    def of(cls, suggestion: Mapping[str, Any], *, listed_in_full: bool = True) -> Candidate:
        """Read a suggestion (``locationId``, ``displayAddress``; town, locality and county
        where it has them). ``listed_in_full``: its answer listed every address as good as it
        (see :func:`candidates_of`). ``shown``: the search words it shows (text, fields).

        Examples
        --------
        >>> Candidate.of({"locationId": "L1", "displayAddress": "4 Mill Lane, Bedford"}).places
        ('bedford',)
        """
        display = str(suggestion.get("displayAddress") or suggestion.get("address") or "")
        read = _with_fields(read_address(display), suggestion)
        fields = (suggestion.get(name) for name in ("locality", "town", "county"))
        extra = tuple(normalise(value) for value in fields if isinstance(value, str) and value)
        places = tuple(dict.fromkeys(read.places + extra))
        location_id = str(suggestion.get("locationId", ""))
        shown = {*_TOKEN.findall(display.casefold()), *_TOKEN.findall(" ".join(places))}
        if read.postcode:
            shown.update(_TOKEN.findall(read.postcode.casefold()))
            shown.add(read.postcode.replace(" ", "").casefold())
        shown.update(_TOKEN.findall(" ".join((read.street, *read.names))))
        return cls(location_id, display, read, places, listed_in_full, frozenset(shown))

    def holds(self, query: str) -> int:
        """How many of the query's words the suggestion shows."""
        return sum(1 for word in set(query.split()) if word in self.shown)


def candidates_of(answer: Sequence[Mapping[str, Any]], query: str = "") -> list[Candidate]:
    """The suggestions of one answer to ``query``, read. Each is *listed in full* when no
    address as good can have been left out: the answer is not full (:data:`FULL_ANSWER`), or
    its last suggestion shows fewer of the query's words than this one (a ranked search that
    reached weaker answers has listed every stronger one first).

    Examples
    --------
    >>> [c.listed_in_full for c in candidates_of([{"locationId": "L1"}])]
    [True]
    >>> page = [{"locationId": f"L{n}", "displayAddress": f"{n} Mill Lane"} for n in range(10)]
    >>> [c.listed_in_full for c in candidates_of(page, "4 mill lane")][3:5]
    [False, True]
    """
    read = [Candidate.of(s) for s in answer if usable_suggestion(s)]
    if len(answer) < FULL_ANSWER or not read:
        return read
    floor = read[-1].holds(query)
    return [replace(c, listed_in_full=c.holds(query) > floor) for c in read]


def usable_suggestion(suggestion: object) -> bool:
    """Whether a suggestion can be matched: a mapping with a location id (text, not blank).

    Examples
    --------
    >>> usable_suggestion({"locationId": "L1"}), usable_suggestion({"displayAddress": "4 Mill"})
    (True, False)
    """
    if not isinstance(suggestion, Mapping):
        return False
    location_id = suggestion.get("locationId")
    return isinstance(location_id, str) and bool(location_id.strip())


def _with_fields(read: ReadAddress, suggestion: Mapping[str, Any]) -> ReadAddress:
    """``read`` with the street, building name and postcode the suggestion states, where it
    states them (a locality called "Mill Road" is then never taken for the street)."""
    street, names, postcode = read.street, read.names, read.postcode
    if isinstance(suggestion.get("streetName"), str) and suggestion["streetName"].strip():
        street = normalise(suggestion["streetName"])
    if isinstance(suggestion.get("buildingName"), str) and suggestion["buildingName"].strip():
        names = (normalise(suggestion["buildingName"]),)
    if not postcode and isinstance(suggestion.get("postcode"), str):
        postcode = read_address(suggestion["postcode"]).postcode
    return ReadAddress(postcode, read.sub_numbers, read.building_numbers, street, names,
                       read.places)  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """One suggestion against a typed address.

    ``agrees``: it is that address. ``flat_of_building``: it is a flat or unit of the typed
    building, whose text names none. Otherwise ``why`` says what differs, and ``kind`` which
    part (``postcode``, ``number``, ``flat``, ``street``, ``place``, ``name``).
    """

    candidate: Candidate
    agrees: bool
    flat_of_building: bool
    score: float
    kind: str
    why: str


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` made of one address: a row of ``match_addresses``' frame."""

    status: Status
    location_id: str | None
    matched_address: str | None
    score: float | None
    candidates: tuple[str, ...]
    candidate_addresses: tuple[str, ...]
    reason: str | None


def compare(typed: ReadAddress, candidate: Candidate, *, place: bool = True) -> Comparison:
    """One suggestion against the typed address, by the rules of the module's docstring
    (``place=False``: every part but the place, which its record is to confirm).

    Examples
    --------
    >>> flat = Candidate.of({"locationId": "L7", "displayAddress": "Flat 6, 72 High Street"})
    >>> compare(read_address("72 high st flat 6"), flat).agrees
    True
    >>> compare(read_address("Flat 7, 72 High St"), flat).why
    'flat 6, not 7'
    """
    theirs = candidate.read
    score = fuzz.token_sort_ratio(typed.words(), theirs.words())

    def differs(kind: str, why: str, flat_of_building: bool = False) -> Comparison:
        return Comparison(candidate, False, flat_of_building, score, kind, why)

    if typed.postcode and theirs.postcode and typed.postcode != theirs.postcode:
        return differs("postcode", f"postcode {theirs.postcode}, not {typed.postcode}")
    if typed.building_numbers != theirs.building_numbers:
        have = "-".join(theirs.building_numbers) or "no number"
        return differs("number", f"number {have}, not {'-'.join(typed.building_numbers)}")
    street = _street_similarity(typed, theirs)
    if street < STREET_MIN:
        return differs("street", f"on {theirs.street or 'no street'}, not {typed.street}")
    unconfirmed = _unconfirmed_place(typed, candidate) if place else ""
    if unconfirmed:
        return differs("place", unconfirmed)
    if not typed.numbers and not _same_name(typed.names, theirs.names):
        return differs("name", f"named {listed(list(theirs.names)) or 'nothing'}")
    if typed.sub_numbers != theirs.sub_numbers:
        if not typed.sub_numbers:
            return differs("flat", f"flat {'-'.join(theirs.sub_numbers)} of it", True)
        have = "-".join(theirs.sub_numbers) or "no flat"
        return differs("flat", f"flat {have}, not {'-'.join(typed.sub_numbers)}")
    return Comparison(candidate, True, False, max(score, street), "", "")


def _unconfirmed_place(typed: ReadAddress, candidate: Candidate) -> str:
    """Which typed part of the place the suggestion contradicts or cannot confirm ("": none).

    A postcode the suggestion shows (checked before) confirms the place. Without one, a typed
    town or locality must be among the places it shows; a typed postcode it cannot show is
    then confirmed only that way.
    """
    if typed.postcode and candidate.read.postcode:
        return ""  # the same postcode (a different one was refused before)
    if typed.places and in_a_place(typed.places, candidate.places):
        return ""
    shown = listed(list(candidate.places), most=2)
    town = f"town {typed.places[0]}" if typed.places else ""
    if typed.postcode:
        why = f"postcode {typed.postcode} could not be confirmed: the suggestion shows no postcode"
        if town:
            return f"{why}, and {town} is not among its places ({shown or 'none shown'})"
        return f"{why} and no town was typed to confirm the place"
    if not typed.places:
        return ""  # nothing typed places it: the street decides (several are ambiguous)
    if not candidate.places:
        return f"{town} could not be confirmed: the suggestion shows no town"
    return f"in {shown}, not {typed.places[0]}"


def _street_similarity(typed: ReadAddress, theirs: ReadAddress) -> float:
    """How alike two streets are, 0-100: 0 when their kinds differ (``lane``, ``road``), else
    how alike their names are (``hgih``/``high``: a transposed letter counts as one small slip,
    ``mill``/``hill`` a different street)."""
    if not typed.street:  # "Rose Cottage, MK40 1NN": the postcode places it (checked above)
        return 100.0 if typed.postcode else 0.0
    if theirs.street and f" {theirs.street} " in f" {typed.words()} ":
        return 100.0  # spelled out whole, where the reader took another part for the street
    mine, my_kind = _name_and_kind(typed.street)
    their_name, their_kind = _name_and_kind(theirs.street)
    if my_kind and their_kind and my_kind != their_kind:
        return 0.0
    if not mine or not their_name:
        return 100.0 if mine == their_name else 0.0
    if mine.replace(" ", "") == their_name.replace(" ", ""):  # "kings" and "king s"
        return 100.0
    if _one_transposition(mine, their_name):
        return 90.0
    return float(fuzz.ratio(mine, their_name))


def _name_and_kind(street: str) -> tuple[str, str]:
    """``("mill", "lane")`` of ``"mill lane"``; a street without a kind word keeps ``""``."""
    words = street.split()
    if len(words) > 1 and words[-1] in STREET_WORDS:
        return " ".join(words[:-1]), words[-1]
    return street, ""


def _one_transposition(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two neighbouring letters swapped (``hgih``, ``high``)."""
    if len(a) != len(b) or a == b:
        return False
    differ = [k for k in range(len(a)) if a[k] != b[k]]
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and a[differ[0]] == b[differ[1]]
        and a[differ[1]] == b[differ[0]]
    )


def in_a_place(typed: Sequence[str], theirs: Sequence[str]) -> bool:
    """Whether any typed place (town, locality, county) is one of theirs: the others may be
    left out or added (a county the service does not show), so one is enough."""
    return any(fuzz.token_set_ratio(mine, place) >= PLACE_MIN for mine in typed for place in theirs)


def _same_name(typed: Sequence[str], theirs: Sequence[str]) -> bool:
    """Whether a typed part is one of their names, as a name: every word of each found in the
    other, give or take a typo (``the barn`` is not ``the old barn``; a shop's name in front is
    its own part, so ``The Corner Cafe, Rose Cottage`` is Rose Cottage).

    Examples
    --------
    >>> _same_name(["the barn"], ["the old barn"]), _same_name(["teh old barn"], ["the old barn"])
    (False, True)
    """
    if not theirs:
        return not typed
    return any(_name_words_agree(mine, name) for mine in typed for name in theirs)


def _name_words_agree(mine: str, theirs: str) -> bool:
    mine_words, their_words = mine.replace(" s ", "s ").split(), theirs.replace(" s ", "s ").split()
    if not mine_words or not their_words:
        return False

    def found(word: str, among: list[str]) -> bool:
        return any(fuzz.ratio(word, other) >= NAME_MIN or _one_transposition(word, other)
                   for other in among)  # fmt: skip

    return all(found(w, their_words) for w in mine_words) and all(
        found(w, mine_words) for w in their_words
    )


def decide(typed: ReadAddress, suggestions: Sequence[Candidate]) -> Decision:
    """matched, ambiguous or unmatched, from every suggestion of one address's queries.

    Examples
    --------
    >>> flats = [Candidate.of({"locationId": f"L{n}", "displayAddress": f"Flat {n}, 12 Mill Lane"})
    ...          for n in (1, 2, 3)]
    >>> decision = decide(read_address("12 Mill Lane"), flats)
    >>> decision.status, decision.candidates
    ('ambiguous', ('L1', 'L2', 'L3'))
    >>> decision.reason
    'names the building but not its flat or unit (3 flats or units in it)'
    """
    unique: dict[str, Candidate] = {}
    for candidate in suggestions:  # listed in full by any of its answers: listed in full
        seen = unique.get(candidate.location_id)
        if seen is None or (candidate.listed_in_full and not seen.listed_in_full):
            unique[candidate.location_id] = candidate
    compared = [compare(typed, candidate) for candidate in unique.values()]
    fitting = _most_said([c for c in compared if c.agrees or c.flat_of_building], typed)
    agreeing = [c for c in fitting if c.agrees]
    flats = [c for c in fitting if c.flat_of_building]
    if len(agreeing) == 1 and not flats:
        best = agreeing[0]
        if not best.candidate.listed_in_full:
            return _ambiguous(fitting, MAYBE_MORE)
        return Decision("matched", best.candidate.location_id, best.candidate.display,
                        round(best.score, 1), (), (), None)  # fmt: skip
    if agreeing:
        return _ambiguous(fitting, f"{len(fitting)} addresses fit it equally well")
    if flats:
        found = plural(len(flats), "flat or unit", "flats or units")
        return _ambiguous(flats, f"names the building but not its flat or unit ({found} in it)")
    return _unmatched(typed, compared)


def _most_said(fitting: list[Comparison], typed: ReadAddress) -> list[Comparison]:
    """Those of ``fitting`` that hold the most of what the text says besides the numbers and
    the street: the words of its places (``Widcombe, Bath`` beats ``Bath`` alone) and its names
    (a building's name), each counted when the suggestion has it, best first."""

    typed_words = {word for place in typed.places for word in place.split()}

    def said(comparison: Comparison) -> int:
        theirs = comparison.candidate
        their_words = {word for place in theirs.places for word in place.split()}
        places = sum(any(fuzz.ratio(mine, word) >= PLACE_MIN for word in their_words)
                     for mine in typed_words)  # fmt: skip
        names = sum(any(_name_words_agree(mine, name) for name in theirs.read.names)
                    for mine in typed.names)  # fmt: skip
        return places + names

    counts = [said(comparison) for comparison in fitting]
    most = max(counts, default=0)
    kept = [c for c, count in zip(fitting, counts, strict=True) if count == most]
    return sorted(kept, key=lambda c: -c.score)


def _ambiguous(fitting: list[Comparison], reason: str) -> Decision:
    best = max(c.score for c in fitting)
    ids = tuple(c.candidate.location_id for c in fitting)
    shown = tuple(c.candidate.display for c in fitting)
    return Decision("ambiguous", None, None, round(best, 1), ids, shown, reason)


def _unmatched(typed: ReadAddress, compared: list[Comparison]) -> Decision:
    if not compared:
        return Decision("unmatched", None, None, None, (), (), _nothing_suggested(typed))
    near = sorted(compared, key=lambda c: -c.score)[:NEAR_MISSES]
    ids = tuple(c.candidate.location_id for c in near)
    shown = tuple(c.candidate.display for c in near)
    return Decision("unmatched", None, None, round(near[0].score, 1), ids, shown,
                    _reason(typed, compared, near[0]))  # fmt: skip


def _nothing_suggested(typed: ReadAddress) -> str:
    """Why nothing was suggested, as far as the text tells.

    Examples
    --------
    >>> _nothing_suggested(read_address("Flat 6, 72 High St, MK40 1NN"))
    'the service has no address at MK40 1NN with the numbers 6 and 72'
    """
    if typed.postcode and typed.numbers:
        numbers = list(typed.numbers)
        said = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"
        noun = "number" if len(numbers) == 1 else "numbers"
        return f"the service has no address at {typed.postcode} with the {noun} {said}"
    if typed.postcode:
        return f"the service has no address at {typed.postcode} with that name"
    if not typed.street:
        return "no postcode and no street to find it by: nothing was asked"
    return "the service suggested nothing for this text"


def _reason(typed: ReadAddress, compared: list[Comparison], nearest: Comparison) -> str:
    """Plain words for why nothing fits, from the nearest suggestion."""
    same_street = [
        c
        for c in compared
        if c.kind == "number"
        and (not typed.postcode or c.candidate.read.postcode in (None, typed.postcode))
        and not _unconfirmed_place(typed, c.candidate)
        and _street_similarity(typed, c.candidate.read) >= STREET_MIN
    ]
    if same_street and typed.building_numbers:
        numbers = {"-".join(c.candidate.read.building_numbers) for c in same_street} - {""}
        street = (same_street[0].candidate.read.street or typed.street or "that street").title()
        where = f", {typed.postcode}" if typed.postcode else ""
        return (
            f"no {'-'.join(typed.building_numbers)} among the {len(same_street)} suggested on "
            f"{street}{where}: {number_ranges(numbers)}"
        )
    elsewhere = [
        c
        for c in compared
        if c.kind in ("postcode", "place")
        and c.candidate.read.building_numbers == typed.building_numbers
        and _street_similarity(typed, c.candidate.read) >= STREET_MIN
    ]
    if elsewhere:  # the number and street are suggested, but the place typed is not shown
        nearest = max(elsewhere, key=lambda c: c.score)
    return f"nearest suggestion differs: {nearest.why} ({nearest.candidate.display})"


def number_ranges(numbers: set[str]) -> str:
    """House numbers in order, runs written as ranges.

    Examples
    --------
    >>> number_ranges({"1", "2", "3", "5", "7", "8", "11", "12a"}) == f"1{DASH}3, 5, 7, 8, 11, 12a"
    True
    """
    plain = sorted(int(n) for n in numbers if n.isdigit())
    runs: list[list[int]] = []
    for number in plain:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    others = [n for n in numbers if not n.isdigit()]
    ordered = sorted(
        [(r[0], w) for r in runs for w in _run_words(r)] + [(_lead(n), n) for n in others]
    )
    return ", ".join(word for _, word in ordered)


def _run_words(run: list[int]) -> list[str]:
    return [f"{run[0]}{DASH}{run[-1]}"] if len(run) >= 3 else [str(n) for n in run]


def _lead(number: str) -> int:
    digits = re.match(r"[0-9]+", number)
    return int(digits[0]) if digits else 0
