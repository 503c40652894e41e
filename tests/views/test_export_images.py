"""Static images: ``fig.write_image`` (Kaleido 1.x on the system's Chromium) gives PNG, SVG and
PDF of propertykit's figures, read back pixel by pixel; the ``export`` extra is whole in ``dev``
and in ``environment.yml``.

Needs Debian's ``chromium`` (``make test`` installs it as root); without it these tests skip,
except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import io
import os
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import propertykit as pk
from propertykit.config import ENV_CACHE_DIR
from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import bake_tiles, price_trend, property_map
from propertykit.views._basemap import LAND, SEA
from propertykit.views._figures import EPC_COLOURS
from propertykit.views._static import system_browser, use_system_browser
from tests.test_packaging import _environment_requirements, _requirement
from tests.views.tile_server import TileServer, tile_colour

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 900, 600


@pytest.fixture(scope="module")
def properties() -> pd.DataFrame:
    return frame(generate_records(150))


def _processes() -> dict[int, tuple[int, str]]:
    """Every process of the machine: its parent and its name (Linux's /proc)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # ended meanwhile
            continue
        name, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        found[int(stat.parent.name)] = (int(rest.split()[1]), name)
    return found


def _kaleido_browsers() -> set[int]:
    """The browsers Kaleido runs for this process: Chrome started by a Python process of ours
    (its driver's wrapper; Playwright's browser hangs under node instead)."""
    processes = _processes()
    ours, todo = set(), [os.getpid()]
    while todo:
        parent = todo.pop()
        children = [pid for pid, (ppid, _) in processes.items() if ppid == parent]
        ours.update(children)
        todo += children
    return {
        pid
        for pid in ours
        if "chrom" in processes[pid][1].lower()
        and processes.get(processes[pid][0], (0, ""))[1].startswith("python")
    }


def _png(figure: object) -> np.ndarray:
    data = figure.to_image(format="png", width=WIDTH, height=HEIGHT, scale=1)  # type: ignore[attr-defined]
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (WIDTH, HEIGHT)
        return np.asarray(image.convert("RGB")).astype(int)


def _share(pixels: np.ndarray, colour: str | tuple[int, int, int], tolerance: int = 6) -> float:
    rgb = np.array(
        [int(colour[i : i + 2], 16) for i in (1, 3, 5)] if isinstance(colour, str) else colour
    )
    return float((np.abs(pixels - rgb).max(axis=2) <= tolerance).mean())


def test_a_map_exports_to_png_with_land_sea_and_epc_colours(
    properties: pd.DataFrame, tmp_path: Path, image_export: str
) -> None:
    figure = property_map(properties, color="epc.currentEnergyRating", basemap="outline")
    figure.write_image(tmp_path / "map.png", width=WIDTH, height=HEIGHT)
    with Image.open(tmp_path / "map.png") as image:
        pixels = np.asarray(image.convert("RGB")).astype(int)
    assert _share(pixels, SEA) > 0.05 and _share(pixels, LAND) > 0.05
    for rating in properties["epc.currentEnergyRating"].dropna().unique():
        assert _share(pixels, EPC_COLOURS[str(rating)], tolerance=12) > 0, rating


def test_a_street_map_exports_to_png_with_its_tiles(
    properties: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, image_export: str
) -> None:
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path))
    with TileServer() as tiles:
        figure = bake_tiles(
            property_map(properties, basemap="outline"), tiles.template, attribution="Test"
        )
        served = {tuple(int(v) for v in path[:-4].split("/")[2:5]) for path, _ in tiles.requests}
    pixels = _png(figure)
    tiled = sum(_share(pixels, tile_colour(*tile), tolerance=3) for tile in served)
    assert tiled > 0.3  # most of the map is street tiles
    assert _share(pixels, SEA) < 0.01  # the outline's sea made way for them


def test_charts_export_to_svg_and_pdf(
    properties: pd.DataFrame, tmp_path: Path, image_export: str
) -> None:
    figure = price_trend(properties)
    figure.write_image(tmp_path / "trend.svg", width=WIDTH, height=HEIGHT)
    figure.write_image(tmp_path / "trend.pdf", width=WIDTH, height=HEIGHT)
    svg = (tmp_path / "trend.svg").read_text()
    assert svg.startswith("<svg") and "<path" in svg
    title = str(figure.layout.title.text).split("<")[0].strip()
    assert title and title.split()[0] in svg
    assert (tmp_path / "trend.pdf").read_bytes()[:5] == b"%PDF-"


def test_images_are_drawn_by_one_system_browser_and_the_environment_is_left_alone(
    image_export: str, properties: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    before = dict(os.environ)
    path = use_system_browser()  # the server runs already: kept as it is
    assert path == image_export == system_browser() and os.access(path, os.X_OK)
    assert dict(os.environ) == before
    figure = price_trend(properties)
    figure.write_image(tmp_path / "one.png", width=WIDTH, height=HEIGHT)
    running = _kaleido_browsers()
    figure.write_image(tmp_path / "two.png", width=WIDTH, height=HEIGHT)
    assert len(running) == 1 and _kaleido_browsers() == running  # no browser per image
    monkeypatch.setenv("BROWSER_PATH", "/nowhere/chrome")
    with pytest.raises(pk.ConfigError, match="apt-get install chromium"):
        system_browser()


def test_the_export_extra_is_whole_in_dev_and_in_environment_yml() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    export = {_requirement(line) for line in extras["export"]}
    assert {name for name, _ in export} >= {"kaleido", "playwright", "pillow"}
    assert export <= {_requirement(line) for line in extras["dev"]}
    assert export <= _environment_requirements()
