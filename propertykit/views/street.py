"""Street context baked in: map tiles fetched once, stitched into one image under each map.

A map drawn on x/y axes (:mod:`~propertykit.views.maps`) gets, per map panel, the street tiles
that cover it at a zoom fine enough for print, stitched (Pillow) and reprojected from the tiles'
Web Mercator to the map's own axes (longitude across, latitude up, scaled by ``1/cos``), then
laid under the data as a plotly layout image, with the tile server's attribution written on the
map. The image is data inside the figure: the HTML, PNG or PDF made from it opens with no
network and names no tile address.

Views draw, they never fetch: tiles come from a *fetch function* (``url -> PNG bytes``). By
default it is the one :mod:`propertykit` hands over on import, from
:mod:`propertykit.wire.tiles` (its own on-disk requests-cache under ``PROPERTYKIT_CACHE_DIR``, a
propertykit User-Agent, ``PROPERTYKIT_OFFLINE`` respected); pass ``fetch=`` to use another.
When tiles cannot be fetched (server unreachable, offline and not cached, not an image), the map
keeps its outline basemap and one :class:`~propertykit.PropertyKitWarning` says so: never a
blank map.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import math
import re
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from propertykit.errors import (
    ConfigError,
    InvalidInput,
    PropertyKitError,
    PropertyKitWarning,
    outside_stacklevel,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from PIL import Image

__all__ = [
    "MAX_TILES",
    "OSM_ATTRIBUTION",
    "OSM_TILES",
    "FetchTile",
    "StreetTiles",
    "TilePlan",
    "bake_tiles",
    "check_template",
    "credit_for",
    "is_map",
    "plan_tiles",
    "use_tile_fetcher",
]

#: OpenStreetMap's standard tiles, the default ``tiles=``.
OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
#: The credit OpenStreetMap asks for, written on every map drawn on its tiles.
OSM_ATTRIBUTION = "© OpenStreetMap contributors"
#: At most this many tiles are fetched for one map (all its panels together).
MAX_TILES = 48
#: The deepest zoom asked of a tile server (OpenStreetMap's standard tiles stop at 19).
MAX_ZOOM = 19
#: Width in image pixels a single map is drawn at (about 170 dpi across an A4 page).
TARGET_WIDTH = 1200
#: Tiles fetched at the same time.
FETCHES_AT_ONCE = 2

#: ``url -> bytes of a PNG or JPEG tile``; raises an OSError or a PropertyKitError when the
#: tile cannot be fetched.
FetchTile = Callable[[str], bytes]

_default_fetch: FetchTile | None = None


def use_tile_fetcher(fetch: FetchTile) -> None:
    """Make ``fetch`` the tile fetcher every map uses when it is not given one.

    :mod:`propertykit` calls this on import with its cached fetcher from the ``wire`` layer.

    Examples
    --------
    >>> import propertykit  # registers propertykit.wire.fetch_tile
    >>> use_tile_fetcher(propertykit.wire.fetch_tile)
    """
    global _default_fetch
    _default_fetch = fetch


@dataclass(frozen=True)
class TilePlan:
    """The block of tiles that covers one map panel."""

    zoom: int
    #: first and last tile column and row (inclusive)
    x0: int
    x1: int
    y0: int
    y1: int

    @property
    def count(self) -> int:
        return (self.x1 - self.x0 + 1) * (self.y1 - self.y0 + 1)

    def tiles(self) -> list[tuple[int, int, int]]:
        """``(z, x, y)`` of every tile, row by row."""
        return [
            (self.zoom, x, y)
            for y in range(self.y0, self.y1 + 1)
            for x in range(self.x0, self.x1 + 1)
        ]


def plan_tiles(
    west: float,
    south: float,
    east: float,
    north: float,
    *,
    width: int = TARGET_WIDTH,
    max_tiles: int = MAX_TILES,
    max_zoom: int = MAX_ZOOM,
) -> TilePlan:
    """The tiles covering a lon/lat box: the zoom that gives ``width`` pixels across, or less
    when that would take more than ``max_tiles`` tiles.

    Examples
    --------
    >>> plan = plan_tiles(-0.15, 51.49, -0.10, 51.52)   # a slice of central London
    >>> plan.zoom, plan.count <= MAX_TILES
    (15, True)
    """
    south, north = max(south, -85.05), min(north, 85.05)
    wanted = math.log2(width * 360 / (max(east - west, 1e-9) * 256))
    zoom = int(min(max(math.ceil(wanted), 0), max_zoom))
    while True:
        plan = _block(west, south, east, north, zoom)
        if plan.count <= max_tiles or zoom == 0:
            return plan
        zoom -= 1


class StreetTiles:
    """Street tiles from one server, baked under maps (see the module docstring).

    Parameters
    ----------
    tiles
        A ``.../{z}/{x}/{y}.png`` address template (``http`` or ``https``); default
        :data:`OSM_TILES`.
    attribution
        The credit the tile server asks for, written on each map; OpenStreetMap's is known, any
        other server needs one (``""`` for none, e.g. your own tiles).
    fetch
        ``url -> bytes``; default: propertykit's cached fetcher.
    max_tiles
        At most this many tiles per map.

    Attributes
    ----------
    failure
        Why tiles could not be fetched, once a bake failed (later bakes are not tried); else
        ``None``.
    """

    def __init__(
        self,
        tiles: str | None = None,
        *,
        attribution: str | None = None,
        fetch: FetchTile | None = None,
        max_tiles: int = MAX_TILES,
    ) -> None:
        self.template = check_template(tiles or OSM_TILES)
        self.attribution = credit_for(self.template, attribution)
        if importlib.util.find_spec("PIL") is None:
            raise ConfigError(
                "Street tiles in a map need Pillow: pip install 'propertykit[export]'"
            )
        chosen = fetch or _default_fetch
        if chosen is None:
            raise ConfigError("No tile fetcher: import propertykit, or pass fetch=")
        self.fetch: FetchTile = chosen
        self.max_tiles = max_tiles
        self.failure: str | None = None
        self._images: dict[tuple[int, int, int], Image.Image] = {}

    def bake(self, figure: go.Figure) -> bool:
        """Lay street tiles under every map panel of ``figure`` (in place).

        Returns ``True`` when they are there; ``False`` (the figure unchanged, its outline
        basemap kept) when the figure has no map axes or tiles cannot be fetched — then one
        warning, and later bakes of this object are not tried.
        """
        panels = _map_axes(figure)
        if not panels or self.failure is not None:
            return False
        width = TARGET_WIDTH if len(panels) == 1 else TARGET_WIDTH // 2
        budget = max(1, self.max_tiles // len(panels))
        try:
            images = [self._panel_image(panel, width, budget) for panel in panels]
        except (PropertyKitError, OSError, ValueError) as error:
            self.failure = str(error) or type(error).__name__
            warnings.warn(
                f"Street tiles could not be fetched ({self.failure}); "
                "the map keeps its outline basemap.",
                PropertyKitWarning,
                stacklevel=outside_stacklevel(),
            )
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

    def _panel_image(self, panel: _Panel, width: int, budget: int) -> str:
        plan = plan_tiles(
            panel.west, panel.south, panel.east, panel.north, width=width, max_tiles=budget
        )
        mosaic = self._mosaic(plan)
        size = mosaic.shape[1] // (plan.x1 - plan.x0 + 1)  # 256, or 512 for "@2x" tiles
        scale = size * 2**plan.zoom
        columns = (_x(np.array([panel.west, panel.east])) * scale - plan.x0 * size).round()
        across = max(int(columns[1] - columns[0]), 1)
        down = max(round(across * (panel.north - panel.south) * panel.ratio / panel.width), 1)
        lon = panel.west + (np.arange(across) + 0.5) / across * panel.width
        lat = panel.north - (np.arange(down) + 0.5) / down * (panel.north - panel.south)
        sx = np.clip((_x(lon) * scale - plan.x0 * size).astype(int), 0, mosaic.shape[1] - 1)
        sy = np.clip((_y(lat) * scale - plan.y0 * size).astype(int), 0, mosaic.shape[0] - 1)
        return _png_uri(mosaic[sy][:, sx], width)

    def _mosaic(self, plan: TilePlan) -> np.ndarray:
        self._fetch_all(plan.tiles())
        rows = []
        for y in range(plan.y0, plan.y1 + 1):
            row = [self._tile(plan.zoom, x, y) for x in range(plan.x0, plan.x1 + 1)]
            size = row[0].size
            if any(tile.size != size for tile in row):
                raise ValueError("the tile server sent tiles of different sizes")
            rows.append(np.hstack([np.asarray(tile) for tile in row]))
        if len({row.shape for row in rows}) != 1:
            raise ValueError("the tile server sent tiles of different sizes")
        return np.vstack(rows)

    def _fetch_all(self, tiles: list[tuple[int, int, int]]) -> None:
        """Fetch the tiles not yet here, two at a time (the most a tile server such as
        OpenStreetMap's allows one client)."""
        from PIL import Image

        def fetch(key: tuple[int, int, int]) -> tuple[tuple[int, int, int], bytes]:
            z, x, y = key
            url = self.template.replace("{z}", str(z)).replace("{x}", str(x))
            return key, self.fetch(url.replace("{y}", str(y)))

        wanted = [key for key in dict.fromkeys(tiles) if key not in self._images]
        with ThreadPoolExecutor(max_workers=FETCHES_AT_ONCE) as pool:
            # A failure ends the map's iteration, which cancels the tiles still queued.
            for key, data in pool.map(fetch, wanted):
                with Image.open(io.BytesIO(data)) as tile:
                    self._images[key] = tile.convert("RGB")

    def _tile(self, z: int, x: int, y: int) -> Image.Image:
        return self._images[(z, x, y)]


def bake_tiles(
    figure: go.Figure,
    tiles: str | None = None,
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
        As for :class:`StreetTiles`.

    Returns
    -------
    plotly.graph_objects.Figure
        The same figure: with tiles, or on its outline with one warning if they cannot be fetched.

    Examples
    --------
    >>> import io, propertykit as pk
    >>> from PIL import Image
    >>> from propertykit.views import property_map
    >>> def grey(url):
    ...     out = io.BytesIO(); Image.new("RGB", (256, 256), "#dddddd").save(out, "PNG")
    ...     return out.getvalue()
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


def credit_for(template: str, attribution: str | None) -> str:
    """The credit to write on a map of ``template``'s tiles (OpenStreetMap's is known)."""
    if attribution is not None:
        return attribution
    if template == OSM_TILES:
        return OSM_ATTRIBUTION
    raise InvalidInput(
        "tiles from a server other than OpenStreetMap need attribution=... "
        '(the credit its terms ask for; "" for none)'
    )


def check_template(template: str) -> str:
    """``template`` if it is an ``http(s)`` address with ``{z}``, ``{x}`` and ``{y}``."""
    parts = urlsplit(template)
    missing = [name for name in ("{z}", "{x}", "{y}") if name not in template]
    if parts.scheme not in ("http", "https") or not parts.netloc or missing:
        raise InvalidInput(
            "tiles must be an http(s) address template with {z}, {x} and {y}, such as "
            f"{OSM_TILES}"
        )
    return template


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


def _block(west: float, south: float, east: float, north: float, zoom: int) -> TilePlan:
    last = 2**zoom - 1
    x0, x1 = (int(np.clip(math.floor(v * 2**zoom), 0, last)) for v in _x(np.array([west, east])))
    y0, y1 = (int(np.clip(math.floor(v * 2**zoom), 0, last)) for v in _y(np.array([north, south])))
    return TilePlan(zoom, x0, x1, y0, y1)


def _x(lon: np.ndarray) -> np.ndarray:
    """Web Mercator x of longitudes, 0..1 across the world."""
    return (np.asarray(lon, dtype=float) + 180.0) / 360.0


def _y(lat: np.ndarray) -> np.ndarray:
    """Web Mercator y of latitudes, 0 (north) .. 1 (south)."""
    radians = np.radians(np.clip(np.asarray(lat, dtype=float), -85.05, 85.05))
    mercator: np.ndarray = np.log(np.tan(radians) + 1.0 / np.cos(radians))
    return (1.0 - mercator / math.pi) / 2.0


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
