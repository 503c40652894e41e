"""Words for people: counts with their nouns, short lists, and text from outside made visible.

The one home of the small helpers every layer's messages share (the command line, the forms'
messages, warnings), so that ``1 id`` / ``2 ids`` and ``a, b and 3 more`` read the same
everywhere, and so that text from outside (the service's messages and fields, suggestions,
purchase-status bodies, tile servers) reaches a terminal or a log only through :func:`visible`:
shown, never obeyed. The ``str()`` of propertykit's errors and warnings passes through it, and
so does every record of the ``propertykit`` logger (:class:`LogTextFilter`, added to that logger
when this module is first imported). HTML is escaped where it is written (report, forms).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

__all__ = ["LogTextFilter", "listed", "plural", "short_address", "visible"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` (with thousands separators) and ``noun``, in the plural unless it is one.

    Examples
    --------
    >>> plural(1, "property", "properties"), plural(3, "request"), plural(5000, "id")
    ('1 property', '3 requests', '5,000 ids')
    """
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def listed(items: Sequence[str], *, most: int = 5) -> str:
    """Up to ``most`` items joined with commas, and how many more.

    Examples
    --------
    >>> listed(["A", "B"]), listed([str(n) for n in range(8)], most=3)
    ('A, B', '0, 1, 2 and 5 more')
    """
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most:,} more" if len(items) > most else "")


def short_address(address: object, *, postcode: bool = False) -> str:
    """An address short enough to name a home in a sentence or a table: its street (a flat keeps
    its number), and with ``postcode=True`` its postcode; ``""`` without an address.

    Examples
    --------
    >>> short_address("Flat 6, 32 High Terrace, Brixton Hill, London, SW2 8SU", postcode=True)
    'Flat 6, 32 High Terrace, SW2 8SU'
    >>> short_address("54 Springfield Terrace, Morningside, Edinburgh, EH10 0YR")
    '54 Springfield Terrace'
    """
    if not isinstance(address, str):
        return ""
    parts = [part.strip() for part in address.split(",") if part.strip()]
    flat = len(parts) > 1 and parts[0].lower().startswith(("flat", "apartment", "unit"))
    kept = parts[: 2 if flat else 1]
    if postcode and len(parts) > len(kept) and any(ch.isdigit() for ch in parts[-1]):
        kept.append(parts[-1])
    return ", ".join(kept)


# -- text from outside -----------------------------------------------------------------------------

#: What :func:`visible` spells out: C0 controls (ESC, BEL, CR, LF, TAB...), DEL, C1 controls, the
#: line and paragraph separators, lone surrogates, and the invisible format characters (Unicode
#: category Cf: bidi embeddings, overrides and isolates, zero-width spaces, the BOM...) except
#: ZWNJ/ZWJ and the tag characters, which joined scripts and emoji (families, the flags of
#: Scotland and Wales) are made of. tests/hostile/test_text.py keeps this list equal to Unicode's.
_INVISIBLE = (
    "\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000110bd"
    "\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
)
_HIDDEN = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
_HIDDEN_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_INVISIBLE}]")


def _spelled(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]  # Python's own escape: \x1b, \n, \u202e, \udc80


def visible(text: object, *, keep_newlines: bool = False) -> str:
    r"""``text`` with every control or invisible format character spelled out, as Python does.

    For text from outside (the service's messages and fields, tile servers, purchase-status
    bodies) before it reaches a terminal, a log line or an error's or warning's message: ``ESC``
    becomes the four characters ``\x1b``, so an escape sequence cannot clear, retitle or colour
    the terminal; a newline or carriage return becomes ``\n`` or ``\r``, so a value cannot fake
    a line of output; a bidi override becomes ``\u202e``, so it cannot turn text around. Ordinary
    text, accents, ``£``, CJK and emoji (joined ones included) are kept as they are. Backslashes
    are kept too (a Windows path stays readable), so a second pass changes nothing.

    Parameters
    ----------
    text
        The text (anything else is turned into text with ``str`` first).
    keep_newlines
        Keep ``\n``: for text whose lines propertykit made itself (a table, a traceback) and
        whose outside parts were spelled out already. Everything else is still spelled out.

    Examples
    --------
    >>> print(visible("\x1b]0;owned\x07\x1b[31mred\r\nfake line \u202eevil"))
    \x1b]0;owned\x07\x1b[31mred\r\nfake line \u202eevil
    >>> family = "Café £5 北京 👨\u200d👩\u200d👧"
    >>> visible(family) == family
    True
    >>> print(visible("line one\nline two\x1b[2J", keep_newlines=True))
    line one
    line two\x1b[2J
    """
    string = text if isinstance(text, str) else str(text)
    return (_HIDDEN_BUT_NEWLINE if keep_newlines else _HIDDEN).sub(_spelled, string)


class LogTextFilter(logging.Filter):
    r"""Spell out control characters in the records of the ``propertykit`` logger.

    The message is formatted with its arguments and made one :func:`visible` line; a traceback
    (``exc_info``) or stack keeps its own lines, with everything else spelled out. Added to the
    ``propertykit`` logger once, when this module is first imported (every propertykit module
    logs through that one logger); remove it with ``removeFilter`` to log raw text.

    Examples
    --------
    >>> import logging
    >>> record = logging.makeLogRecord({"msg": "said: %s", "args": ("\x1b[2J\n",)})
    >>> LogTextFilter().filter(record), record.getMessage()
    (True, 'said: \\x1b[2J\\n')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a wrong format: left to the handler, which reports it
            return True
        record.msg, record.args = visible(message), ()
        if record.exc_info and not record.exc_text:
            traceback = logging.Formatter().formatException(record.exc_info)
            record.exc_text = visible(traceback, keep_newlines=True)
        if record.stack_info:
            record.stack_info = visible(record.stack_info, keep_newlines=True)
        return True


_LOGGER = logging.getLogger("propertykit")
if not any(isinstance(existing, LogTextFilter) for existing in _LOGGER.filters):
    _LOGGER.addFilter(LogTextFilter())
