"""Where street tiles come from: an address template and its credit, or an xyzservices provider;
and the fetcher that brings them, checked and decoded (views never open a connection).

A map is handed its fetcher: ``fetch=`` on :func:`~propertykit.views.bake_tiles` and
:class:`~propertykit.views._street.StreetTiles`, or by default the one propertykit's package
metadata names (the entry point ``default`` of the group :data:`FETCHER_GROUP`:
:func:`propertykit.wire._tiles.fetch_tile`, cached and bounded), looked up when a map asks for
it. Nothing is registered on import, and nothing here imports ``wire``.

``tiles=`` (on maps, :func:`~propertykit.views.write_report` and
:func:`~propertykit.views.bake_tiles`) takes what the ecosystem takes, as geopandas' ``explore``,
folium and contextily do:

- a ``.../{z}/{x}/{y}.png`` address template (``http`` or ``https``), with ``attribution=``
  the credit the tile server asks for (OpenStreetMap's is known);
- an xyzservices ``TileProvider`` (``xyzservices.providers.OpenStreetMap.Mapnik``): its address
  and its attribution are taken from it (``attribution=`` still wins). xyzservices is not needed
  otherwise: a provider can only be passed by someone who has it.
"""

from __future__ import annotations

import sys
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from propertykit.errors import ConfigError, InvalidInput, PropertyKitError

if TYPE_CHECKING:
    from PIL import Image

#: OpenStreetMap's standard tiles, the default ``tiles=``.
OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
#: The credit OpenStreetMap asks for, written on every map drawn on its tiles.
OSM_ATTRIBUTION = "© OpenStreetMap contributors"


def tile_source(tiles: Any, attribution: str | None) -> tuple[str, str]:
    """The address template and the credit to draw for ``tiles=`` and ``attribution=``.

    Parameters
    ----------
    tiles
        An address template, an xyzservices ``TileProvider``, or ``None`` (OpenStreetMap's).
    attribution
        The credit; ``None`` takes the provider's, or OpenStreetMap's for its template.

    Examples
    --------
    >>> import xyzservices.providers as xyz
    >>> tile_source(xyz.OpenStreetMap.Mapnik, None)
    ('https://tile.openstreetmap.org/{z}/{x}/{y}.png', '(C) OpenStreetMap contributors')
    >>> tile_source("https://tiles.example/{z}/{x}/{y}.png", "© Example")
    ('https://tiles.example/{z}/{x}/{y}.png', '© Example')
    """
    if tiles is None:
        tiles = OSM_TILES
    if _is_provider(tiles):
        if tiles.requires_token():
            raise InvalidInput(
                f"The tile provider {tiles.name} needs a key: pass it as the provider's "
                "documented keyword, e.g. provider(apikey=...)"
            )
        template = check_template(tiles.build_url(scale_factor=""))
        credit = attribution if attribution is not None else str(tiles.get("attribution", ""))
        return template, credit_for(template, credit or None)
    if not isinstance(tiles, str):
        raise InvalidInput(
            "tiles must be an address template with {z}, {x} and {y}, or an xyzservices "
            f"TileProvider; got {type(tiles).__name__}"
        )
    template = check_template(tiles)
    return template, credit_for(template, attribution)


#: The entry-point group in which propertykit's package metadata names the default fetcher.
FETCHER_GROUP = "propertykit.tile_fetchers"


class FetchTile(Protocol):
    """``fetch(url, *, seconds, fresh=False) -> PIL.Image.Image``: the tile, checked and RGB.

    The fetcher is where a tile is checked (square, at most :data:`MAX_TILE_SIDE` pixels a
    side, its header read before anything is decoded, a damaged image refused); the views draw
    what it hands them. ``seconds``: the longest the tile may take (the time its map has left);
    ``fresh``: ask the server even if the tile is cached. Raises a
    :class:`~propertykit.errors.PropertyKitError` (or an ``OSError``) whose message says, in
    plain words, why the tile cannot be had.
    """

    def __call__(self, url: str, *, seconds: float, fresh: bool = False) -> Image.Image: ...


@cache
def default_fetcher() -> FetchTile:
    """The fetcher maps use when they are handed none: the one propertykit's package metadata
    names (``propertykit.wire._tiles.fetch_tile``), looked up on first use.

    Raises
    ------
    propertykit.errors.ConfigError
        propertykit is not installed (run from a source tree): pass ``fetch=``.

    Examples
    --------
    >>> default_fetcher() is pk.wire.fetch_tile
    True
    """
    try:  # propertykit's own metadata: another package cannot replace the default unseen
        declared = distribution("propertykit").entry_points
        found = list(declared.select(group=FETCHER_GROUP, name="default"))
    except PackageNotFoundError:
        found = []
    if not found:
        raise ConfigError(
            "No tile fetcher: propertykit is not installed (pip install -e .), or pass fetch="
        )
    fetch: FetchTile = found[0].load()
    return fetch


def tiles_answer(url: str, *, seconds: float = 1.0, fetch: FetchTile | None = None) -> bool:
    """Does the tile server answer ``url`` with a tile now, within ``seconds``?

    Asked through ``fetch`` (default :func:`default_fetcher`; the views never open a connection
    themselves): a fresh request, bounded like every tile; ``False`` when the tile cannot be had.

    Examples
    --------
    >>> def never(url, *, seconds, fresh=False):
    ...     raise OSError("no network here")
    >>> tiles_answer("https://tile.openstreetmap.org/0/0/0.png", fetch=never)
    False
    """
    try:
        (fetch or default_fetcher())(url, seconds=seconds, fresh=True)
    except (PropertyKitError, OSError, ValueError):
        return False
    return True


def credit_for(template: str, attribution: str | None) -> str:
    """The credit to write on a map of ``template``'s tiles (OpenStreetMap's is known).

    Examples
    --------
    >>> credit_for(OSM_TILES, None)
    '© OpenStreetMap contributors'
    """
    if attribution is not None:
        return attribution
    if template == OSM_TILES:
        return OSM_ATTRIBUTION
    raise InvalidInput(
        "tiles from a server other than OpenStreetMap need attribution=... "
        '(the credit its terms ask for; "" for none)'
    )


def check_template(template: str) -> str:
    """``template`` if it is an ``http(s)`` address with ``{z}``, ``{x}`` and ``{y}``.

    Examples
    --------
    >>> check_template("https://tiles.example/{z}/{x}/{y}.png")
    'https://tiles.example/{z}/{x}/{y}.png'
    """
    parts = urlsplit(template)
    missing = [name for name in ("{z}", "{x}", "{y}") if name not in template]
    if parts.scheme not in ("http", "https") or not parts.netloc or missing:
        raise InvalidInput(
            "tiles must be an http(s) address template with {z}, {x} and {y}, such as "
            f"{OSM_TILES}"
        )
    return template


def _is_provider(tiles: Any) -> bool:
    """Is ``tiles`` an xyzservices ``TileProvider``? (Only if xyzservices is loaded already.)"""
    xyzservices = sys.modules.get("xyzservices")
    return xyzservices is not None and isinstance(tiles, xyzservices.TileProvider)
