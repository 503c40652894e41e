"""The valuation form: pick a property, see its comparable sales, their map and its value range.

A property is picked from a frame the form was given (``ValuationForm(client, frame=df)``: its
sales are then the evidence, and nothing is fetched), or named by an id in the box: a location
id, a ``<provider>::<id>`` source id, or a ``propertyId`` of the frame. A property the frame does
not hold is fetched, then its neighbourhood (the homes of its type and a similar floor area within
``radius_m`` of it, by the area query's point and radius and condition groups), whose sales are
its evidence. The range, the comparables and the
caveats come from :func:`propertykit.views.comparable_evidence`; errors appear as plain words.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING

import ipywidgets as widgets
import pandas as pd

from propertykit.client import homes_like, parse_ids
from propertykit.text import plural
from propertykit.views import (
    comparable_evidence,
    comparables_map,
    evidence_html,
    value_range_text,
)
from propertykit.widgets import messages as words
from propertykit.widgets.messages import describe_error
from propertykit.widgets.parts import (
    Form,
    column,
    figure_output,
    fill,
    hint,
    label,
    paragraph,
    row,
    text_output,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client
    from propertykit.views import ComparableEvidence

__all__ = ["ValuationForm"]

logger = logging.getLogger("propertykit")

SUBJECT_HINT = (
    "One property: a location id, a source id such as rightmove::123, or pick one from the list."
)
AS_OF_HINT = "The date to value it on, such as 2025-01-01. Empty: the day after the latest sale."
RADIUS_HINT = "For a property the form was not given: how far around it to fetch sales, in metres."
NOTHING_PICKED = "Nothing was sent: type an id or pick a property first."
ONE_ID = "Nothing was sent: type one id, such as L00000042 or rightmove::123."
BAD_DATE = "Nothing was sent: the valuation date must be a date such as 2025-01-01."
BAD_RADIUS = "Nothing was sent: the radius must be above 0 metres."
#: Records per page of the neighbourhood's query (the service's largest).
QUERY_PAGE = 100
#: The most properties of a frame the list offers (a longer list is slow in a browser).
MOST_LISTED = 2000


class ValuationForm(Form):
    """Value one property from its comparable sales: the range, the comparables and a map.

    Parameters
    ----------
    client
        The client to fetch with (its cache, budget and usage are used as they are).
    frame
        Properties to pick from; their sales are the evidence (nothing is fetched for them).
    radius_m
        For a property not in ``frame``: how far around it to fetch its neighbourhood.

    Attributes
    ----------
    subject, picker, as_of, radius, value_button, message, status, range, table, tabs
        The widgets, for driving the form from code.
    value
        The frame the last valuation's evidence came from (``None`` before one).
    evidence
        The last valuation's :class:`~propertykit.views.valuation.ComparableEvidence`.
    figure
        The last valuation's map.

    Examples
    --------
    >>> import propertykit as pk
    >>> form = pk.widgets.ValuationForm(client)
    >>> form.subject.value = "L00000067"
    >>> form.value_button.click()
    >>> form.evidence.value["propertyId"], bool(form.evidence.value["thin"])
    ('PK00000067', False)
    """

    def __init__(
        self, client: Client, *, frame: pd.DataFrame | None = None, radius_m: float = 2000.0
    ) -> None:
        super().__init__(client)
        self.frame = frame
        self.value: pd.DataFrame | None = None
        self.evidence: ComparableEvidence | None = None
        self.figure: go.Figure | None = None
        self._build(radius_m)

    def _build(self, radius_m: float) -> None:
        self.subject = widgets.Text(placeholder="L00000042 or rightmove::123", layout=fill())
        choices: list[tuple[str, str | None]] = [("(none)", None)]
        listed_note = ""
        if self.frame is not None and "propertyId" in self.frame.columns:
            homes = self.frame.drop_duplicates("propertyId")
            names = homes.get("address.displayAddress", homes["propertyId"])
            for pid, name in zip(homes["propertyId"], names, strict=True):
                if isinstance(pid, str) and len(choices) <= MOST_LISTED:
                    choices.append((f"{name if isinstance(name, str) else pid} ({pid})", pid))
            if len(homes) > MOST_LISTED:
                listed_note = (
                    f"The list holds the first {MOST_LISTED:,} of {len(homes):,} properties; "
                    "type the id of any other."
                )
        self.picker = widgets.Dropdown(options=choices, value=None, layout=fill())
        self.picker.layout.display = None if len(choices) > 1 else "none"
        self.picker_note = hint(listed_note)
        self.as_of = widgets.Text(placeholder="YYYY-MM-DD", layout=fill())
        self.radius = widgets.FloatText(value=radius_m, layout=fill())
        self.value_button = widgets.Button(
            description="Value", button_style="primary", icon="calculator"
        )
        self.message, self.status, self.range = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.table = widgets.HTML(layout=widgets.Layout(overflow="auto", min_width="0"))
        self.map_output = widgets.Output()
        self.tabs = widgets.Tab(
            children=[self.table, self.map_output], titles=("Comparables", "Map")
        )
        self.results = widgets.VBox([self.range, self.tabs], layout=widgets.Layout(display="none"))
        inputs = row(
            [
                column(
                    [
                        label("Property"),
                        self.subject,
                        self.picker,
                        hint(SUBJECT_HINT),
                        self.picker_note,
                    ],
                    basis="320px",
                    grow=2,
                ),
                column([label("Valuation date"), self.as_of, hint(AS_OF_HINT)], basis="200px"),
                column([label("Radius (m)"), self.radius, hint(RADIUS_HINT)], basis="200px"),
            ]
        )
        self.widget = widgets.VBox([inputs, self.value_button, self.message, self.status,
                                    self.results])  # fmt: skip
        self.value_button.on_click(lambda _button: self.value_subject())
        self._refresh_status()

    # -- valuing ----------------------------------------------------------------------------

    def value_subject(self) -> ComparableEvidence | None:
        """Value the property named or picked (what the Value button does).

        Returns the evidence shown, or ``None`` when nothing could be valued (said in
        ``message``).
        """
        typed = self.subject.value.strip()
        given = typed or self.picker.value
        if not given:
            self._failed(NOTHING_PICKED)
            return None
        as_of: pd.Timestamp | None = None
        if self.as_of.value.strip():
            try:
                as_of = pd.Timestamp(self.as_of.value.strip())
            except ValueError:
                self._failed(BAD_DATE)
                return None
        usage = self.client.usage
        sent, hits = usage.requests_sent, usage.cache_hits
        self.value_button.disabled = True
        try:
            found = self._subject_in(self.frame, given)
            if found is not None and self.frame is not None:
                df, pid = self.frame, found
            else:
                if not (self.radius.value > 0):
                    self._failed(BAD_RADIUS)
                    return None
                parsed = parse_ids(given)
                if parsed.invalid or parsed.count != 1:
                    self._failed(ONE_ID)
                    return None
                fetched = self._fetch_neighbourhood(parsed.location_ids, parsed.source_ids)
                if fetched is None:
                    return None
                df, pid = fetched
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # what they warn of is in the caveats
                evidence = comparable_evidence(df, pid, as_of=as_of)
                figure = comparables_map(df, pid, evidence=evidence, basemap="auto")
        except Exception as exc:
            logger.debug("valuation failed", exc_info=True)
            self._failed(describe_error(exc))
            return None
        finally:
            self.value_button.disabled = False
        self.value, self.evidence, self.figure = df, evidence, figure
        self._show(evidence, figure)
        cost = words.describe_cost(usage.requests_sent - sent, usage.cache_hits - hits)
        count = int(evidence.value["comparables"])
        thin = bool(evidence.value["thin"])
        text = (
            f"Too few comparable sales for an estimate ({count} found; {cost})."
            if thin
            else f"Valued from {plural(count, 'comparable sale')} ({cost})."
        )
        self._say(text, "warn" if thin else "ok")
        return evidence

    @staticmethod
    def _subject_in(df: pd.DataFrame | None, given: str) -> str | None:
        if df is None:
            return None
        for column_name in ("propertyId", "locationId"):
            if column_name in df.columns:
                hit = df.loc[df[column_name] == given, "propertyId"]
                if len(hit):
                    return str(hit.iloc[0])
        return None

    def _fetch_neighbourhood(
        self, location_ids: list[str], source_ids: list[str]
    ) -> tuple[pd.DataFrame, str] | None:
        """The subject and every property within the radius of it, and the subject's id."""
        self._say("Fetching the property and its neighbourhood…")
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a missing id is said below
            if location_ids:
                own = self.client.properties(location_ids)
            else:
                own = self.client.sources(source_ids)
        if own.empty:
            self._failed(f"No property was found for {(location_ids or source_ids)[0]}.")
            return None
        lat, lng = own["spatial.lat"].iloc[0], own["spatial.lng"].iloc[0]
        if pd.isna(lat) or pd.isna(lng):
            self._failed("This property has no location, so it has no neighbourhood to compare.")
            return None
        area = {"type": "point", "coordinates": [float(lng), float(lat)],
                "radius": float(self.radius.value)}  # fmt: skip
        like = homes_like(own["propertyType"].iloc[0], own["floorAreaSqM"].iloc[0])
        with self._lock:  # only homes that could be its comparables are paid for
            if like is None:
                nearby = self.client.query(area, page_size=QUERY_PAGE)
            else:
                nearby = self.client.query(area, page_size=QUERY_PAGE, query=like)
        df = pd.concat([own, nearby], ignore_index=True).drop_duplicates("propertyId")
        df = df.reset_index(drop=True)
        df.attrs = dict(own.attrs)
        return df, str(own["propertyId"].iloc[0])

    # -- showing ----------------------------------------------------------------------------

    def _show(self, evidence: ComparableEvidence, figure: go.Figure) -> None:
        self.range.value = paragraph(value_range_text(evidence), kind="info")
        self.table.value = evidence_html(evidence, with_range=False)
        try:
            self.map_output.outputs = (figure_output(figure),)
        except Exception as exc:  # a map that cannot be drawn never hides the table
            self.map_output.outputs = (text_output(describe_error(exc)),)
        self.results.layout.display = None

    def _failed(self, text: str) -> None:
        self._say(text, "error")

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = paragraph(text, kind=kind)
        self._refresh_status()

    def _show_status(self) -> None:
        usage = self.client.usage
        self.status.value = paragraph(
            words.describe_usage(
                sent=usage.requests_sent,
                cached=usage.cache_hits,
                billable=usage.billable_requests,
                budget=usage.budget,
                credit_problem=None,
            )
        )
