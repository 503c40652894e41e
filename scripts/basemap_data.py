"""Build propertykit's bundled basemap: Natural Earth outlines of Britain and Ireland.

Run once by a maintainer (needs the network and ``node``); its output is committed::

    python scripts/basemap_data.py

It downloads plotly.js's npm package from the npm registry, loads ``dist/plotly-geo-assets.js``
(plotly.js, MIT licence) with node to read its ``europe_50m`` topology (Natural Earth 1:50m,
public domain), decodes the land, lakes, rivers and country borders, clips them to Britain and
Ireland and writes ``propertykit/views/basemap_data/britain_ireland.json`` with coordinates
rounded to 3 decimals (~100 m, finer than the 1:50m data itself).
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import shapely
from shapely.geometry import LineString, MultiLineString, Polygon, box

PLOTLY_JS = "4.1.1"
TARBALL = f"https://registry.npmjs.org/plotly.js/-/plotly.js-{PLOTLY_JS}.tgz"
#: lon/lat box kept: Britain, Ireland, the Channel Islands, a strip of France for context
EXTENT = (-11.0, 49.5, 2.5, 61.0)
DIGITS = 3
OUT = Path(__file__).resolve().parent.parent / "propertykit/views/basemap_data"
READ_TOPOLOGY_JS = """
global.window = {};
const assets = require(process.argv[1]);
const topojson = (assets.topojson || window.Plotly.topojson);
process.stdout.write(JSON.stringify(topojson.europe_50m));
"""


def download_topology(folder: Path) -> dict[str, Any]:
    archive = folder / "plotly.tgz"
    urllib.request.urlretrieve(TARBALL, archive)
    with tarfile.open(archive) as tar:
        tar.extract("package/dist/plotly-geo-assets.js", folder, filter="data")
    script = folder / "package/dist/plotly-geo-assets.js"
    text = subprocess.run(
        ["node", "-e", READ_TOPOLOGY_JS, str(script)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    topology: dict[str, Any] = json.loads(text)
    return topology


def decode_arcs(topology: dict[str, Any]) -> list[list[tuple[float, float]]]:
    (sx, sy), (tx, ty) = topology["transform"]["scale"], topology["transform"]["translate"]
    arcs = []
    for arc in topology["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x, y = x + dx, y + dy
            points.append((x * sx + tx, y * sy + ty))
        arcs.append(points)
    return arcs


def ring(arcs: list[list[tuple[float, float]]], indexes: list[int]) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    for index in indexes:
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        points.extend(arc[1:] if points else arc)
    return points


def polygons(arcs: list[Any], geometry: dict[str, Any]) -> list[Polygon]:
    kind, parts = geometry["type"], geometry.get("arcs", [])
    if kind == "Polygon":
        parts = [parts]
    elif kind != "MultiPolygon":
        return []
    return [Polygon(ring(arcs, rings[0]), [ring(arcs, r) for r in rings[1:]]) for rings in parts]


def lines(arcs: list[Any], geometry: dict[str, Any]) -> list[LineString]:
    kind, parts = geometry["type"], geometry.get("arcs", [])
    if kind == "LineString":
        parts = [parts]
    elif kind != "MultiLineString":
        return []
    return [LineString(ring(arcs, part)) for part in parts]


def rings_of(shapes: list[Any], area: Polygon) -> list[list[list[float]]]:
    """Exterior rings (lon/lat lists) of the polygons clipped to ``area``, rounded."""
    out = []
    for shape in shapes:
        clipped = shapely.intersection(shape, area)
        for part in shapely.get_parts(clipped):
            if part.geom_type != "Polygon" or part.area < 1e-4:
                continue
            coords = shapely.get_coordinates(part.exterior.simplify(0.002)).round(DIGITS)
            out.append(coords.tolist())
    return out


def paths_of(shapes: list[Any], area: Polygon) -> list[list[list[float]]]:
    out = []
    merged = shapely.line_merge(shapely.intersection(MultiLineString(shapes), area))
    for part in shapely.get_parts(merged):
        if part.geom_type == "LineString" and part.length > 0.02:
            out.append(shapely.get_coordinates(part.simplify(0.002)).round(DIGITS).tolist())
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        topology = download_topology(Path(folder))
    arcs = decode_arcs(topology)
    area = box(*EXTENT)
    objects = topology["objects"]
    land = [p for g in objects["land"]["geometries"] for p in polygons(arcs, g)]
    lakes = [p for g in objects["lakes"]["geometries"] for p in polygons(arcs, g)]
    rivers = [line for g in objects["rivers"]["geometries"] for line in lines(arcs, g)]
    # a land border is an arc that two countries share
    used: Counter[int] = Counter()
    for geometry in objects["countries"]["geometries"]:
        parts = geometry.get("arcs", [])
        parts = [parts] if geometry["type"] == "Polygon" else parts
        used.update({i if i >= 0 else ~i for rings in parts for r in rings for i in r})
    borders = [LineString(arcs[i]) for i, count in used.items() if count > 1]
    data = {
        "source": f"Natural Earth 1:50m via plotly.js {PLOTLY_JS} dist/plotly-geo-assets.js",
        "extent": list(EXTENT),
        "land": rings_of(land, area),
        "lakes": rings_of(lakes, area),
        "rivers": paths_of(rivers, area),
        "borders": paths_of(borders, area),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / "britain_ireland.json"
    target.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    sizes = {k: len(v) for k, v in data.items() if isinstance(v, list)}
    print(f"wrote {target} ({target.stat().st_size:,} bytes): {sizes}")


if __name__ == "__main__":
    main()
