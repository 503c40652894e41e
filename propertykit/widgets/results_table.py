"""The lookup form's result table: a readable few columns by default, every column on request.

The readable table shows what an analyst scans first — address, type, bedrooms, the estimated
value in pounds and the EPC rating — with the location id to find the row again in
``form.value``. The full table shows every column of the frame but the two too wide for a cell
(sale histories and raw boundaries). Cells do not wrap, so an id or a price stays on one line; a
table wider than the form scrolls sideways. Only an address may wrap, so the readable table fits
the form at 1024 px.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from propertykit.frames import in_major_units
from propertykit.widgets.messages import describe_table

__all__ = ["PREVIEW_ROWS", "READABLE_COLUMNS", "table_html"]

#: Rows of the table tab (the whole frame is ``form.value``).
PREVIEW_ROWS = 100
#: The default table: (heading, column of the frame), in order.
READABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Address", "address.displayAddress"),
    ("Type", "propertyType"),
    ("Beds", "roomDetails.beds"),
    ("Estimated value", "pricing.estimatedSaleValue"),
    ("EPC", "epc.currentEnergyRating"),
    ("Location id", "locationId"),
)
_MONEY_COLUMNS = frozenset({"pricing.estimatedSaleValue"})
_ADDRESS = "address.displayAddress"
_WIDE_COLUMNS = ("saleHistory", "spatial.boundary")
_STYLE = (
    "<style>.propertykit-table th,.propertykit-table td{white-space:nowrap;padding:2px 10px;"
    "text-align:left}.propertykit-table td.pk-number{text-align:right}"
    ".propertykit-table td.pk-address{white-space:normal;min-width:14em}</style>"
)


def _pounds(value: object) -> str:
    if not isinstance(value, int | float) or math.isnan(value):
        return ""
    return f"£{value:,.0f}"


def _text(value: object) -> str:
    return (
        ""
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
        else str(value)
    )


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
        columns = [c for c in shown.columns if c not in _WIDE_COLUMNS and wanted(c)]
        body = shown.loc[:, columns].to_html(
            index=False, border=0, na_rep="", classes="propertykit-table"
        )
    else:
        body = _readable(shown, [(h, c) for h, c in READABLE_COLUMNS if wanted(c)])
    return f"{_STYLE}<div style='max-height:420px;overflow:auto'><p>{caption}</p>{body}</div>"


def _readable(df: pd.DataFrame, present: list[tuple[str, str]]) -> str:
    head = "".join(f"<th>{html.escape(heading)}</th>" for heading, _ in present)
    rows = []
    for record in df.loc[:, [column for _, column in present]].itertuples(index=False):
        cells = []
        for (_, column), value in zip(present, record, strict=True):
            if column in _MONEY_COLUMNS:
                cells.append(f'<td class="pk-number">{html.escape(_pounds(value))}</td>')
            elif column == _ADDRESS:  # the one cell that may wrap, so the row fits the form
                cells.append(f'<td class="pk-address">{html.escape(_text(value))}</td>')
            else:
                cells.append(f"<td>{html.escape(_text(value))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<table class="propertykit-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
