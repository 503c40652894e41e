"""The lookup form's result table: a readable few columns by default, every column on request.

The readable table shows what an analyst scans first — address, type, bedrooms, the estimated
value in pounds and the EPC rating — with the location id under the address, to find the row
again in ``form.value``. Only the address wraps, so the table fits the form at 1024 px; no other
cell wraps, so an id or a price stays on one line. The full table shows every column of the frame
but the two too wide for a cell (sale histories and raw boundaries), and scrolls sideways.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from propertykit.frames import in_major_units
from propertykit.widgets._messages import describe_table

#: Rows of the table tab (the whole frame is ``form.value``).
PREVIEW_ROWS = 100
#: The default table: (heading, column of the frame), in order. The address cell also names the
#: location id, on a line of its own, so a row can be found again in ``form.value``.
READABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Address", "address.displayAddress"),
    ("Type", "propertyType"),
    ("Beds", "roomDetails.beds"),
    ("Estimated value", "pricing.estimatedSaleValue"),
    ("EPC", "epc.currentEnergyRating"),
)
_MONEY_COLUMNS = frozenset({"pricing.estimatedSaleValue"})
_ADDRESS = "address.displayAddress"
_WIDE_COLUMNS = ("saleHistory", "spatial.boundary")
_STYLE = (
    "<style>.propertykit-table{line-height:1.4}"
    ".propertykit-table th,.propertykit-table td{white-space:nowrap;padding:2px 8px;"
    "text-align:left;vertical-align:top}.propertykit-table td.pk-number{text-align:right}"
    ".propertykit-table td.pk-address{white-space:normal;min-width:10em;max-width:18em}"
    ".propertykit-table .pk-id{white-space:nowrap;color:#555;font-size:12px}</style>"
)


#: What a missing value shows as.
MISSING = "—"
#: Words of column names that are not written as they are read.
_WORDS = {
    "epc": "EPC",
    "sq": "sq",
    "ft": "ft",
    "m": "m",
    "id": "id",
    "lat": "latitude",
    "lng": "longitude",
    "uprn": "UPRN",
    "sap": "SAP",
}


def _pounds(value: object) -> str:
    if not isinstance(value, int | float) or math.isnan(value):
        return MISSING
    return f"£{value:,.0f}"


def _missing(value: object) -> bool:
    return (
        value is None
        or value is pd.NA
        or value is pd.NaT
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def _text(value: object) -> str:
    return MISSING if _missing(value) else str(value)


def heading(column: str) -> str:
    """A column's name as a person reads it: ``address.displayAddress`` -> "Address: display
    address".

    Examples
    --------
    >>> heading("epc.currentEnergyRating"), heading("roomDetails.beds"), heading("spatial.lat")
    ('EPC: current energy rating', 'Room details: beds', 'Spatial: latitude')
    """
    parts = []
    for part in column.split("."):
        spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|_", " ", part)
        words = [_WORDS.get(word.lower(), word.lower()) for word in spaced.split()]
        parts.append(" ".join(words))
    text = re.sub(r" sq m$", " (m²)", ": ".join(part for part in parts if part))
    return text[:1].upper() + text[1:]


def table_html(df: pd.DataFrame, attributes: list[str] | None, *, all_columns: bool) -> str:
    """The table tab's HTML: the readable columns, or (``all_columns``) every narrow one.

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"locationId": "L1", "pricing": {"estimatedSaleValue": 168400}}])
    >>> "<td class=\\"pk-number\\">£168,400</td>" in table_html(df, None, all_columns=False)
    True
    """
    shown = in_major_units(df.head(PREVIEW_ROWS))
    caption = html.escape(describe_table(len(df), len(shown)))
    keep = {"propertyId", "locationId", *attributes} if attributes else None

    def wanted(column: str) -> bool:  # columns of attributes not asked for are all empty
        return column in shown.columns and (keep is None or column.split(".")[0] in keep)

    if all_columns:
        present = [(heading(c), c) for c in shown.columns if c not in _WIDE_COLUMNS and wanted(c)]
    else:
        present = [(h, c) for h, c in READABLE_COLUMNS if wanted(c)]
    body = _table(shown, present, readable=not all_columns)
    # One scroll box, as wide as the form (its own width kept out of its content's), scrolling
    # both ways: a wide table never makes it wider, so its scroll bars stay in view.
    return (
        f"{_STYLE}<p style='line-height:1.4;margin:4px 0'>{caption}</p>"
        "<div class='pk-scroll' style='contain:inline-size;max-height:420px;overflow:auto'>"
        f"{body}</div>"
    )


def _table(df: pd.DataFrame, present: list[tuple[str, str]], *, readable: bool) -> str:
    head = "".join(
        f'<th title="{html.escape(column)}">{html.escape(name)}</th>' for name, column in present
    )
    ids = df["locationId"] if "locationId" in df.columns else pd.Series("", index=df.index)
    rows = []
    for location_id, record in zip(
        ids, df.loc[:, [column for _, column in present]].itertuples(index=False), strict=True
    ):
        cells = []
        for (_, column), value in zip(present, record, strict=True):
            text = html.escape(_pounds(value) if column in _MONEY_COLUMNS else _text(value))
            if column in _MONEY_COLUMNS:
                cells.append(f'<td class="pk-number">{text}</td>')
            elif column == _ADDRESS and readable:  # the one cell that wraps: the row fits
                named = html.escape(_text(location_id))
                cells.append(f'<td class="pk-address">{text}<div class="pk-id">{named}</div></td>')
            elif readable or not _is_number(value):
                cells.append(f"<td>{text}</td>")
            else:
                cells.append(f'<td class="pk-number">{text}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<table class="propertykit-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float | np.number)
        and not isinstance(value, bool | np.bool_)
        and not _missing(value)
    )
