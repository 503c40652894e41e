"""The search texts asked for one address: at most three, from its text alone.

The first step of :meth:`propertykit.Client.match_addresses` after reading the address
(:mod:`propertykit.client._addresses`). The queries depend on the text alone, never on an answer
(which of them are asked does: :mod:`propertykit.client._matching`); identical queries of several
addresses are sent once. They are built for any of the searches real services run: one that
wants every word of a query (no abbreviation or typo forgiven), or one that ranks any word
(a full page of ten), fuzzy or not, showing the postcode or not.
"""

from __future__ import annotations

from propertykit.client._addresses import STREET_WORDS, ReadAddress

#: The most words a query has: a longer text is no address (nothing is asked for it).
MOST_QUERY_WORDS = 16


def plan_queries(typed: ReadAddress) -> list[str]:
    """The search texts to ask for one address, at most three, in order, none repeated.

    Every word of a query must be in an answer (a plain full-text search; the last word may be
    the start of a longer one, so the postcode goes last), and an answer holds at most 10
    suggestions, so a query carries only words the address surely has: the postcode
    and the numbers when there is a postcode, since the postcode must agree anyway, then the
    numbers, the street and the town typed (words every answer shows, for an answer that shows
    no postcode: a ranked search's full page is then judged by them), then the street at the
    postcode (the homes it has, for a number it lacks); else the
    numbers, the street and the town, then the numbers and the street alone, then the numbers,
    the street's last word and the town (for a typo in the street's name). A house known by its
    name is asked for by one word of its name at a time, longest first (a shop's or company's
    name in front holds words the service lacks), with the postcode, or the street and town.

    Examples
    --------
    >>> from propertykit.client._addresses import read_address
    >>> plan_queries(read_address("Flat 6, 72 High St, MK40 1NN"))
    ['6 72 mk401nn', '6 72 high street', 'high street mk401nn']
    >>> plan_queries(read_address("72 High St, Kempston, Bedford"))
    ['72 high street kempston', '72 high street', '72 street kempston']
    >>> plan_queries(read_address("Rose Cottage, MK40 1NN"))
    ['cottage mk401nn', 'rose mk401nn', 'mk401nn']
    """
    numbers = " ".join(typed.numbers)
    postcode = typed.postcode_token
    name_words = _name_words(typed)
    street_words = typed.street.split()
    last = street_words[-1] if street_words and street_words[-1] in STREET_WORDS else ""
    town = typed.places[0] if typed.places else ""
    if postcode and numbers:  # then the words an answer shows, where it may not show postcodes
        queries = [f"{numbers} {postcode}", f"{numbers} {typed.street} {town}".strip(),
                   f"{typed.street} {postcode}"]  # fmt: skip
    elif postcode:  # a house's name: one word of it at a time (a shop's name may be in front)
        queries = [f"{word} {postcode}" for word in name_words[:2]]
        queries.append(f"{typed.street} {postcode}")
    elif numbers:
        queries = [
            f"{numbers} {typed.street} {town}",
            f"{numbers} {typed.street}",
            f"{numbers} {last} {town}" if last and town else f"{numbers} {town}",
        ]
    else:
        queries = [f"{typed.street} {town} {word}" for word in name_words[:2]]
        first = name_words[0] if name_words else ""
        queries.append(f"{last} {town} {first}" if last and town else f"{typed.street} {first}")
    if not postcode and not typed.street:
        return []  # nothing places it: no postcode, no street
    # "saint" is this reader's word for "St": the service may hold either, so it is left out.
    cleaned = [" ".join(w for w in query.split() if w != "saint") for query in queries]
    if any(len(query.split()) > MOST_QUERY_WORDS for query in cleaned):
        return []  # a text that long is no address
    return [q for q in dict.fromkeys(cleaned) if q]


def _name_words(typed: ReadAddress) -> list[str]:
    """Words of a house's name to ask by, one at a time: the longest, then the last word typed
    before the street (a shop's or company's name comes first, the house's name last), then the
    next longest."""
    words = " ".join(typed.names).split()
    longest = sorted(set(words), key=lambda word: (-len(word), word))
    return list(dict.fromkeys([*longest[:1], *words[-1:], *longest[1:]]))
