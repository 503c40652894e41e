"""df.pk delegates to frames, geo and plots, on realistic and on empty frames."""

from __future__ import annotations

import geopandas
import pandas as pd
import plotly.graph_objects as go
import pytest

from propertykit.frames import frame


@pytest.fixture(params=["empty", "sample"])
def any_frame(request: pytest.FixtureRequest, df: pd.DataFrame) -> pd.DataFrame:
    return frame([]) if request.param == "empty" else df.head(60)


def test_sales_and_epc_delegate_to_frames(any_frame: pd.DataFrame) -> None:
    sales = any_frame.pk.sales()
    assert sales.columns[0] == "propertyId" and sales["date"].dtype == "datetime64[us]"
    epc = any_frame.pk.epc(today="2025-06-01")
    assert len(epc) == len(any_frame) and epc.columns[-1] == "validToday"


@pytest.mark.parametrize("geometry", ["point", "boundary"])
def test_to_geodataframe_gives_one_row_per_property_in_wgs84(
    any_frame: pd.DataFrame, geometry: str
) -> None:
    gdf = any_frame.pk.to_geodataframe(geometry=geometry)
    assert isinstance(gdf, geopandas.GeoDataFrame)
    assert len(gdf) == len(any_frame) and gdf.crs.to_epsg() == 4326


def test_points_have_x_lng_and_y_lat(df: pd.DataFrame) -> None:
    gdf = df.head(5).pk.to_geodataframe()
    assert gdf.geometry.x.tolist() == df["spatial.lng"].head(5).tolist()
    assert gdf.geometry.y.tolist() == df["spatial.lat"].head(5).tolist()


@pytest.mark.parametrize("method", ["price_trend", "epc_chart", "map"])
def test_figures_are_returned(any_frame: pd.DataFrame, method: str) -> None:
    figure = getattr(any_frame.pk, method)()
    assert isinstance(figure, go.Figure)


def test_accessor_passes_keywords_through(df: pd.DataFrame) -> None:
    by_town = df.head(60).pk.price_trend(by="address.town")
    overall = df.head(60).pk.price_trend(by=None)
    assert len(by_town.data) > len(overall.data)
