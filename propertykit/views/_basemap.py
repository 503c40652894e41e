"""The ground under every map: bundled outlines offline, street tiles online.

``basemap=`` on every map takes:

- ``"outline"``: land, lakes, rivers and borders of Britain and Ireland from Natural Earth
  (bundled in ``basemap_data/``, ~8 KB; source and licence in ``basemap_data/LICENCE.md``), drawn
  as ordinary filled traces. They are plain data, so they show in the self-contained report, in
  JupyterLab and in static image export, with no network, CDN or script.
- ``"tiles"``: street tiles (OpenStreetMap's standard tiles, any ``{z}/{x}/{y}`` template, or
  an xyzservices ``TileProvider``).
  In a live notebook, plotly's MapLibre traces (``scattermap``): tiles, fonts and WebGL come
  from the browser and the network, for readers who are online. Elsewhere (scripts, reports,
  static export) the tiles are fetched when the figure is made and baked in as an image
  (:mod:`~propertykit.views._street`); a tile server that cannot be reached gives the outline,
  with one warning.
- ``"auto"``: tiles in a live notebook kernel when the tile host answers within a second, the
  outline otherwise (and always with ``PROPERTYKIT_OFFLINE`` set). The report uses the
  outline, or baked street tiles when given ``tiles=``. The question to the tile host is one
  tile, asked once per session through the default tile fetcher
  (:func:`~propertykit.views._tile_source.default_fetcher`; the views never open a connection),
  bounded like every tile; it carries nothing of the data or the key.
- ``"none"``: the data alone.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go
import shapely

from propertykit.config import ENV_OFFLINE, env_flag
from propertykit.errors import InvalidInput
from propertykit.views import _street as street
from propertykit.views._context import Extent
from propertykit.views._tile_source import FetchTile, tile_source, tiles_answer

Basemap = Literal["auto", "outline", "tiles", "none"]
BASEMAPS = ("auto", "outline", "tiles", "none")
#: MapLibre style for ``basemap="tiles"`` and the host ``"auto"`` asks before choosing it.
TILE_STYLE = "open-street-map"
TILE_PROBE = "https://tile.openstreetmap.org/0/0/0.png"
LAND, SEA, COAST = "#f2efe6", "#d5e6f3", "#7d9bb8"


def resolve_basemap(
    basemap: str, fetch: FetchTile | None = None
) -> Literal["outline", "tiles", "none"]:
    """The basemap to draw for a ``basemap=`` setting (``"auto"`` decided here, asking the tile
    host through ``fetch``, default :func:`~propertykit.views._tile_source.default_fetcher`)."""
    if basemap not in BASEMAPS:
        raise InvalidInput(f"basemap must be one of {', '.join(BASEMAPS)}; got {basemap!r}")
    if basemap == "auto":
        online = not _offline() and live_notebook()
        return "tiles" if online and _tiles_answer(fetch) else "outline"
    return basemap  # type: ignore[return-value]


def street_route(
    chosen: str, tiles: Any, attribution: str | None, fetch: FetchTile | None = None
) -> tuple[Literal["outline", "tiles", "none"], street.StreetTiles | None]:
    """For a resolved basemap: the basemap to draw, and the street tiles to bake under it.

    ``"tiles"`` outside a live notebook is drawn on the outline and then baked (the outline
    stays, with one warning, when tiles cannot be fetched); in a live notebook it stays MapLibre,
    whose tiles the reader's browser loads.
    """
    if chosen != "tiles":
        return chosen, None  # type: ignore[return-value]
    if not live_notebook():
        return "outline", street.StreetTiles(tiles, attribution=attribution, fetch=fetch)
    if tiles is not None:
        tile_source(tiles, attribution)  # refused now, not in the reader's browser
    return "tiles", None


def _offline() -> bool:
    return env_flag(ENV_OFFLINE)


@cache
def outline_data() -> dict[str, Any]:
    """The bundled Natural Earth outlines (lon/lat rings and paths)."""
    path = resources.files("propertykit.views") / "basemap_data" / "britain_ireland.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def outline_traces(extent: Extent) -> list[go.Scatter]:
    """Land (filled, coast as its outline), lakes, rivers and borders near ``extent``.

    Each layer is one trace with its rings separated by gaps; parts far outside the extent are
    left out, so a town map carries only its own stretch of coast.
    """
    data = outline_data()
    wide = Extent(
        extent.west - (extent.east - extent.west),
        extent.south - (extent.north - extent.south),
        extent.east + (extent.east - extent.west),
        extent.north + (extent.north - extent.south),
    )
    layers = [
        ("land", "Land", {"fill": "toself", "fillcolor": LAND}, {"color": COAST, "width": 1}),
        ("lakes", "Lakes", {"fill": "toself", "fillcolor": SEA}, {"color": COAST, "width": 0.6}),
        ("rivers", "Rivers", {}, {"color": "#9dbfdc", "width": 1}),
        ("borders", "Borders", {}, {"color": "#8a8a8a", "width": 1, "dash": "dash"}),
    ]
    traces = []
    for key, name, fill, line in layers:
        parts = [part for part in data[key] if _near(part, wide)]
        lon, lat = _joined(_clipped(parts, wide) if "fill" in fill else parts)
        if not lon:
            continue
        traces.append(
            go.Scatter(
                x=lon,
                y=lat,
                mode="lines",
                name=f"{name} (Natural Earth)",
                line=line,
                hoverinfo="skip",
                showlegend=False,
                meta="basemap",
                **fill,
            )
        )
    return traces


def to_tiles(
    figure: go.Figure,
    extent: Extent,
    *,
    tiles: Any = None,
    attribution: str | None = None,
) -> go.Figure:
    """The same map on street tiles: every x/y trace as a MapLibre ``scattermap``.

    ``tiles`` (a ``{z}/{x}/{y}`` template or an xyzservices ``TileProvider``) replaces
    OpenStreetMap's standard style, with ``attribution`` (or the provider's) as its credit.
    """
    mapped = go.Figure(layout=figure.layout)
    mapped.layout.xaxis = mapped.layout.yaxis = None
    mapped.layout.annotations = mapped.layout.shapes = ()
    for trace in figure.data:
        if trace.meta == "basemap":
            continue
        marker = trace.marker.to_plotly_json() if trace.mode != "lines" else {}
        marker.pop("line", None)
        marker.pop("symbol", None)
        line = {k: v for k, v in (trace.line.to_plotly_json() or {}).items() if k != "dash"}
        mapped.add_trace(
            go.Scattermap(
                lon=trace.x,
                lat=trace.y,
                mode=trace.mode,
                fill=trace.fill if trace.fill == "toself" else None,
                fillcolor=trace.fillcolor,
                line=line or None,
                marker=marker or None,
                name=trace.name,
                legendgroup=trace.legendgroup,
                showlegend=trace.showlegend,
                text=trace.text,
                hovertemplate=trace.hovertemplate,
                hoverinfo=trace.hoverinfo,
            )
        )
    span = max(extent.width_km, extent.height_km * 1.8)
    zoom = float(np.clip(np.log2(40075 * extent.cos_lat / span), 0, 20))
    source: dict[str, Any] = {"style": TILE_STYLE}
    if tiles is not None:
        template, credit = tile_source(tiles, attribution)
        source = {
            "style": "white-bg",
            "layers": [
                {
                    "sourcetype": "raster",
                    "source": [template],
                    "sourceattribution": credit,
                    "below": "traces",
                }
            ],
        }
    mapped.update_layout(
        map={
            **source,
            "center": {
                "lon": (extent.west + extent.east) / 2,
                "lat": (extent.south + extent.north) / 2,
            },
            "zoom": round(zoom, 2),
        },
        plot_bgcolor="white",
    )
    return mapped


def _joined(parts: list[list[list[float]]]) -> tuple[list[float | None], list[float | None]]:
    lon: list[float | None] = []
    lat: list[float | None] = []
    for part in parts:
        if lon:
            lon.append(None)
            lat.append(None)
        lon.extend(point[0] for point in part)
        lat.extend(point[1] for point in part)
    return lon, lat


def _clipped(parts: list[list[list[float]]], extent: Extent) -> list[list[list[float]]]:
    """Filled rings cut to ``extent`` (a town map carries only its own stretch of coast)."""
    rings = []
    for part in parts:
        clipped = shapely.clip_by_rect(
            shapely.Polygon(part), extent.west, extent.south, extent.east, extent.north
        )
        for piece in shapely.get_parts(clipped):
            if isinstance(piece, shapely.Polygon) and not piece.is_empty:
                rings.append(shapely.get_coordinates(piece.exterior).round(3).tolist())
    return rings


def _near(part: list[list[float]], extent: Extent) -> bool:
    xs = [p[0] for p in part]
    ys = [p[1] for p in part]
    return not (
        max(xs) < extent.west
        or min(xs) > extent.east
        or max(ys) < extent.south
        or min(ys) > extent.north
    )


def live_notebook() -> bool:
    """Is this a live notebook kernel (where a browser shows the figures)?"""
    try:
        from IPython import get_ipython  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return False
    shell = get_ipython()  # type: ignore[no-untyped-call,unused-ignore]
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _tiles_answer(fetch: FetchTile | None) -> bool:
    """Does the tile host answer (one tile, one second)? Asked once per session through the
    default fetcher; a fetcher handed over is asked each time."""
    if fetch is None:
        return _default_answers()
    return tiles_answer(TILE_PROBE, seconds=1.0, fetch=fetch)


@cache
def _default_answers() -> bool:
    return tiles_answer(TILE_PROBE, seconds=1.0)
