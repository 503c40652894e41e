"""Street context baked in: map tiles fetched once, stitched into one image under each map.

A map drawn on x/y axes (:mod:`~propertykit.views._maps`) gets, per map panel, the street tiles
that cover it at a zoom fine enough for print, stitched (Pillow) and reprojected from the tiles'
Web Mercator to the map's own axes (longitude across, latitude up, scaled by ``1/cos``), then
laid under the data as a plotly layout image, with the tile server's attribution written on the
map. The image is data inside the figure: the HTML, PNG or PDF made from it opens with no
network and names no tile address.

Views draw, they never fetch: tiles come from a *fetch function* (:class:`FetchTile`) that hands
over each tile checked and decoded (square, at most :data:`MAX_TILE_SIDE` pixels a side, its
header read before anything is decoded), and the views draw it as it is. By default it is
:func:`propertykit.wire._tiles.fetch_tile`, named in propertykit's package metadata and looked up
when a map first needs it (:func:`default_fetcher`: its own on-disk requests-cache under
``PROPERTYKIT_CACHE_DIR``, a propertykit User-Agent, ``PROPERTYKIT_OFFLINE`` respected, every
tile bounded in bytes, pixels and time); pass ``fetch=`` to hand over another. Whatever the
fetcher, every map's tiles have :data:`MAP_SECONDS` in all. When tiles cannot be had (server
unreachable, too slow, offline and not cached, not a tile), the map keeps its outline basemap and
one :class:`~propertykit.errors.TileWarning` per map names the cause: never a blank map, never a
lost report.

Which tiles cover a map is worked out in :mod:`~propertykit.views._tile_plan`.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import re
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from propertykit.config import PILLOW_FOR_TILES
from propertykit.errors import (
    ConfigError,
    NetworkError,
    PropertyKitError,
    TileWarning,
    outside_stacklevel,
)
from propertykit.views._tile_plan import (
    MAX_TILES,
    TARGET_WIDTH,
    TilePlan,
    mercator_x,
    mercator_y,
    plan_tiles,
)
from propertykit.views._tile_source import (
    FetchTile,
    default_fetcher,
    tile_source,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from PIL import Image

#: Tiles fetched at the same time.
FETCHES_AT_ONCE = 2

#: Seconds for all the tiles of one map; a map whose tiles are not in by then keeps its outline.
MAP_SECONDS = 30.0


class StreetTiles:
    """Street tiles from one server, baked under maps (see the module docstring).

    Parameters
    ----------
    tiles
        A ``.../{z}/{x}/{y}.png`` address template (``http`` or ``https``) or an xyzservices
        ``TileProvider``; default :data:`OSM_TILES`.
    attribution
        The credit the tile server asks for, written on each map; OpenStreetMap's and a
        provider's are known, any other server needs one (``""`` for none, e.g. your own tiles).
    fetch
        A :class:`FetchTile`; default: propertykit's cached, bounded fetcher
        (:func:`default_fetcher`).
    max_tiles
        At most this many tiles per map.
    seconds
        At most this long for all the tiles of one map (default :data:`MAP_SECONDS`).

    Attributes
    ----------
    failure
        Why tiles could not be had, once a bake failed (later maps are not tried: a server
        that failed one map is not given another's time); else ``None``.
    """

    def __init__(
        self,
        tiles: Any = None,
        *,
        attribution: str | None = None,
        fetch: FetchTile | None = None,
        max_tiles: int = MAX_TILES,
        seconds: float | None = None,
    ) -> None:
        self.template, self.attribution = tile_source(tiles, attribution)
        if importlib.util.find_spec("PIL") is None:
            raise ConfigError(PILLOW_FOR_TILES)
        self.fetch: FetchTile = fetch or default_fetcher()
        self.max_tiles = max_tiles
        self.seconds = MAP_SECONDS if seconds is None else seconds
        self.failure: str | None = None
        self._images: dict[tuple[int, int, int], Image.Image] = {}

    def bake(self, figure: go.Figure) -> bool:
        """Lay street tiles under every map panel of ``figure`` (in place).

        Returns ``True`` when they are there; ``False`` (the figure unchanged, its outline
        basemap kept) when the figure has no map axes or its tiles cannot be had within
        ``seconds`` — then one :class:`~propertykit.errors.TileWarning` for this map, naming
        the cause, and later bakes of this object are not tried (each gets its warning).
        """
        panels = _map_axes(figure)
        if not panels:
            return False
        if self.failure is not None:
            self._warn(f"not tried, as {self.failure} for an earlier map")
            return False
        width = TARGET_WIDTH if len(panels) == 1 else TARGET_WIDTH // 2
        budget = max(1, self.max_tiles // len(panels))
        deadline = time.monotonic() + self.seconds
        try:
            images = [self._panel_image(panel, width, budget, deadline) for panel in panels]
        except (PropertyKitError, OSError, ValueError) as error:
            late = time.monotonic() > deadline - 0.5  # the map's time ran out
            self.failure = (
                f"the tiles did not all arrive within {self.seconds:g} seconds"
                if late
                else str(error) or type(error).__name__
            )
            self._warn(self.failure)
            return False
        figure.data = [trace for trace in figure.data if trace.meta != "basemap"]
        for panel, image in zip(panels, images, strict=True):
            figure.add_layout_image(
                source=image,
                xref=panel.xref,
                yref=panel.yref,
                x=panel.west,
                y=panel.north,
                sizex=panel.east - panel.west,
                sizey=panel.north - panel.south,
                xanchor="left",
                yanchor="top",
                sizing="stretch",
                layer="below",
                name="street tiles",
            )
            if self.attribution:
                figure.add_annotation(
                    xref=f"{panel.xref} domain",
                    yref=f"{panel.yref} domain",
                    x=1,
                    y=0,
                    xanchor="right",
                    yanchor="bottom",
                    text=self.attribution,
                    showarrow=False,
                    font={"size": 10, "color": "#333333"},
                    bgcolor="rgba(255,255,255,0.75)",
                    name="attribution",
                )
        figure.update_layout(plot_bgcolor="white")
        return True

    def _warn(self, cause: str) -> None:
        warnings.warn(
            f"Street tiles could not be fetched for this map: {cause}. "
            "The map keeps its outline basemap.",
            TileWarning,
            stacklevel=outside_stacklevel(),
        )

    def _panel_image(self, panel: _Panel, width: int, budget: int, deadline: float) -> str:
        plan = plan_tiles(
            panel.west, panel.south, panel.east, panel.north, width=width, max_tiles=budget
        )
        mosaic = self._mosaic(plan, deadline)
        size = mosaic.shape[1] // (plan.x1 - plan.x0 + 1)  # 256, or 512 for "@2x" tiles
        scale = size * 2**plan.zoom
        columns = (mercator_x(np.array([panel.west, panel.east])) * scale - plan.x0 * size).round()
        across = max(int(columns[1] - columns[0]), 1)
        down = max(round(across * (panel.north - panel.south) * panel.ratio / panel.width), 1)
        lon = panel.west + (np.arange(across) + 0.5) / across * panel.width
        lat = panel.north - (np.arange(down) + 0.5) / down * (panel.north - panel.south)
        sx = np.clip((mercator_x(lon) * scale - plan.x0 * size).astype(int), 0, mosaic.shape[1] - 1)
        sy = np.clip((mercator_y(lat) * scale - plan.y0 * size).astype(int), 0, mosaic.shape[0] - 1)
        return _png_uri(mosaic[sy][:, sx], width)

    def _mosaic(self, plan: TilePlan, deadline: float) -> np.ndarray:
        self._fetch_all(plan.tiles(), deadline)
        rows = []
        for y in range(plan.y0, plan.y1 + 1):
            row = [self._images[(plan.zoom, x, y)] for x in range(plan.x0, plan.x1 + 1)]
            size = row[0].size
            if any(tile.size != size for tile in row):
                raise ValueError("the tile server sent tiles of different sizes")
            rows.append(np.hstack([np.asarray(tile) for tile in row]))
        if len({row.shape for row in rows}) != 1:
            raise ValueError("the tile server sent tiles of different sizes")
        return np.vstack(rows)

    def _fetch_all(self, tiles: list[tuple[int, int, int]], deadline: float) -> None:
        """Fetch the tiles not yet here, two at a time (the most a tile server such as
        OpenStreetMap's allows one client), each within the time the map has left."""

        failed = threading.Event()  # once a tile fails, the tiles not yet asked for are not

        def fetch(key: tuple[int, int, int]) -> tuple[tuple[int, int, int], Image.Image]:
            left = deadline - time.monotonic()
            if failed.is_set():
                raise NetworkError("another tile of this map could not be fetched")
            if left <= 0:
                raise NetworkError("the tiles did not arrive in time", kind="timeout")
            z, x, y = key
            url = self.template.replace("{z}", str(z)).replace("{x}", str(x))
            try:
                return key, self.fetch(url.replace("{y}", str(y)), seconds=left)
            except BaseException:
                failed.set()
                raise

        wanted = [key for key in dict.fromkeys(tiles) if key not in self._images]
        with ThreadPoolExecutor(max_workers=FETCHES_AT_ONCE) as pool:
            # The first failure in order is a real one: tiles are taken from the queue in order,
            # so those refused because of it come after it.
            try:
                for key, tile in pool.map(fetch, wanted):
                    self._images[key] = tile  # checked and decoded by the fetcher
            except BaseException:
                failed.set()
                raise


def check_tiles(tiles: Any, attribution: str | None) -> str:
    """What :class:`StreetTiles` checks before drawing (the template, the credit, Pillow),
    without fetching a tile; the template."""
    template, _credit = tile_source(tiles, attribution)
    if importlib.util.find_spec("PIL") is None:
        raise ConfigError(PILLOW_FOR_TILES)
    return template


def bake_tiles(
    figure: go.Figure,
    tiles: Any = None,
    *,
    attribution: str | None = None,
    fetch: FetchTile | None = None,
) -> go.Figure:
    """Put street tiles under a map drawn on the outline basemap, for static output.

    The way to a PNG, SVG or PDF of a street map from a live notebook (where
    ``basemap="tiles"`` stays interactive MapLibre): ``bake_tiles(df.pk.map(basemap="outline"))``
    and then ``fig.write_image(...)``.

    Parameters
    ----------
    figure
        A map from :func:`~propertykit.views.property_map` (x/y axes); changed in place.
    tiles, attribution, fetch
        As for :class:`StreetTiles` (``tiles``: an address template or an xyzservices
        ``TileProvider``).

    Returns
    -------
    plotly.graph_objects.Figure
        The same figure: with tiles, or on its outline with one warning if they cannot be fetched.

    Examples
    --------
    >>> import propertykit as pk
    >>> from PIL import Image
    >>> from propertykit.views import property_map
    >>> def grey(url, *, seconds, fresh=False):
    ...     return Image.new("RGB", (256, 256), "#dddddd")
    >>> fig = property_map(pk.frame(records), basemap="outline")
    >>> fig = bake_tiles(fig, "http://tiles.test/{z}/{x}/{y}.png", attribution="Grey", fetch=grey)
    >>> len(fig.layout.images), fig.layout.annotations[-1].text
    (1, 'Grey')
    """
    StreetTiles(tiles, attribution=attribution, fetch=fetch).bake(figure)
    return figure


def is_map(figure: go.Figure) -> bool:
    """Is ``figure`` a map on the outline basemap (one tiles can be baked under)?"""
    return any(trace.meta == "basemap" for trace in figure.data) and bool(_map_axes(figure))


@dataclass(frozen=True)
class _Panel:
    xref: str
    yref: str
    west: float
    south: float
    east: float
    north: float
    #: how much longer a degree of latitude is drawn than a degree of longitude
    ratio: float

    @property
    def width(self) -> float:
        return self.east - self.west


def _map_axes(figure: go.Figure) -> list[_Panel]:
    """The figure's map panels: x/y axes pairs with fixed ranges and a north-up aspect."""
    panels = []
    layout: dict[str, Any] = figure.layout.to_plotly_json()
    names = [name for name in layout if re.fullmatch(r"xaxis\d*", name)]
    for name in sorted(names, key=lambda n: int(n[5:] or 1)):
        suffix = name[5:]
        xaxis, yaxis = layout[name], layout.get(f"yaxis{suffix}") or {}
        if "range" not in xaxis or "range" not in yaxis or not yaxis.get("scaleanchor"):
            continue
        (west, east), (south, north) = xaxis["range"], yaxis["range"]
        panels.append(
            _Panel(
                f"x{suffix}",
                f"y{suffix}",
                float(west),
                float(south),
                float(east),
                float(north),
                float(yaxis.get("scaleratio", 1.0)),
            )
        )
    return panels


def _png_uri(pixels: np.ndarray, width: int) -> str:
    """The image, at most ``width`` pixels across, as a ``data:`` URI: a 256-colour PNG (street
    tiles have few colours)."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(pixels), "RGB")
    if image.width > width:
        height = max(round(image.height * width / image.width), 1)
        image = image.resize((width, height), Image.Resampling.LANCZOS)
    # Octree: 10x quicker than median cut on a stitched map, and no bigger.
    image = image.quantize(256, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    image.save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")
