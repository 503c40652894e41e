"""Tile-free plotly maps of properties: points and boundaries.

Maps are drawn with ``go.Scattergeo`` with every basemap layer switched off, so they need no map
tiles, no topojson, no WebGL and no network: the data alone is drawn on a plain projected
(Mercator) canvas with a graticule, fitted to the data. That keeps the HTML report complete
offline, in e-mail attachments and in static image export. A tiled basemap (plotly's
MapLibre-based ``scatter_map`` with an OpenStreetMap style) would fetch tiles and fonts from the
internet and needs WebGL; add one yourself from the returned data when you are online.

:func:`property_map` is also importable from :mod:`propertykit.views.plots`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import shapely
from plotly.colors import qualitative, sample_colorscale

from propertykit.views import figures as shared
from propertykit.views.columns import require_columns
from propertykit.views.figures import EPC_COLOURS, MISSING_COLOUR, TEMPLATE
from propertykit.views.geo import to_geodataframe

__all__ = ["EPC_COLOURS", "property_map"]


def property_map(
    df: pd.DataFrame,
    *,
    color: str | None = None,
    geometry: Literal["point", "boundary"] = "point",
    classes: int = 5,
) -> go.Figure:
    """A map of the properties that needs no tiles: points, or filled boundaries.

    Parameters
    ----------
    df
        The property frame (``spatial.lat``/``spatial.lng``, or ``spatial.boundary``).
    color
        Column to colour by. Categories (and EPC ratings, in their official colours) get one
        legend entry each; numbers get a colour scale (points) or ``classes`` quantile classes
        (boundaries). Missing values are grey.
    geometry
        ``"point"`` for one marker per property, ``"boundary"`` for filled boundaries
        (choropleth-style) with a marker per property for hover.
    classes
        Number of quantile classes for a numeric ``color`` on a boundary map.

    Returns
    -------
    plotly.graph_objects.Figure
        ``Scattergeo`` traces on a tile-free geo subplot fitted to the data.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = property_map(pk.frame(generate_records(30)), color="epc.currentEnergyRating")
    >>> fig.data[0].type, fig.layout.geo.fitbounds
    ('scattergeo', 'locations')
    """
    if color is not None:
        require_columns(df, (color,))
    df = shared.for_display(df)  # pounds on the map, whatever the served unit
    gdf = to_geodataframe(df, geometry=geometry, nested="keep")
    gdf = gdf[gdf.geometry.notna()]
    what = "boundaries" if geometry == "boundary" else "properties"
    title = ("Property boundaries" if geometry == "boundary" else "Properties") + (
        f" by {shared.lower_first(shared.label(color))}" if color else ""
    )
    if gdf.empty:
        return shared.empty_figure(title, f"no {what} with a location to map")

    values = gdf[color] if color else None
    hover = _hover_text(gdf, color)
    figure = go.Figure()
    if geometry == "boundary":
        _add_boundaries(
            figure, gdf.geometry.to_numpy(), values, hover, classes, shared.money_unit(df)
        )
    else:
        _add_points(figure, gdf.geometry.x.to_numpy(), gdf.geometry.y.to_numpy(), values, hover, df)
    figure.update_geos(
        fitbounds="locations",
        projection_type="mercator",
        showland=False,
        showocean=False,
        showlakes=False,
        showrivers=False,
        showcountries=False,
        showcoastlines=False,
        showsubunits=False,
        showframe=True,
        bgcolor="white",
        lonaxis={"showgrid": True, "gridcolor": "#e5e5e5"},
        lataxis={"showgrid": True, "gridcolor": "#e5e5e5"},
    )
    figure.update_layout(
        template=TEMPLATE,
        title=f"{title} ({len(gdf):,} mapped)",
        legend_title_text=shared.label(color) if color else None,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return figure


# --- layers ---------------------------------------------------------------------------------


def _add_points(
    figure: go.Figure,
    x: np.ndarray,
    y: np.ndarray,
    values: pd.Series | None,
    hover: np.ndarray,
    df: pd.DataFrame,
) -> None:
    if values is None:
        figure.add_trace(_markers(x, y, hover, name="Properties", color="#1f5fa8"))
    elif shared.is_numeric(values):
        numbers = pd.to_numeric(values).to_numpy(dtype=float, na_value=np.nan)
        known = np.isfinite(numbers)
        unit = f" ({shared.money_unit(df)})" if shared.is_money(values.name) else ""
        marker = {
            "color": numbers[known],
            "colorscale": "Viridis",
            "colorbar": {
                "title": {"text": f"{shared.label(values.name)}{unit}"},
                "tickformat": ",.0f",
            },
        }
        figure.add_trace(
            _markers(
                x[known], y[known], hover[known], name=shared.label(values.name), marker=marker
            )
        )
        if (~known).any():
            figure.add_trace(
                _markers(
                    x[~known], y[~known], hover[~known], name="not given", color=MISSING_COLOUR
                )
            )
    else:
        for name, mask, colour in _categories(values):
            figure.add_trace(_markers(x[mask], y[mask], hover[mask], name=name, color=colour))


def _add_boundaries(
    figure: go.Figure,
    geometries: np.ndarray,
    values: pd.Series | None,
    hover: np.ndarray,
    classes: int,
    money: str,
) -> None:
    if values is None:
        groups = [("Boundaries", np.ones(len(geometries), dtype=bool), "#1f5fa8")]
    elif shared.is_numeric(values):
        groups = _quantile_classes(values, classes, money if shared.is_money(values.name) else "")
    else:
        groups = _categories(values)
    anchors = shapely.point_on_surface(geometries)
    for name, mask, colour in groups:
        lon, lat = _outline_coordinates(geometries[mask])
        figure.add_trace(
            go.Scattergeo(
                lon=lon,
                lat=lat,
                mode="lines",
                fill="toself",
                fillcolor=colour,
                name=name,
                legendgroup=name,
                line={"color": colour, "width": 1.5},
                hoverinfo="skip",
            )
        )
        figure.add_trace(
            _markers(
                shapely.get_x(anchors[mask]),
                shapely.get_y(anchors[mask]),
                hover[mask],
                name=name,
                color=colour,
                legendgroup=name,
                showlegend=False,
                size=5,
            )
        )


def _outline_coordinates(geometries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exterior rings of every polygon as lon/lat arrays, rings separated by NaN (a gap)."""
    parts = shapely.get_parts(geometries)
    polygons = parts[shapely.get_type_id(parts) == shapely.GeometryType.POLYGON]
    coordinates, ring = shapely.get_coordinates(
        shapely.get_exterior_ring(polygons), return_index=True
    )
    breaks = np.flatnonzero(np.diff(ring)) + 1
    with_gaps = np.insert(coordinates, breaks, np.nan, axis=0)
    return with_gaps[:, 0], with_gaps[:, 1]


def _markers(
    x: np.ndarray,
    y: np.ndarray,
    hover: np.ndarray,
    *,
    name: str,
    color: str | None = None,
    marker: dict[str, Any] | None = None,
    size: int = 7,
    **kwargs: Any,
) -> go.Scattergeo:
    marker = marker or {"color": color}
    marker.setdefault("size", size)
    marker.setdefault("line", {"color": "white", "width": 0.5})
    return go.Scattergeo(
        lon=np.asarray(x, dtype=float),
        lat=np.asarray(y, dtype=float),
        mode="markers",
        name=name,
        text=list(hover),
        hovertemplate="%{text}<extra></extra>",
        marker=marker,
        **kwargs,
    )


def _categories(values: pd.Series) -> list[tuple[str, np.ndarray, str]]:
    """(legend name, row mask, colour) per category, in category order; missing last, grey."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        names = [c for c in values.cat.categories if (values == c).any()]
    else:
        names = sorted(values.dropna().unique(), key=str)
    epc = all(str(name) in EPC_COLOURS for name in names)
    palette = qualitative.Plotly
    groups = []
    for position, name in enumerate(names):
        colour = EPC_COLOURS[str(name)] if epc else palette[position % len(palette)]
        groups.append((str(name), (values == name).to_numpy(dtype=bool, na_value=False), colour))
    missing = values.isna().to_numpy()
    if missing.any():
        groups.append(("not given", missing, MISSING_COLOUR))
    return groups


def _quantile_classes(
    values: pd.Series, classes: int, money: str
) -> list[tuple[str, np.ndarray, str]]:
    numbers = pd.to_numeric(values).astype(float)
    binned = pd.qcut(numbers, q=max(1, classes), duplicates="drop")
    intervals = binned.cat.categories
    colours = sample_colorscale("Viridis", list(np.linspace(0, 1, max(len(intervals), 2))))
    unit = f" {money}" if money else ""
    groups = [
        (
            f"{i.left:,.0f} to {i.right:,.0f}{unit}",
            (binned == i).to_numpy(dtype=bool, na_value=False),
            colours[k],
        )
        for k, i in enumerate(intervals)
    ]
    if numbers.isna().any():
        groups.append(("not given", numbers.isna().to_numpy(), MISSING_COLOUR))
    return groups


def _hover_text(gdf: pd.DataFrame, color: str | None) -> np.ndarray:
    for column in ("address.displayAddress", "propertyId"):
        if column in gdf.columns:
            text = (
                gdf[column].astype("object").where(gdf[column].notna(), "(no address)").astype(str)
            )
            break
    else:
        text = pd.Series(gdf.index.astype(str), index=gdf.index)
    if color:
        shown = gdf[color].map(
            lambda v: f"{v:,.0f}" if isinstance(v, int | float) and not pd.isna(v) else v
        )
        text = (
            text
            + "<br>"
            + shared.label(color)
            + ": "
            + shown.astype("object").fillna("not given").astype(str)
        )
    hover: np.ndarray = text.to_numpy(dtype=object)
    return hover
