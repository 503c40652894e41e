"""Maps: points and boundaries on a tile-free geo subplot, so they draw offline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from propertykit.errors import InvalidInput
from propertykit.views import plots
from propertykit.views.maps import EPC_COLOURS, property_map

BASEMAP_LAYERS = ("land", "ocean", "lakes", "rivers", "countries", "coastlines", "subunits")


def assert_needs_no_network(fig: go.Figure) -> None:
    # a geo subplot fetches topojson from a CDN when any base layer or a locationmode is on
    assert all(getattr(fig.layout.geo, f"show{layer}") is False for layer in BASEMAP_LAYERS)
    assert all(t.type == "scattergeo" and t.locationmode is None for t in fig.data)
    assert fig.layout.geo.fitbounds == "locations"


def test_point_map_puts_longitude_on_x(properties: pd.DataFrame) -> None:
    fig = property_map(properties)
    (trace,) = fig.data
    assert trace.mode == "markers"
    np.testing.assert_allclose(trace.lon, properties["spatial.lng"].to_numpy())
    np.testing.assert_allclose(trace.lat, properties["spatial.lat"].to_numpy())
    assert trace.text[0].startswith(properties["address.displayAddress"].iloc[0])
    assert_needs_no_network(fig)


def test_point_map_coloured_by_epc_rating_uses_band_colours(properties: pd.DataFrame) -> None:
    fig = property_map(properties, color="epc.currentEnergyRating")
    by_name = {t.name: t for t in fig.data}
    for band, trace in by_name.items():
        if band != "not given":
            assert trace.marker.color == EPC_COLOURS[band]
            assert len(trace.lon) == (properties["epc.currentEnergyRating"] == band).sum()
    assert len(by_name["not given"].lon) == properties["epc.currentEnergyRating"].isna().sum()
    assert fig.layout.legend.title.text == "Current EPC rating"


def test_point_map_coloured_by_a_number_has_a_colour_bar_with_currency(
    properties: pd.DataFrame,
) -> None:
    fig = property_map(properties, color="pricing.estimatedSaleValue")
    (trace,) = fig.data
    np.testing.assert_allclose(
        trace.marker.color, properties["pricing.estimatedSaleValue"].to_numpy()
    )
    assert trace.marker.colorbar.title.text == "Estimated sale value (GBP)"


def test_boundary_map_fills_each_boundary_in_its_class_colour(properties: pd.DataFrame) -> None:
    fig = property_map(
        properties, geometry="boundary", color="pricing.estimatedSaleValue", classes=4
    )
    fills = [t for t in fig.data if t.fill == "toself"]
    assert len(fills) == 4
    assert len({t.fillcolor for t in fills}) == 4
    rings = sum(int(np.isnan(np.asarray(t.lon, dtype=float)).sum()) + 1 for t in fills)
    assert rings == properties["spatial.boundary"].notna().sum()
    hover = [t for t in fig.data if t.mode == "markers"]
    assert sum(len(t.lon) for t in hover) == rings
    assert fills[0].name.endswith("GBP")
    assert_needs_no_network(fig)


def test_boundary_map_by_category_and_without_colour(properties: pd.DataFrame) -> None:
    fig = property_map(properties, geometry="boundary", color="propertyType")
    names = {t.name for t in fig.data if t.fill == "toself"}
    assert names == set(
        properties.loc[properties["spatial.boundary"].notna(), "propertyType"].astype(str)
    )
    plain = property_map(properties, geometry="boundary")
    assert [t.name for t in plain.data if t.fill == "toself"] == ["Boundaries"]


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


def test_the_map_is_a_public_name_of_views_and_charts_do_not_load_geopandas() -> None:
    import subprocess
    import sys

    import propertykit.views

    assert propertykit.views.property_map is property_map
    assert "property_map" not in plots.__all__  # charts stay free of geopandas
    probe = (
        "import sys, pandas as pd, propertykit as pk; "
        "df = pk.frame(pk.sandbox.generate_records(20)); df.pk.price_trend(); df.pk.epc_chart(); "
        "print('geopandas' in sys.modules, 'shapely' in sys.modules, 'plotly' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()
    assert loaded == "False False True"
