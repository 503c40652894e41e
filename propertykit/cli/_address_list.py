"""A client's address list read from a CSV or XLSX file: one address per row, from one column or
several joined, each row keeping its row number in the file.

Everything here runs before anything is sent: a file that cannot be read, an empty one, or one
without the named columns is one :class:`~propertykit.errors.InvalidInput` line naming the
problem (and, for a missing column, the columns the file has). Every cell is read as text (a
house number stays ``"12"``, a postcode keeps its leading zeros, ``NA`` stays ``NA``); text from
the file is shown on the terminal only through :func:`propertykit.text.visible`.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.text import listed, visible

#: The name of the index of the addresses read: the row of the file each came from (the header
#: is row 1, as a spreadsheet numbers it).
ROW = "row in file"
#: Encodings a client's CSV is tried in: UTF-8 (with or without Excel's byte-order mark), then
#: Windows-1252, which Excel on Windows saves "CSV" in.
_ENCODINGS = ("utf-8-sig", "cp1252")
_EXCEL = (".xlsx", ".xlsm")


@dataclass(frozen=True)
class AddressList:
    """A client's list as read: every column of the file, and the addresses to match.

    Attributes
    ----------
    table
        Every column of the file, as text, indexed by the row each row came from (:data:`ROW`).
    addresses
        One string per row of ``table``: the address columns joined by ", " (blank parts left
        out; a row without an address is ``""``).
    """

    table: pd.DataFrame
    addresses: pd.Series


def read_address_list(
    path: str | Path, columns: Sequence[str], *, sheet: str | None = None
) -> AddressList:
    """The list in ``path``: its table, and its addresses, ``columns`` joined by ", ".

    Parameters
    ----------
    path
        A ``.csv`` (or other delimited text: the delimiter is sniffed) or ``.xlsx`` file.
    columns
        The column (or columns, joined in this order; blank parts skipped) holding the address.
    sheet
        The worksheet of an ``.xlsx`` to read (default: the first).

    Returns
    -------
    AddressList
        The file's table and its addresses, indexed by their row in the file (:data:`ROW`).

    Raises
    ------
    InvalidInput
        The file is missing, unreadable, empty, has no data rows, or lacks a named column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "book.csv"
    >>> _ = path.write_text("Line1,Postcode\\n12 Mill Lane,MK40 1NN\\nNA,\\n")
    >>> read_address_list(path, ["Line1", "Postcode"]).addresses.to_dict()
    {2: '12 Mill Lane, MK40 1NN', 3: 'NA'}
    """
    file = Path(path).expanduser()
    if not columns:
        raise InvalidInput("Name the address column: --column NAME (more than one to join them)")
    if not file.is_file():
        raise InvalidInput(f"No such file: {visible(file)}")
    table = _read_excel(file, sheet) if file.suffix.lower() in _EXCEL else _read_text(file)
    if table is None or not len(table.columns):
        raise InvalidInput(f"{visible(file.name)} is empty: no header row, no addresses")
    table.columns = _distinct([str(name).strip() for name in table.columns])
    table.index = table.index.rename(ROW)
    missing = [name for name in columns if name not in table.columns]
    if missing:
        names = [_quoted(name) for name in table.columns]
        raise InvalidInput(
            f"{visible(file.name)} has no column {', '.join(_quoted(m) for m in missing)}; "
            f"its columns are {listed(names, most=12)}"
        )
    if not len(table):
        raise InvalidInput(f"{visible(file.name)} has a header row but no addresses")
    parts = table[list(columns)].fillna("").astype(str)
    joined = parts.apply(lambda row: ", ".join(p.strip() for p in row if p.strip()), axis=1)
    addresses = pd.Series(joined.tolist(), index=table.index, dtype=object)
    return AddressList(table.astype(object).where(table.notna(), None), addresses)


def _distinct(names: list[str]) -> list[str]:
    """Column names made distinct: a repeated name gets " (2)", " (3)"... after it."""
    seen: dict[str, int] = {}
    distinct = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        distinct.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return distinct


def _quoted(name: str) -> str:
    """A name from the file, quoted, its control characters spelled out (once: not ``repr``)."""
    return f"'{visible(name)}'"


def _read_text(file: Path) -> pd.DataFrame | None:
    """A delimited text file, every cell as text, indexed by its row as a spreadsheet numbers
    it (the first record is row 1; a blank row keeps its number and is kept, blank, unless
    nothing follows it); ``None`` when it holds nothing."""
    raw = file.read_bytes()
    if not raw.strip():
        return None
    for encoding in _ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        break
    else:
        raise InvalidInput(f"{visible(file.name)} is not text in UTF-8 or Windows-1252")
    if "\x00" in text:
        raise InvalidInput(f"{visible(file.name)} is not a text file (it holds NUL bytes)")
    try:
        dialect: type[csv.Dialect] | str = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = "excel"
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    try:
        records = list(enumerate(reader, start=1))
    except csv.Error as exc:
        raise InvalidInput(f"{visible(file.name)} cannot be read as CSV: {visible(exc)}") from exc
    filled = [number for number, row in records if any(cell.strip() for cell in row)]
    if not filled:
        return None
    # From the header (the first row with text) to the last row with text, blank rows kept.
    rows = records[filled[0] - 1 : filled[-1]]
    header, body = rows[0][1], [row for _, row in rows[1:]]
    width = max(len(header), *(len(row) for row in body)) if body else len(header)
    header = header + [f"column {n + 1}" for n in range(len(header), width)]
    body = [row + [""] * (width - len(row)) for row in body]
    lines = pd.Index([line for line, _ in rows[1:]], name=ROW)
    return pd.DataFrame(body, columns=header, index=lines, dtype=object)


def _read_excel(file: Path, sheet: str | None) -> pd.DataFrame | None:
    """The first (or the named) worksheet of an .xlsx, every cell as text, its first row the
    header, indexed by row (the header in row 1); blank rows kept, but for those at the end."""
    try:
        cells = pd.read_excel(
            file, sheet_name=sheet or 0, dtype=str, header=None, engine="openpyxl"
        )
    except (zipfile.BadZipFile, OSError, KeyError) as exc:
        raise InvalidInput(f"{visible(file.name)} cannot be read as an .xlsx workbook") from exc
    except ValueError as exc:
        if sheet is not None and "not found" in str(exc).lower():
            raise InvalidInput(f"{visible(file.name)} has no worksheet {_quoted(sheet)}") from exc
        raise InvalidInput(
            f"{visible(file.name)} cannot be read as an .xlsx workbook: {visible(exc)}"
        ) from exc
    if cells.empty:
        return None
    header = ["" if pd.isna(name) else str(name) for name in cells.iloc[0]]
    header = [name or f"column {n + 1}" for n, name in enumerate(header)]
    table = cells.iloc[1:].set_axis(header, axis=1)
    table.index = pd.RangeIndex(2, 2 + len(table), name=ROW)
    filled = table.notna().any(axis=1).to_numpy().nonzero()[0]
    return table.iloc[: filled[-1] + 1 if len(filled) else 0]
