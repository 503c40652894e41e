"""Street tiles baked under maps: fetched once over real HTTP from a tile server of our own on
127.0.0.1, stitched where the map says, kept in the file with no tile address, and never a blank
map or a lost report when the server cannot be reached or is hostile."""

from __future__ import annotations

import ast
import base64
import io
import math
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from PIL import Image

import propertykit as pk
from propertykit.config import ENV_CACHE_DIR, ENV_OFFLINE
from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import OSM_TILES, bake_tiles, property_map, write_report
from propertykit.views import _street as street
from propertykit.views._basemap import to_tiles
from propertykit.views._context import Extent
from propertykit.views._street import FETCHES_AT_ONCE, TARGET_WIDTH, StreetTiles
from propertykit.views._tile_plan import MAX_TILES, plan_tiles
from propertykit.views._tile_source import tiles_answer
from tests.views.tile_server import CROSS, HOSTILE, TileServer, tile_colour

pytestmark = pytest.mark.timeout(300)

CREDIT = "© Test Tiles Ltd"


@pytest.fixture(scope="module")
def properties() -> pd.DataFrame:
    return frame(generate_records(150))


@pytest.fixture(scope="module")
def outline_map(properties: pd.DataFrame) -> go.Figure:
    """``property_map(properties, basemap="outline")``, drawn once: bake a copy
    (:func:`outline`), never this figure."""
    return property_map(properties, basemap="outline")


def outline(drawn: go.Figure) -> go.Figure:
    """A fresh copy of a map drawn once, to bake tiles under."""
    return go.Figure(drawn)


@pytest.fixture
def server() -> Iterator[TileServer]:
    with TileServer() as running:
        yield running


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test starts with an empty tile cache of its own, online."""
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_OFFLINE, raising=False)
    return tmp_path / "cache"


def _tile_paths(server: TileServer) -> list[str]:
    return [path for path, _ in server.requests]


def _image(source: str) -> np.ndarray:
    head, data = source.split(",", 1)
    assert head == "data:image/png;base64"
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return np.asarray(image.convert("RGB")).astype(int)


def _slippy(lon: float, lat: float, zoom: int) -> tuple[float, float]:
    """Tile coordinates (with fractions) of a place, by the OpenStreetMap wiki's formula."""
    n = 2**zoom
    return (lon + 180) / 360 * n, (1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n


def test_tiles_are_stitched_under_the_places_they_show(
    properties: pd.DataFrame, server: TileServer
) -> None:
    figure = property_map(properties, basemap="outline", labels=False)
    assert StreetTiles(server.template, attribution=CREDIT).bake(figure)
    (image,) = figure.layout.images
    pixels = _image(image.source)
    west, east = image.x, image.x + image.sizex
    north, south = image.y, image.y - image.sizey
    zoom = int(_tile_paths(server)[0].split("/")[2])
    checked = 0
    for lon, lat in properties[["spatial.lng", "spatial.lat"]].dropna().to_numpy()[:60]:
        tx, ty = _slippy(lon, lat, zoom)
        if min(tx % 1, 1 - tx % 1, ty % 1, 1 - ty % 1, abs(tx % 1 - 0.5), abs(ty % 1 - 0.5)) < 0.03:
            continue  # too near a tile's edge or its cross to say
        row = int((north - lat) / (north - south) * pixels.shape[0])
        column = int((lon - west) / (east - west) * pixels.shape[1])
        # The tile there, told apart from the eight around it.
        around = [(int(tx) + dx, int(ty) + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        palette = np.array([*(tile_colour(zoom, x, y) for x, y in around), CROSS])
        nearest = int(np.abs(palette - pixels[row, column]).sum(axis=1).argmin())
        assert nearest == 4, (lon, lat, around[nearest] if nearest < 9 else "cross")
        checked += 1
    assert checked >= 20


def test_the_image_keeps_the_maps_proportions_and_sits_under_the_data(
    outline_map: go.Figure, server: TileServer
) -> None:
    figure = outline(outline_map)
    bake_tiles(figure, server.template, attribution=CREDIT)
    (image,) = figure.layout.images
    assert (image.layer, image.sizing, image.xref, image.yref) == ("below", "stretch", "x", "y")
    assert (image.x, image.x + image.sizex) == tuple(figure.layout.xaxis.range)
    assert (image.y - image.sizey, image.y) == tuple(figure.layout.yaxis.range)
    pixels = _image(image.source)
    drawn_ratio = (image.sizey * figure.layout.yaxis.scaleratio) / image.sizex
    assert pixels.shape[0] / pixels.shape[1] == pytest.approx(drawn_ratio, rel=0.01)
    assert pixels.shape[1] == TARGET_WIDTH  # fetched at least this fine, then scaled to it
    assert not any(trace.meta == "basemap" for trace in figure.data)  # the outline made way
    assert [a.text for a in figure.layout.annotations if a.name == "attribution"] == [CREDIT]


def test_every_close_up_gets_its_own_tiles(properties: pd.DataFrame, server: TileServer) -> None:
    town = properties.loc[properties["spatial.boundary"].notna(), "address.town"].mode()[0]
    local = properties[properties["address.town"] == town]
    figure = property_map(local, geometry="boundary", basemap="outline")
    panels = [name for name in figure.layout if re.fullmatch(r"xaxis\d*", name)]
    assert StreetTiles(server.template, attribution=CREDIT).bake(figure)
    assert len(figure.layout.images) == len(panels) > 1
    assert {image.xref for image in figure.layout.images} == {"x" + name[5:] for name in panels}
    assert len(server.requests) <= MAX_TILES


def test_report_bakes_tiles_once_and_names_no_tile_address(
    for_maps: pd.DataFrame, server: TileServer, tmp_path: Path
) -> None:
    first = write_report(for_maps, tmp_path / "a.html", tiles=server.template, attribution=CREDIT)
    fetched = _tile_paths(server)
    assert fetched and len(set(fetched)) == len(fetched)  # each tile once
    assert len(fetched) <= 2 * MAX_TILES  # two maps, each capped
    assert all(agent.startswith("propertykit/") for _, agent in server.requests)

    second = write_report(for_maps, tmp_path / "b.html", tiles=server.template, attribution=CREDIT)
    assert _tile_paths(server) == fetched  # the second build sent no tile request

    for page in (first.read_text(), second.read_text()):
        assert server.address not in page and "127.0.0.1" not in page
        assert "tiles\\u002f" not in page and "/tiles/" not in page
        assert page.count('"source":"data:image') >= 2  # national map and a close-up at least
        assert CREDIT.replace("©", "\\u00a9") in page or CREDIT in page  # on the maps
        assert f"Street maps {CREDIT}" in page  # and in the footer


def test_offline_mode_bakes_from_the_tile_cache_and_sends_nothing(
    outline_map: go.Figure, server: TileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    online = outline(outline_map)
    assert StreetTiles(server.template, attribution=CREDIT).bake(online)
    sent = len(server.requests)
    monkeypatch.setenv(ENV_OFFLINE, "1")
    offline = outline(outline_map)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert StreetTiles(server.template, attribution=CREDIT).bake(offline)
    assert len(server.requests) == sent
    assert offline.layout.images[0].source == online.layout.images[0].source


def test_unreachable_tile_server_gives_the_outline_with_one_warning(
    for_maps: pd.DataFrame, tmp_path: Path
) -> None:
    with TileServer() as gone:
        template = gone.template  # a port nothing listens on once the server has stopped
    with pytest.warns(pk.PropertyKitWarning, match="could not be fetched") as caught:
        figure = property_map(for_maps, basemap="tiles", tiles=template, attribution=CREDIT)
    assert len(caught) == 1
    assert any(trace.meta == "basemap" for trace in figure.data)  # land and coast, not blank
    assert not figure.layout.images
    assert figure.layout.plot_bgcolor != "white"

    with pytest.warns(pk.errors.TileWarning) as caught:
        path = write_report(for_maps, tmp_path / "r.html", tiles=template, attribution=CREDIT)
    # One warning per map: the first names the cause, the second was not tried (no more time
    # given to a server that failed).
    first, second = (str(w.message) for w in caught)
    assert "could not be reached" in first and "outline basemap" in first
    assert "not tried, as" in second and "could not be reached" in second
    page = path.read_text()
    assert "Street maps: not drawn (the tile server" in page
    assert '"source":"data:image' not in page
    assert "Maps are drawn without map tiles" in page


def test_offline_with_an_empty_tile_cache_gives_the_outline_and_sends_nothing(
    properties: pd.DataFrame, server: TileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_OFFLINE, "1")
    with pytest.warns(pk.PropertyKitWarning, match="not in the tile cache") as caught:
        figure = property_map(properties, basemap="tiles", tiles=server.template, attribution="")
    assert len(caught) == 1 and not figure.layout.images
    assert server.requests == []


def test_an_answer_that_is_not_an_image_is_neither_drawn_nor_kept(
    outline_map: go.Figure, server: TileServer
) -> None:
    server.mode = "html"
    with pytest.warns(pk.PropertyKitWarning, match="not an image"):
        figure = bake_tiles(outline(outline_map), server.template, attribution="")
    assert not figure.layout.images
    asked = len(server.requests)
    server.mode = "tiles"
    assert StreetTiles(server.template, attribution="").bake(outline(outline_map))
    assert len(server.requests) > asked  # the HTML answer was not cached as a tile


def test_a_failing_tile_server_is_not_asked_for_every_tile(
    outline_map: go.Figure, server: TileServer
) -> None:
    server.mode, server.delay = "missing", 0.2
    figure = outline(outline_map)
    with pytest.warns(pk.errors.TileWarning, match="has no such tile"):
        assert not StreetTiles(server.template, attribution="").bake(figure)
    (west, east), (south, north) = figure.layout.xaxis.range, figure.layout.yaxis.range
    assert plan_tiles(west, south, east, north).count > 10
    assert len(server.requests) <= 2 * FETCHES_AT_ONCE  # the rest were not asked for


def test_the_cap_lowers_the_zoom_and_still_covers_the_map() -> None:
    britain = (-6.5, 49.9, 1.8, 58.7)
    fine = plan_tiles(*britain)
    capped = plan_tiles(*britain, max_tiles=6)
    assert capped.count <= 6 < fine.count and capped.zoom < fine.zoom
    west, south, east, north = britain
    x0, y0 = _slippy(west, north, capped.zoom)
    x1, y1 = _slippy(east, south, capped.zoom)
    assert (capped.x0, capped.y0, capped.x1, capped.y1) == (
        int(x0),
        int(y0),
        int(x1),
        int(y1),
    )


def test_tiles_from_another_server_need_a_credit_and_a_real_template() -> None:
    assert StreetTiles(attribution=None).attribution == "© OpenStreetMap contributors"
    assert StreetTiles().template == OSM_TILES
    with pytest.raises(pk.InvalidInput, match="attribution"):
        StreetTiles("https://tiles.example/{z}/{x}/{y}.png")
    for template in ("https://tiles.example/{z}/{x}.png", "file:///tiles/{z}/{x}/{y}.png"):
        with pytest.raises(pk.InvalidInput, match=r"\{z\}, \{x\} and \{y\}"):
            StreetTiles(template, attribution="")


def test_live_maps_use_the_template_with_its_credit() -> None:
    import plotly.graph_objects as go

    figure = go.Figure(go.Scatter(x=[-0.1, -0.12], y=[51.5, 51.51]))
    live = to_tiles(
        figure,
        Extent(-0.2, 51.45, -0.05, 51.55),
        tiles="https://tiles.example/{z}/{x}/{y}.png",
        attribution=CREDIT,
    )
    (layer,) = live.layout.map.layers
    assert layer.source == ("https://tiles.example/{z}/{x}/{y}.png",)
    assert layer.sourceattribution == CREDIT


# -- hostile tile servers: the report is always written, each map keeps its outline ----------

#: What the warning says, in plain words, for each hostile server.
CAUSES = {
    "bomb": "a decompression bomb",
    "huge": "larger than 2 MB",
    "html_as_png": "not a PNG or JPEG image",
    "trickle": "did not all arrive within 30 seconds",
    "redirect": "redirected to another host",
    "error": "failed (a server error)",
}


@pytest.fixture(scope="module")
def few() -> pd.DataFrame:
    return frame(generate_records(30))


#: What the report's two maps read (places, plot boundaries, towns, and their two colours).
MAP_COLUMNS = [
    "propertyId",
    "spatial.lat",
    "spatial.lng",
    "spatial.boundary",
    "address.town",
    "epc.currentEnergyRating",
    "pricing.estimatedSaleValue",
]


@pytest.fixture(scope="module")
def for_maps(few: pd.DataFrame) -> pd.DataFrame:
    """:func:`few` with only :data:`MAP_COLUMNS`: its report has both maps, which are all that
    tiles go under, and leaves out the sales charts (each with a note), half the report's
    build."""
    return few[MAP_COLUMNS]


def _outline_maps(page: str) -> int:
    """How many of the report's figures are maps drawn on the outline basemap."""
    cards = re.findall(r'<section class="card">.*?</section>', page, re.S)
    return sum("Natural Earth" in card for card in cards)


@pytest.fixture(scope="module")
def two_maps(few: pd.DataFrame) -> list[go.Figure]:
    """The report's two kinds of map: the national one, and boundaries in close-ups."""
    return [
        property_map(few, basemap="outline"),
        property_map(few, geometry="boundary", basemap="outline"),
    ]


@pytest.mark.parametrize("mode", HOSTILE)
def test_a_hostile_tile_server_leaves_every_map_its_outline_with_one_warning_each(
    mode: str, two_maps: list[go.Figure], server: TileServer
) -> None:
    server.mode = mode
    server.redirect_to = "http://localhost:9"  # another host (never asked)
    # The trickle is refused only when the map's time is up: 0.5 s, not the default 30 s (the
    # others are refused at once; their 3 s leave room for a busy machine)
    seconds = 0.5 if mode == "trickle" else 3
    streets = StreetTiles(server.template, attribution="", seconds=seconds)
    maps = [go.Figure(figure) for figure in two_maps]
    with pytest.warns(pk.errors.TileWarning) as caught:
        assert [streets.bake(figure) for figure in maps] == [False, False]
    first, second = (str(w.message) for w in caught)  # one warning per map
    cause = CAUSES[mode].replace("30", f"{seconds:g}")
    assert cause in first and "keeps its outline basemap" in first
    assert "not tried, as" in second and cause in second
    for figure in maps:
        assert any(trace.meta == "basemap" for trace in figure.data) and not figure.layout.images
    assert "script" not in first and "Sign in" not in first  # nothing it sent is repeated
    assert len(server.requests) <= 2 * street.FETCHES_AT_ONCE  # the first map's first tiles


@pytest.mark.slow  # a whole report per hostile server: six reports
@pytest.mark.parametrize("mode", HOSTILE)
def test_the_report_is_written_whatever_the_tile_server_sends(
    mode: str,
    for_maps: pd.DataFrame,
    server: TileServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seconds = 1.0 if mode == "trickle" else 3.0  # the trickle's map gives up sooner
    monkeypatch.setattr(street, "MAP_SECONDS", seconds)
    server.mode = mode
    server.redirect_to = "http://localhost:9"
    with pytest.warns(pk.errors.TileWarning) as caught:
        path = write_report(for_maps, tmp_path / "r.html", tiles=server.template, attribution="")
    page = path.read_text()
    assert len(caught) == _outline_maps(page) >= 2  # one warning per map, each on its outline
    (note,) = re.findall(r"Street maps: not drawn \((.*?)\); the maps use the outline", page)
    assert CAUSES[mode].replace("30", f"{seconds:g}") in note
    assert '"source":"data:image' not in page
    assert "alert(1)" not in page and "Sign in" not in page  # nothing it sent is shown


def test_a_map_has_thirty_seconds_for_its_tiles_by_default() -> None:
    assert street.MAP_SECONDS == 30.0  # as documented
    assert StreetTiles("http://t.test/{z}/{x}/{y}.png", attribution="").seconds == 30.0


@pytest.mark.slow  # a whole report and one map deadline (1 s here; 30 s by default)
def test_a_trickling_tile_server_costs_one_map_deadline_and_no_more(
    for_maps: pd.DataFrame, server: TileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(street, "MAP_SECONDS", 1.0)  # what the report's maps are given
    server.mode = "trickle"
    with pytest.warns(pk.errors.TileWarning) as caught:
        path = write_report(for_maps, tmp_path / "r.html", tiles=server.template, attribution="")
    first, *later = (str(w.message) for w in caught)
    assert "did not all arrive within 1 seconds" in first  # the first map waited its deadline
    # ... and no other map waited at all: each was not tried, and the server was asked only
    # for the first map's first tiles
    assert later and all("not tried, as the tiles did not all arrive" in m for m in later)
    assert len(caught) == _outline_maps(path.read_text()) >= 2
    assert 0 < len(server.requests) <= street.FETCHES_AT_ONCE


def test_a_slow_but_honest_server_still_gets_its_tiles_drawn(
    few: pd.DataFrame, server: TileServer
) -> None:
    server.delay, server.pause = 0.2, 0.4
    figure = property_map(few, basemap="outline", labels=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert StreetTiles(server.template, attribution=CREDIT, max_tiles=6).bake(figure)
    assert len(figure.layout.images) == 1 and 0 < len(server.requests) <= 6


def test_the_views_draw_the_tiles_their_fetcher_hands_them(few: pd.DataFrame) -> None:
    """The fetcher is handed over explicitly and is where a tile is checked; the views draw the
    images it hands over as they are, and its refusal (in plain words) is the map's warning."""
    asked: list[str] = []

    def grey(url: str, *, seconds: float, fresh: bool = False) -> Image.Image:
        asked.append(url)
        return Image.new("RGB", (256, 256), (221, 221, 221))

    figure = property_map(few, basemap="outline")
    assert bake_tiles(figure, "http://t.test/{z}/{x}/{y}.png", attribution="", fetch=grey)
    (image,) = figure.layout.images
    assert asked and (_image(image.source) == 221).all()  # its pixels, nothing else

    def refuses(url: str, *, seconds: float, fresh: bool = False) -> Image.Image:
        raise pk.errors.BadResponse("the tile server t.test sent an image of 2,048 x 2,048 pixels")

    figure = property_map(few, basemap="outline")
    with pytest.warns(pk.errors.TileWarning, match="2,048 x 2,048 pixels"):
        assert not StreetTiles("http://t.test/{z}/{x}/{y}.png", attribution="", fetch=refuses).bake(
            figure
        )
    assert any(trace.meta == "basemap" for trace in figure.data)


def test_the_report_and_the_accessor_hand_their_fetcher_down(
    for_maps: pd.DataFrame, server: TileServer, tmp_path: Path
) -> None:
    asked: list[str] = []

    def grey(url: str, *, seconds: float, fresh: bool = False) -> Image.Image:
        asked.append(url)
        return Image.new("RGB", (256, 256), (221, 221, 221))

    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.errors.TileWarning)
        path = write_report(
            for_maps, tmp_path / "r.html", tiles=server.template, attribution=CREDIT, fetch=grey
        )
        assert asked and '"source":"data:image' in path.read_text()
        asked.clear()
        figure = for_maps.pk.map(
            basemap="tiles", tiles=server.template, attribution=CREDIT, fetch=grey
        )
    assert asked and len(figure.layout.images) == 1
    assert server.requests == []  # only the fetcher handed over was asked


# -- tiles as the ecosystem names them --------------------------------------------------------


def test_an_xyzservices_provider_gives_its_address_and_its_credit(
    few: pd.DataFrame, two_maps: list[go.Figure], server: TileServer
) -> None:
    xyzservices = pytest.importorskip("xyzservices")
    provider = xyzservices.TileProvider(name="Test", url=server.template, attribution=CREDIT)
    figure = property_map(few, basemap="tiles", tiles=provider)  # baked: not a live notebook
    assert len(figure.layout.images) == 1 and server.requests
    assert [a.text for a in figure.layout.annotations if a.name == "attribution"] == [CREDIT]
    own = bake_tiles(go.Figure(two_maps[0]), provider, attribution="Mine")
    assert [a.text for a in own.layout.annotations if a.name == "attribution"] == ["Mine"]

    live = to_tiles(figure, Extent(-0.2, 51.45, -0.05, 51.55), tiles=provider)
    (layer,) = live.layout.map.layers
    assert layer.source == (server.template,) and layer.sourceattribution == CREDIT

    keyed = xyzservices.TileProvider(
        name="Keyed",
        url="https://tiles.example/{z}/{x}/{y}.png?key={apikey}",
        attribution="Keyed",
        apikey="<insert your api key here>",
    )
    with pytest.raises(pk.InvalidInput, match="needs a key"):
        StreetTiles(keyed)


# -- views never open a connection: the basemap probe goes through the injected fetcher --------


def test_the_views_import_nothing_that_opens_a_connection() -> None:
    network = {"socket", "http.client", "urllib.request", "requests", "urllib3", "httpx"}
    folder = Path(street.__file__).parent
    for source in folder.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not network.intersection(names), (source.name, names)


def test_the_basemap_probe_asks_the_injected_fetcher_for_a_fresh_tile(
    server: TileServer,
) -> None:
    asked: list[tuple[str, float, bool]] = []

    def recorder(url: str, *, seconds: float, fresh: bool = False) -> Image.Image:
        asked.append((url, seconds, fresh))
        return Image.new("RGB", (256, 256))

    probe = server.template.format(z=0, x=0, y=0)
    assert tiles_answer(probe, fetch=recorder)
    assert asked == [(probe, 1.0, True)] and server.requests == []
    assert tiles_answer(probe)  # propertykit's fetcher: a real request
    assert tiles_answer(probe) and len(server.requests) == 2  # fresh: asked each time
    for mode in ("bomb", "error"):
        server.mode = mode
        assert not tiles_answer(probe)
    server.mode = "trickle"  # refused when the probe's time is up (1 s by default)
    assert not tiles_answer(probe, seconds=0.3)
