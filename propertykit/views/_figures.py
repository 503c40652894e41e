"""What the charts, the maps and the report share: colours, labels, units, tables, empty figures.

A private module: its names have no leading underscore because :mod:`propertykit.views._plots`,
:mod:`propertykit.views._maps` and :mod:`propertykit.views._report` import them; nothing outside the
package should.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from propertykit.views._columns import require_columns

#: Energy-efficiency band colours of the GOV.UK EPC register (find-energy-certificate).
EPC_COLOURS = {
    "A": "#008054",
    "B": "#19b459",
    "C": "#8dce46",
    "D": "#ffd500",
    "E": "#fcaa65",
    "F": "#ef8023",
    "G": "#e9153b",
}
BANDS = tuple(EPC_COLOURS)
MISSING_COLOUR = "#b0b0b0"
#: The kinds of trace these views draw.
TRACE_KINDS = ("bar", "box", "histogram", "scatter", "scattergl", "scattermap")
#: The figures' look: plotly_white's layout and its defaults for :data:`TRACE_KINDS`. Naming
#: "plotly_white" itself deep-copies its defaults for all two dozen kinds of trace into every
#: figure (about half the time of a small chart) and doubles each figure's template in the page.
TEMPLATE = go.layout.Template(
    layout=pio.templates["plotly_white"].layout,
    data={kind: pio.templates["plotly_white"].data[kind] for kind in TRACE_KINDS},
)

#: Readable names (and whether the values are money) for columns charts commonly use.
_COLUMN_LABELS: dict[str, tuple[str, bool]] = {
    "propertyType": ("Property type", False),
    "address.town": ("Town", False),
    "address.outcode": ("Postcode district", False),
    "address.postcode": ("Postcode", False),
    "councilTax.localAuthority": ("Local authority", False),
    "councilTax.taxBand": ("Council tax band", False),
    "councilTax.annualCharge": ("Council tax per year", True),
    "pricing.currentSalePrice": ("Current sale price", True),
    "pricing.currentRentPrice": ("Current rent price", True),
    "pricing.estimatedSaleValue": ("Estimated sale value", True),
    "pricing.estimatedRentValue": ("Estimated rent value", True),
    "pricing.pricePerSqFt": ("Price per sq ft", True),
    "epc.currentEnergyRating": ("Current EPC rating", False),
    "epc.potentialEnergyRating": ("Potential EPC rating", False),
    "epc.currentEnergyEfficiency": ("Current energy efficiency (SAP points)", False),
    "epc.potentialEnergyEfficiency": ("Potential energy efficiency (SAP points)", False),
    "floorAreaSqM": ("Floor area (m²)", False),
    "plotSizeSqM": ("Plot size (m²)", False),
    "yearBuilt": ("Year built", False),
    "tenure.type": ("Tenure", False),
}


def sales(df: pd.DataFrame) -> pd.DataFrame:
    """The sales table: ``df``'s sale histories exploded, or ``df`` if it already is one."""
    if "saleHistory" in df.columns:
        from propertykit.frames import explode_sales

        return explode_sales(df)
    require_columns(df, ("date", "price"))
    return df


def epc(df: pd.DataFrame) -> pd.DataFrame:
    """The EPC table: taken from the property frame ``df``, or ``df`` if it already is one."""
    if "epc.currentEnergyRating" in df.columns:
        from propertykit.frames import epc_table

        return epc_table(df)
    require_columns(df, ("currentEnergyRating", "potentialEnergyRating"))
    return df


def for_display(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with prices in pounds for a chart or report (a copy when served in pence).

    Charts and reports always show pounds; the frame a user holds is never changed.
    """
    from propertykit.frames import in_major_units, is_minor

    return in_major_units(df) if is_minor(df) else df


def money_unit(df: pd.DataFrame) -> str:
    """The unit of the frame's money columns for titles: ``"GBP"``, ``"GBP, minor units"``;
    a frame that says no unit (``attrs["money_unit"]``) is said to: ``"unit not stated"``."""
    from propertykit.frames import money_unit_of

    unit, currency = money_unit_of(df), df.attrs.get("currency")
    if unit is None:
        return f"{currency}, unit not stated" if currency else "unit not stated"
    currency = currency or "currency not stated"
    return f"{currency}, minor units" if unit == "minor" else str(currency)


def lower_first(text: str) -> str:
    """'Current EPC rating' -> 'current EPC rating' (acronyms keep their case)."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def label(column: str | None) -> str:
    """A readable name for a column; an unknown column is its own name."""
    return _COLUMN_LABELS.get(str(column), (str(column), False))[0]


def is_money(column: Any) -> bool:
    """Whether a known column holds money (so its unit is the frame's currency)."""
    return _COLUMN_LABELS.get(str(column), ("", False))[1]


def is_numeric(values: pd.Series) -> bool:
    """Numbers to put on a scale (booleans are categories)."""
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def count_axis(highest: int) -> dict[str, Any]:
    """An axis of counts: whole numbers only, from 0 (never ticks at 0.2 steps).

    Plotly picks its own steps; below ten it may pick fractions, so there the step is one.

    Examples
    --------
    >>> count_axis(3)
    {'rangemode': 'tozero', 'tickformat': ',d', 'dtick': 1}
    >>> count_axis(250)
    {'rangemode': 'tozero', 'tickformat': ',d'}
    """
    axis: dict[str, Any] = {"rangemode": "tozero", "tickformat": ",d"}
    if highest <= 10:
        axis["dtick"] = 1
    return axis


def legend_square(name: str, colour: str, *, outline: str, width: float) -> go.Scatter:
    """A legend entry only (nothing drawn): a square swatch of ``colour``, in the legend
    group ``name``, for traces whose own swatch would mislead."""
    return go.Scatter(
        x=[None],
        y=[None],
        mode="markers",
        name=name,
        legendgroup=name,
        marker={
            "symbol": "square",
            "size": 14,
            "color": colour,
            "line": {"color": outline, "width": width},
        },
        hoverinfo="skip",
    )


def empty_figure(title: str, reason: str) -> go.Figure:
    """A figure whose title and centred note say there is no data, and why (``layout.meta``
    holds ``{"no_data": reason}``, so a report can leave the panel out and say why)."""
    figure = go.Figure()
    figure.update_layout(
        template=TEMPLATE,
        meta={"no_data": reason},
        title=f"{title}: no data ({reason})",
        xaxis_visible=False,
        yaxis_visible=False,
        annotations=[
            {
                "text": f"No data: {reason}",
                "showarrow": False,
                "font": {"size": 16},
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ],
    )
    return figure
