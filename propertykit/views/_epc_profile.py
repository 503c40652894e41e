"""The EPC profile of a book, shown: the report's table of bands, share below C and certificates
expired or expiring, drawn from :func:`propertykit.frames.epc_profile` (the workbook's "EPC
profile" sheet draws the same result)."""

from __future__ import annotations

import html
from datetime import date, datetime

import pandas as pd

from propertykit.frames import epc_profile
from propertykit.views._figures import EPC_COLOURS


def epc_profile_html(df: pd.DataFrame, *, today: date | datetime | str | None = None) -> str:
    """The EPC profile of ``df`` as an HTML fragment: a table per band, then the totals.

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"epc": {"currentEnergyRating": "D", "validTo": "2025-03-01"}}])
    >>> page = epc_profile_html(df, today="2025-01-01")
    >>> "<td>D</td>" in page, "Share below C (D to G)" in page
    (True, True)
    """
    profile = epc_profile(df, today=today)
    rows = "".join(
        f'<tr><td><span style="color:{EPC_COLOURS[band]}">&#9632;</span> </td><td>{band}</td>'
        f'<td class="number">{count:,}</td><td class="number">{_share(share)}</td></tr>'
        for band, count, share in profile.bands.itertuples(index=False)
    )
    bands = (
        '<table><tr><th></th><th>Current band</th><th class="number">Properties</th>'
        f'<th class="number">Share of rated</th></tr>{rows}</table>'
    )
    totals = "".join(
        f'<tr><th>{html.escape(label)}</th><td class="number">'
        f"{html.escape(_share(value) if label.startswith('Share') else _count(value))}</td></tr>"
        for label, value in profile.summary()
    )
    return (
        '<div style="display:flex;gap:32px;flex-wrap:wrap;align-items:flex-start">'
        f"{bands}<table>{totals}</table></div>"
    )


def _share(value: object) -> str:
    return f"{value:.1%}" if isinstance(value, float) and not pd.isna(value) else "n/a"


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)
