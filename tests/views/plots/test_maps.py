"""Maps: points and boundaries on a bundled basemap, with place names and a scale bar."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from propertykit.errors import InvalidInput, PropertyKitWarning
from propertykit.views import _basemap as basemap
from propertykit.views import _plots as plots
from propertykit.views._figures import EPC_COLOURS
from propertykit.views._maps import property_map
from tests._system import NewProcess

DATA = ("scatter", "scattergl")


def data_traces(fig: go.Figure) -> list[Any]:
    """The traces drawing properties (not the basemap, nor the bubble-size key)."""
    return [t for t in fig.data if t.meta not in ("basemap", "key")]


def assert_offline_north_up(fig: go.Figure) -> None:
    # plain x/y traces draw offline: no geo subplot (topojson from a CDN), no tiles
    assert all(t.type in DATA for t in fig.data)
    assert fig.layout.geo.showland is None and fig.layout.map.style is None
    assert fig.layout.yaxis.scaleanchor == "x"
    west, east = fig.layout.xaxis.range
    south, north = fig.layout.yaxis.range
    # a kilometre as long east-west as north-south
    assert fig.layout.yaxis.scaleratio == pytest.approx(
        1 / np.cos(np.radians((south + north) / 2)), rel=1e-3
    )
    assert west < east and south < north


def test_point_map_puts_longitude_on_x(properties: pd.DataFrame) -> None:
    fig = property_map(properties, basemap="none")
    (trace,) = data_traces(fig)
    assert trace.mode == "markers"
    np.testing.assert_allclose(trace.x, properties["spatial.lng"].to_numpy(), atol=1e-5)
    np.testing.assert_allclose(trace.y, properties["spatial.lat"].to_numpy(), atol=1e-5)
    assert trace.text[0].startswith(properties["address.displayAddress"].iloc[0])
    assert_offline_north_up(fig)
    # the extent holds every property, with padding
    west, east = fig.layout.xaxis.range
    assert west < properties["spatial.lng"].min() and east > properties["spatial.lng"].max()


def test_outline_basemap_draws_land_coast_and_borders_as_plain_data(
    properties: pd.DataFrame,
) -> None:
    fig = property_map(properties, basemap="outline")
    ground = {t.name: t for t in fig.data if t.meta == "basemap"}
    assert {"Land (Natural Earth)", "Borders (Natural Earth)"} <= set(ground)
    land = ground["Land (Natural Earth)"]
    assert land.fill == "toself" and land.line.color  # filled land, outlined by its coast
    assert fig.layout.plot_bgcolor != land.fillcolor  # sea and land differ
    assert fig.data[0] is land  # the basemap is drawn under the data
    assert_offline_north_up(fig)
    none = property_map(properties, basemap="none")
    assert not [t for t in none.data if t.meta == "basemap"]


def test_place_labels_come_from_the_data_and_a_scale_bar_is_drawn(properties: pd.DataFrame) -> None:
    fig = property_map(properties, basemap="outline")
    places = [a.text for a in fig.layout.annotations if a.name == "place"]
    assert places and set(places) <= set(properties["address.town"].dropna().astype(str))
    busiest = properties["address.town"].value_counts().index[0]
    assert places[0] == busiest  # most properties first
    bar = [a.text for a in fig.layout.annotations if a.name == "scale bar"]
    assert len(bar) == 1 and bar[0].endswith("km")
    assert any(s.name == "scale bar" for s in fig.layout.shapes)
    quiet = property_map(properties, basemap="outline", labels=False)
    assert not quiet.layout.annotations


def test_tiles_outside_a_notebook_that_cannot_be_fetched_keep_the_outline(
    properties: pd.DataFrame,
) -> None:
    # Outside a live notebook tiles are baked in at build time; a server that cannot be reached
    # leaves the outline basemap and says so once (tests/views/test_tiles.py bakes real tiles).
    unreachable = "http://127.0.0.1:9/{z}/{x}/{y}.png"
    with pytest.warns(PropertyKitWarning, match="Street tiles could not be fetched"):
        fig = property_map(
            properties,
            basemap="tiles",
            tiles=unreachable,
            attribution="test tiles",
            color="epc.currentEnergyRating",
        )
    assert fig.data[0].name == "Land (Natural Earth)"
    assert not fig.layout.images
    drawn = sum(len(t.x) for t in data_traces(fig))
    assert drawn == properties["spatial.lat"].notna().sum()


def test_auto_basemap_outside_a_notebook_is_the_outline(properties: pd.DataFrame) -> None:
    fig = property_map(properties)  # pytest is no live notebook kernel
    assert fig.data[0].name == "Land (Natural Earth)"
    with pytest.raises(InvalidInput, match="basemap"):
        property_map(properties, basemap="satellite")  # type: ignore[arg-type]


def test_point_map_coloured_by_epc_rating_uses_band_colours(properties: pd.DataFrame) -> None:
    fig = property_map(properties, color="epc.currentEnergyRating")
    by_name = {t.name: t for t in data_traces(fig)}
    for band, trace in by_name.items():
        if band != "not given":
            assert trace.marker.color == EPC_COLOURS[band]
            assert len(trace.x) == (properties["epc.currentEnergyRating"] == band).sum()
    assert len(by_name["not given"].x) == properties["epc.currentEnergyRating"].isna().sum()
    assert fig.layout.legend.title.text == "Current EPC rating"
    assert len({t.marker.color for t in by_name.values()}) == len(by_name)  # distinct swatches


def test_point_map_coloured_by_a_number_has_a_colour_bar_with_currency(
    properties: pd.DataFrame,
) -> None:
    fig = property_map(properties, color="pricing.estimatedSaleValue")
    (trace,) = data_traces(fig)
    np.testing.assert_allclose(
        trace.marker.color, properties["pricing.estimatedSaleValue"].to_numpy()
    )
    assert trace.marker.colorbar.title.text == "Estimated sale value (GBP)"


def test_many_points_are_drawn_with_webgl_or_as_areas(properties: pd.DataFrame) -> None:
    many = pd.concat([properties] * 15, ignore_index=True)  # 3,000 rows
    fig = property_map(many, color="epc.currentEnergyRating", basemap="none", detail_limit=None)
    assert {t.type for t in fig.data} == {"scattergl"}
    assert sum(len(t.x) for t in fig.data) == many["spatial.lat"].notna().sum()
    areas = property_map(
        many, color="pricing.estimatedSaleValue", basemap="none", detail_limit=1000
    )
    (trace,) = data_traces(areas)
    outcodes = many.loc[many["spatial.lat"].notna(), "address.outcode"].nunique()
    assert len(trace.x) == outcodes  # one sized marker per outcode
    assert max(trace.marker.size) > min(trace.marker.size)
    assert "properties" in trace.text[0] and "areas" in areas.layout.title.text


def rings_of(traces: list[Any]) -> int:
    return sum(int(np.isnan(np.asarray(t.x, dtype=float)).sum()) + 1 for t in traces)


def shown_of(fig: go.Figure) -> tuple[int, int]:
    """(boundaries drawn, mapped) from the title: "(5 of 17 drawn in ..." or "(17 mapped)"."""
    title = fig.layout.title.text
    if found := re.search(r"\(([\d,]+) of ([\d,]+) drawn in", title):
        return int(found[1].replace(",", "")), int(found[2].replace(",", ""))
    found = re.search(r"\(([\d,]+) mapped", title)
    assert found, title
    return int(found[1].replace(",", "")), int(found[1].replace(",", ""))


def test_boundary_map_fills_each_boundary_in_its_class_colour(properties: pd.DataFrame) -> None:
    fig = property_map(
        properties, geometry="boundary", color="pricing.estimatedSaleValue", classes=4
    )
    fills = [t for t in data_traces(fig) if t.fill == "toself"]
    # legend swatches: one square per class in the fill colour, not lines
    swatches = [t for t in fig.data if t.showlegend is not False and t.legendgroup]
    assert [t.marker.symbol for t in swatches] == ["square"] * 4
    assert len({t.marker.color for t in swatches}) == 4
    assert {t.fillcolor for t in fills} <= {t.marker.color for t in swatches}
    assert swatches[0].name.endswith("GBP")
    shown, mapped = shown_of(fig)
    assert rings_of(fills) == shown and mapped == properties["spatial.boundary"].notna().sum()
    assert 0 < shown <= mapped
    assert_offline_north_up(fig)


def test_boundary_map_zooms_until_plots_are_visible(properties: pd.DataFrame) -> None:
    from propertykit.views._context import Extent
    from propertykit.views._detail import MIN_PLOT_PX

    town = properties.loc[properties["spatial.boundary"].notna(), "address.town"].mode()[0]
    local = properties[properties["address.town"] == town]
    fig = property_map(local, geometry="boundary", basemap="none")
    maps = len(
        [k for k in fig.layout if k.startswith("xaxis") and fig.layout[k].visible is not False]
    )
    # the plots are 10-30 m across over ~5 km: an overview and up to three close-ups
    assert 2 <= maps <= 4 and f"in {maps - 1} close-ups" in fig.layout.title.text
    overview = [t for t in data_traces(fig) if (t.xaxis or "x") == "x"]
    assert all(t.mode == "markers" for t in overview)  # every plot located on the overview
    assert (
        sum(len(t.x) for t in overview if t.legendgroup) == local["spatial.boundary"].notna().sum()
    )
    boxes = [shape for shape in fig.layout.shapes if shape.name == "close-up"]
    assert len(boxes) == maps - 1 and all(b.xref == "x" for b in boxes)
    sizes = []
    for fill in (t for t in data_traces(fig) if t.fill == "toself"):
        suffix = (fill.xaxis or "x")[1:]
        xaxis, yaxis = fig.layout[f"xaxis{suffix}"], fig.layout[f"yaxis{suffix}"]
        extent = Extent(xaxis.range[0], yaxis.range[0], xaxis.range[1], yaxis.range[1])
        share = 0.5 if maps > 1 else 1.0
        scale = Extent(extent.west, extent.south, extent.east, extent.north, share).px_per_km
        x = np.asarray(fill.x, dtype=float)
        y = np.asarray(fill.y, dtype=float)
        for ring in np.split(np.arange(len(x)), np.flatnonzero(np.isnan(x))):
            sizes.append((np.nanmax(y[ring]) - np.nanmin(y[ring])) * 111.32 * scale)
    assert len(sizes) == shown_of(fig)[0]
    assert np.median(sizes) >= MIN_PLOT_PX * 0.8  # a few pixels across, not sub-pixel


def test_boundary_map_points_only_where_a_plot_has_no_boundary(
    properties: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    fig = property_map(properties, geometry="boundary", basemap="none", detail_limit=None)
    monkeypatch.setattr(basemap, "live_notebook", lambda: True)  # MapLibre, as in a notebook
    tiles = property_map(properties, geometry="boundary", basemap="tiles")  # one map: all of them
    points = [t for t in tiles.data if t.name == "no boundary given"]
    without = properties["spatial.boundary"].isna() & properties["spatial.lat"].notna()
    assert sum(len(t.lon) for t in points) == without.sum()
    anchors = [
        t for t in tiles.data if t.legendgroup and t.mode == "markers" and t.lon[0] is not None
    ]
    assert sum(len(t.lon) for t in anchors) == properties["spatial.boundary"].notna().sum()
    assert any(t.name == "no boundary given" for t in fig.data)  # so that all() below can fail
    assert all(t.name != "no boundary given" or t.marker.size == 5 for t in fig.data)


def test_boundary_map_by_category_and_without_colour(properties: pd.DataFrame) -> None:
    fig = property_map(properties, geometry="boundary", color="propertyType")
    names = {t.name for t in fig.data if t.legendgroup and t.showlegend is not False}
    assert names == set(
        properties.loc[properties["spatial.boundary"].notna(), "propertyType"].astype(str)
    )
    plain = property_map(properties, geometry="boundary")
    assert {t.name for t in data_traces(plain) if t.fill == "toself"} == {"Boundaries"}


def test_bundled_basemap_ships_with_its_licence() -> None:
    from importlib import resources

    folder = resources.files("propertykit.views") / "basemap_data"
    licence = (folder / "LICENCE.md").read_text(encoding="utf-8")
    assert "Natural Earth" in licence and "public domain" in licence and "MIT" in licence
    size = len((folder / "britain_ireland.json").read_bytes())
    assert 2_000 < size < 100_000  # tens of KB, not megabytes
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads(
        (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    )
    shipped = pyproject["tool"]["setuptools"]["package-data"]["propertykit"]
    assert "views/basemap_data/LICENCE.md" in shipped
    assert "views/basemap_data/*.json" in shipped


def test_maps_of_nothing_are_empty_figures_that_say_so(properties: pd.DataFrame) -> None:
    no_boundaries = properties[properties["spatial.boundary"].isna()]
    for fig in (
        property_map(properties.iloc[:0]),
        property_map(no_boundaries, geometry="boundary"),
    ):
        assert len(fig.data) == 0 and "no data" in fig.layout.title.text


def test_colouring_by_a_missing_column_is_invalid_input(properties: pd.DataFrame) -> None:
    with pytest.raises(InvalidInput, match="colour"):
        property_map(properties, color="colour")


def test_the_map_is_a_public_name_of_views_and_charts_do_not_load_geopandas(
    new_process: NewProcess,
) -> None:
    import propertykit.views

    assert propertykit.views.property_map is property_map
    assert not hasattr(plots, "property_map")  # charts stay free of geopandas
    probe = (
        "import sys, pandas as pd, propertykit as pk; "
        "df = pk.frame(pk.sandbox.generate_records(20)); df.pk.price_trend(); df.pk.epc_chart(); "
        "print('geopandas' in sys.modules, 'shapely' in sys.modules, 'plotly' in sys.modules)"
    )
    loaded = new_process.run("-c", probe, check=True).stdout.strip()
    assert loaded == "False False True"


def test_without_towns_or_localities_places_are_named_by_local_authority(
    properties: pd.DataFrame,
) -> None:
    # The frame's local authority is councilTax.localAuthority; the labels looked for an
    # address.localAuthority column no frame has, so such a map had no place names at all.
    bare = properties.assign(**{"address.town": None, "address.locality": None})
    assert bare["councilTax.localAuthority"].notna().any()
    fig = property_map(bare, basemap="none")
    places = [a.text for a in fig.layout.annotations if a.name == "place"]
    assert places and set(places) <= set(bare["councilTax.localAuthority"].dropna().astype(str))


def test_an_aggregated_boundary_map_counts_properties_without_a_boundary(
    properties: pd.DataFrame,
) -> None:
    # A boundary map draws a point for each property without a boundary; zoomed out to areas
    # (level of detail) those properties were dropped, drawn nowhere and counted nowhere.
    without = properties["spatial.boundary"].isna() & properties["spatial.lat"].notna()
    assert without.any()
    fig = property_map(properties, geometry="boundary", basemap="none", detail_limit=10)
    (trace,) = data_traces(fig)
    held = sum(int(re.search(r": ([\d,]+) propert", t)[1].replace(",", "")) for t in trace.text)
    located = int(properties["spatial.boundary"].notna().sum() + without.sum())
    assert held == located
    assert f"({located:,} mapped" in fig.layout.title.text
    assert not [t for t in trace.text if ": 1 properties" in t]  # "1 property"
