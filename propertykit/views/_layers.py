"""The data layers of a map, as x/y traces (x = longitude, y = latitude).

- Points: one marker per property; WebGL (``scattergl``) above :data:`WEBGL_FROM` points, SVG
  below (a few hundred markers draw faster in SVG and print in every export).
- Aggregates: one marker per outcode or town, sized by how many properties it holds (the level of
  detail for a zoomed-out map of many thousands of properties; see :mod:`detail`).
- Boundaries: every polygon of a colour class in ONE filled trace, rings separated by gaps, with a
  square legend swatch of the fill colour and an invisible marker per plot for hover.

Coordinates are rounded to 5 decimals (about a metre): finer detail is invisible and only makes
the figure bigger.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import shapely
from plotly.colors import qualitative, sample_colorscale

from propertykit.views import _figures as shared
from propertykit.views._figures import EPC_COLOURS, MISSING_COLOUR

DIGITS = 5
#: From this many points on, markers are drawn with WebGL.
WEBGL_FROM = 2_000
POINT_COLOUR = "#1f5fa8"
#: The legend name of properties without a value of the coloured column.
MISSING = "not given"
# legend ranks: values first, "not given" last (whatever order the traces are drawn in)
_FIRST, _LAST = 900, 1100

Group = tuple[str, np.ndarray, str]


def add_points(
    figure: go.Figure,
    x: np.ndarray,
    y: np.ndarray,
    values: pd.Series | None,
    hover: np.ndarray,
    money: str,
    *,
    size: int = 7,
) -> None:
    """One marker per property, coloured by ``values`` (categories, a number, or none).

    WebGL from :data:`WEBGL_FROM` points on the whole map (every trace alike)."""
    gl = len(x) >= WEBGL_FROM
    if values is None:
        figure.add_trace(
            _markers(x, y, hover, name="Properties", color=POINT_COLOUR, size=size, gl=gl)
        )
    elif shared.is_numeric(values):
        numbers = pd.to_numeric(values).to_numpy(dtype=float, na_value=np.nan)
        known = np.isfinite(numbers)
        marker = {
            "color": numbers[known],
            "colorscale": "Viridis",
            "colorbar": _colorbar(values, money),
        }
        if (~known).any():  # underneath the coloured markers, last in the legend
            figure.add_trace(
                _markers(
                    x[~known], y[~known], hover[~known], name=MISSING, color=MISSING_COLOUR,
                    size=size, gl=gl, legendrank=_LAST,
                )
            )  # fmt: skip
        figure.add_trace(
            _markers(
                x[known],
                y[known],
                hover[known],
                name=shared.label(values.name),
                marker=marker,
                size=size,
                gl=gl,
                legendrank=_FIRST,
            )
        )
    else:
        for name, mask, colour in underneath_first(categories(values)):
            figure.add_trace(
                _markers(
                    x[mask], y[mask], hover[mask], name=name, color=colour, size=size, gl=gl,
                    legendrank=_LAST if name == MISSING else _FIRST,
                )
            )  # fmt: skip


def add_aggregates(figure: go.Figure, groups: pd.DataFrame, color: str | None, money: str) -> None:
    """One marker per area (``groups`` from :func:`detail.aggregate`), area ∝ properties held."""
    counts = groups["count"].to_numpy(dtype=float)
    sizes = bubble_sizes(counts, counts.max())
    _add_size_key(figure, int(counts.max()))
    hover = (
        groups["area"].astype(str)
        + ": "
        + groups["count"].map(lambda n: f"{n:,} propert{'y' if n == 1 else 'ies'}")
    ).to_numpy(dtype=object)
    x, y = groups["lon"].to_numpy(), groups["lat"].to_numpy()
    values = groups["value"] if "value" in groups.columns else None
    if values is not None and color is not None:
        values = values.rename(color)
        word = "median " if shared.is_numeric(values) else "mostly "
        hover = hover + "<br>" + word + _shown(values).to_numpy()
    if values is None or color is None:
        figure.add_trace(
            _markers(x, y, hover, name="Properties", color=POINT_COLOUR, marker={"size": sizes})
        )
        return
    if shared.is_numeric(values):
        numbers = pd.to_numeric(values).to_numpy(dtype=float, na_value=np.nan)
        marker = {
            "size": sizes,
            "color": numbers,
            "colorscale": "Viridis",
            "colorbar": _colorbar(values, money),
        }
        figure.add_trace(_markers(x, y, hover, name=shared.label(color), marker=marker))
        return
    for name, mask, colour in underneath_first(categories(values)):
        figure.add_trace(
            _markers(
                x[mask],
                y[mask],
                hover[mask],
                name=name,
                marker={"size": sizes[mask], "color": colour},
                legendrank=_LAST if name == MISSING else _FIRST,
            )
        )


def bubble_sizes(counts: np.ndarray, most: float) -> np.ndarray:
    """Marker diameters in pixels for areas holding ``counts`` properties: area in proportion to
    the count (``most`` is 34 px across), never under 5 px."""
    sizes: np.ndarray = np.clip(np.sqrt(np.asarray(counts, dtype=float) / most) * 34, 5, 34)
    return sizes


def _add_size_key(figure: go.Figure, most: int) -> None:
    """Legend entries that read the bubbles' size: round counts up to the largest area's."""
    keys = sorted({_round_down(most), _round_down(most / 4), _round_down(most / 16)} - {0})
    for count in reversed(keys):
        figure.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=f"{count:,} propert{'y' if count == 1 else 'ies'}",
                legendgroup="size key",
                legendgrouptitle_text="Properties per area",
                legendrank=_LAST + 1,
                marker={
                    "size": float(bubble_sizes(np.array([count]), most)[0]),
                    "color": "rgba(0,0,0,0)",
                    "line": {"color": "#505050", "width": 1.5},
                },
                hoverinfo="skip",
                meta="key",
            )
        )


def _round_down(value: float) -> int:
    """The largest of 1, 2 or 5 times a power of ten not above ``value`` (0 below 1)."""
    if value < 1:
        return 0
    power = 10 ** int(np.floor(np.log10(value)))
    return int(max(step * power for step in (1, 2, 5) if step * power <= value))


def boundary_groups(values: pd.Series | None, count: int, classes: int, money: str) -> list[Group]:
    """Colour classes of boundaries: one, categories, or quantile classes of a number."""
    if values is None:
        return [("Boundaries", np.ones(count, dtype=bool), POINT_COLOUR)]
    if shared.is_numeric(values):
        return quantile_classes(values, classes, money if shared.is_money(values.name) else "")
    return categories(values)


def add_boundaries(
    figure: go.Figure,
    geometries: np.ndarray,
    groups: list[Group],
    hover: np.ndarray,
    *,
    where: np.ndarray | None = None,
    legend: bool = True,
) -> None:
    """Filled boundaries, one trace per colour class, with fill-coloured square legend swatches.

    ``where`` limits the boundaries drawn (one map of several); ``legend`` adds the swatches.
    """
    if where is not None:
        geometries, hover = geometries[where], hover[where]
        groups = [(name, mask[where], colour) for name, mask, colour in groups]
    anchors = shapely.point_on_surface(geometries)
    for name, mask, colour in underneath_first(groups):
        if mask.any():
            _add_fill(figure, geometries[mask], anchors[mask], hover[mask], name, colour)
    for name, _, colour in groups if legend else []:  # a square of the fill colour
        figure.add_trace(shared.legend_square(name, colour, outline="#303030", width=1))


def _add_fill(
    figure: go.Figure,
    geometries: np.ndarray,
    anchors: np.ndarray,
    hover: np.ndarray,
    name: str,
    colour: str,
) -> None:
    lon, lat = outline_coordinates(geometries)
    figure.add_trace(
        go.Scatter(
            x=lon,
            y=lat,
            mode="lines",
            fill="toself",
            fillcolor=colour,
            name=name,
            legendgroup=name,
            showlegend=False,
            line={"color": "#303030", "width": 0.8},
            hoverinfo="skip",
        )
    )
    figure.add_trace(  # invisible markers: hover per plot (a fill has one hover per trace)
        _markers(
            shapely.get_x(anchors),
            shapely.get_y(anchors),
            hover,
            name=name,
            legendgroup=name,
            showlegend=False,
            marker={"color": colour, "opacity": 0, "size": 8},
            gl=len(geometries) >= WEBGL_FROM,
        )
    )


def add_overview(
    figure: go.Figure, x: np.ndarray, y: np.ndarray, groups: list[Group], hover: np.ndarray
) -> None:
    """Every boundary as a small marker of its class colour: where the plots are, at a glance."""
    gl = len(x) >= WEBGL_FROM
    for name, mask, colour in underneath_first(groups):
        if mask.any():
            figure.add_trace(
                _markers(
                    x[mask],
                    y[mask],
                    hover[mask],
                    name=name,
                    color=colour,
                    size=6,
                    gl=gl,
                    legendgroup=name,
                    showlegend=False,
                )
            )


def outline_coordinates(geometries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exterior rings of every polygon as lon/lat arrays (rounded), rings separated by NaN."""
    parts = shapely.get_parts(geometries)
    polygons = parts[shapely.get_type_id(parts) == shapely.GeometryType.POLYGON]
    coordinates, ring = shapely.get_coordinates(
        shapely.get_exterior_ring(polygons), return_index=True
    )
    breaks = np.flatnonzero(np.diff(ring)) + 1
    with_gaps = np.insert(coordinates.round(DIGITS), breaks, np.nan, axis=0)
    return with_gaps[:, 0], with_gaps[:, 1]


def categories(values: pd.Series) -> list[Group]:
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
        groups.append((MISSING, missing, MISSING_COLOUR))
    return groups


def underneath_first(groups: list[Group]) -> list[Group]:
    """``groups`` in drawing order: properties with no value first, so that the grey markers
    lie under the coloured ones instead of hiding them (the legend still lists them last)."""
    return sorted(groups, key=lambda group: group[0] != MISSING)


def quantile_classes(values: pd.Series, classes: int, money: str) -> list[Group]:
    """Up to ``classes`` classes of equal counts; with that many distinct values or fewer, one
    class per value (one value, one class: a map of one property is still drawn)."""
    numbers = pd.to_numeric(values).astype(float)
    unit = f" {money}" if money else ""
    distinct = np.sort(numbers.dropna().unique())
    if len(distinct) <= max(1, classes):
        colours = sample_colorscale("Viridis", list(np.linspace(0, 1, max(len(distinct), 2))))
        groups = [
            (f"{value:,.0f}{unit}", (numbers == value).to_numpy(dtype=bool), colours[k])
            for k, value in enumerate(distinct)
        ]
    else:
        binned = pd.qcut(numbers, q=max(1, classes), duplicates="drop")
        intervals = binned.cat.categories
        colours = sample_colorscale("Viridis", list(np.linspace(0, 1, max(len(intervals), 2))))
        groups = [
            (
                f"{i.left:,.0f} to {i.right:,.0f}{unit}",
                (binned == i).to_numpy(dtype=bool, na_value=False),
                colours[k],
            )
            for k, i in enumerate(intervals)
        ]
    if numbers.isna().any():
        groups.append((MISSING, numbers.isna().to_numpy(), MISSING_COLOUR))
    return groups


def hover_text(df: pd.DataFrame, color: str | None) -> np.ndarray:
    """Short hover text: the address (or id), and the coloured value."""
    for column in ("address.displayAddress", "propertyId"):
        if column in df.columns:
            text = df[column].astype("object").where(df[column].notna(), "(no address)").astype(str)
            break
    else:
        text = pd.Series(df.index.astype(str), index=df.index)
    if color:
        text = text + "<br>" + shared.label(color) + ": " + _shown(df[color])
    hover: np.ndarray = text.to_numpy(dtype=object)
    return hover


def _shown(values: pd.Series) -> pd.Series:
    """Values as hover text: numbers with thousands separators, missing as "not given"."""
    shown = values.map(
        lambda v: f"{v:,.0f}" if isinstance(v, int | float) and not pd.isna(v) else v
    )
    return shown.astype("object").fillna("not given").astype(str)


def _colorbar(values: pd.Series, money: str) -> dict[str, Any]:
    unit = f" ({money})" if shared.is_money(values.name) else ""
    return {"title": {"text": f"{shared.label(values.name)}{unit}"}, "tickformat": ",.0f"}


def _markers(
    x: np.ndarray,
    y: np.ndarray,
    hover: np.ndarray,
    *,
    name: str,
    color: str | None = None,
    marker: dict[str, Any] | None = None,
    size: int = 7,
    gl: bool = False,
    **kwargs: Any,
) -> go.Scatter | go.Scattergl:
    marker = dict(marker or {"color": color})
    marker.setdefault("size", size)
    marker.setdefault("line", {"color": "white", "width": 0.5})
    kind = go.Scattergl if gl else go.Scatter
    return kind(
        x=np.asarray(x, dtype=float).round(DIGITS),
        y=np.asarray(y, dtype=float).round(DIGITS),
        mode="markers",
        name=name,
        text=list(hover),
        hovertemplate="%{text}<extra></extra>",
        marker=marker,
        **kwargs,
    )
