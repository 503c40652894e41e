"""Comparable evidence, seen: the subject on a map among its comparables, the value range, the
comparables table and the caveats in plain words.

:func:`comparable_evidence` gathers, for one subject, what the frames layer computes
(:func:`~propertykit.frames.comparables` and :func:`~propertykit.frames.valuation`, with the
same search), in pounds whatever unit the frame was served in. :func:`comparables_map`
(``df.pk.comparables_map(subject)``) draws it: the subject marked, its comparables coloured by
their price per m² brought to the valuation date, the circle that was searched, on the bundled
outline or street tiles (:mod:`~propertykit.views.basemap`). :func:`evidence_html` is the same
evidence as HTML (the range, the table, the caveats), every text from the data escaped: the
report's "Comparable evidence" section and the valuation form show it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from propertykit.views import basemap as ground
from propertykit.views import context
from propertykit.views import figures as shared
from propertykit.views.context import Extent
from propertykit.views.figures import TEMPLATE

__all__ = [
    "ComparableEvidence",
    "caveats",
    "comparable_evidence",
    "comparables_map",
    "evidence_html",
    "value_range_text",
]

MAP_HEIGHT = 560
SUBJECT_COLOUR = "#c0392b"
#: The comparables table as shown: column -> heading.
SHOWN_COLUMNS = {
    "address": "Address",
    "date": "Sold",
    "price": "Price (£)",
    "adjusted_price": "Price brought to the valuation date (£)",
    "adjusted_price_per_sqm": "£ per m², brought to the valuation date",
    "floorAreaSqM": "Floor area (m²)",
    "beds": "Beds",
    "distance_m": "Distance (m)",
}
_EARTH_RADIUS_M = 6_371_008.8


@dataclass(frozen=True)
class ComparableEvidence:
    """One subject's comparable evidence, prices in pounds (see :func:`comparable_evidence`)."""

    property_id: str | None
    subject: str  # how to name it: its address, else its id
    lat: float
    lng: float
    comparables: pd.DataFrame
    value: pd.Series
    band: Mapping[str, Any]
    left_out: Mapping[str, int]

    @property
    def place(self) -> str | Mapping[str, Any]:
        """The subject as :func:`comparables_map` takes it (its id, else where it is)."""
        return self.property_id or {"lat": self.lat, "lng": self.lng}

    @property
    def radius_m(self) -> float:
        return float(self.comparables.attrs["radius_m"])

    @property
    def as_of(self) -> pd.Timestamp:
        return pd.Timestamp(self.comparables.attrs["as_of"])


def comparable_evidence(
    df: pd.DataFrame, subject: str | Mapping[str, Any], **search: Any
) -> ComparableEvidence:
    """A subject's comparables and valuation from one search, in pounds.

    Parameters
    ----------
    df
        The property frame.
    subject
        A ``propertyId`` of ``df``, or a mapping (``lat``, ``lng``, ``floorAreaSqM``,
        ``propertyType``, optionally ``beds`` and ``propertyId``).
    **search
        ``as_of``, ``radius_m``, ``months``, ``limit``, ``index``, ``min_comparables``: as for
        :func:`propertykit.frames.valuation`.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> found = comparable_evidence(pk.frame(generate_records(3000)), "PK00000007",
    ...                             as_of="2025-01-01")
    >>> found.subject, int(found.value["comparables"]) == len(found.comparables)
    ('66 Cedar Drive, West Bridgford, Nottingham, NG2 6BU', True)
    """
    from propertykit import frames  # the functions, not their modules of the same name

    shown = shared.for_display(df)  # pounds, whatever the served unit
    least = search.pop("min_comparables", 5)
    found = frames.comparables(shown, subject, min_comparables=least, **search)
    values = frames.valuation(shown, [subject], min_comparables=least, **search)
    lat, lng, name = _place(shown, subject)
    address = shown.drop_duplicates("propertyId").set_index("propertyId")
    table = found.drop(columns=["address"], errors="ignore")  # named again below, never missing
    if "address.displayAddress" in address.columns:
        text = address["address.displayAddress"].astype("object")
        named = table["propertyId"].map(text).astype("object")
        table.insert(1, "address", named.where(named.notna(), table["propertyId"]))
    else:
        table.insert(1, "address", table["propertyId"].astype("object"))
    table.attrs = dict(found.attrs)
    given = subject if isinstance(subject, str) else subject.get("propertyId")
    return ComparableEvidence(
        property_id=None if given is None else str(given),
        subject=name,
        lat=lat,
        lng=lng,
        comparables=table,
        value=values.iloc[0],
        band=dict(values.attrs.get("band") or {}),
        left_out=dict(found.attrs.get("left_out") or {}),
    )


def _place(df: pd.DataFrame, subject: str | Mapping[str, Any]) -> tuple[float, float, str]:
    if isinstance(subject, Mapping):
        name = subject.get("propertyId") or "the subject"
        return float(subject["lat"]), float(subject["lng"]), str(name)
    row = df.loc[df["propertyId"] == subject].iloc[0]
    address = row.get("address.displayAddress")
    name = str(address) if isinstance(address, str) and address else subject
    return float(row["spatial.lat"]), float(row["spatial.lng"]), name


def comparables_map(
    df: pd.DataFrame,
    subject: str | Mapping[str, Any],
    *,
    basemap: ground.Basemap = "auto",
    tiles: str | None = None,
    attribution: str | None = None,
    evidence: ComparableEvidence | None = None,
    **search: Any,
) -> go.Figure:
    """The subject among its comparable sales: a map a reader can check the evidence on.

    Parameters
    ----------
    df
        The property frame.
    subject
        A ``propertyId`` of ``df`` or a mapping describing a property (as for
        :func:`propertykit.frames.comparables`).
    basemap, tiles, attribution
        As for :func:`propertykit.views.maps.property_map` (``"outline"`` works offline).
    evidence
        Evidence already gathered by :func:`comparable_evidence` (``search`` is then unused).
    **search
        ``as_of``, ``radius_m``, ``months``, ``limit``, ``index``, ``min_comparables``.

    Returns
    -------
    plotly.graph_objects.Figure
        The searched circle, the comparables coloured by their price per m² brought to the
        valuation date (pounds; one marker per property, coloured by its best-weighted sale,
        every sale in its hover text), and the subject as a red star, north up with a scale bar.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> df = pk.frame(generate_records(3000))
    >>> figure = df.pk.comparables_map("PK00000007", as_of="2025-01-01", basemap="outline")
    >>> [trace.name for trace in figure.data][-3:]
    ['Searched within 8 km', '£ per m², brought to the valuation date', 'Subject']
    """
    found = evidence or comparable_evidence(df, subject, **search)
    chosen, streets = ground.street_route(ground.resolve_basemap(basemap), tiles, attribution)
    circle_lng, circle_lat = _circle(found.lng, found.lat, found.radius_m)
    table = found.comparables
    lng, lat = _locations(shared.for_display(df), table)
    extent = context.fit_extent(
        np.concatenate([circle_lng, lng, [found.lng]]),
        np.concatenate([circle_lat, lat, [found.lat]]),
        pad=0.04,
    )
    figure = go.Figure()
    if chosen == "outline":
        figure.add_traces(ground.outline_traces(extent))
    figure.add_trace(
        go.Scatter(
            x=circle_lng.round(6), y=circle_lat.round(6), mode="lines", hoverinfo="skip",
            name=f"Searched within {_distance(found.radius_m)}",
            line={"color": "#555555", "width": 1.5, "dash": "dash"},
        )
    )  # fmt: skip
    homes = _by_property(table, lng, lat)
    figure.add_trace(
        go.Scatter(
            x=homes["lng"].round(6), y=homes["lat"].round(6), mode="markers",
            text=homes["hover"], hovertemplate="%{text}<extra></extra>",
            name=SHOWN_COLUMNS["adjusted_price_per_sqm"],
            marker={"size": 11, "color": homes["colour"].to_numpy(dtype=float),
                    "colorscale": "Viridis", "line": {"color": "white", "width": 1},
                    "colorbar": {"title": {"text": "£ per m²"}, "tickformat": ",.0f"}},
        )
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(
            x=[round(found.lng, 6)], y=[round(found.lat, 6)], mode="markers", name="Subject",
            text=[html.escape(found.subject)], hovertemplate="Subject: %{text}<extra></extra>",
            marker={"symbol": "star", "size": 18, "color": SUBJECT_COLOUR,
                    "line": {"color": "white", "width": 1.5}},
        )
    )  # fmt: skip
    _frame(figure, extent, sea=chosen == "outline")
    count = len(table)
    figure.update_layout(
        template=TEMPLATE,
        title=(
            f"Comparable sales of {html.escape(found.subject)}<br><sup>{count:,} sold within "
            f"{_distance(found.radius_m)} before {found.as_of:%d %B %Y}; colour: £ per m², "
            "brought to that date</sup>"
        ),
        height=MAP_HEIGHT,
        margin={"l": 10, "r": 10, "t": 60, "b": 60},
        legend={"orientation": "h", "x": 0, "y": 0, "yanchor": "top"},
    )
    if streets is not None:
        streets.bake(figure)
    if chosen == "tiles":
        return ground.to_tiles(figure, extent, tiles=tiles, attribution=attribution)
    return figure


def _by_property(table: pd.DataFrame, lng: np.ndarray, lat: np.ndarray) -> pd.DataFrame:
    """One marker per property (a home sold twice is one place): coloured by its best-weighted
    sale (the table is best first), every sale of it in the hover text, escaped."""
    lines = [
        f"Sold {d:%b %Y} for £{p:,.0f}: £{q:,.0f} per m² at the valuation date"
        for d, p, q in zip(
            table["date"], table["price"], table["adjusted_price_per_sqm"], strict=True
        )
    ]
    rows = pd.DataFrame(
        {"propertyId": table["propertyId"], "lng": lng, "lat": lat, "line": lines,
         "colour": table["adjusted_price_per_sqm"], "address": table["address"].astype(str),
         "away": table["distance_m"]}
    )  # fmt: skip
    grouped = rows.groupby("propertyId", sort=False)
    homes = grouped.agg(lng=("lng", "first"), lat=("lat", "first"), colour=("colour", "first"),
                        address=("address", "first"), away=("away", "first"))  # fmt: skip
    sold = grouped["line"].agg("<br>".join)
    homes["hover"] = [
        f"{html.escape(address)} ({away:,.0f} m away)<br>{sales}"
        for address, away, sales in zip(homes["address"], homes["away"], sold, strict=True)
    ]
    return homes.reset_index()


def _locations(df: pd.DataFrame, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    homes = df.drop_duplicates("propertyId").set_index("propertyId")
    lng = table["propertyId"].map(pd.to_numeric(homes["spatial.lng"], errors="coerce"))
    lat = table["propertyId"].map(pd.to_numeric(homes["spatial.lat"], errors="coerce"))
    return lng.to_numpy(dtype=float), lat.to_numpy(dtype=float)


def _circle(lng: float, lat: float, radius_m: float, points: int = 96) -> tuple[np.ndarray, ...]:
    """A circle of ``radius_m`` about (lng, lat), in degrees (closed)."""
    angle = np.linspace(0, 2 * np.pi, points + 1)
    dlat = np.degrees(radius_m / _EARTH_RADIUS_M) * np.sin(angle)
    dlng = np.degrees(radius_m / _EARTH_RADIUS_M) * np.cos(angle) / math.cos(math.radians(lat))
    return lng + dlng, lat + dlat


def _distance(metres: float) -> str:
    return f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:,.0f} m"


def _frame(figure: go.Figure, extent: Extent, *, sea: bool) -> None:
    """North-up axes fitted to ``extent`` (a kilometre as long across as up), a scale bar."""
    hidden = {"showgrid": False, "zeroline": False, "showticklabels": False, "ticks": ""}
    figure.update_xaxes(range=[extent.west, extent.east], constrain="domain", **hidden)
    figure.update_yaxes(
        range=[extent.south, extent.north], scaleanchor="x",
        scaleratio=round(1 / extent.cos_lat, 4), constrain="domain", **hidden,
    )  # fmt: skip
    figure.update_layout(plot_bgcolor=ground.SEA if sea else "white")
    x0, x1, y, text = context.scale_bar(extent)
    figure.add_shape(type="line", x0=x0, x1=x1, y0=y, y1=y, name="scale bar",
                     line={"color": "#1b1b1b", "width": 2})  # fmt: skip
    figure.add_annotation(x=(x0 + x1) / 2, y=y, yshift=12, text=text, showarrow=False,
                          bgcolor="rgba(255,255,255,0.72)", name="scale bar")  # fmt: skip


# --- the same evidence as HTML -----------------------------------------------------------------


def value_range_text(evidence: ComparableEvidence) -> str:
    """The estimate and its range in one plain sentence (or why there is none)."""
    value = evidence.value
    when = f"{evidence.as_of:%d %B %Y}"
    used = int(value["comparables"])
    if bool(value["thin"]) or pd.isna(value["estimate"]):
        return (
            f"No estimate for {evidence.subject} on {when}: {value['method']} "
            f"({used} found). propertykit gives no value rather than a guess."
        )
    return (
        f"{evidence.subject} on {when}: about £{value['estimate']:,.0f}, likely between "
        f"£{value['lower']:,.0f} and £{value['upper']:,.0f} (8 in 10 chance), from {used} "
        f"comparable sales at £{value['price_per_sqm']:,.0f} per m²."
    )


def caveats(evidence: ComparableEvidence) -> list[str]:
    """What a reader should know before relying on the range, in plain words."""
    found = evidence.comparables
    index = str(found.attrs["index"])
    said = [
        f"Comparables are {found.attrs['criteria']}.",
        "Earlier prices are taken as sold: too few homes sold twice to measure how the market "
        "moved."
        if index.startswith("none")
        else f"Index used: earlier prices are brought to the valuation date by {index}.",
    ]
    if evidence.band.get("how"):
        said.append(f"How the range was set: {evidence.band['how']}.")
    if evidence.radius_m > 2000:
        said.append(
            f"The search had to widen to {_distance(evidence.radius_m)} to find enough sales, "
            "so the evidence is less local than it would be in a busier market."
        )
    own = found[found["own_sale"]]
    if len(own):
        said.append(
            f"The property's own earlier sale ({own['date'].iloc[0]:%B %Y}) is among the "
            "comparables and weighs more than the others."
        )
    for reason, count in evidence.left_out.items():
        said.append(f"{count:,} {reason} could not be compared and were left out.")
    said.append(
        "Floor areas are the ones recorded now: a home extended since it was sold is compared "
        "at its present size."
    )
    return said


def evidence_html(evidence: ComparableEvidence, *, rows: int = 20, with_range: bool = True) -> str:
    """The range (unless ``with_range=False``), the comparables table and the caveats as HTML,
    every text from the data escaped.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> found = comparable_evidence(pk.frame(generate_records(3000)), "PK00000007",
    ...                             as_of="2025-01-01")
    >>> page = evidence_html(found)
    >>> page.count("<table"), "attrs" in page
    (1, False)
    """
    table = evidence.comparables.head(rows)
    head = "".join(f"<th>{html.escape(title)}</th>" for title in SHOWN_COLUMNS.values())
    body = "".join(
        "<tr>" + "".join(_cell(column, row[column]) for column in SHOWN_COLUMNS) + "</tr>"
        for _, row in table.iterrows()
    )
    if not len(table):
        body = f'<tr><td colspan="{len(SHOWN_COLUMNS)}">No comparable sales were found.</td></tr>'
    notes = "".join(f"<li>{html.escape(text)}</li>" for text in caveats(evidence))
    value = html.escape(value_range_text(evidence))
    return (
        f'<p class="value-range"><strong>{value}</strong></p>' if with_range else ""
    ) + f'<table class="comparables"><tr>{head}</tr>{body}</table><ul class="caveats">{notes}</ul>'


def _cell(column: str, value: Any) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "<td>not given</td>"
    if column == "date":
        return f"<td>{value:%d %b %Y}</td>"
    if column == "address":
        return f"<td>{html.escape(str(value))}</td>"
    return f'<td class="number">{float(value):,.0f}</td>'
