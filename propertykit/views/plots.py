"""Plotly charts from property frames: price trends and EPC charts (maps:
:mod:`propertykit.views.maps`).

Every function takes the main property frame (``pk.frame(records)``) and RETURNS a
``plotly.graph_objects.Figure``; nothing is shown implicitly (call ``fig.show()`` or let Jupyter
display it). Axis titles carry units and the currency recorded in ``df.attrs["currency"]``
(prices are plotted in pounds, a frame served in pence rescaled by
:func:`propertykit.frames.in_major_units`). A frame with nothing to plot gives an empty figure
whose title says so, never an exception.

Charts need neither geopandas nor shapely: drawing a price trend loads neither.

Static images: ``fig.write_image("chart.png")`` works once the optional ``kaleido`` package is
installed (``pip install kaleido``); it uses a local Chrome/Chromium.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from propertykit.errors import InvalidInput
from propertykit.views import figures as shared
from propertykit.views.columns import require_columns
from propertykit.views.figures import BANDS, EPC_COLOURS, MISSING_COLOUR, TEMPLATE

__all__ = [
    "EPC_COLOURS",
    "epc_chart",
    "epc_price_chart",
    "price_trend",
]

_FREQUENCIES = {"year": "Y", "quarter": "Q", "month": "M"}
_X_FORMATS = {"year": "%Y", "quarter": "%Y Q%q", "month": "%b %Y"}
#: One colour and marker per line, so no two legend swatches look alike ("Other" is grey).
_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
)
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def price_trend(
    df: pd.DataFrame,
    *,
    by: str | None = "propertyType",
    freq: Literal["year", "quarter", "month"] = "year",
    max_groups: int = 8,
    min_sales: int = 5,
) -> go.Figure:
    """Median sale price per period from the sale histories, one line per group.

    Parameters
    ----------
    df
        The property frame (its ``saleHistory`` is exploded with
        :func:`propertykit.frames.tables.explode_sales`), or an already exploded sales table.
    by
        Sales-table column to draw one line per value of (``"propertyType"``,
        ``"address.town"``, ``"address.outcode"``, ...), or ``None`` for one line.
    freq
        ``"year"``, ``"quarter"`` or ``"month"``.
    max_groups
        The largest groups by number of sales get their own line; the rest share "Other".
    min_sales
        The fewest sales a point may stand for. Consecutive periods with fewer are pooled into
        one multi-period median (drawn at their middle, hover "2019 to 2021"); a group with fewer
        sales in all is left out (the title counts the sales shown).

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Scatter`` trace per group, each in its own colour ("Other" grey); the number of
        sales behind each median is ``customdata[:, 0]`` and on hover, with the periods pooled.
        Where periods without sales lie between two points the line breaks (a blank point,
        ``y`` NaN, ``customdata`` ``[0, "no sales"]``): no straight line across years of no
        data.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = price_trend(pk.frame(generate_records(50)), by=None)
    >>> fig.layout.yaxis.title.text
    'Median sale price (GBP)'
    """
    if freq not in _FREQUENCIES:
        raise InvalidInput(f"freq must be one of {', '.join(_FREQUENCIES)}, got {freq!r}")
    if isinstance(min_sales, bool) or not isinstance(min_sales, int) or min_sales < 1:
        raise InvalidInput(f"min_sales must be a whole number of at least 1, got {min_sales!r}")
    df = shared.for_display(df)  # pounds on the chart, whatever the served unit
    sales = shared.sales(df)
    if by is not None and by not in sales.columns:
        raise InvalidInput(
            f"cannot group sales by {by!r}: choose one of {', '.join(sales.columns)}"
        )
    title = f"Median sale price per {freq}" + (
        f" by {shared.lower_first(shared.label(by))}" if by else ""
    )
    sales = sales[sales["date"].notna() & sales["price"].notna()]
    if sales.empty:
        return shared.empty_figure(title, "no sales to plot")

    period = sales["date"].dt.to_period(_FREQUENCIES[freq]).dt.start_time
    groups = _top_groups(sales[by], max_groups) if by else pd.Series("All sales", index=sales.index)
    table = sales.assign(period=period, group=groups)
    money = shared.money_unit(df)
    figure = go.Figure()
    shown = 0
    names = list(groups.cat.categories) if by else ["All sales"]
    for position, (name, rows) in enumerate(table.groupby("group", observed=True, sort=True)):
        points = _pooled(rows, min_sales, _X_FORMATS[freq])
        if points.empty:
            continue
        shown += int(points["count"].sum())
        points = _with_gaps(points, _FREQUENCIES[freq])
        colour = "#7f7f7f" if name == "Other" else _PALETTE[names.index(name) % len(_PALETTE)]
        figure.add_trace(
            go.Scatter(
                x=points["x"],
                y=points["median"].to_numpy(),
                customdata=points[["count", "span"]].to_numpy(dtype=object),
                mode="lines+markers",
                name=str(name),
                line={"color": colour},
                marker={"color": colour, "symbol": _SYMBOLS[position % len(_SYMBOLS)]},
                hovertemplate=(
                    f"%{{fullData.name}}<br>%{{customdata[1]}}: median %{{y:,.0f}} {money}"
                    "<br>%{customdata[0]:,} sales<extra></extra>"
                ),
            )
        )
    if not figure.data:
        return shared.empty_figure(title, f"no period with {min_sales} or more sales")
    few = f", at least {min_sales} a point" if min_sales > 1 else ""
    figure.update_layout(
        template=TEMPLATE,
        title=f"{title} ({shown:,} sales{few})",
        xaxis_title=f"{freq.capitalize()} of sale",
        yaxis_title=f"Median sale price ({money})",
        yaxis_tickformat=",.0f",
        legend_title_text=shared.label(by) if by else None,
    )
    return figure


def epc_chart(df: pd.DataFrame) -> go.Figure:
    """How many properties are in each EPC band now and could be: current vs potential, A-G.

    Parameters
    ----------
    df
        The property frame, or an EPC table from :func:`propertykit.frames.tables.epc_table`.

    Returns
    -------
    plotly.graph_objects.Figure
        Two ``Bar`` traces side by side on one axis, ``Current`` (solid) then ``Potential``
        (pale), each bar in its band's official colour (:data:`EPC_COLOURS`) and named on the
        axis by its band under the group's name, so no legend is needed (a legend swatch would
        show one colour for bars of seven). The count axis ticks in whole numbers.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = epc_chart(pk.frame(generate_records(50)))
    >>> [trace.name for trace in fig.data], list(fig.data[0].x[1])
    (['Current', 'Potential'], ['A', 'B', 'C', 'D', 'E', 'F', 'G'])
    """
    table = shared.epc(df)
    title = "EPC ratings: current and potential"
    current = _band_counts(table["currentEnergyRating"])
    potential = _band_counts(table["potentialEnergyRating"])
    if current.sum() == 0 and potential.sum() == 0:
        return shared.empty_figure(title, "no EPC ratings to plot")
    colours = [EPC_COLOURS[band] for band in BANDS]
    figure = go.Figure()
    # potential bars are pale with a solid outline (plotly.js warns on hatch patterns combined
    # with per-bar colours, so no patterns)
    for name, counts, opacity in (("Current", current, 1.0), ("Potential", potential, 0.45)):
        share = counts / max(int(counts.sum()), 1)
        figure.add_trace(
            go.Bar(
                x=[[f"{name} rating"] * len(BANDS), list(BANDS)],
                y=counts.to_numpy(),
                name=name,
                customdata=list(zip(share.to_numpy(dtype=float), BANDS, strict=True)),
                marker={
                    "color": colours,
                    "opacity": opacity,
                    "line": {"color": colours, "width": 2},
                },
                hovertemplate=(
                    f"{name} rating %{{customdata[1]}}: %{{y:,}} properties"
                    " (%{customdata[0]:.0%})<extra></extra>"
                ),
                showlegend=False,  # the axis names every bar; a swatch would show one colour
            )
        )
    rated = int(max(current.sum(), potential.sum()))
    highest = int(max(current.max(), potential.max()))
    figure.update_layout(
        template=TEMPLATE,
        barmode="relative",  # one bar per place on the axis: each at full width
        bargap=0.15,
        title=f"{title} ({rated:,} rated properties)",
        xaxis_title="EPC rating (A = most efficient)",
        yaxis={"title": "Properties (count)", **shared.count_axis(highest)},
    )
    return figure


def epc_price_chart(df: pd.DataFrame, *, price: str = "pricing.estimatedSaleValue") -> go.Figure:
    """Price by current EPC rating: a box (quartiles, 1.5 IQR whiskers) per band.

    Parameters
    ----------
    df
        The property frame.
    price
        The money column to compare across bands.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Box`` trace per band present, in the band's colour, built from precomputed
        quartiles (so the figure stays small however many properties there are).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = epc_price_chart(pk.frame(generate_records(100)))
    >>> fig.layout.yaxis.title.text
    'Estimated sale value (GBP)'
    """
    require_columns(df, ("epc.currentEnergyRating", price))
    df = shared.for_display(df)  # pounds on the chart, whatever the served unit
    name = shared.label(price)
    title = f"{name} by current EPC rating"
    values = pd.DataFrame(
        {"band": df["epc.currentEnergyRating"].astype("object"), "price": pd.to_numeric(df[price])}
    ).dropna()
    if values.empty:
        return shared.empty_figure(title, "no properties with both a rating and a price")
    money = shared.money_unit(df)
    figure = go.Figure()
    values = values.sort_values("band", key=lambda b: b.map({x: i for i, x in enumerate(BANDS)}))
    for band, rows in values.groupby("band", sort=False):
        prices = rows["price"].to_numpy(dtype=float)
        q1, median, q3 = np.percentile(prices, [25, 50, 75])
        reach = 1.5 * (q3 - q1)
        inside = prices[(prices >= q1 - reach) & (prices <= q3 + reach)]
        figure.add_trace(
            go.Box(
                x=[band],
                q1=[q1],
                median=[median],
                q3=[q3],
                lowerfence=[inside.min()],
                upperfence=[inside.max()],
                name=f"{band} ({len(prices):,})",
                marker_color=EPC_COLOURS.get(str(band), MISSING_COLOUR),
                fillcolor=EPC_COLOURS.get(str(band), MISSING_COLOUR),
                line_color="#333333",
            )
        )
    low, high = float(values["price"].min()), float(values["price"].max())
    if high - low < 0.05 * max(abs(high), 1.0):  # one price (or nearly): an axis +/- 10 %
        middle = (low + high) / 2
        figure.update_yaxes(range=[middle - 0.1 * abs(middle) - 1, middle + 0.1 * abs(middle) + 1])
    figure.update_layout(
        template=TEMPLATE,
        title=f"{title} ({len(values):,} properties)",
        xaxis={
            "title": "Current EPC rating (A = most efficient)",
            "categoryorder": "array",
            "categoryarray": list(BANDS),
        },
        yaxis_title=f"{name} ({money})",
        yaxis_tickformat=",.0f",
        legend_title_text="Rating (properties)",
    )
    return figure


def _band_counts(ratings: pd.Series) -> pd.Series:
    letters = ratings.astype("object").dropna().astype(str).str.strip().str.upper()
    return letters.value_counts().reindex(list(BANDS), fill_value=0).astype(int)


def _pooled(rows: pd.DataFrame, min_sales: int, x_format: str) -> pd.DataFrame:
    """Medians per period, consecutive periods pooled until each holds ``min_sales`` sales."""
    counts = rows.groupby("period", sort=True).size()
    buckets: list[list[pd.Timestamp]] = []
    current: list[pd.Timestamp] = []
    held = 0
    for when, count in counts.items():
        current.append(pd.Timestamp(when))
        held += int(count)
        if held >= min_sales:
            buckets.append(current)
            current, held = [], 0
    if current and buckets:  # a short tail joins the last full bucket
        buckets[-1].extend(current)
    # each period's bucket, then every bucket's median in one pass over the rows
    number = {when: position for position, bucket in enumerate(buckets) for when in bucket}
    by_bucket = rows["price"].groupby(rows["period"].map(number)).agg(["median", "size"])
    out = []
    for position, bucket in enumerate(buckets):
        first, last = bucket[0], bucket[-1]
        span = first.strftime(x_format.replace("%q", str(first.quarter)))
        if last != first:
            span += " to " + last.strftime(x_format.replace("%q", str(last.quarter)))
        out.append(
            {
                "x": first + (last - first) / 2,
                "median": float(by_bucket.at[position, "median"]),
                "count": int(by_bucket.at[position, "size"]),
                "span": span,
                "first": first,
                "last": last,
            }
        )
    return pd.DataFrame(out, columns=["x", "median", "count", "span", "first", "last"])


def _with_gaps(points: pd.DataFrame, freq: str) -> pd.DataFrame:
    """``points`` with a blank point wherever periods without sales lie between two points, so
    the line breaks there instead of running straight across them."""
    first = pd.DatetimeIndex(points["first"]).to_period(freq).asi8
    last = pd.DatetimeIndex(points["last"]).to_period(freq).asi8
    after_gap = first[1:] - last[:-1] != 1
    if not after_gap.any():
        return points
    rows = []
    for position in range(len(points)):
        if position and after_gap[position - 1]:
            middle = (
                points["last"].iloc[position - 1]
                + (points["first"].iloc[position] - points["last"].iloc[position - 1]) / 2
            )
            rows.append({"x": middle, "median": np.nan, "count": 0, "span": "no sales"})
        rows.append(points.iloc[position].to_dict())
    return pd.DataFrame(rows, columns=points.columns)


def _top_groups(values: pd.Series, limit: int) -> pd.Series:
    """Group names by number of sales, largest first; beyond ``limit`` the rest are "Other"."""
    text = values.astype("object").where(values.notna(), "not given").astype(str)
    counts = text.value_counts()
    if len(counts) > limit:
        keep = list(counts.index[: max(limit - 1, 1)])
        text = text.where(text.isin(keep), "Other")
        counts = text.value_counts()
    order = [name for name in counts.index if name != "Other"] + ["Other"]
    return pd.Series(
        pd.Categorical(text, categories=[n for n in order if n in counts.index]), index=text.index
    )
