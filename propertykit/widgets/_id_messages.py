"""What the lookup form says about the ids typed: each id that cannot be sent, and why, naming
every character in it that an id of the service is not made of.

Shown through :mod:`propertykit.widgets._messages`, which names these sentences with the rest.
"""

from __future__ import annotations

import re
import string

from propertykit.text import listed, plural

EMPTY_IDS = "Nothing was sent: type or paste at least one id in Ids, or pick a search match."

#: The characters the service's ids are made of; any other in an id is named.
_ID_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-_.~:")
_CHARACTER_NAMES = {" ": "a space", "\t": "a tab"}


def _character_name(character: str) -> str:
    if character in _CHARACTER_NAMES:
        return _CHARACTER_NAMES[character]
    if character.isspace():
        return "a blank character"
    if not character.isprintable():
        return f"a control character (U+{ord(character):04X})"
    return f"“{character}”"


def odd_characters(item: str) -> list[str]:
    """Every character of ``item`` an id of the service is not made of, named, first seen first.

    Examples
    --------
    >>> odd_characters("bad id!")
    ['a space', '“!”']
    """
    names = (_character_name(ch) for ch in item if ch not in _ID_CHARACTERS)
    return list(dict.fromkeys(names))


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def describe_refused_id(item: str, reason: str) -> str:
    """Why one id cannot be sent, naming every character in it an id is not made of.

    ``reason`` is the client's own sentence (:func:`propertykit.client.parse_ids`).

    Examples
    --------
    >>> describe_refused_id("bad id!", "“bad id!” has a space in it")
    '“bad id!” has a space and “!” in it'
    >>> describe_refused_id("zoopla::", "“zoopla::” is not a source id")
    '“zoopla::” is not a source id'
    """
    odd = odd_characters(item)
    if not odd:
        return reason
    sentence = f"“{item}” has {_and(odd)} in it"
    if reason.endswith(" in it"):  # the client named characters: now all of them are
        return sentence
    return f"{sentence}, and {reason.removeprefix(f'“{item}” ')}"


def _refusals(invalid: list[tuple[str, str]]) -> str:
    reasons = "".join(f" {describe_refused_id(item, reason)}." for item, reason in invalid[:5])
    more = f" And {plural(len(invalid) - 5, 'more id')}." if len(invalid) > 5 else ""
    return reasons + more


def describe_not_sent(invalid: list[tuple[str, str]]) -> str:
    """What Fetch says when ids cannot be sent: each of them, and why.

    Examples
    --------
    >>> describe_not_sent([("bad id!", "“bad id!” has a space in it")])
    'Nothing was sent: 1 id cannot be sent. “bad id!” has a space and “!” in it. Correct it in Ids, then press Fetch.'
    """  # noqa: E501
    them = "it" if len(invalid) == 1 else "them"
    return (
        f"Nothing was sent: {plural(len(invalid), 'id')} cannot be sent.{_refusals(invalid)} "
        f"Correct {them} in Ids, then press Fetch."
    )


def describe_ids(
    location_ids: list[str], source_ids: list[str], invalid: list[tuple[str, str]]
) -> tuple[str, str]:
    """What the ids box holds: ``(sentence, kind)``, kind ``error``, ``warn`` or ``info``.

    ``invalid`` pairs each refused id with why, a sentence naming it
    (:func:`propertykit.client.parse_ids` gives them).

    Examples
    --------
    >>> describe_ids(["L1"], [], [("L 2", "“L 2” has a space in it")])
    ('1 id cannot be sent. “L 2” has a space in it.', 'error')
    >>> describe_ids(["L1", "L2"], ["zoopla::1"], [])
    ('3 ids: 2 location ids and 1 source id.', 'info')
    >>> print(describe_ids(["rightmove-123"], [], [])[0])  # doctest: +NORMALIZE_WHITESPACE
    1 id: 1 location id. “rightmove-123” will be looked up as a location id; a source id is
    written provider::id, such as rightmove::123.
    >>> print(describe_ids(["L1!"], [], [])[0])  # doctest: +NORMALIZE_WHITESPACE
    1 id: 1 location id. “L1!” has “!” in it, which the service's ids seldom hold; it will be
    sent as typed.
    """
    if invalid:
        return f"{plural(len(invalid), 'id')} cannot be sent.{_refusals(invalid)}", "error"
    count = len(location_ids) + len(source_ids)
    if not count:
        return "", "info"
    kinds = " and ".join(
        plural(n, f"{kind} id")
        for n, kind in ((len(location_ids), "location"), (len(source_ids), "source"))
        if n
    )
    text = f"{plural(count, 'id')}: {kinds}."
    kind = "info"
    lookalikes = [m for m in map(_SOURCE_LOOKALIKE.fullmatch, location_ids) if m]
    if lookalikes:
        quoted = listed([f"“{m[0]}”" for m in lookalikes], most=3)
        one = len(lookalikes) == 1
        text += (
            f" {quoted} will be looked up as {'a location id' if one else 'location ids'}; "
            f"a source id is written provider::id, such as {lookalikes[0][1]}::{lookalikes[0][2]}."
        )
        kind = "warn"
    odd = [(item, odd_characters(item)) for item in (*location_ids, *source_ids)]
    odd = [(item, names) for item, names in odd if names]
    for item, names in odd[:3]:
        text += (
            f" “{item}” has {_and(names)} in it, which the service's ids seldom hold; "
            "it will be sent as typed."
        )
        kind = "warn"
    return text, kind


#: A word, a dash (or ``_``, ``.``) and digits: a source id typed without ``::``, most likely.
_SOURCE_LOOKALIKE = re.compile(r"([A-Za-z]{3,})[-_.]+([0-9][0-9A-Za-z-]*)")
