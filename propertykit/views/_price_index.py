"""The repeat-sales price index as a chart: one line per group, its 95 % band shaded.

The numbers come from :func:`propertykit.frames._price_index.price_index`; this module only
draws them. Returned, never shown.
"""

from __future__ import annotations

import textwrap
from typing import Literal

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import hex_to_rgb, qualitative

from propertykit import frames
from propertykit.views import _figures as shared
from propertykit.views._figures import TEMPLATE

_COLOURS = qualitative.D3


def index_chart(
    df: pd.DataFrame,
    *,
    freq: Literal["year", "quarter", "month"] = "year",
    by: str | None = None,
    min_pairs: int = 30,
    max_groups: int = 8,
) -> go.Figure:
    """The weighted repeat-sales price index with its 95 % confidence band.

    Parameters
    ----------
    df
        The property frame, or a sales table.
    freq, by, min_pairs
        As for :func:`propertykit.frames._price_index.price_index`.
    max_groups
        With ``by``, the groups with the most pairs get a line; the title counts the rest.

    Returns
    -------
    plotly.graph_objects.Figure
        Per group a shaded band (``lower`` to ``upper``) and a line of ``index``; hover shows
        the band and the pairs behind each point. Merged periods are drawn at their first.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> fig = index_chart(pk.frame(generate_records(2000)))
    >>> fig.layout.title.text
    'Repeat-sales price index, 100 in 1995 (2,149 pairs of sales of the same home)'
    """
    sales = shared.sales(df)
    table = frames.price_index(sales, freq=freq, by=by, min_pairs=min_pairs)
    title = "Repeat-sales price index" + (
        f" by {shared.lower_first(shared.label(by))}" if by else ""
    )
    if table.empty:
        return shared.empty_figure(title, f"no period with {min_pairs} or more pairs of sales")
    names = [None] if by is None else _largest(table, by, max_groups)
    figure = go.Figure()
    for position, name in enumerate(names):
        rows = table if name is None else table[table[by] == name]
        _add_group(figure, rows, "All sales" if name is None else str(name), position)
    first = table["period"].min()
    drawn = int(table[table[by].isin(names)]["pairs"].sum() // 2) if by else table.attrs["pairs"]
    groups = ""
    if by is not None:
        total = table[by].nunique()
        groups = f", {len(names)} of {total} {shared.lower_first(shared.label(by))}s drawn"
    figure.update_layout(
        template=TEMPLATE,
        title=(
            f"{title}, 100 in {first if by is None else 'each first period'}"
            f" ({drawn:,} pairs of sales of the same home{groups})"
        ),
        xaxis_title=f"{freq.capitalize()} of sale",
        yaxis_title="Index (first period = 100)",
        legend_title_text=shared.label(by) if by else None,
        hovermode="closest",
    )
    return figure


def _largest(table: pd.DataFrame, by: str, limit: int) -> list[object]:
    pairs = table.groupby(by, sort=False, observed=True)["pairs"].sum()
    return list(pairs.sort_values(ascending=False, kind="stable").index[:limit])


def _add_group(figure: go.Figure, rows: pd.DataFrame, name: str, position: int) -> None:
    colour = _COLOURS[position % len(_COLOURS)]
    red, green, blue = hex_to_rgb(colour)
    x = rows["period"].dt.start_time
    figure.add_trace(
        go.Scatter(
            x=pd.concat([x, x[::-1]]),
            y=pd.concat([rows["upper"], rows["lower"][::-1]]).to_numpy(),
            fill="toself",
            fillcolor=f"rgba({red},{green},{blue},0.2)",
            line={"width": 0},
            hoverinfo="skip",
            name=f"{name}: 95 % band",
            legendgroup=name,
            showlegend=False,
        )
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=rows["index"].to_numpy(),
            customdata=rows[["lower", "upper", "pairs"]]
            .assign(period=rows["period"].astype(str))
            .to_numpy(dtype=object),
            mode="lines+markers",
            name=name,
            legendgroup=name,
            line={"color": colour},
            marker={"color": colour},
            hovertemplate=(
                "%{fullData.name}<br>%{customdata[3]}: index %{y:.1f}"
                " (95 %: %{customdata[0]:.1f} to %{customdata[1]:.1f})"
                "<br>%{customdata[2]:,} pairs<extra></extra>"
            ),
        )
    )


def index_against_median(df: pd.DataFrame, *, min_pairs: int = 30) -> go.Figure:
    """The repeat-sales index beside the median price per year (both 100 in the index's first
    year), with one sentence on which to trust: the report's price-index section.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> fig = index_against_median(pk.frame(generate_records(2000)))
    >>> [trace.name for trace in fig.data][1:], fig.layout.annotations[0].text[:28]
    (['Repeat-sales index', 'Median sale price'], 'Trust the repeat-sales index')
    """
    sales = shared.sales(df)
    figure = index_chart(sales, min_pairs=min_pairs)
    if not figure.data:
        figure.add_annotation(
            text="Too few homes sold twice for an index: the median moves with the mix of<br>"
            "homes sold as well as with their prices.",
            **_SENTENCE,
        )
        return figure
    figure.data[-1].name = "Repeat-sales index"
    line = figure.data[-1]
    dated = sales[sales["date"].notna() & (pd.to_numeric(sales["price"]) > 0)]
    medians = dated.groupby(dated["date"].dt.year)["price"].median()
    years = pd.Series([pd.Timestamp(x).year for x in line.x])
    base = medians.get(int(years.iloc[0]))
    if base is None or base <= 0:
        return figure
    rebased = medians.reindex(range(int(years.iloc[0]), int(years.iloc[-1]) + 1)) / base * 100
    figure.add_trace(
        go.Scatter(
            x=[pd.Timestamp(year=int(year), month=1, day=1) for year in rebased.index],
            y=rebased.to_numpy(),
            mode="lines+markers",
            name="Median sale price",
            line={"color": "#7f7f7f", "dash": "dash"},
            marker={"color": "#7f7f7f", "symbol": "square"},
            hovertemplate="Median sale price<br>%{x|%Y}: %{y:.1f}<extra></extra>",
        )
    )
    index = pd.Series(line.y, index=years.to_numpy())
    gap = (rebased.reindex(index.index) / index - 1).dropna()
    sentence = (
        "Trust the repeat-sales index: it compares each home only with itself, so a change in"
        " the mix of homes sold (more detached houses one year) does not move it; the median"
        " does."
    )
    if len(gap):
        worst = int(gap.abs().idxmax())
        sentence += f" Here they differ by up to {abs(gap[worst]):.0%} ({worst})."
    figure.add_annotation(text="<br>".join(textwrap.wrap(sentence, 100)), **_SENTENCE)
    figure.update_layout(
        title=figure.layout.title.text.replace("Repeat-sales price index", "Price index"),
        margin={"t": 120},
        legend_title_text=None,
    )
    return figure


_SENTENCE: dict[str, object] = {
    "xref": "paper",
    "yref": "paper",
    "x": 0,
    "y": 1.02,
    "xanchor": "left",
    "yanchor": "bottom",
    "showarrow": False,
    "align": "left",
    "font": {"size": 12, "color": "#444444"},
    "name": "which to trust",
}
