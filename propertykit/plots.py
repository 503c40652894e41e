"""Plotly figures from property frames: price trends, EPC charts and maps.

Every function takes the main property frame (``pk.frame(records)``) and RETURNS a
``plotly.graph_objects.Figure``; nothing is shown implicitly (call ``fig.show()`` or let Jupyter
display it). Axis titles carry units and the currency recorded in ``df.attrs["currency"]``
(prices are plotted as served; see :mod:`propertykit.frames` on units). A frame with nothing to
plot gives an empty figure whose title says so, never an exception.

Maps are drawn with ``go.Scattergeo`` with every basemap layer switched off, so they need no map
tiles, no topojson, no WebGL and no network: the data alone is drawn on a plain projected
(Mercator) canvas with a graticule, fitted to the data. That keeps the HTML report complete
offline, in e-mail attachments and in static image export. A tiled basemap (plotly's
MapLibre-based ``scatter_map`` with an OpenStreetMap style) would fetch tiles and fonts from the
internet and needs WebGL; add one yourself from the returned data when you are online.

Static images: ``fig.write_image("chart.png")`` works once the optional ``kaleido`` package is
installed (``pip install kaleido``); it uses a local Chrome/Chromium.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import shapely
from plotly.colors import qualitative, sample_colorscale

from propertykit.errors import InvalidInput
from propertykit.geo import _require_columns

__all__ = [
    "EPC_COLOURS",
    "epc_chart",
    "epc_price_chart",
    "price_trend",
    "property_map",
]

#: Energy-efficiency band colours of the GOV.UK EPC register (find-energy-certificate).
EPC_COLOURS = {
    "A": "#008054",
    "B": "#19b459",
    "C": "#8dce46",
    "D": "#ffd500",
    "E": "#fcaa65",
    "F": "#ef8023",
    "G": "#e9153b",
}
_BANDS = tuple(EPC_COLOURS)
_MISSING_COLOUR = "#b0b0b0"
_TEMPLATE = "plotly_white"
_FREQUENCIES = {"year": "Y", "quarter": "Q", "month": "M"}
_X_FORMATS = {"year": "%Y", "quarter": "%Y Q%q", "month": "%b %Y"}

#: Readable names (and whether the values are money) for columns charts commonly use.
_COLUMN_LABELS: dict[str, tuple[str, bool]] = {
    "propertyType": ("Property type", False),
    "address.town": ("Town", False),
    "address.outcode": ("Postcode district", False),
    "address.postcode": ("Postcode", False),
    "councilTax.localAuthority": ("Local authority", False),
    "councilTax.taxBand": ("Council tax band", False),
    "councilTax.annualCharge": ("Council tax per year", True),
    "pricing.currentSalePrice": ("Current sale price", True),
    "pricing.currentRentPrice": ("Current rent price", True),
    "pricing.estimatedSaleValue": ("Estimated sale value", True),
    "pricing.estimatedRentValue": ("Estimated rent value", True),
    "pricing.pricePerSqFt": ("Price per sq ft", True),
    "epc.currentEnergyRating": ("Current EPC rating", False),
    "epc.potentialEnergyRating": ("Potential EPC rating", False),
    "epc.currentEnergyEfficiency": ("Current energy efficiency (SAP points)", False),
    "epc.potentialEnergyEfficiency": ("Potential energy efficiency (SAP points)", False),
    "floorAreaSqM": ("Floor area (m²)", False),
    "plotSizeSqM": ("Plot size (m²)", False),
    "yearBuilt": ("Year built", False),
    "tenure.type": ("Tenure", False),
}


def price_trend(
    df: pd.DataFrame,
    *,
    by: str | None = "propertyType",
    freq: Literal["year", "quarter", "month"] = "year",
    max_groups: int = 8,
) -> go.Figure:
    """Median sale price per period from the sale histories, one line per group.

    Parameters
    ----------
    df
        The property frame (its ``saleHistory`` is exploded with
        :func:`propertykit.frames.explode_sales`), or an already exploded sales table.
    by
        Sales-table column to draw one line per value of (``"propertyType"``,
        ``"address.town"``, ``"address.outcode"``, ...), or ``None`` for one line.
    freq
        ``"year"``, ``"quarter"`` or ``"month"``.
    max_groups
        The largest groups by number of sales get their own line; the rest share "Other".

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Scatter`` trace per group; the number of sales behind each median is in
        ``customdata`` and on hover.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = price_trend(pk.frame(generate_records(50)), by=None)
    >>> fig.layout.yaxis.title.text
    'Median sale price (GBP)'
    """
    if freq not in _FREQUENCIES:
        raise InvalidInput(f"freq must be one of {', '.join(_FREQUENCIES)}, got {freq!r}")
    sales = _sales(df)
    if by is not None and by not in sales.columns:
        raise InvalidInput(
            f"cannot group sales by {by!r}: choose one of {', '.join(sales.columns)}"
        )
    title = f"Median sale price per {freq}" + (f" by {_lower_first(_label(by))}" if by else "")
    sales = sales[sales["date"].notna() & sales["price"].notna()]
    if sales.empty:
        return _empty_figure(title, "no sales to plot")

    period = sales["date"].dt.to_period(_FREQUENCIES[freq]).dt.start_time
    groups = _top_groups(sales[by], max_groups) if by else pd.Series("All sales", index=sales.index)
    summary = (
        sales.assign(period=period, group=groups)
        .groupby(["group", "period"], observed=True, sort=True)["price"]
        .agg(["median", "count"])
        .reset_index()
    )
    money = _money_unit(df)
    figure = go.Figure()
    for name, rows in summary.groupby("group", observed=True, sort=False):
        figure.add_trace(
            go.Scatter(
                x=rows["period"],
                y=rows["median"].to_numpy(),
                customdata=rows["count"].to_numpy(),
                mode="lines+markers",
                name=str(name),
                hovertemplate=(
                    f"%{{fullData.name}}<br>%{{x|{_X_FORMATS[freq]}}}: median %{{y:,.0f}} {money}"
                    "<br>%{customdata:,} sales<extra></extra>"
                ),
            )
        )
    figure.update_layout(
        template=_TEMPLATE,
        title=f"{title} ({len(sales):,} sales)",
        xaxis_title=f"{freq.capitalize()} of sale",
        yaxis_title=f"Median sale price ({money})",
        yaxis_tickformat=",.0f",
        legend_title_text=_label(by) if by else None,
    )
    return figure


def epc_chart(df: pd.DataFrame) -> go.Figure:
    """How many properties are in each EPC band now and could be: current vs potential, A-G.

    Parameters
    ----------
    df
        The property frame, or an EPC table from :func:`propertykit.frames.epc_table`.

    Returns
    -------
    plotly.graph_objects.Figure
        Two grouped ``Bar`` traces, ``Current`` (solid) and ``Potential`` (pale), each bar in
        its band's official colour (:data:`EPC_COLOURS`).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = epc_chart(pk.frame(generate_records(50)))
    >>> [trace.name for trace in fig.data], list(fig.data[0].x)
    (['Current', 'Potential'], ['A', 'B', 'C', 'D', 'E', 'F', 'G'])
    """
    table = _epc(df)
    title = "EPC ratings: current and potential"
    current = _band_counts(table["currentEnergyRating"])
    potential = _band_counts(table["potentialEnergyRating"])
    if current.sum() == 0 and potential.sum() == 0:
        return _empty_figure(title, "no EPC ratings to plot")
    colours = [EPC_COLOURS[band] for band in _BANDS]
    figure = go.Figure()
    # potential bars are pale with a solid outline (plotly.js warns on hatch patterns combined
    # with per-bar colours, so no patterns)
    for name, counts, opacity in (("Current", current, 1.0), ("Potential", potential, 0.45)):
        share = counts / max(int(counts.sum()), 1)
        figure.add_trace(
            go.Bar(
                x=list(_BANDS),
                y=counts.to_numpy(),
                name=name,
                customdata=share.to_numpy(),
                marker={
                    "color": colours,
                    "opacity": opacity,
                    "line": {"color": colours, "width": 2},
                },
                hovertemplate=(
                    f"{name} rating %{{x}}: %{{y:,}} properties"
                    " (%{customdata:.0%})<extra></extra>"
                ),
            )
        )
    rated = int(max(current.sum(), potential.sum()))
    figure.update_layout(
        template=_TEMPLATE,
        barmode="group",
        title=f"{title} ({rated:,} rated properties)",
        xaxis_title="EPC rating (A = most efficient)",
        yaxis_title="Properties (count)",
        legend_title_text="Rating",
    )
    return figure


def epc_price_chart(df: pd.DataFrame, *, price: str = "pricing.estimatedSaleValue") -> go.Figure:
    """Price by current EPC rating: a box (quartiles, 1.5 IQR whiskers) per band.

    Parameters
    ----------
    df
        The property frame.
    price
        The money column to compare across bands.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Box`` trace per band present, in the band's colour, built from precomputed
        quartiles (so the figure stays small however many properties there are).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = epc_price_chart(pk.frame(generate_records(100)))
    >>> fig.layout.yaxis.title.text
    'Estimated sale value (GBP)'
    """
    _require_columns(df, ("epc.currentEnergyRating", price))
    name = _label(price)
    title = f"{name} by current EPC rating"
    values = pd.DataFrame(
        {"band": df["epc.currentEnergyRating"].astype("object"), "price": pd.to_numeric(df[price])}
    ).dropna()
    if values.empty:
        return _empty_figure(title, "no properties with both a rating and a price")
    money = _money_unit(df)
    figure = go.Figure()
    values = values.sort_values("band", key=lambda b: b.map({x: i for i, x in enumerate(_BANDS)}))
    for band, rows in values.groupby("band", sort=False):
        prices = rows["price"].to_numpy(dtype=float)
        q1, median, q3 = np.percentile(prices, [25, 50, 75])
        reach = 1.5 * (q3 - q1)
        inside = prices[(prices >= q1 - reach) & (prices <= q3 + reach)]
        figure.add_trace(
            go.Box(
                x=[band],
                q1=[q1],
                median=[median],
                q3=[q3],
                lowerfence=[inside.min()],
                upperfence=[inside.max()],
                name=f"{band} ({len(prices):,})",
                marker_color=EPC_COLOURS.get(str(band), _MISSING_COLOUR),
                fillcolor=EPC_COLOURS.get(str(band), _MISSING_COLOUR),
                line_color="#333333",
            )
        )
    figure.update_layout(
        template=_TEMPLATE,
        title=f"{title} ({len(values):,} properties)",
        xaxis={
            "title": "Current EPC rating (A = most efficient)",
            "categoryorder": "array",
            "categoryarray": list(_BANDS),
        },
        yaxis_title=f"{name} ({money})",
        yaxis_tickformat=",.0f",
        legend_title_text="Rating (properties)",
    )
    return figure


def property_map(
    df: pd.DataFrame,
    *,
    color: str | None = None,
    geometry: Literal["point", "boundary"] = "point",
    classes: int = 5,
) -> go.Figure:
    """A map of the properties that needs no tiles: points, or filled boundaries.

    Parameters
    ----------
    df
        The property frame (``spatial.lat``/``spatial.lng``, or ``spatial.boundary``).
    color
        Column to colour by. Categories (and EPC ratings, in their official colours) get one
        legend entry each; numbers get a colour scale (points) or ``classes`` quantile classes
        (boundaries). Missing values are grey.
    geometry
        ``"point"`` for one marker per property, ``"boundary"`` for filled boundaries
        (choropleth-style) with a marker per property for hover.
    classes
        Number of quantile classes for a numeric ``color`` on a boundary map.

    Returns
    -------
    plotly.graph_objects.Figure
        ``Scattergeo`` traces on a tile-free geo subplot fitted to the data.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> fig = property_map(pk.frame(generate_records(30)), color="epc.currentEnergyRating")
    >>> fig.data[0].type, fig.layout.geo.fitbounds
    ('scattergeo', 'locations')
    """
    from propertykit.geo import to_geodataframe

    if color is not None:
        _require_columns(df, (color,))
    gdf = to_geodataframe(df, geometry=geometry, nested="keep")
    gdf = gdf[gdf.geometry.notna()]
    what = "boundaries" if geometry == "boundary" else "properties"
    title = ("Property boundaries" if geometry == "boundary" else "Properties") + (
        f" by {_lower_first(_label(color))}" if color else ""
    )
    if gdf.empty:
        return _empty_figure(title, f"no {what} with a location to map")

    values = gdf[color] if color else None
    hover = _hover_text(gdf, color)
    figure = go.Figure()
    if geometry == "boundary":
        _add_boundaries(figure, gdf.geometry.to_numpy(), values, hover, classes, _money_unit(df))
    else:
        _add_points(figure, gdf.geometry.x.to_numpy(), gdf.geometry.y.to_numpy(), values, hover, df)
    figure.update_geos(
        fitbounds="locations",
        projection_type="mercator",
        showland=False,
        showocean=False,
        showlakes=False,
        showrivers=False,
        showcountries=False,
        showcoastlines=False,
        showsubunits=False,
        showframe=True,
        bgcolor="white",
        lonaxis={"showgrid": True, "gridcolor": "#e5e5e5"},
        lataxis={"showgrid": True, "gridcolor": "#e5e5e5"},
    )
    figure.update_layout(
        template=_TEMPLATE,
        title=f"{title} ({len(gdf):,} mapped)",
        legend_title_text=_label(color) if color else None,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return figure


# --- map layers -----------------------------------------------------------------------------


def _add_points(
    figure: go.Figure,
    x: np.ndarray,
    y: np.ndarray,
    values: pd.Series | None,
    hover: np.ndarray,
    df: pd.DataFrame,
) -> None:
    if values is None:
        figure.add_trace(_markers(x, y, hover, name="Properties", color="#1f5fa8"))
    elif _is_numeric(values):
        numbers = pd.to_numeric(values).to_numpy(dtype=float, na_value=np.nan)
        known = np.isfinite(numbers)
        unit = f" ({_money_unit(df)})" if _is_money(values.name) else ""
        marker = {
            "color": numbers[known],
            "colorscale": "Viridis",
            "colorbar": {"title": {"text": f"{_label(values.name)}{unit}"}, "tickformat": ",.0f"},
        }
        figure.add_trace(
            _markers(x[known], y[known], hover[known], name=_label(values.name), marker=marker)
        )
        if (~known).any():
            figure.add_trace(
                _markers(
                    x[~known], y[~known], hover[~known], name="not given", color=_MISSING_COLOUR
                )
            )
    else:
        for name, mask, colour in _categories(values):
            figure.add_trace(_markers(x[mask], y[mask], hover[mask], name=name, color=colour))


def _add_boundaries(
    figure: go.Figure,
    geometries: np.ndarray,
    values: pd.Series | None,
    hover: np.ndarray,
    classes: int,
    money: str,
) -> None:
    if values is None:
        groups = [("Boundaries", np.ones(len(geometries), dtype=bool), "#1f5fa8")]
    elif _is_numeric(values):
        groups = _quantile_classes(values, classes, money if _is_money(values.name) else "")
    else:
        groups = _categories(values)
    anchors = shapely.point_on_surface(geometries)
    for name, mask, colour in groups:
        lon, lat = _outline_coordinates(geometries[mask])
        figure.add_trace(
            go.Scattergeo(
                lon=lon,
                lat=lat,
                mode="lines",
                fill="toself",
                fillcolor=colour,
                name=name,
                legendgroup=name,
                line={"color": colour, "width": 1.5},
                hoverinfo="skip",
            )
        )
        figure.add_trace(
            _markers(
                shapely.get_x(anchors[mask]),
                shapely.get_y(anchors[mask]),
                hover[mask],
                name=name,
                color=colour,
                legendgroup=name,
                showlegend=False,
                size=5,
            )
        )


def _outline_coordinates(geometries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exterior rings of every polygon as lon/lat arrays, rings separated by NaN (a gap)."""
    parts = shapely.get_parts(geometries)
    polygons = parts[shapely.get_type_id(parts) == shapely.GeometryType.POLYGON]
    coordinates, ring = shapely.get_coordinates(
        shapely.get_exterior_ring(polygons), return_index=True
    )
    breaks = np.flatnonzero(np.diff(ring)) + 1
    with_gaps = np.insert(coordinates, breaks, np.nan, axis=0)
    return with_gaps[:, 0], with_gaps[:, 1]


def _markers(
    x: np.ndarray,
    y: np.ndarray,
    hover: np.ndarray,
    *,
    name: str,
    color: str | None = None,
    marker: dict[str, Any] | None = None,
    size: int = 7,
    **kwargs: Any,
) -> go.Scattergeo:
    marker = marker or {"color": color}
    marker.setdefault("size", size)
    marker.setdefault("line", {"color": "white", "width": 0.5})
    return go.Scattergeo(
        lon=np.asarray(x, dtype=float),
        lat=np.asarray(y, dtype=float),
        mode="markers",
        name=name,
        text=list(hover),
        hovertemplate="%{text}<extra></extra>",
        marker=marker,
        **kwargs,
    )


def _categories(values: pd.Series) -> list[tuple[str, np.ndarray, str]]:
    """(legend name, row mask, colour) per category, in category order; missing last, grey."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        names = [c for c in values.cat.categories if (values == c).any()]
    else:
        names = sorted(values.dropna().unique(), key=str)
    epc = all(str(name) in EPC_COLOURS for name in names)
    palette = qualitative.Plotly
    groups = []
    for position, name in enumerate(names):
        colour = EPC_COLOURS[str(name)] if epc else palette[position % len(palette)]
        groups.append((str(name), (values == name).to_numpy(dtype=bool, na_value=False), colour))
    missing = values.isna().to_numpy()
    if missing.any():
        groups.append(("not given", missing, _MISSING_COLOUR))
    return groups


def _quantile_classes(
    values: pd.Series, classes: int, money: str
) -> list[tuple[str, np.ndarray, str]]:
    numbers = pd.to_numeric(values).astype(float)
    binned = pd.qcut(numbers, q=max(1, classes), duplicates="drop")
    intervals = binned.cat.categories
    colours = sample_colorscale("Viridis", list(np.linspace(0, 1, max(len(intervals), 2))))
    unit = f" {money}" if money else ""
    groups = [
        (
            f"{i.left:,.0f} to {i.right:,.0f}{unit}",
            (binned == i).to_numpy(dtype=bool, na_value=False),
            colours[k],
        )
        for k, i in enumerate(intervals)
    ]
    if numbers.isna().any():
        groups.append(("not given", numbers.isna().to_numpy(), _MISSING_COLOUR))
    return groups


def _hover_text(gdf: pd.DataFrame, color: str | None) -> np.ndarray:
    for column in ("address.displayAddress", "propertyId"):
        if column in gdf.columns:
            text = (
                gdf[column].astype("object").where(gdf[column].notna(), "(no address)").astype(str)
            )
            break
    else:
        text = pd.Series(gdf.index.astype(str), index=gdf.index)
    if color:
        shown = gdf[color].map(
            lambda v: f"{v:,.0f}" if isinstance(v, int | float) and not pd.isna(v) else v
        )
        text = (
            text
            + "<br>"
            + _label(color)
            + ": "
            + shown.astype("object").fillna("not given").astype(str)
        )
    hover: np.ndarray = text.to_numpy(dtype=object)
    return hover


# --- shared helpers -------------------------------------------------------------------------


def _sales(df: pd.DataFrame) -> pd.DataFrame:
    if "saleHistory" in df.columns:
        from propertykit.frames import explode_sales

        return explode_sales(df)
    _require_columns(df, ("date", "price"))
    return df


def _epc(df: pd.DataFrame) -> pd.DataFrame:
    if "epc.currentEnergyRating" in df.columns:
        from propertykit.frames import epc_table

        return epc_table(df)
    _require_columns(df, ("currentEnergyRating", "potentialEnergyRating"))
    return df


def _band_counts(ratings: pd.Series) -> pd.Series:
    letters = ratings.astype("object").dropna().astype(str).str.strip().str.upper()
    return letters.value_counts().reindex(list(_BANDS), fill_value=0).astype(int)


def _top_groups(values: pd.Series, limit: int) -> pd.Series:
    """Group names by number of sales, largest first; beyond ``limit`` the rest are "Other"."""
    text = values.astype("object").where(values.notna(), "not given").astype(str)
    counts = text.value_counts()
    if len(counts) > limit:
        keep = list(counts.index[: max(limit - 1, 1)])
        text = text.where(text.isin(keep), "Other")
        counts = text.value_counts()
    order = [name for name in counts.index if name != "Other"] + ["Other"]
    return pd.Series(
        pd.Categorical(text, categories=[n for n in order if n in counts.index]), index=text.index
    )


def _money_unit(df: pd.DataFrame) -> str:
    currency = df.attrs.get("currency") or "currency not stated"
    return f"{currency}, minor units" if df.attrs.get("money_unit") == "minor" else str(currency)


def _lower_first(text: str) -> str:
    """'Current EPC rating' -> 'current EPC rating' (acronyms keep their case)."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _label(column: str | None) -> str:
    return _COLUMN_LABELS.get(str(column), (str(column), False))[0]


def _is_money(column: Any) -> bool:
    return _COLUMN_LABELS.get(str(column), ("", False))[1]


def _is_numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _empty_figure(title: str, reason: str) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(
        template=_TEMPLATE,
        title=f"{title}: no data ({reason})",
        xaxis_visible=False,
        yaxis_visible=False,
        annotations=[
            {
                "text": f"No data: {reason}",
                "showarrow": False,
                "font": {"size": 16},
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ],
    )
    return figure
