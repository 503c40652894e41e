"""Where street tiles come from: an address template and its credit, or an xyzservices provider;
the fetcher that brings them (handed over by :mod:`propertykit`: views never open a connection);
and the check a tile passes before it is decoded.

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

import io
import sys
import warnings
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from propertykit.errors import BadResponse, InvalidInput, PropertyKitError

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "MAX_TILE_SIDE",
    "OSM_ATTRIBUTION",
    "OSM_TILES",
    "FetchTile",
    "check_template",
    "credit_for",
    "decode_tile",
    "default_fetcher",
    "tile_source",
    "tiles_answer",
    "use_tile_fetcher",
]

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


#: Largest side of a tile decoded, in pixels.
MAX_TILE_SIDE = 1024


class FetchTile(Protocol):
    """``fetch(url, *, seconds, fresh=False) -> bytes`` of a PNG or JPEG tile.

    ``seconds``: the longest the tile may take (the time its map has left); ``fresh``: ask the
    server even if the tile is cached. Raises a :class:`~propertykit.errors.PropertyKitError`
    (or an ``OSError``) whose message says, in plain words, why the tile cannot be had.
    """

    def __call__(self, url: str, *, seconds: float, fresh: bool = False) -> bytes: ...


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


def tiles_answer(url: str, *, seconds: float = 1.0) -> bool:
    """Does the tile server answer ``url`` with a tile now, within ``seconds``?

    Asked through the tile fetcher :mod:`propertykit` hands over (the views never open a
    connection themselves): a fresh request, bounded like every tile; ``False`` when there is
    no fetcher or the tile cannot be had.

    Examples
    --------
    >>> def never(url, *, seconds, fresh=False):
    ...     raise OSError("no network here")
    >>> use_tile_fetcher(never)
    >>> tiles_answer("https://tile.openstreetmap.org/0/0/0.png")
    False
    >>> use_tile_fetcher(pk.wire.fetch_tile)  # propertykit's own, as on import
    """
    if _default_fetch is None:
        return False
    try:
        _default_fetch(url, seconds=seconds, fresh=True)
    except (PropertyKitError, OSError, ValueError):
        return False
    return True


def default_fetcher() -> FetchTile | None:
    """The fetcher set by :func:`use_tile_fetcher` (``None`` before)."""
    return _default_fetch


def decode_tile(data: bytes) -> Image.Image:
    """The tile as an RGB image, decoded only once its header says it is a tile's size.

    Raises
    ------
    propertykit.errors.BadResponse
        Not a PNG or JPEG, larger than :data:`MAX_TILE_SIDE` pixels a side or not square (then
        nothing is decoded), or damaged.

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> out = io.BytesIO(); Image.new("RGB", (2048, 2048)).save(out, "PNG")
    >>> try:
    ...     decode_tile(out.getvalue())
    ... except pk.errors.BadResponse as error:
    ...     print(str(error).split(" (")[0])
    the tile server sent an image of 2,048 x 2,048 pixels
    """
    from PIL import Image

    refused = BadResponse("the tile server sent something that is not a map tile")
    with warnings.catch_warnings():  # Pillow's own warning of a bomb: refused, not shown
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data), formats=("PNG", "JPEG")) as tile:
                width, height = tile.size
                if width != height or width > MAX_TILE_SIDE:
                    raise BadResponse(
                        f"the tile server sent an image of {width:,} x {height:,} pixels "
                        f"(a tile is square, at most {MAX_TILE_SIDE:,} pixels a side)"
                    )
                return tile.convert("RGB")
        except BadResponse:
            raise
        except Exception as error:  # whatever Pillow raises on a damaged image or a bomb
            raise refused from error


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
