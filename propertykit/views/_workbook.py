"""The portfolio workbook: an .xlsx a client can open, of values, never formulas.

:func:`write_workbook` writes a property frame as sheets a client works in: "Properties" (every
column of the frame; sale histories and boundaries as JSON text), "Sales" (one row per sale),
"EPC" (one row per property), "EPC profile" (:func:`propertykit.frames.epc_profile`: count and
share per band, share below C, certificates expired or expiring within a year) and, when given,
"Valuation" (``df.pk.valuation()``) and "Matches" (``client.match_addresses()``), then "Notes":
where the data came from, when, what it cost, and the caveats in plain words.

Prices are numbers in pounds with a ``£`` format, each table converted by the unit it says
(:func:`~propertykit.frames.in_pounds_for`: divided by 100 where it says pence; a table saying
no unit beside one that does is refused; none saying one: as given, without ``£``, and said),
dates are Excel dates, each sheet's header is frozen and filtered, columns sized to what they
hold. Cells are written by :mod:`~propertykit.views._workbook_cells`: text from the service or a
client's file stays text, whatever it begins with or holds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from propertykit.config import VERSION
from propertykit.errors import InvalidInput
from propertykit.frames import (
    MINOR_UNIT_COLUMNS,
    EpcProfile,
    epc_profile,
    epc_table,
    explode_sales,
    in_pounds_for,
)
from propertykit.text import plural, visible
from propertykit.views._files import write_atomically
from propertykit.views._match_sheet import match_sheet, sheet_counts
from propertykit.views._workbook_cells import MAX_CELL_CHARACTERS, SheetWriter

#: The sheets a workbook can hold, in order (Valuation and Matches only when given).
SHEETS = ("Properties", "Sales", "EPC", "EPC profile", "Valuation", "Matches", "Notes")
#: Money columns beyond the ones :mod:`propertykit.frames._money` rescales: served in pounds.
_POUNDS_AS_SERVED = ("pricing.pricePerSqFt",)
_VALUATION_MONEY = ("estimate", "lower", "upper", "price_per_sqm")
_STATUSES = ("matched", "ambiguous", "unmatched")
#: The rows of an Excel worksheet, its header's included.
MAX_ROWS = 1_048_576
_TOTALS_COLUMN = 4  # the EPC profile's totals, in column E beside the bands
_NOTES_WIDTH = 100  # characters of the notes' Detail column


def write_workbook(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    valuation: pd.DataFrame | None = None,
    matches: pd.DataFrame | None = None,
    usage: Any = None,
    source: str | None = None,
    today: date | datetime | str | None = None,
) -> Path:
    """Write the portfolio workbook (.xlsx) of ``df``: typed values, no formulas.

    Parameters
    ----------
    df
        The property frame (``client.properties(...)``, :func:`propertykit.frame`).
    path
        Where to write; must end in ``.xlsx``. Written whole or not at all (a temporary file
        beside it, renamed when complete); parent folders are created.
    valuation
        ``df.pk.valuation(...)``'s frame: a "Valuation" sheet, with each property's address
        beside its estimate; in pounds by the unit it says (``attrs["money_unit"]``), whatever
        ``df``'s is.
    matches
        ``client.match_addresses(...)``'s frame: a "Matches" sheet, one row per row given,
        blank ones too (the index first, as the row it came from), with ``repeats row`` (the
        first row of the same text) and ``flag`` (text that began as a formula would, written
        as text; control characters) (:mod:`~propertykit.views._match_sheet`); counts in the
        notes.
    usage
        What the data cost: ``client.usage``, a mapping or any object with ``requests_sent``,
        ``cache_hits`` and ``billable_requests``; ``None`` if unknown.
    source
        Where the data came from, in words (e.g. the service's address, or "the propertykit
        sandbox": made-up data, which the notes then say); never a key.
    today
        The day EPC certificates are judged on (default: today in UTC).

    Returns
    -------
    pathlib.Path
        The absolute path written.

    Raises
    ------
    InvalidInput
        ``path`` is not an .xlsx file, ``usage`` lacks a count, ``valuation`` or ``df`` says
        no money unit while the other says one, or a sheet would pass Excel's 1,048,576 rows
        (nothing is written).

    Examples
    --------
    >>> import tempfile, pathlib, openpyxl, propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "book.xlsx"
    >>> written = write_workbook(pk.frame(generate_records(20)), out, source="the sandbox")
    >>> openpyxl.load_workbook(written).sheetnames
    ['Properties', 'Sales', 'EPC', 'EPC profile', 'Notes']
    """
    import xlsxwriter

    target = Path(path).expanduser().resolve()
    if target.suffix.lower() != ".xlsx":
        raise InvalidInput(f"A workbook is written as .xlsx, not {target.name!r}")
    counts = _usage_rows(usage)  # refused before anything is written
    money = in_pounds_for(
        {"Properties": df, "Valuation": valuation},
        output="the workbook",
        money={"Valuation": _VALUATION_MONEY},
    )
    pounds = money.tables["Properties"]
    profile = epc_profile(df, today=today)
    tables = {
        "Properties": pounds,
        "Sales": explode_sales(pounds),
        "EPC": epc_table(df, today=profile.today),
    }
    if valuation is not None:
        tables["Valuation"] = _valuation_sheet(money.tables["Valuation"], pounds)
    if matches is not None:
        tables["Matches"] = match_sheet(matches)
    too_long = [f"{name} ({len(table):,} rows)" for name, table in tables.items()
                if len(table) >= MAX_ROWS]  # fmt: skip
    if too_long:
        raise InvalidInput(
            f"A worksheet holds at most {MAX_ROWS - 1:,} rows below its header: "
            f"{', '.join(too_long)}; split the frame, or write Parquet (df.pk.to_parquet)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    formatted: dict[str, Collection[str]] = {  # a £ format only where the unit is known
        "Properties": {*MINOR_UNIT_COLUMNS, *_POUNDS_AS_SERVED},
        "Sales": {*MINOR_UNIT_COLUMNS, *_POUNDS_AS_SERVED},
        "Valuation": _VALUATION_MONEY,
    } if money.stated else {}  # fmt: skip

    def write(temporary: Path) -> None:
        with xlsxwriter.Workbook(temporary, {"strings_to_formulas": False}) as book:
            writer = SheetWriter(book, currency=df.attrs.get("currency"))
            for name in ("Properties", "Sales", "EPC"):
                writer.write_table(name, tables[name], money=formatted.get(name, ()))
            _write_profile(writer, profile)
            for name in ("Valuation", "Matches"):
                if name in tables:
                    writer.write_table(name, tables[name], money=formatted.get(name, ()))
            notes = _notes(
                df, profile, valuation, tables.get("Matches"), counts, source, money.note
            )
            _write_notes(writer, notes)

    return write_atomically(target, write)


def _write_profile(writer: SheetWriter, profile: EpcProfile) -> None:
    """The "EPC profile" sheet: the bands table, and the totals beside it."""
    bands = profile.bands.rename(
        columns={"band": "Current EPC band", "count": "Properties", "share": "Share of rated"}
    )
    sheet = writer.write_table("EPC profile", bands, shares={"Share of rated"}, filters=False)
    header = writer.formats["header"]
    writer.write_text(sheet, 0, _TOTALS_COLUMN, "Of the book", header)
    writer.write_text(sheet, 0, _TOTALS_COLUMN + 1, "", header)
    for row, (label, value) in enumerate(profile.summary(), start=1):
        writer.write_text(sheet, row, _TOTALS_COLUMN, label)
        kind = "share" if label.startswith("Share") and isinstance(value, float) else None
        writer.write_value(sheet, row, _TOTALS_COLUMN + 1, value, kind)
    widest = max(len(label) for label, _ in profile.summary())
    sheet.set_column(_TOTALS_COLUMN, _TOTALS_COLUMN, widest + 2)
    sheet.set_column(_TOTALS_COLUMN + 1, _TOTALS_COLUMN + 1, 10)
    _print_on_one_page_wide(sheet)


def _valuation_sheet(valuation: pd.DataFrame, pounds: pd.DataFrame) -> pd.DataFrame:
    """The valuation (in pounds already), each property's address after its id."""
    table = valuation.copy()
    name = "address.displayAddress"
    if {"propertyId", name} <= set(pounds.columns) and "propertyId" in table.columns:
        addresses = pounds.drop_duplicates("propertyId").set_index("propertyId")[name]
        position = list(table.columns).index("propertyId") + 1
        table.insert(position, "address", table["propertyId"].map(addresses))
    return table


def _write_notes(writer: SheetWriter, notes: list[tuple[str, str]]) -> None:
    """The "Notes" sheet, last: its counts of cells changed are taken once all else is written."""
    sheet = writer.workbook.add_worksheet("Notes")
    writer.write_text(sheet, 0, 0, "What", writer.formats["header"])
    writer.write_text(sheet, 0, 1, "Detail", writer.formats["header"])
    tally = writer.tally
    changed = [
        "No formulas: every cell is a value.",
        f"{plural(tally.formula_like, 'cell')} of text began with =, +, -, @, a tab or a carriage "
        "return: kept as text, marked so that editing keeps them text.",
        f"{plural(tally.spelled_out, 'cell')} held characters a workbook cannot store (control "
        "characters, lone surrogates): spelled out as \\x00, \\ud800 and so on.",
        f"{plural(tally.cut, 'cell')} held more than {MAX_CELL_CHARACTERS:,} characters, the "
        "most a cell holds: cut, ending with a mark that gives the full length.",
    ]
    rows = [*notes, ("Text", " ".join(changed))]
    wrapped = writer.formats["wrapped"]
    for row, (what, detail) in enumerate(rows, start=1):
        writer.write_text(sheet, row, 0, what, wrapped)
        writer.write_text(sheet, row, 1, detail, wrapped)
        lines = max(1, math.ceil(len(detail) / (_NOTES_WIDTH * 0.9)))
        sheet.set_row(row, 15 * lines)  # spreadsheets do not grow wrapped rows on opening
    sheet.set_column(0, 0, 16)
    sheet.set_column(1, 1, _NOTES_WIDTH)
    sheet.freeze_panes(1, 0)
    _print_on_one_page_wide(sheet)


def _print_on_one_page_wide(sheet: Any) -> None:
    """Printed landscape, as wide as one page."""
    sheet.set_landscape()
    sheet.fit_to_pages(1, 0)


def _notes(
    df: pd.DataFrame,
    profile: EpcProfile,
    valuation: pd.DataFrame | None,
    matches: pd.DataFrame | None,
    counts: list[tuple[str, str]],
    source: str | None,
    money: str,
) -> list[tuple[str, str]]:
    """What the notes sheet says, as (what, detail) rows, in plain words."""
    when = datetime.now(UTC)
    origin = source or "a property-data service (source not given)"
    notes = [
        ("Source", origin),
        ("Written", f"{when:%Y-%m-%d %H:%M} UTC by propertykit {VERSION}"),
    ]
    if source is not None and "sandbox" in source.lower():
        notes.append(
            ("Made-up data", "From the propertykit sandbox: synthetic records, not real homes.")
        )
    notes += counts
    notes.append(("Properties", _properties_note(df)))
    notes.append(
        (
            "Money",
            f"{money} Other amounts (ground rent, service charge, council tax) are as the "
            "service sent them.",
        )
    )
    notes.append(
        (
            "Dates",
            "Dates are Excel dates; date-times are in UTC (Excel keeps no time zone). "
            "Dates before March 1900, which Excel cannot hold, are text.",
        )
    )
    notes.append(("EPC profile", _profile_note(profile)))
    if valuation is not None:
        notes.append(("Valuation", _valuation_note(valuation)))
    if matches is not None:
        notes.append(("Matches", _matches_note(matches)))
    return notes


def _properties_note(df: pd.DataFrame) -> str:
    text = (
        f"{plural(len(df), 'property', 'properties')}, every field the service sent (one "
        "column each). Sale histories and boundaries are JSON text on Properties; the Sales sheet "
        "has one row per sale."
    )
    missing = df.attrs.get("missing_ids") or ()
    if missing:
        text += f" {plural(len(missing), 'id')} asked for returned no record."
    unparsed = df.attrs.get("unparsed") or ()
    if unparsed:
        text += (
            f" {plural(len(unparsed), 'value')} could not be read in its column and is left "
            "blank there (df.pk.unparsed() lists them as served)."
        )
    return text


def _profile_note(profile: EpcProfile) -> str:
    return (
        f"Each property's current rating counted once; shares are of the "
        f"{plural(profile.rated, 'rated property', 'rated properties')} "
        f"({plural(profile.not_rated, 'property', 'properties')} without a rating). "
        f"Certificates judged on {profile.today:%d %B %Y}: expiring means ending within a year "
        "of that day. A rating describes the home when it was assessed, not now."
    )


def _valuation_note(valuation: pd.DataFrame) -> str:
    thin = int(valuation["thin"].sum()) if "thin" in valuation.columns else 0
    criteria = valuation.attrs.get("criteria")
    thin_ones = plural(thin, "property", "properties")
    text = (
        "Estimates from comparable sales before each as_of date, with an 80 % range (lower to "
        f"upper): a desktop estimate, not a formal valuation. {thin_ones} had too few "
        "comparables (thin: no estimate)."
    )
    if isinstance(criteria, str) and criteria:
        text += f" Comparables: {criteria}."
    if "why" in valuation.columns and (why := valuation["why"].dropna()).size:
        counted = why.astype(str).value_counts()
        reasons = "; ".join(f"{reason}: {count:,}" for reason, count in counted.items())
        text += f" Not valued, with why (the why column): {reasons}."
    if "wider" in valuation.columns and (borrowed := int(valuation["wider"].notna().sum())):
        text += (
            f" {plural(borrowed, 'property', 'properties')} had too few sales around them to fit "
            "an index or a size elasticity: those were fitted on their outcode (the wider column)."
        )
    credits = valuation.attrs.get("credits")
    if isinstance(credits, Mapping):
        planned, charged = credits.get("planned"), credits.get("charged")
        text += " Credits: " + (
            "the cost rule was not set, so none were planned"
            if planned is None
            else f"at most {planned:,.0f} planned before sending"
        )
        text += (
            "; "
            + (
                "the service does not report what it charged"
                if charged is None
                else f"{charged:,.0f} charged for the valuation"
            )
            + "."
        )
    return text


def _matches_note(matches: pd.DataFrame) -> str:
    status = matches["status"].astype("object") if "status" in matches.columns else pd.Series()
    counts = {name: int((status == name).sum()) for name in _STATUSES}
    text = (
        f"{plural(len(matches), 'address', 'addresses')} given: {counts['matched']:,} matched, "
        f"{counts['ambiguous']:,} ambiguous (several plausible properties: see candidates), "
        f"{counts['unmatched']:,} unmatched (see reason). Filter the status column to list them. "
        "A match needs the house and flat numbers, and the postcode when given, to agree: "
        "nothing is guessed."
    )
    charged = matches.attrs.get("charged")
    if charged is not None:
        text += f" Matching charged {charged} credits."
    looked_up = matches.attrs.get("records_looked_up")
    if looked_up:  # billable: a credit a record where the service charges so
        text += (f" {plural(looked_up, 'record')} looked up to confirm a postcode the search "
                 "could not show.")  # fmt: skip
    book = matches.attrs.get("book")
    if isinstance(book, str):
        text += f" Reviewed decisions of the book “{visible(book)}” were applied."
    return f"{text} {sheet_counts(matches)}"


def _usage_rows(usage: Any) -> list[tuple[str, str]]:
    """The notes' rows on what fetching cost, from a Usage, a mapping, or ``None``."""
    if usage is None:
        return [("Cost", "Requests and credits were not recorded for this data.")]
    names = ("requests_sent", "cache_hits", "billable_requests")
    if isinstance(usage, Mapping):
        values = [usage.get(name) for name in names]
    else:
        values = [getattr(usage, name, None) for name in names]
    if any(not isinstance(value, int) for value in values):
        raise InvalidInput(f"usage must give {', '.join(names)}; got {type(usage).__name__}")
    sent, hits, billable = (int(value) for value in values if value is not None)
    return [
        ("Requests sent", f"{plural(sent, 'request')} over the network"),
        ("From the cache", f"{plural(hits, 'answer')}, at no cost"),
        ("Billable requests", plural(billable, "billable request")),
    ]
