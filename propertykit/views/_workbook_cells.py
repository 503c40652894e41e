"""Cells of a workbook written safely: typed values, and text from outside that stays text.

:class:`SheetWriter` writes a DataFrame as one worksheet with xlsxwriter's typed calls, each
value by its column's kind: numbers (``£`` where the column holds money, ``0.0 %`` for shares),
dates and date-times as Excel dates, booleans, and everything else as text. Nothing goes through
xlsxwriter's ``write()``, which turns a string beginning with ``=`` into a formula: text is
always ``write_string``, so a workbook holds no formula whatever the service or a client's file
sent. A text cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (what
spreadsheets and OWASP's CSV-injection advice treat as a formula's start) also carries Excel's
"quote prefix" style, so editing the cell in Excel or LibreOffice keeps it text.

What the file format cannot hold is never a crash: control characters other than tab, newline and
carriage return, lone surrogates and the non-characters U+FFFE/U+FFFF are spelled out as Python
writes them (``\\x00``, ``\\ud800``), and text past Excel's 32,767 characters a cell is cut with
a mark saying how long it was. :class:`TextTally` counts both, for the workbook's notes. (Text that
reads as the format's own escape of a character, ``_x0041_``, xlsxwriter escapes itself.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from xlsxwriter.format import Format
    from xlsxwriter.workbook import Workbook
    from xlsxwriter.worksheet import Worksheet


#: The most characters (UTF-16 code units) an Excel cell holds.
MAX_CELL_CHARACTERS = 32_767
#: First characters that make a spreadsheet read text as a formula (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Characters XML 1.0, and so the .xlsx format, cannot hold.
_REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CUT = "… [cut: {total:,} characters in all]"
_WIDEST = 50  # characters: wider columns are cut on screen, the cell keeps all its text
_NARROWEST = 6
_SAMPLE = 2_000  # rows looked at to size a column
_FIRST_EXCEL_DAY = pd.Timestamp("1900-03-01")  # Excel's earlier dates are unreliable


@dataclass
class TextTally:
    """Text cells changed to fit the file format, over a whole workbook."""

    spelled_out: int = 0  # cells with characters the format refuses, spelled out
    cut: int = 0  # cells longer than MAX_CELL_CHARACTERS, cut with a mark
    formula_like: int = 0  # cells beginning as a formula would, kept as text


def cell_text(value: str, tally: TextTally | None = None) -> str:
    r"""``value`` as a workbook cell can hold it: refused characters spelled out, and cut to
    :data:`MAX_CELL_CHARACTERS` with a mark when longer.

    Examples
    --------
    >>> cell_text("a\x00b\ud800")
    'a\\x00b\\ud800'
    >>> cut = cell_text("x" * 40_000)
    >>> len(cut) <= MAX_CELL_CHARACTERS, cut.endswith("[cut: 40,000 characters in all]")
    (True, True)
    """
    text = _REFUSED.sub(lambda found: ascii(found.group())[1:-1], value)
    if tally is not None and text != value:
        tally.spelled_out += 1
    # Two UTF-16 units a character at most: only long text need be counted.
    units = _utf16_units(text) if len(text) > MAX_CELL_CHARACTERS // 2 else len(text)
    if units > MAX_CELL_CHARACTERS:
        if tally is not None:
            tally.cut += 1
        mark = _CUT.format(total=units)
        text = _first_units(text, MAX_CELL_CHARACTERS - len(mark)) + mark
    return text


def _utf16_units(text: str) -> int:
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


def _first_units(text: str, limit: int) -> str:
    """The longest start of ``text`` within ``limit`` UTF-16 units (a character outside the
    Basic Multilingual Plane, an emoji, takes two)."""
    units = 0
    for position, character in enumerate(text):
        units += 2 if ord(character) > 0xFFFF else 1
        if units > limit:
            return text[:position]
    return text


class SheetWriter:
    """Writes DataFrames as worksheets of one xlsxwriter workbook, every cell typed.

    Parameters
    ----------
    workbook
        An open ``xlsxwriter.Workbook``.
    currency
        The currency of money columns (``"GBP"``: a ``£`` format; another code: the code after
        the number; ``None``: ``£``).

    Examples
    --------
    >>> import tempfile, pathlib, xlsxwriter, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "book.xlsx"
    >>> with xlsxwriter.Workbook(path) as book:
    ...     writer = SheetWriter(book)
    ...     sheet = writer.write_table("Prices", pd.DataFrame({"who": ["=1+1"], "price": [1e5]}),
    ...                                money={"price"})
    >>> writer.tally.formula_like
    1
    """

    def __init__(self, workbook: Workbook, *, currency: str | None = "GBP") -> None:
        self.workbook = workbook
        self.tally = TextTally()
        money = '"£"#,##0' if currency in (None, "GBP") else f'#,##0 "{_code(currency)}"'
        self.formats: dict[str, Format] = {
            "header": workbook.add_format({"bold": True, "bottom": 1, "bg_color": "#eef1f5"}),
            "text": workbook.add_format(),
            "quoted": workbook.add_format({"quote_prefix": True}),
            "money": workbook.add_format({"num_format": money}),
            "share": workbook.add_format({"num_format": "0.0%"}),
            "date": workbook.add_format({"num_format": "yyyy-mm-dd"}),
            "datetime": workbook.add_format({"num_format": "yyyy-mm-dd hh:mm"}),
            "wrapped": workbook.add_format({"text_wrap": True, "valign": "top"}),
        }

    def write_table(
        self,
        name: str,
        table: pd.DataFrame,
        *,
        money: Collection[str] = (),
        shares: Collection[str] = (),
        start_row: int = 0,
        filters: bool = True,
    ) -> Worksheet:
        """Write ``table`` as the sheet ``name``: a header row (frozen, with filters), then
        one row per table row, each column by its kind; columns sized to what they hold."""
        sheet = self.workbook.add_worksheet(name)
        self.add_table(sheet, table, money=money, shares=shares, start_row=start_row)
        sheet.freeze_panes(start_row + 1, 0)
        if filters and len(table.columns):
            sheet.autofilter(start_row, 0, start_row + len(table), len(table.columns) - 1)
        return sheet

    def add_table(
        self,
        sheet: Worksheet,
        table: pd.DataFrame,
        *,
        money: Collection[str] = (),
        shares: Collection[str] = (),
        start_row: int = 0,
    ) -> None:
        """Write ``table``, its header at ``start_row`` of ``sheet`` (as :meth:`write_table`)."""
        for position, column in enumerate(table.columns):
            heading = cell_text(str(column), self.tally)
            self.write_text(sheet, start_row, position, heading, self.formats["header"])
            kind = "money" if column in money else "share" if column in shares else None
            width = self.write_column(sheet, start_row + 1, position, table[column], kind)
            sheet.set_column(position, position, max(min(len(heading), 28), width) + 2)

    def write_column(
        self, sheet: Worksheet, first_row: int, position: int, values: pd.Series, kind: str | None
    ) -> int:
        """Write one column's values down from ``first_row``; the width they need."""
        dtype = values.dtype
        if kind is None and pd.api.types.is_bool_dtype(dtype):
            kind = "boolean"
        elif kind is None and pd.api.types.is_datetime64_any_dtype(dtype):
            kind = "datetime"
            if getattr(dtype, "tz", None) is not None:  # Excel has no time zones: UTC, said
                values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        elif kind is None and pd.api.types.is_numeric_dtype(dtype):
            kind = "number"
        widths = []
        for offset, value in enumerate(values.tolist()):
            width = self.write_value(sheet, first_row + offset, position, value, kind)
            if offset < _SAMPLE:
                widths.append(width)
        return max(_NARROWEST, min(_WIDEST, max(widths, default=0)))

    def write_value(
        self, sheet: Worksheet, row: int, column: int, value: Any, kind: str | None = None
    ) -> int:
        """Write one value by its kind (or its own type); the width it needs (0 for blank)."""
        if isinstance(value, str):  # the most common kind first
            return self.write_text(sheet, row, column, value) if value else 0
        if value is None or value is pd.NA or value is pd.NaT:
            return 0  # a blank cell
        if isinstance(value, bool | np.bool_):
            sheet.write_boolean(row, column, bool(value))
            return 5
        if isinstance(value, int | float | np.integer | np.floating):
            number = float(value)
            if math.isnan(number):
                return 0
            if math.isinf(number):
                return self.write_text(sheet, row, column, str(number))
            if kind in ("money", "share"):
                sheet.write_number(row, column, number, self.formats[kind])
                return len(f"{number:,.0f}") + 2 if kind == "money" else 6
            sheet.write_number(row, column, number)
            return min(len(repr(value)), 14)
        if isinstance(value, datetime | date):
            return self._write_date(sheet, row, column, pd.Timestamp(value))
        return self.write_text(sheet, row, column, _json_text(value))

    def write_text(
        self, sheet: Worksheet, row: int, column: int, value: str, cell: Format | None = None
    ) -> int:
        """Write ``value`` as text, never a formula (see the module's notes); its width."""
        text = cell_text(value, self.tally)
        if text.startswith(FORMULA_STARTS):
            self.tally.formula_like += 1
            cell = self.formats["quoted"]
        sheet.write_string(row, column, text, cell)
        return min(len(text), _WIDEST)

    def _write_date(self, sheet: Worksheet, row: int, column: int, moment: pd.Timestamp) -> int:
        if moment.tzinfo is not None:
            moment = moment.tz_convert("UTC").tz_localize(None)
        if moment < _FIRST_EXCEL_DAY:  # not an Excel date: kept readable as text
            return self.write_text(sheet, row, column, moment.isoformat())
        whole_day = moment == moment.normalize()
        style = self.formats["date" if whole_day else "datetime"]
        sheet.write_datetime(row, column, moment.to_pydatetime(), style)
        return 10 if whole_day else 16


def _json_text(value: Any) -> str:
    """A nested value (a list or a mapping) as compact JSON text; anything else as ``str``."""
    import json

    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def _code(currency: str) -> str:
    """A currency code fit for a number format (letters only)."""
    return "".join(character for character in currency if character.isalpha())[:8] or "?"
