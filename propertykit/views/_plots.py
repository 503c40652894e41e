"""Plotly charts from property frames: price trends and EPC charts (maps:
:mod:`propertykit.views._maps`).

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

from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from propertykit.errors import InvalidInput
from propertykit.views import _figures as shared
from propertykit.views._columns import require_columns
from propertykit.views._figures import BANDS, EPC_COLOURS, MISSING_COLOUR, TEMPLATE

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
        :func:`propertykit.frames._tables.explode_sales`), or an already exploded sales table.
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
    >>> from propertykit.sandbox import generate_records
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
    shown = 0
    names = list(groups.cat.categories) if by else ["All sales"]
    traces = []  # given to the figure at once: a go.Scatter would be checked twice
    for position, (name, rows) in enumerate(table.groupby("group", observed=True, sort=True)):
        pooled = _pooled(rows, min_sales, _X_FORMATS[freq])
        if not pooled:
            continue
        shown += sum(point["count"] for point in pooled)
        points = _with_gaps(pooled, _FREQUENCIES[freq])
        colour = "#7f7f7f" if name == "Other" else _PALETTE[names.index(name) % len(_PALETTE)]
        traces.append(
            {
                "type": "scatter",
                "x": points["x"],
                "y": points["median"].to_numpy(),
                "customdata": points[["count", "span"]].to_numpy(dtype=object),
                "mode": "lines+markers",
                "name": str(name),
                "line": {"color": colour},
                "marker": {"color": colour, "symbol": _SYMBOLS[position % len(_SYMBOLS)]},
                "hovertemplate": (
                    f"%{{fullData.name}}<br>%{{customdata[1]}}: median %{{y:,.0f}} {money}"
                    "<br>%{customdata[0]:,} sales<extra></extra>"
                ),
            }
        )
    if not traces:
        return shared.empty_figure(title, f"no period with {min_sales} or more sales")
    figure = go.Figure(data=traces)
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
        The property frame, or an EPC table from :func:`propertykit.frames._tables.epc_table`.

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
    >>> from propertykit.sandbox import generate_records
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
    >>> from propertykit.sandbox import generate_records
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


def _pooled(rows: pd.DataFrame, min_sales: int, x_format: str) -> list[dict[str, Any]]:
    """Medians per period, consecutive periods pooled until each holds ``min_sales`` sales."""
    # one sort of the rows by period, a bucket is then a run of them, and plain dicts out:
    # pandas' groupby and a frame per group cost most of a small trend (benchmarks/lookup_form.py)
    order = np.argsort(rows["period"].to_numpy(), kind="stable")
    periods = rows["period"].to_numpy()[order]
    prices = rows["price"].to_numpy(dtype=float)[order]
    starts = np.flatnonzero(np.r_[True, periods[1:] != periods[:-1]])
    ends = np.r_[starts[1:], len(periods)]
    buckets: list[tuple[int, int]] = []  # each bucket's first and last period, by position
    first_period, held = 0, 0
    for position, (start, end) in enumerate(zip(starts, ends, strict=True)):
        held += int(end - start)
        if held >= min_sales:
            buckets.append((first_period, position))
            first_period, held = position + 1, 0
    if buckets and first_period < len(starts):  # a short tail joins the last full bucket
        buckets[-1] = (buckets[-1][0], len(starts) - 1)
    points = []
    for first_position, last_position in buckets:
        first = pd.Timestamp(periods[starts[first_position]])
        last = pd.Timestamp(periods[starts[last_position]])
        span = first.strftime(x_format.replace("%q", str(first.quarter)))
        if last != first:
            span += " to " + last.strftime(x_format.replace("%q", str(last.quarter)))
        within = prices[starts[first_position] : ends[last_position]]
        points.append(
            {
                "x": first + (last - first) / 2,
                "median": float(np.median(within)),
                "count": len(within),
                "span": span,
                "first": first,
                "last": last,
            }
        )
    return points


def _with_gaps(points: list[dict[str, Any]], freq: str) -> pd.DataFrame:
    """``points`` as a frame (x, median, count, span), with a blank point wherever periods
    without sales lie between two points, so the line breaks there instead of running straight
    across them."""
    rows: list[dict[str, Any]] = []
    for point in points:
        if rows:
            before = rows[-1]
            if point["first"].to_period(freq).ordinal - before["last"].to_period(freq).ordinal != 1:
                middle = before["last"] + (point["first"] - before["last"]) / 2
                rows.append({"x": middle, "median": np.nan, "count": 0, "span": "no sales"})
        rows.append(point)
    return pd.DataFrame(rows, columns=["x", "median", "count", "span"])


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
