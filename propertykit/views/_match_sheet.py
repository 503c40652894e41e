"""The workbook's "Matches" sheet: every row of a client's list, as matched, with what to watch.

One row per row given (blank ones too, as the list had them: the row number first, never a
jump), then two columns a reader filters on: ``repeats row`` names the first row with the same
address text (case and spacing evened out), so a duplicate is said once and not counted twice;
``flag`` says when a cell of the row began as a spreadsheet formula would (``=``, ``+``, ``-``,
``@``, a tab or a carriage return: written as text all the same, see
:mod:`~propertykit.views._workbook_cells`) or held control characters (spelled out).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from propertykit.text import plural, visible
from propertykit.views._workbook_cells import FORMULA_STARTS

#: The Matches sheet's own columns, after the match's.
REPEATS = "repeats row"
FLAG = "flag"
#: Columns of the match not looked at: lists (never the start of a formula), and the reason,
#: which quotes the row's own text.
_NOT_LOOKED_AT = ("candidates", "candidate_addresses", "reason")
_START_NAMES = {"\t": "a tab", "\r": "a carriage return"}


def match_sheet(matches: pd.DataFrame) -> pd.DataFrame:
    """The Matches sheet of ``client.match_addresses(...)``'s frame (the file's columns may
    come first): its index as the first column, then every column, then ``repeats row`` and
    ``flag``.

    Examples
    --------
    >>> matches = pd.DataFrame({"input": ["4 Mill Lane", "", "4 mill  lane", "=1+1"],
    ...                         "status": ["matched", "unmatched", "matched", "unmatched"]},
    ...                        index=pd.RangeIndex(2, 6, name="row in file"))
    >>> sheet = match_sheet(matches)
    >>> sheet[["row in file", "repeats row"]].values.tolist()
    [[2, None], [3, None], [4, 2], [5, None]]
    >>> sheet["flag"].iloc[3]
    '“input” began with “=”, as a formula does: written as text'
    """
    name = matches.index.name
    row_name = str(name) if name is not None and name not in matches.columns else "row"
    table = matches.reset_index(names=row_name)
    first: dict[str, Any] = {}
    repeats: list[Any] = []
    texts = matches["input"].tolist() if "input" in matches.columns else [None] * len(matches)
    for label, text in zip(matches.index.tolist(), texts, strict=True):
        key = " ".join(text.casefold().split()) if isinstance(text, str) else ""
        repeats.append(first.get(key) if key else None)
        if key:
            first.setdefault(key, label)
    table[REPEATS] = pd.Series(repeats, index=table.index, dtype=object)
    checked = [c for c in matches.columns if c not in _NOT_LOOKED_AT]
    flags = [_flag(row) for row in matches[checked].itertuples(index=False, name=None)]
    table[FLAG] = pd.Series(
        [_joined(found, checked) for found in flags], index=table.index, dtype=object
    )
    table.attrs = dict(matches.attrs)
    return table


def _flag(cells: tuple[Any, ...]) -> list[tuple[int, str]]:
    """What is odd about each text cell of a row: (column position, what)."""
    found = []
    for position, cell in enumerate(cells):
        if not isinstance(cell, str) or not cell:
            continue
        if cell.startswith(FORMULA_STARTS):
            start = _START_NAMES.get(cell[0], f"“{cell[0]}”")
            found.append((position, f"began with {start}, as a formula does: written as text"))
        if visible(cell, keep_newlines=True) != cell:
            found.append((position, "holds control characters: spelled out"))
    return found


def _joined(found: list[tuple[int, str]], columns: list[Any]) -> str | None:
    if not found:
        return None
    return "; ".join(f"“{visible(columns[position])}” {what}" for position, what in found)


def sheet_counts(sheet: pd.DataFrame) -> str:
    """What the notes say of the sheet's own columns.

    Examples
    --------
    >>> sheet_counts(pd.DataFrame({"repeats row": [None, 2], "flag": [None, None]}))
    ... # doctest: +ELLIPSIS
    '1 row repeats an earlier row (repeats row). 0 rows flagged (flag): text that began...'
    """
    repeated = int(sheet[REPEATS].notna().sum()) if REPEATS in sheet.columns else 0
    flagged = int(sheet[FLAG].notna().sum()) if FLAG in sheet.columns else 0
    repeats = "repeats" if repeated == 1 else "repeat"
    return (
        f"{plural(repeated, 'row')} {repeats} an earlier row ({REPEATS}). "
        f"{plural(flagged, 'row')} flagged ({FLAG}): text that began as a formula would "
        "(written as text all the same), or held control characters."
    )
