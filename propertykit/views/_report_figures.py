"""The report's figures: price and EPC charts and maps, each drawn when its columns are there,
and a line saying why where one is left out (missing columns, nothing to show, a warning)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go

from propertykit.errors import InvalidInput
from propertykit.text import visible
from propertykit.views import _maps as maps
from propertykit.views import _plots as plots


def report_figures(df: pd.DataFrame, notes: list[str]) -> list[tuple[str, go.Figure]]:
    """The report's figures; ones whose columns are missing, or with nothing to show, are left
    out with a note."""
    wanted: list[tuple[str, Callable[[], go.Figure]]] = [
        ("Sale prices over time", lambda: plots.price_trend(df, by="propertyType")),
        ("A price index you can trust", lambda: _price_index_section(df)),
        ("Energy performance", lambda: plots.epc_chart(df)),
        ("Energy performance and price", lambda: plots.epc_price_chart(df)),
        *_energy_over_time(df),
        (
            "Where the properties are",
            lambda: maps.property_map(df, color="epc.currentEnergyRating", basemap="outline"),
        ),
    ]
    town = _busiest_boundary_town(df)
    if town is not None:
        local = df[df["address.town"] == town]
        wanted.append(
            (
                f"Plot boundaries in {town}",
                lambda: maps.property_map(
                    local,
                    geometry="boundary",
                    color="pricing.estimatedSaleValue",
                    basemap="outline",
                ),
            )
        )
    figures = []
    for heading, build in wanted:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                figure = build()
            except InvalidInput as error:
                notes.append(f"{heading}: not drawn ({error}).")
                continue
        notes.extend(f"{heading}: {_plain(w.message)}" for w in caught)
        empty = figure.layout.meta.get("no_data") if isinstance(figure.layout.meta, dict) else None
        if empty:  # an empty panel is left out, with a line saying why
            notes.append(f"{heading}: left out, nothing to show ({empty}).")
            continue
        figures.append((heading, figure))
    return figures


def _price_index_section(df: pd.DataFrame) -> go.Figure:
    """The repeat-sales index beside the median trend, with one sentence on which to trust."""
    from propertykit.views._price_index import index_against_median

    return index_against_median(df)


def _energy_over_time(df: pd.DataFrame) -> list[tuple[str, Callable[[], go.Figure]]]:
    """The "Energy ratings over time" section: band shares of the certificates by year lodged,
    for all homes, and per property type (which homes lag) when two types or more have enough
    certificates to compare."""
    from propertykit.frames import EPC_TREND_MIN_COUNT
    from propertykit.views._epc_trend import epc_trend_chart

    heading = "Energy ratings over time"
    section = [(heading, lambda: epc_trend_chart(df))]
    if {"propertyType", "epc.currentEnergyRating"} <= set(df.columns):
        rated = df.loc[df["epc.currentEnergyRating"].notna(), "propertyType"].value_counts()
        if (rated >= 4 * EPC_TREND_MIN_COUNT).sum() >= 2:
            by_type = functools.partial(epc_trend_chart, df, by="propertyType")
            section.append((f"{heading}, by property type", by_type))
    return section


def _busiest_boundary_town(df: pd.DataFrame) -> str | None:
    """The town with most boundaries (a boundary map is only readable at town scale)."""
    if "spatial.boundary" not in df.columns or "address.town" not in df.columns:
        return None
    towns = df.loc[df["spatial.boundary"].notna(), "address.town"].dropna()
    return str(towns.value_counts().index[0]) if len(towns) else None


def _plain(message: Warning | str) -> str:
    """A warning as a report's reader should see it: plain words, not where the data is kept."""
    return visible(str(getattr(message, "plain", message)))
