"""How EPC ratings move over time, drawn: band shares per period as 100 % stacked bars.

:func:`epc_trend_chart` draws :func:`propertykit.frames._epc_trend.epc_trend`: one bar per
period of lodgement, split into the seven bands in the official EPC colours (A at the bottom, so the
top of the C layer is the share rated A to C), the mean current and potential efficiency as
lines on a second axis, and with ``by=`` one small panel per group. A bar that pools periods
with too few certificates spans them all and is drawn pale, never as if it were solid; the
subtitle says so, and says what the data is: each home's latest certificate, by when it was
lodged, not the whole housing stock.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from propertykit import frames
from propertykit.errors import InvalidInput
from propertykit.frames import EPC_TREND_MIN_COUNT
from propertykit.views import _figures as shared
from propertykit.views._figures import BANDS, EPC_COLOURS, TEMPLATE

_WHAT = (
    "Each home's latest certificate, by the {freq} it was lodged: "
    "a picture of certificates, not of the whole housing stock."
)
_POOLED_OPACITY = 0.45
_LINES = (
    ("mean_efficiency", "Mean efficiency now", "#1b1b1b", "solid"),
    ("mean_potential", "Mean potential efficiency", "#555555", "dot"),
)


def epc_trend_chart(
    df: pd.DataFrame,
    *,
    freq: Literal["year", "quarter"] = "year",
    by: str | None = None,
    min_count: int = EPC_TREND_MIN_COUNT,
    max_groups: int = 6,
) -> go.Figure:
    """EPC band shares per period of lodgement as 100 % stacked bars, with mean efficiency.

    Parameters
    ----------
    df
        The property frame, or a table from :func:`propertykit.frames._epc_trend.epc_trend`
        (drawn as it is; ``freq``, ``by`` and ``min_count`` are then read from its ``attrs``).
    freq, by, min_count
        As for :func:`~propertykit.frames._epc_trend.epc_trend` (its warnings about pooled
        periods and certificates left out are given here too).
    max_groups
        With ``by``, the largest groups by number of certificates get a panel each; the
        subtitle counts the ones not drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        Seven ``Bar`` traces per panel, A to G in :data:`~propertykit.views._figures.EPC_COLOURS`
        (``y`` in percent; ``customdata``: period label, certificates in the band, in the bar),
        then two ``Scatter`` lines on the right-hand axis: mean current and potential efficiency
        (SAP points). Pooled bars are pale and as wide as the periods they pool.

    Examples
    --------
    >>> import warnings, propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> with warnings.catch_warnings(action="ignore"):  # 2024 and 2025 pooled, and said
    ...     fig = epc_trend_chart(pk.frame(generate_records(1500)))
    >>> [trace.name for trace in fig.data][:7], fig.data[7].name
    (['A', 'B', 'C', 'D', 'E', 'F', 'G'], 'Mean efficiency now')
    """
    if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
        raise InvalidInput(f"max_groups must be a whole number of at least 1, got {max_groups!r}")
    if "share_A" in df.columns:
        trend = df
        freq, by = trend.attrs.get("freq", freq), trend.attrs.get("by", by)
        min_count = trend.attrs.get("min_count", min_count)
    else:
        trend = frames.epc_trend(df, freq=freq, by=by, min_count=min_count)
    title = f"EPC ratings of certificates by {freq} lodged" + (
        f", by {shared.lower_first(shared.label(by))}" if by else ""
    )
    if trend.empty:
        return shared.empty_figure(title, f"no {freq} with {min_count:,} or more certificates")
    notes = [_WHAT.format(freq=freq)]
    if trend["pooled"].any():
        notes.append(f"Pale bars pool {freq}s with fewer than {min_count:,} certificates.")
    panels: list[tuple[str, pd.DataFrame]] = [("All", trend)]
    if by:
        sizes = trend.groupby(by, sort=False)["n"].sum().sort_values(ascending=False)
        panels = [(str(name), trend[trend[by] == name]) for name in sizes.index[:max_groups]]
        if len(sizes) > max_groups:
            hidden = int(sizes.iloc[max_groups:].sum())
            notes.append(
                f"{len(sizes) - max_groups:,} smaller groups ({hidden:,} certificates) not drawn."
            )
    figure = _panels(panels, by)
    shown = int(sum(int(rows["n"].sum()) for _, rows in panels))
    figure.update_layout(
        template=TEMPLATE,
        title={
            "text": f"{title} ({shown:,} certificates)<br><sup>{' '.join(notes)}</sup>",
            "x": 0.01,
        },
        barmode="stack",
        bargap=0,
        legend={"traceorder": "normal", "title": {"text": "Rating"}},
        hovermode="closest",
    )
    return figure


def _panels(panels: list[tuple[str, pd.DataFrame]], by: str | None) -> go.Figure:
    columns = 1 if len(panels) == 1 else min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = make_subplots(
        rows=rows,
        cols=columns,
        specs=[[{"secondary_y": True}] * columns for _ in range(rows)],
        subplot_titles=[f"{name} ({int(t['n'].sum()):,})" for name, t in panels] if by else None,
        horizontal_spacing=0.09 if columns > 1 else 0.02,
        vertical_spacing=0.14 if rows > 1 else 0.02,
        shared_xaxes="all",
    )
    for position, (_, table) in enumerate(panels):
        row, column = position // columns + 1, position % columns + 1
        for trace in _traces(table, first=position == 0):
            secondary = isinstance(trace, go.Scatter)
            figure.add_trace(trace, row=row, col=column, secondary_y=secondary)
        figure.update_yaxes(
            range=[0, 100], ticksuffix="%", row=row, col=column, secondary_y=False,
            title_text="Share of certificates" if column == 1 else None,
        )  # fmt: skip
        figure.update_yaxes(
            range=[0, 100], showgrid=False, row=row, col=column, secondary_y=True,
            title_text="Efficiency (SAP points)" if column == columns else None,
        )  # fmt: skip
    figure.update_xaxes(title_text="Lodged (validFrom)", row=rows)
    if rows > 1:
        figure.update_layout(height=260 * rows + 180)
    return figure


def _traces(table: pd.DataFrame, *, first: bool) -> list[go.Bar | go.Scatter]:
    starts = table["period"].dt.start_time
    ends = table["period_end"].dt.end_time
    middles = starts + (ends - starts) / 2
    widths = ((ends - starts).dt.total_seconds() * 1000 * 0.86).to_numpy()
    opacity = np.where(table["pooled"].to_numpy(), _POOLED_OPACITY, 1.0)
    labels = (table["label"] + np.where(table["pooled"], " (pooled)", "")).to_numpy(dtype=object)
    traces: list[go.Bar | go.Scatter] = []
    for band in BANDS:
        customdata: Any = np.column_stack([labels, table[f"count_{band}"], table["n"]])
        traces.append(
            go.Bar(
                x=middles,
                y=(table[f"share_{band}"] * 100).to_numpy(),
                width=widths,
                name=band,
                legendgroup=band,
                showlegend=first,
                customdata=customdata,
                marker={"color": EPC_COLOURS[band], "opacity": opacity, "line": {"width": 0}},
                hovertemplate=(
                    f"%{{customdata[0]}}: {band} %{{y:.1f}}%"
                    " (%{customdata[1]:,} of %{customdata[2]:,} certificates)<extra></extra>"
                ),
            )
        )
    for column, name, colour, dash in _LINES:
        traces.append(
            go.Scatter(
                x=middles,
                y=table[column].to_numpy(),
                name=name,
                legendgroup=column,
                showlegend=first,
                mode="lines+markers",
                line={"color": colour, "dash": dash, "width": 2},
                marker={
                    "color": np.where(table["pooled"], "white", colour).tolist(),
                    "line": {"color": colour, "width": 1.5},
                    "size": 7,
                },
                customdata=labels,
                hovertemplate=f"%{{customdata}}: {name.lower()} %{{y:.1f}}<extra></extra>",
            )
        )
    return traces
