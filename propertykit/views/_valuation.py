"""Comparable evidence, seen: one subject appraised once (:func:`comparable_evidence`, what
every view draws) and its map among its comparables (:func:`comparables_map`); the page is
:mod:`~propertykit.views._valuation_page`.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import shapely

from propertykit.views import _basemap as ground
from propertykit.views import _context as context
from propertykit.views import _figures as shared
from propertykit.views._context import Extent
from propertykit.views._figures import TEMPLATE
from propertykit.views._valuation_page import day_text, distance_text, subject_name

if TYPE_CHECKING:
    from propertykit.frames import Appraisal, ValuationSearch
    from propertykit.views._tile_source import FetchTile

MAP_HEIGHT = 560
SUBJECT_COLOUR = "#c0392b"
COLOUR_TITLE = "£ per m² used"
_EARTH_RADIUS_M = 6_371_008.8
#: A comparable farther than this off the bundled land outline is taken to have an implausible
#: place (the outline's own error near a coast is a kilometre or two).
OFF_LAND_M = 3_000.0


def comparable_evidence(
    df: pd.DataFrame,
    subject: str | Mapping[str, Any],
    *,
    as_of: Any = None,
    search: ValuationSearch | None = None,
    **fields: Any,
) -> Appraisal:
    """One subject appraised once, in pounds: what the map, the report and the form draw.

    Parameters
    ----------
    df, subject, as_of, search
        As for :func:`propertykit.frames.appraise` (one subject).
    **fields
        The search's fields instead of ``search`` (``radius_m``, ``months``, ...).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> found = comparable_evidence(pk.frame(generate_records(3000)), "PK00000007",
    ...                             as_of="2025-01-01")
    >>> found.subject()["address"], len(found.values)
    ('66 Cedar Drive, West Bridgford, Nottingham, NG2 6BU', 1)
    """
    from propertykit import frames

    if search is None:
        search = frames.ValuationSearch(**fields)
    elif fields:
        raise TypeError(f"give search= or its fields ({', '.join(fields)}), not both")
    return frames.appraise(shared.for_display(df), [subject], as_of=as_of, search=search)


def comparables_map(
    df: pd.DataFrame,
    subject: str | Mapping[str, Any],
    *,
    basemap: ground.Basemap = "auto",
    tiles: str | None = None,
    attribution: str | None = None,
    fetch: FetchTile | None = None,
    appraisal: Appraisal | None = None,
    **search: Any,
) -> go.Figure:
    """The subject among its comparable sales: a map a reader can check the evidence on.

    Parameters
    ----------
    df, subject, **search
        As for :func:`comparable_evidence` (``as_of``, ``search`` or its fields).
    basemap, tiles, attribution, fetch
        As for :func:`propertykit.views._maps.property_map` (``"outline"`` works offline).
    appraisal
        The subject's appraisal from :func:`comparable_evidence`: nothing is computed again.

    Returns
    -------
    plotly.graph_objects.Figure
        The searched circle, one marker per comparable property labelled with its row numbers
        of the schedule and coloured by the £ per m² used (every sale in its hover), the
        subject as a red star labelled "Subject"; north up, with a scale bar. A comparable whose
        place is implausible (outside the circle, or far out at sea) is not drawn, and the
        title says which rows; where a home falls outside the bundled coastline (too coarse at
        this scale), the coastline is left out rather than draw the home in the sea.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> df = pk.frame(generate_records(3000))
    >>> figure = df.pk.comparables_map("PK00000007", as_of="2025-01-01", basemap="outline")
    >>> [trace.name for trace in figure.data][-3:]
    ['Searched within 8 km', '£ per m² used', 'Subject']
    """
    found = appraisal or comparable_evidence(df, subject, **search)
    table, described = found.schedule(0), found.subject(0)
    radius, as_of = float(table.attrs["radius_m"]), pd.Timestamp(table.attrs["as_of"])
    x, y = float(described["lng"]), float(described["lat"])
    name, within = html.escape(subject_name(described)), distance_text(radius)
    chosen = ground.resolve_basemap(basemap, fetch)
    chosen, streets = ground.street_route(chosen, tiles, attribution, fetch)
    circle_lng, circle_lat = _circle(x, y, radius)
    lng, lat = _locations(df, table)
    homes = _by_property(table, lng, lat)
    placed = _placed(homes, x, y, radius)
    drawn = homes[placed]
    extent = context.fit_extent(
        np.r_[circle_lng, drawn["lng"], x], np.r_[circle_lat, drawn["lat"], y], pad=0.04
    )
    coast = chosen == "outline" and bool(
        _on_land(np.r_[drawn["lng"], x], np.r_[drawn["lat"], y]).all()
    )
    figure = go.Figure(ground.outline_traces(extent) if coast else None)
    figure.add_traces([
        go.Scatter(x=circle_lng.round(6), y=circle_lat.round(6), mode="lines", hoverinfo="skip",
                   name=f"Searched within {within}",
                   line={"color": "#555555", "width": 1.5, "dash": "dash"}),
        go.Scatter(x=drawn["lng"].round(6), y=drawn["lat"].round(6), mode="markers+text",
                   text=drawn["rows"], customdata=drawn["hover"], textposition="top center",
                   textfont={"size": 11, "color": "#1b1b1b"},
                   hovertemplate="%{customdata}<extra></extra>", name=COLOUR_TITLE,
                   marker={"size": 11, "color": drawn["colour"].to_numpy(dtype=float),
                           "colorscale": "Viridis", "line": {"color": "white", "width": 1},
                           "colorbar": {"title": {"text": "£ per m²"}, "tickformat": ",.0f"}}),
        go.Scatter(x=[round(x, 6)], y=[round(y, 6)], mode="markers+text", name="Subject",
                   text=["Subject"], customdata=[name], textposition="bottom center",
                   textfont={"size": 12, "color": SUBJECT_COLOUR},
                   hovertemplate="Subject: %{customdata}<extra></extra>",
                   marker={"symbol": "star", "size": 18, "color": SUBJECT_COLOUR,
                           "line": {"color": "white", "width": 1.5}}),
    ])  # fmt: skip
    _frame(figure, extent, sea=coast)
    said = [f"{len(table):,} sold within {within} before {day_text(as_of)}, numbered as the "
            "schedule's rows; colour: £ per m² used"]  # fmt: skip
    if not placed.all():
        rows = ", ".join(homes.loc[~placed, "rows"])
        said.append(f"not drawn: row {rows}, whose recorded place is not plausible")
    if chosen == "outline" and not coast:
        said.append("no coastline: at this scale the bundled outline is too coarse for these homes")
    figure.update_layout(
        template=TEMPLATE,
        title=f"Comparable sales of {name}<br><sup>{'<br>'.join(said)}</sup>",
        height=MAP_HEIGHT,
        margin={"l": 10, "r": 10, "t": 60 + 16 * (len(said) - 1), "b": 60},
        legend={"orientation": "h", "x": 0, "y": 0, "yanchor": "top"},
        meta={"not_drawn": homes.loc[~placed, "rows"].tolist(), "coastline": coast},
    )
    if streets is not None:
        streets.bake(figure)
    if chosen == "tiles":
        return ground.to_tiles(figure, extent, tiles=tiles, attribution=attribution)
    return figure


def _placed(homes: pd.DataFrame, lng: float, lat: float, radius_m: float) -> np.ndarray:
    """Which comparables' recorded places can be drawn: known, within the searched circle (with
    a little room for rounding), and not far out at sea (more than :data:`OFF_LAND_M` from the
    bundled land outline, which is too coarse to judge a coastal home closer in)."""
    away = _metres(lng, lat, homes["lng"].to_numpy(float), homes["lat"].to_numpy(float))
    known = np.isfinite(away) & (away <= radius_m * 1.01 + 50)
    far_out = np.zeros(len(homes), dtype=bool)
    far_out[known] = _off_land_m(homes["lng"].to_numpy(float)[known],
                                 homes["lat"].to_numpy(float)[known]) > OFF_LAND_M  # fmt: skip
    placed: np.ndarray = known & ~far_out
    return placed


def _metres(lng: float, lat: float, lngs: np.ndarray, lats: np.ndarray) -> np.ndarray:
    """Distances (m) from one point, on a sphere (haversine)."""
    p1, p2 = math.radians(lat), np.radians(lats)
    dlat, dlng = p2 - p1, np.radians(lngs - lng)
    h = np.sin(dlat / 2) ** 2 + math.cos(p1) * np.cos(p2) * np.sin(dlng / 2) ** 2
    metres: np.ndarray = 2 * _EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0, 1)))
    return metres


@functools.cache
def _land() -> shapely.Geometry:
    rings = ground.outline_data()["land"]
    return shapely.union_all([shapely.Polygon(ring) for ring in rings if len(ring) >= 4])


def _on_land(lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Which points fall inside the bundled land outline (as drawn on the map)."""
    inside: np.ndarray = shapely.contains_xy(_land(), lng, lat)
    return inside


def _off_land_m(lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Roughly how far (m) each point is from the bundled land outline (0 on land)."""
    if not len(lng):
        return np.zeros(0)
    far = shapely.distance(_land(), shapely.points(lng, lat))
    metres: np.ndarray = (
        np.asarray(far, dtype=float) * 111_000 * np.cos(np.radians(lat)).clip(0.5, 1)
    )
    return metres


def _by_property(table: pd.DataFrame, lng: np.ndarray, lat: np.ndarray) -> pd.DataFrame:
    """One marker per property, coloured by its best-weighted sale, labelled with its rows of
    the schedule (``rows``), every sale in its hover."""
    lines = [
        f"Sold {d:%b %Y} for £{p:,.0f}: £{q:,.0f} per m² used"
        for d, p, q in zip(table["date"], table["price"], table["used_price_per_sqm"], strict=True)
    ]
    named = table["address"] if "address" in table.columns else table["propertyId"]
    rows = pd.DataFrame(
        {"propertyId": table["propertyId"], "lng": lng, "lat": lat, "line": lines,
         "colour": table["used_price_per_sqm"], "address": named.astype(str),
         "away": table["distance_m"], "row": [str(n) for n in range(1, len(table) + 1)]}
    )  # fmt: skip
    grouped = rows.groupby("propertyId", sort=False)
    homes, sold = grouped.first(), grouped["line"].agg("<br>".join)
    homes["rows"] = grouped["row"].agg(", ".join)
    homes["hover"] = [
        f"Row {numbers}: {html.escape(address)} ({away:,.0f} m away)<br>{sales}"
        for numbers, address, away, sales in zip(
            homes["rows"], homes["address"], homes["away"], sold, strict=True
        )
    ]
    return homes.reset_index()


def _locations(df: pd.DataFrame, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    return tuple(
        table["propertyId"].map(pd.to_numeric(homes[f"spatial.{axis}"], errors="coerce"))
        .to_numpy(dtype=float) for axis in ("lng", "lat")
    )  # fmt: skip


def _circle(lng: float, lat: float, radius_m: float, points: int = 96) -> tuple[np.ndarray, ...]:
    """A circle of ``radius_m`` about (lng, lat), in degrees (closed)."""
    angle = np.linspace(0, 2 * np.pi, points + 1)
    dlat = np.degrees(radius_m / _EARTH_RADIUS_M) * np.sin(angle)
    dlng = np.degrees(radius_m / _EARTH_RADIUS_M) * np.cos(angle) / math.cos(math.radians(lat))
    return lng + dlng, lat + dlat


def _frame(figure: go.Figure, extent: Extent, *, sea: bool) -> None:
    """North-up axes fitted to ``extent`` (a kilometre as long across as up), a scale bar."""
    hidden = {"showgrid": False, "zeroline": False, "showticklabels": False, "ticks": ""}
    figure.update_xaxes(range=[extent.west, extent.east], constrain="domain", **hidden)
    figure.update_yaxes(
        range=[extent.south, extent.north], scaleanchor="x",
        scaleratio=round(1 / extent.cos_lat, 4), constrain="domain", **hidden,
    )  # fmt: skip
    figure.update_layout(plot_bgcolor=ground.SEA if sea else "white")
    x0, x1, y, text = context.scale_bar(extent)
    figure.add_shape(type="line", x0=x0, x1=x1, y0=y, y1=y, name="scale bar",
                     line={"color": "#1b1b1b", "width": 2})  # fmt: skip
    figure.add_annotation(x=(x0 + x1) / 2, y=y, yshift=12, text=text, showarrow=False,
                          bgcolor="rgba(255,255,255,0.72)", name="scale bar")  # fmt: skip
