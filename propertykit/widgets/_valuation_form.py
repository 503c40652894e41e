"""The valuation form: pick a property (of the frame given, or by id: fetched with its
neighbourhood), see its value, the schedule of comparables and their map, from one appraisal.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING

import ipywidgets as widgets
import pandas as pd

from propertykit.client import check_subject_id, held_in
from propertykit.errors import InvalidInput
from propertykit.frames import ValuationSearch, check_as_of
from propertykit.text import plural
from propertykit.views import (
    comparable_evidence,
    comparables_map,
    date_note,
    evidence_html,
    range_only,
    value_range_text,
)
from propertykit.widgets import _messages as words
from propertykit.widgets import _parts as ui

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client
    from propertykit.frames import Appraisal

logger = logging.getLogger("propertykit")

SUBJECT_HINT = "One property: a location id, or a source id such as rightmove::123."
PICK_HINT = "One property: pick one from the list above, or type a location or source id."
AS_OF_HINT = (
    "Such as 2025-01-01, not after today. Empty: found from the sales (the page says how old); "
    "the date found is then kept while you change the radius or months."
)
#: The radius the form searches by default: over the sandbox's first 60 homes it values 27
#: (2 km: 0, 3 km: 9, 4 km: 19, 5 km: 27, 6 km: 27, 8 km: 28), with comparables nearer than 8 km.
DEFAULT_RADIUS_M = 5000.0
RADIUS_HINT = "How far around it to fetch and search for sales (up to 8,000 m)."
MONTHS_HINT = "How far back a comparable sale may be."
NOTHING_PICKED = "Nothing was sent: type an id or pick a property first."
ONE_ID = "Nothing was sent: type one id, such as L00000042 or rightmove::123"
#: The most properties of a frame the list offers (a longer list is slow in a browser).
MOST_LISTED = 2000


class ValuationForm(ui.Form):
    """Value one property from its comparable sales: the value, the schedule and a map.

    Parameters
    ----------
    client
        The client to fetch with (its cache, budget and usage are used as they are).
    frame
        Properties to pick from; their sales are the evidence (nothing is fetched for them).
    radius_m
        For a property not in ``frame``: how far around it to fetch and search for sales.

    Attributes
    ----------
    subject, picker, as_of, radius, months, value_button, message, status, range, table, tabs
        The widgets, for driving the form from code.
    value, appraisal, figure
        The last valuation's frame, :class:`~propertykit.frames.Appraisal` (in pounds) and map;
        ``None`` before one, or after a failure.

    Examples
    --------
    >>> import propertykit as pk
    >>> form = pk.widgets.ValuationForm(client, radius_m=3000)
    >>> form.subject.value = "L00000067"
    >>> form.value_button.click()
    >>> form.appraisal.values["propertyId"].tolist()
    ['PK00000067']
    """

    def __init__(
        self,
        client: Client,
        *,
        frame: pd.DataFrame | None = None,
        radius_m: float = DEFAULT_RADIUS_M,
    ) -> None:
        super().__init__(client)
        self.frame = frame
        self.value: pd.DataFrame | None = None
        self.appraisal: Appraisal | None = None
        self.figure: go.Figure | None = None
        self.subject = widgets.Text(placeholder="L00000042 or rightmove::123", layout=ui.fill())
        choices: list[tuple[str, str | None]] = [("(none)", None)]
        homes = pd.DataFrame({"propertyId": []})
        if self.frame is not None and "propertyId" in self.frame.columns:
            homes = self.frame.drop_duplicates("propertyId")
            names = homes.get("address.displayAddress", homes["propertyId"])
            choices += [(f"{name if isinstance(name, str) else pid} ({pid})", pid)
                        for pid, name in zip(homes["propertyId"], names, strict=True)
                        if isinstance(pid, str)][:MOST_LISTED]  # fmt: skip
        listed_note = (
            f"The list holds the first {MOST_LISTED:,} of {len(homes):,} properties; type the id "
            "of any other."
            if len(homes) > MOST_LISTED
            else ""
        )
        self.picker = widgets.Dropdown(options=choices, value=None, layout=ui.fill())
        self.picker.layout.display = None if len(choices) > 1 else "none"
        self.picker_note = ui.hint(listed_note)
        self.as_of = widgets.Text(placeholder="YYYY-MM-DD", layout=ui.fill())
        self.radius = widgets.FloatText(value=radius_m, layout=ui.fill())
        self.months = widgets.IntText(value=24, layout=ui.fill())
        self.value_button = widgets.Button(
            description="Value", button_style="primary", icon="calculator"
        )
        self.message, self.status, self.range = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.table = widgets.HTML(layout=ui.fill())
        self.map_output = widgets.Output()
        self.tabs = widgets.Tab(
            children=[self.table, self.map_output], titles=("Comparables", "Map")
        )
        self.results = widgets.VBox([self.range, self.tabs], layout=widgets.Layout(display="none"))
        inputs = ui.row([
            ui.column([ui.label("Property"), self.subject, self.picker,
                       ui.hint(PICK_HINT if len(choices) > 1 else SUBJECT_HINT),
                       self.picker_note], basis="320px", grow=2),
            ui.column([ui.label("Valuation date"), self.as_of, ui.hint(AS_OF_HINT)], basis="180px"),
            ui.column([ui.label("Radius (m)"), self.radius, ui.hint(RADIUS_HINT)], basis="150px"),
            ui.column([ui.label("Months"), self.months, ui.hint(MONTHS_HINT)], basis="120px"),
        ])  # fmt: skip
        self.widget = widgets.VBox([inputs, self.value_button, self.message, self.status,
                                    self.results])  # fmt: skip
        self.value_button.on_click(lambda _button: self.value_subject())
        #: The date the form found (the box was empty) and for which property: kept in the box
        #: while only the radius or months change, cleared when another property is asked for.
        self._found_date: tuple[object, str] | None = None
        self.subject.observe(lambda _change: self._forget_found_date(), names="value")
        self.picker.observe(lambda _change: self._forget_found_date(), names="value")
        self._refresh_status()

    # -- valuing ----------------------------------------------------------------------------

    def value_subject(self) -> Appraisal | None:
        """Value the property named or picked (what the Value button does).

        Returns the appraisal shown, or ``None`` when nothing could be valued (said in
        ``message``; what an earlier valuation showed is cleared).
        """
        given = self.subject.value.strip() or self.picker.value
        if not given:
            return self._failed(NOTHING_PICKED)
        held = held_in(self.frame, given)
        try:  # every check before anything is sent
            as_of = check_as_of(self.as_of.value.strip() or None)
            radius = None if held is not None else self.radius.value
            search = ValuationSearch(radius_m=radius, months=self.months.value)
        except InvalidInput as exc:
            said = str(exc).replace("as_of", "the valuation date").replace("radius_m", "the radius")
            return self._failed(f"Nothing was sent: {said}.".replace("..", "."))
        try:
            if held is None:
                check_subject_id(given)
        except InvalidInput as exc:
            return self._failed(f"{ONE_ID} ({exc}).")
        usage = self.client.usage
        sent, hits = usage.requests_sent, usage.cache_hits
        self.value_button.disabled = True
        try:
            if held is not None and self.frame is not None:
                df, pid = self.frame, held
            else:
                self._say("Fetching the property and its neighbourhood…")
                with self._lock:
                    df = self.client.neighbourhood(given, radius_m=float(self.radius.value))
                said, cost = df.attrs["neighbourhood"], self._cost(sent, hits)
                if said["stopped"] == "no record":
                    return self._failed(f"No property was found for {given} ({cost}).")
                if said["stopped"] is not None:
                    return self._failed(
                        f"{given} has {said['stopped']}, so it cannot be valued from comparable "
                        f"sales ({cost}; nothing more was fetched)."
                    )
                pid = str(said["propertyId"])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # what they warn of is in the basis
                appraisal = comparable_evidence(df, pid, as_of=as_of, search=search)
                figure = comparables_map(df, pid, appraisal=appraisal, basemap="auto")
        except Exception as exc:
            logger.debug("valuation failed", exc_info=True)
            return self._failed(words.describe_error(exc))
        finally:
            self.value_button.disabled = False
        self.value, self.appraisal, self.figure = df, appraisal, figure
        if as_of is None:  # the date found is kept: another radius must not move it
            found = f"{pd.Timestamp(appraisal.values['as_of'].iloc[0]):%Y-%m-%d}"
            self.as_of.value, self._found_date = found, (given, found)
        dated = date_note(appraisal)
        self.range.value = ui.paragraph(value_range_text(appraisal), kind="info") + (
            ui.paragraph(dated, kind="warn") if dated else ""
        )
        self.table.value = evidence_html(appraisal, with_range=False)
        try:
            self.map_output.outputs = (ui.figure_output(figure),)
        except Exception as exc:  # a map that cannot be drawn never hides the table
            self.map_output.outputs = (ui.text_output(words.describe_error(exc)),)
        self.results.layout.display = None
        count, cost = int(appraisal.values["comparables"].iloc[0]), self._cost(sent, hits)
        if bool(appraisal.values["thin"].iloc[0]):  # the range says how many of how many, and why
            self._say(f"Too few comparable sales for an estimate ({cost}): see below.", "warn")
        elif range_only(appraisal):
            self._say(
                f"A range only, low confidence, from {plural(count, 'comparable sale')} ({cost}): "
                "see below.",
                "warn",
            )
        else:
            self._say(f"Valued from {plural(count, 'comparable sale')} ({cost}).", "ok")
        return appraisal

    def _forget_found_date(self) -> None:
        """Another property asked for: the date found for the last one is not its date."""
        if self._found_date is not None and self.as_of.value == self._found_date[1]:
            self.as_of.value = ""
        self._found_date = None

    def _cost(self, sent: int, hits: int) -> str:
        usage = self.client.usage
        return words.describe_cost(usage.requests_sent - sent, usage.cache_hits - hits)

    def _failed(self, text: str) -> Appraisal | None:
        """Say what failed and clear what an earlier valuation showed; ``None``."""
        self.value = self.appraisal = self.figure = None
        self.range.value = self.table.value = ""
        self.map_output.outputs = ()
        self.results.layout.display = "none"
        self._say(text, "error")
        return None

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = ui.paragraph(text, kind=kind)
        self._refresh_status()
