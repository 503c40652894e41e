"""Maps of properties a reader can place: points or boundaries on a basemap, with place names
and a scale bar.

A map is drawn on plain x/y axes (x = longitude, y = latitude, y scaled by ``1/cos(latitude)``
so distances look right), north up, fitted to the data. Under the data goes a basemap
(:mod:`~propertykit.views._basemap`): bundled Natural Earth land, coast, rivers and borders that
work offline (``"outline"``), OpenStreetMap street tiles for online readers (``"tiles"``), or
nothing. Town or locality names from the data are written on the map without overlapping
(:mod:`~propertykit.views._context`), and big maps keep their speed by drawing one marker per
outcode when zoomed out (:mod:`~propertykit.views._detail`).

:func:`property_map` is also importable from :mod:`propertykit.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import shapely

from propertykit.errors import InvalidInput
from propertykit.views import _basemap as ground
from propertykit.views import _context as context
from propertykit.views import _detail as detail
from propertykit.views import _figures as shared
from propertykit.views import _layers as layers
from propertykit.views._columns import require_columns
from propertykit.views._context import Extent
from propertykit.views._figures import TEMPLATE
from propertykit.views._geo import to_geodataframe

if TYPE_CHECKING:
    from xyzservices import TileProvider

    from propertykit.views._tile_source import FetchTile

MAP_HEIGHT = 600


def property_map(
    df: pd.DataFrame,
    *,
    color: str | None = None,
    geometry: Literal["point", "boundary"] = "point",
    classes: int = 5,
    basemap: ground.Basemap = "auto",
    labels: bool = True,
    detail_limit: int | None = detail.DETAIL_LIMIT,
    tiles: str | TileProvider | None = None,
    attribution: str | None = None,
    fetch: FetchTile | None = None,
) -> go.Figure:
    """A map of the properties: points or filled boundaries, on a basemap, with place names.

    Parameters
    ----------
    df
        The property frame (``spatial.lat``/``spatial.lng``, or ``spatial.boundary``).
    color
        Column to colour by. Categories (and EPC ratings, in their official colours) get one
        legend entry each; numbers get a colour scale (points) or ``classes`` quantile classes
        (boundaries). Missing values are grey.
    geometry
        ``"point"`` for one marker per property; ``"boundary"`` for filled plot boundaries,
        zoomed to where the plots are big enough to see, with a point for each property that
        has no boundary.
    classes
        Number of quantile classes for a numeric ``color`` on a boundary map.
    basemap
        ``"outline"`` (bundled Natural Earth land, coast and borders; works offline),
        ``"tiles"`` (street tiles: in a live notebook plotly's MapLibre ``scattermap``, which
        needs the network; elsewhere, for static export, fetched now and baked in as an image,
        see :mod:`~propertykit.views._street`), ``"auto"`` (tiles in a live notebook when the
        tile host answers, else the outline) or ``"none"``.
    labels
        Write town (or locality) names from the data on the map, and a scale bar.
    detail_limit
        Above this many properties, draw one marker per outcode (sized by count) instead of one
        per property; ``None`` always draws every property.
    tiles
        For ``basemap="tiles"``: a ``.../{z}/{x}/{y}.png`` address template or an xyzservices
        ``TileProvider`` (default OpenStreetMap's standard tiles).
    attribution
        The tile server's credit, written on the map (OpenStreetMap's and a provider's are
        known).
    fetch
        The tile fetcher for tiles baked in and for ``"auto"``'s question to the tile host
        (:class:`~propertykit.views._tile_source.FetchTile`); default propertykit's cached one.

    Returns
    -------
    plotly.graph_objects.Figure
        x/y traces (``scatter``/``scattergl``) north-up, or ``scattermap`` traces for tiles.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> fig = property_map(pk.frame(generate_records(30)), color="epc.currentEnergyRating",
    ...                    basemap="outline")
    >>> fig.data[0].name, fig.layout.yaxis.scaleanchor
    ('Land (Natural Earth)', 'x')
    """
    if color is not None:
        require_columns(df, (color,))
    if geometry not in ("point", "boundary"):
        raise InvalidInput(f'geometry must be "point" or "boundary", got {geometry!r}')
    chosen = ground.resolve_basemap(basemap, fetch)
    chosen, streets = ground.street_route(chosen, tiles, attribution, fetch)
    df = shared.for_display(df)  # pounds on the map, whatever the served unit
    gdf = to_geodataframe(df, geometry=geometry, nested="keep")
    boundaries = geometry == "boundary"
    title = ("Property boundaries" if boundaries else "Properties") + (
        f" by {shared.lower_first(shared.label(color))}" if color else ""
    )
    shaped = gdf[gdf.geometry.notna()]
    if shaped.empty:
        what = "boundaries" if boundaries else "properties"
        return shared.empty_figure(title, f"no {what} with a location to map")

    money = shared.money_unit(df)
    points = _points_without_boundary(gdf) if boundaries else shaped
    if boundaries:
        lon = shapely.get_x(shapely.centroid(shaped.geometry.to_numpy()))
        lat = shapely.get_y(shapely.centroid(shaped.geometry.to_numpy()))
    else:
        lon, lat = shaped.geometry.x.to_numpy(), shaped.geometry.y.to_numpy()
    many = detail_limit is not None and len(shaped) > detail_limit
    everyone = np.ones(len(shaped), dtype=bool)
    overview = False
    if boundaries and not many and chosen != "tiles":
        panels = detail.boundary_windows(shaped.geometry.to_numpy(), most=3)
        if len(panels) > 1:  # close-ups, and an overview map that shows where they are
            px, py = _xy(points)
            everything = context.fit_extent(
                np.concatenate([lon, px]), np.concatenate([lat, py]), share=0.5
            )
            panels.insert(0, (everything, everyone))
            overview = True
    elif boundaries:
        px, py = _xy(points)
        panels = [
            (context.fit_extent(np.concatenate([lon, px]), np.concatenate([lat, py])), everyone)
        ]
    else:
        panels = [(context.fit_extent(lon, lat), everyone)]

    values = shaped[color] if color else None
    hover = layers.hover_text(shaped, color)
    groups = layers.boundary_groups(values, len(shaped), classes, money) if boundaries else []
    maps = []
    for position, (extent, where) in enumerate(panels):
        panel = go.Figure()
        if chosen == "outline":
            panel.add_traces(ground.outline_traces(extent))
        if many:  # properties without a boundary count in their areas, as they are drawn
            located, x, y = (
                _with_points(shaped, points, lon, lat) if boundaries else (shaped, lon, lat)
            )
            areas = detail.aggregate(located, x, y, color)
            layers.add_aggregates(panel, areas, color, money)
            title += f" ({len(located):,} mapped, {len(areas):,} areas)"
        elif overview and position == 0:
            layers.add_overview(panel, lon, lat, groups, hover)
            _add_points_without_boundary(panel, points, extent, legend=True, money=money)
            _mark_close_ups(panel, [window for window, _ in panels[1:]])
        elif boundaries:
            geometries = shaped.geometry.to_numpy()
            layers.add_boundaries(
                panel, geometries, groups, hover, where=where, legend=position == int(overview)
            )
            _add_points_without_boundary(
                panel, points, extent, legend=not overview and position == 0, money=money
            )
            if overview:
                _number(panel, extent, position)
        else:
            layers.add_points(panel, lon, lat, values, hover, money)
        _frame(panel, extent, sea=chosen == "outline")
        if labels:
            _add_context(panel, shaped[where], lon[where], lat[where], extent)
        maps.append(panel)
    # the title counts what is drawn (a boundary in no colour class is not)
    drawn = np.logical_or.reduce([mask for _, mask, _ in groups]) if groups else everyone
    shown = int(sum((where & drawn).sum() for _, where in panels[1 if overview else 0 :]))
    if overview:
        title += (
            f" ({shown:,} of {len(shaped):,} drawn in {len(panels) - 1} close-ups;"
            " all located on the overview)"
        )
    elif not many:
        title += f" ({shown:,} mapped)"

    figure = maps[0] if len(maps) == 1 else _grid(maps)
    # the layout is set by assigning its parts, not by update_layout: each update_layout call
    # replays its changes in plotly's batch mode, about ten times the work, and a map makes
    # many; what is assigned here was not set before
    figure.layout.template = TEMPLATE
    figure.layout.title = title
    figure.layout.legend.title.text = shared.label(color) if color else None
    figure.layout.height = MAP_HEIGHT
    figure.layout.margin = {"l": 10, "r": 10, "t": 60, "b": 10}
    if any(_has_colour_bar(trace) for trace in figure.data):
        # the colour bar's title is the legend's: the legend goes under the map, untitled,
        # so the two never print over each other at the right
        legend = figure.layout.legend
        legend.title.text, legend.orientation, legend.yanchor = None, "h", "top"
        legend.x, legend.y = 0, 0
        figure.layout.margin.b = 60
    if streets is not None:
        streets.bake(figure)
    if chosen == "tiles":
        return ground.to_tiles(figure, panels[0][0], tiles=tiles, attribution=attribution)
    return figure


def _has_colour_bar(trace: go.BaseTraceType) -> bool:
    marker = getattr(trace, "marker", None)
    return marker is not None and bool(marker.colorbar.to_plotly_json())


def _grid(maps: list[go.Figure]) -> go.Figure:
    """Maps side by side, two to a row, each with its own north-up axes, labels and scale bar."""
    from plotly.subplots import make_subplots

    rows = (len(maps) + 1) // 2
    grid = make_subplots(rows=rows, cols=2, horizontal_spacing=0.02, vertical_spacing=0.03)
    # gathered, then set at once: plotly checks a figure's whole list of traces, annotations
    # or shapes again on each one added (adding them one by one costs the square), and
    # update_layout replays its changes in batch mode; assigning a whole part is quickest
    traces: list[go.BaseTraceType] = []
    trace_rows: list[int] = []
    trace_cols: list[int] = []
    notes: list[dict[str, object]] = []
    shapes: list[dict[str, object]] = []
    for position in range(rows * 2):  # the grid's axes are x, x2, ... row by row
        suffix = "" if position == 0 else str(position + 1)
        x, y = f"xaxis{suffix}", f"yaxis{suffix}"
        cell_x, cell_y = grid.layout[x].to_plotly_json(), grid.layout[y].to_plotly_json()
        if position == len(maps):  # an empty last cell
            grid.layout[x], grid.layout[y] = (
                {**cell_x, "visible": False},
                {**cell_y, "visible": False},
            )
            continue
        panel = maps[position]
        traces.extend(panel.data)
        trace_rows.extend([position // 2 + 1] * len(panel.data))
        trace_cols.extend([position % 2 + 1] * len(panel.data))
        grid.layout[x] = {**cell_x, **panel.layout.xaxis.to_plotly_json(), "visible": True}
        grid.layout[y] = {
            **cell_y,
            **panel.layout.yaxis.to_plotly_json(),
            "scaleanchor": f"x{suffix}",
            "visible": True,
        }
        at = {"xref": f"x{suffix}", "yref": f"y{suffix}"}
        notes.extend({**note.to_plotly_json(), **at} for note in panel.layout.annotations)
        shapes.extend({**shape.to_plotly_json(), **at} for shape in panel.layout.shapes)
    grid.add_traces(traces, rows=trace_rows, cols=trace_cols)
    grid.layout.annotations, grid.layout.shapes = notes, shapes
    grid.layout.plot_bgcolor = maps[0].layout.plot_bgcolor
    return grid


def _mark_close_ups(figure: go.Figure, windows: list[Extent]) -> None:
    """Numbered boxes on the overview: where each close-up is."""
    boxes = [
        {
            "type": "rect",
            "x0": window.west,
            "x1": window.east,
            "y0": window.south,
            "y1": window.north,
            "line": {"color": "#c0392b", "width": 2},
            "name": "close-up",
        }
        for window in windows
    ]
    numbers = [
        _close_up_number(window.east, window.north, number, yanchor="bottom")
        for number, window in enumerate(windows, start=1)
    ]
    figure.layout.shapes = (*figure.layout.shapes, *boxes)
    figure.layout.annotations = (*figure.layout.annotations, *numbers)


def _number(figure: go.Figure, extent: Extent, number: int) -> None:
    """The close-up's number, in its top-left corner (as on the overview)."""
    number_note = _close_up_number(extent.west, extent.north, number, yanchor="top")
    figure.layout.annotations = (*figure.layout.annotations, number_note)


def _close_up_number(x: float, y: float, number: int, *, yanchor: str) -> dict[str, object]:
    return {
        "x": x,
        "y": y,
        "text": f"<b>{number}</b>",
        "showarrow": False,
        "xanchor": "left",
        "yanchor": yanchor,
        "font": {"size": 13, "color": "#c0392b"},
        "bgcolor": "rgba(255,255,255,0.8)",
        "name": "close-up",
    }


def _add_points_without_boundary(
    figure: go.Figure,
    points: pd.DataFrame,
    extent: Extent,
    *,
    legend: bool,
    money: str,
    size: int = 5,
) -> None:
    px, py = _xy(points)
    inside = extent.contains(px, py)
    if inside.any():
        hover = layers.hover_text(points, None)
        layers.add_points(figure, px[inside], py[inside], None, hover[inside], money, size=size)
        figure.data[-1].name, figure.data[-1].showlegend = "no boundary given", legend


def _frame(figure: go.Figure, extent: Extent, *, sea: bool) -> None:
    """North-up axes fitted to ``extent``, a kilometre as long across as up."""
    edges = {
        "constrain": "range",  # the map fills its panel: more ground shown, never blank
        "showline": True,
        "mirror": True,
        "linecolor": "#bbbbbb",
        "showgrid": False,
        "zeroline": False,
        "showticklabels": False,
        "ticks": "",
    }
    # assigned whole (the panel's axes are new): far quicker than update_layout
    figure.layout.xaxis = {"range": [extent.west, extent.east], **edges}
    figure.layout.yaxis = {
        "range": [extent.south, extent.north],
        "scaleanchor": "x",
        "scaleratio": round(1 / extent.cos_lat, 4),
        **edges,
    }
    figure.layout.plot_bgcolor = ground.SEA if sea else "white"


def _add_context(
    figure: go.Figure, df: pd.DataFrame, lon: np.ndarray, lat: np.ndarray, extent: Extent
) -> None:
    """Place names (no two overlapping) and a scale bar."""
    places = [
        {
            "x": label.lon,
            "y": label.lat,
            "text": label.text,
            "showarrow": False,
            "xanchor": label.xanchor,
            "yanchor": label.yanchor,
            "xshift": label.xshift,
            "yshift": label.yshift,
            "font": {"size": context.LABEL_FONT, "color": "#1b1b1b"},
            "bgcolor": "rgba(255,255,255,0.55)",
            "borderpad": 2,
            "name": "place",
            "hovertext": f"{label.text}: {label.count:,} properties",
        }
        for label in context.place_labels(df, lon, lat, extent)
    ]
    x0, x1, y, text = context.scale_bar(extent)
    tick = (extent.north - extent.south) * 0.012
    bar = [
        {
            "type": "line",
            "x0": xs[0],
            "x1": xs[1],
            "y0": ys[0],
            "y1": ys[1],
            "line": {"color": "#1b1b1b", "width": 2},
            "name": "scale bar",
        }
        for xs, ys in (
            ((x0, x1), (y, y)),
            ((x0, x0), (y - tick, y + tick)),
            ((x1, x1), (y - tick, y + tick)),
        )
    ]
    caption = {
        "x": (x0 + x1) / 2,
        "y": y,
        "yshift": 12,
        "text": text,
        "showarrow": False,
        "font": {"size": 12, "color": "#1b1b1b"},
        "bgcolor": "rgba(255,255,255,0.72)",
        "name": "scale bar",
    }
    # set at once: plotly checks the whole list again on each annotation or shape added
    figure.layout.annotations = (*figure.layout.annotations, *places, caption)
    figure.layout.shapes = (*figure.layout.shapes, *bar)


def _points_without_boundary(gdf: pd.DataFrame) -> pd.DataFrame:
    """Rows with no boundary but a lat/lng: drawn as points on a boundary map."""
    if not {"spatial.lat", "spatial.lng"} <= set(gdf.columns):
        return gdf.iloc[:0]
    lat = pd.to_numeric(gdf["spatial.lat"], errors="coerce")
    lng = pd.to_numeric(gdf["spatial.lng"], errors="coerce")
    return gdf[gdf.geometry.isna().to_numpy() & lat.notna().to_numpy() & lng.notna().to_numpy()]


def _with_points(
    shaped: pd.DataFrame, points: pd.DataFrame, lon: np.ndarray, lat: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The boundaries' rows and centres, and after them the properties without a boundary."""
    if points.empty:
        return shaped, lon, lat
    px, py = _xy(points)
    rows = pd.concat([pd.DataFrame(shaped), pd.DataFrame(points)], ignore_index=True)
    return rows, np.concatenate([lon, px]), np.concatenate([lat, py])


def _xy(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    if points.empty or "spatial.lng" not in points.columns:
        return np.empty(0), np.empty(0)
    return (
        pd.to_numeric(points["spatial.lng"], errors="coerce").to_numpy(dtype=float),
        pd.to_numeric(points["spatial.lat"], errors="coerce").to_numpy(dtype=float),
    )
