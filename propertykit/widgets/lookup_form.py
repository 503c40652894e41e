"""The lookup form: ids or a search in, a DataFrame, a chart and a map out."""

from __future__ import annotations

import html
import logging
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

import propertykit.views  # noqa: F401  (registers the df.pk accessor)
from propertykit.client import ParsedIds, parse_ids
from propertykit.errors import DailyCapReached, InsufficientCredit
from propertykit.frames import COLUMNS, frame
from propertykit.widgets.find import FindPanel
from propertykit.widgets.messages import describe_error
from propertykit.widgets.parts import Form, figure_output, paragraph, text_output
from propertykit.widgets.timing import Debouncer, RateWindow, Scheduler, start_timer

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client

__all__ = ["RECORD_ATTRIBUTES", "LookupForm"]

logger = logging.getLogger("propertykit")

#: Top-level attributes of a property record, as the attribute picker offers them
#: (``propertyId`` and ``locationId`` always come back).
RECORD_ATTRIBUTES: tuple[str, ...] = tuple(
    name
    for name in dict.fromkeys(column.split(".")[0] for column in COLUMNS)
    if name not in ("propertyId", "locationId")
)

#: Rows of the table tab (the whole frame is ``form.value``).
PREVIEW_ROWS = 100
_WIDE_COLUMNS = ("saleHistory", "spatial.boundary")


class LookupForm(Form):
    """Look properties up by id, with search-suggest, and see a table, charts and a map.

    Parameters
    ----------
    client
        The client to fetch with (its cache, budget and usage are used as they are).
    suggest_delay
        Seconds typing must pause before search-suggest is asked.
    min_suggest_chars
        Shortest text that is sent to search-suggest.
    suggest_per_minute
        Most search-suggest requests per minute from this form; default: the client's
        ``endpoints.suggest_per_minute``. Above the limit suggestions pause (nothing waits).
    scheduler, clock
        How delayed calls are run (default: a timer thread) and the clock of the suggest rate
        window (default: ``time.monotonic``); tests inject both.

    Attributes
    ----------
    ids, search, suggestions, attributes, fetch_button, progress, message, status, tabs, table
        The widgets, for driving the form from code.
    finder
        The "Find" tab (:class:`~propertykit.widgets.find.FindPanel`): properties by area and
        filters over ``client.query``; what it finds fills the same table, charts and map.
    value
        The fetched DataFrame (``None`` before the first fetch).
    figures
        The figures of the last fetch: ``price_trend``, ``epc``, ``map``.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve(n_properties=20) as sb:
    ...     client = pk.Client(sb.api_key, sb.url, cache=False)
    ...     form = pk.widgets.LookupForm(client)
    ...     form.ids.value = "L00000001, L00000002"
    ...     form.fetch_button.click()
    ...     client.close()
    >>> len(form.value)
    2
    """

    def __init__(
        self,
        client: Client,
        *,
        suggest_delay: float = 0.4,
        min_suggest_chars: int = 3,
        suggest_per_minute: float | None = None,
        scheduler: Scheduler = start_timer,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(client)
        self.value: pd.DataFrame | None = None
        self.figures: dict[str, go.Figure] = {}
        self.min_suggest_chars = min_suggest_chars
        self._credit_problem: str | None = None
        limit = suggest_per_minute or client.endpoints.suggest_per_minute
        self._rate = RateWindow(limit, clock=clock)
        self._debounce: Debouncer[str] = Debouncer(suggest_delay, self.suggest, scheduler=scheduler)
        self._build()

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        full = widgets.Layout(width="100%")
        self.ids = widgets.Textarea(
            placeholder="Location ids or <provider>::<id>, one per line or comma-separated",
            description="Ids",
            rows=5,
            layout=full,
        )
        self.ids_feedback = widgets.HTML()
        self.search = widgets.Text(
            placeholder="Type an address, street, town or postcode",
            description="Search",
            continuous_update=True,
            layout=full,
        )
        self.suggestions = widgets.Select(options=[], rows=5, description="Matches", layout=full)
        self.suggest_note = widgets.HTML()
        self.attributes = widgets.SelectMultiple(
            options=list(RECORD_ATTRIBUTES),
            rows=8,
            description="Attributes",
            tooltip="None selected: every attribute",
        )
        self.fetch_button = widgets.Button(
            description="Fetch", button_style="primary", icon="download"
        )
        self.progress = widgets.IntProgress(
            value=0, min=0, max=1, description="Fetching", layout=widgets.Layout(display="none")
        )
        self.message = widgets.HTML()
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        self.outputs = {name: widgets.Output() for name in ("price_trend", "epc", "map")}
        self.tabs = widgets.Tab(
            children=[self.table, *self.outputs.values()],
            titles=("Table", "Price trend", "EPC", "Map"),
        )
        left = widgets.VBox([self.ids, self.ids_feedback], layout=widgets.Layout(width="40%"))
        middle = widgets.VBox(
            [self.search, self.suggestions, self.suggest_note], layout=widgets.Layout(width="35%")
        )
        by_id = widgets.VBox(
            [
                widgets.HBox([left, middle, self.attributes]),
                widgets.HBox([self.fetch_button, self.progress]),
            ]
        )
        self.finder = FindPanel(self.client, show=self._found, say=self._say, lock=self._lock)
        self.inputs = widgets.Tab(children=[by_id, self.finder.widget], titles=("Ids", "Find"))
        self.widget = widgets.VBox(
            [
                self.inputs,
                self.message,
                self.status,
                self.tabs,
            ]
        )
        self.ids.observe(lambda change: self._check_ids(str(change["new"])), names="value")
        self.search.observe(lambda change: self._debounce(str(change["new"])), names="value")
        self.suggestions.observe(self._pick_suggestion, names="value")
        self.fetch_button.on_click(lambda _button: self.fetch())
        self._refresh_status()

    # -- ids --------------------------------------------------------------------------------

    def _check_ids(self, text: str) -> ParsedIds:
        parsed = parse_ids(text)
        if parsed.invalid:
            shown = "; ".join(reason for _, reason in parsed.invalid[:5])
            more = f" (and {len(parsed.invalid) - 5} more)" if len(parsed.invalid) > 5 else ""
            self.ids_feedback.value = paragraph(
                f"{len(parsed.invalid)} id(s) cannot be sent: {shown}{more}", kind="error"
            )
        elif parsed.count:
            kinds = f"{len(parsed.location_ids)} location, {len(parsed.source_ids)} source"
            self.ids_feedback.value = paragraph(f"{parsed.count} ids ({kinds})")
        else:
            self.ids_feedback.value = ""
        return parsed

    def add_id(self, identifier: str) -> None:
        """Append an id to the ids box (unless it is there already).

        Examples
        --------
        >>> form = LookupForm(client)
        >>> form.add_id(sb.location_ids[42])
        >>> form.add_id(sb.location_ids[42])
        >>> form.ids.value
        'L00000042'
        """
        current = parse_ids(self.ids.value)
        if identifier in (*current.location_ids, *current.source_ids):
            return
        text = self.ids.value.rstrip()
        self.ids.value = f"{text}\n{identifier}" if text else identifier

    # -- search-suggest ---------------------------------------------------------------------

    def suggest(self, query: str) -> None:
        """Ask search-suggest for ``query`` now and list the matches (typing calls this later).

        Examples
        --------
        >>> form = LookupForm(client)
        >>> form.suggest("Mill Lane")
        >>> form.suggestions.options[0]
        ('Flat 11, 96 Mill Lane, Kennington, London, SE11 8TF (L00000033)', 'L00000033')
        """
        query = query.strip()
        if len(query) < self.min_suggest_chars:
            self.suggestions.options = []
            self.suggest_note.value = ""
            return
        wait = self._rate.acquire()
        if wait > 0:
            limit = self._rate.per_minute or 0
            self.suggest_note.value = paragraph(
                f"Suggestions paused: the limit of {limit:g} searches per minute is reached; "
                f"they resume in {wait:.0f} s.",
                kind="warn",
            )
            return
        try:
            with self._lock:
                matches = self.client.suggest(query)
        except Exception as exc:
            logger.debug("suggest failed", exc_info=True)
            self.suggest_note.value = paragraph(describe_error(exc), kind="error")
            self._refresh_status()
            return
        options = []
        for match in matches:
            location_id = match.get("locationId")
            if isinstance(location_id, str) and location_id:
                label = match.get("displayAddress") or location_id
                options.append((f"{label} ({location_id})", location_id))
        self.suggestions.options = options
        self.suggest_note.value = paragraph(
            f"{len(options)} match(es): pick one to add its id" if options else "No matches"
        )
        self._refresh_status()

    def _pick_suggestion(self, change: dict[str, Any]) -> None:
        picked = change["new"]
        if isinstance(picked, str) and picked:
            self.add_id(picked)
            self.suggestions.value = None

    # -- fetching ---------------------------------------------------------------------------

    def fetch(self) -> pd.DataFrame | None:
        """Fetch the ids in the box (what the Fetch button does); returns ``.value``.

        Invalid ids are reported and nothing is sent. Errors appear in ``message``.

        Examples
        --------
        >>> form = LookupForm(client)
        >>> form.ids.value = sb.location_ids[7]
        >>> form.fetch()["locationId"].tolist()
        ['L00000007']
        """
        parsed = self._check_ids(self.ids.value)
        if parsed.invalid:
            self._say("Nothing was sent: correct the ids marked above, then press Fetch.", "error")
            return self.value
        if not parsed.count:
            self._say("Type or paste at least one id, or pick a search match.", "error")
            return self.value
        attributes = list(self.attributes.value) or None
        batch = self.client.endpoints.batch_size
        chunks = [
            (kind, ids[start : start + batch])
            for kind, ids in (("location", parsed.location_ids), ("source", parsed.source_ids))
            for start in range(0, len(ids), batch)
        ]
        usage = self.client.usage
        sent, hits = usage.requests_sent, usage.cache_hits
        records: list[dict[str, Any]] = []
        failure: BaseException | None = None
        self._say(f"Fetching {parsed.count} ids…")
        self.fetch_button.disabled = True
        with self._progress(len(chunks)):
            for kind, chunk in chunks:
                try:
                    with self._lock:
                        if kind == "location":
                            found = self.client.property_records(chunk, attributes=attributes)
                        else:
                            found = self.client.source_records(chunk, attributes=attributes)
                except Exception as exc:
                    logger.debug("fetch failed", exc_info=True)
                    partial = getattr(exc, "partial", None)
                    if partial is not None:
                        records.extend(partial.records)
                    failure = exc
                    break
                records.extend(found)
                self.progress.value += 1
        self.fetch_button.disabled = False
        cost = f"{usage.requests_sent - sent} request(s) sent, {usage.cache_hits - hits} from cache"
        self._note_credit(failure)
        if failure is not None and not records:
            self._say(describe_error(failure), "error")
            return self.value
        notes = self._show(records, attributes)
        if failure is not None:
            self._say(
                f"{describe_error(failure)} Showing the {len(records)} properties fetched "
                f"before the error ({cost}).",
                "error",
            )
            return self.value
        missing = sorted(set(parsed.location_ids) - {str(r.get("locationId")) for r in records})
        text = f"Fetched {len(records)} properties ({cost})."
        if missing:
            shown = ", ".join(missing[:10]) + ("…" if len(missing) > 10 else "")
            text += f" No property for {len(missing)} location id(s): {shown}."
        if notes:
            text += " " + " ".join(notes)
        self._say(text, "warn" if missing or notes else "ok")
        return self.value

    def _found(self, records: list[dict[str, Any]]) -> None:
        """Show what the Find tab found, as a fetch would."""
        notes = self._show(records, None)
        self._say(
            " ".join([f"Found {len(records)} properties.", *notes]), "warn" if notes else "ok"
        )

    @contextmanager
    def _progress(self, steps: int) -> Iterator[None]:
        self.progress.max = max(1, steps)
        self.progress.value = 0
        self.progress.layout.display = None if steps > 1 else "none"
        try:
            yield
        finally:
            self.progress.layout.display = "none"

    def _show(self, records: list[dict[str, Any]], attributes: list[str] | None) -> list[str]:
        """Build the frame, the table and the figures; returns warnings worth telling."""
        notes: list[str] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = frame(records, money_unit=self.client.endpoints.money_unit)
            self.value = df
            self.table.value = self._table_html(df, attributes)
            self.figures = {}
            makers: dict[str, Callable[[], go.Figure]] = {
                "price_trend": lambda: df.pk.price_trend(),
                "epc": lambda: df.pk.epc_chart(),
                "map": lambda: df.pk.map(color="epc.currentEnergyRating"),
            }
            for name, make in makers.items():
                try:
                    figure = make()
                except Exception as exc:
                    logger.debug("figure %s failed", name, exc_info=True)
                    self.outputs[name].outputs = (text_output(describe_error(exc)),)
                    continue
                self.figures[name] = figure
                self.outputs[name].outputs = (figure_output(figure),)
        notes.extend(dict.fromkeys(str(w.message) for w in caught))
        return notes

    @staticmethod
    def _table_html(df: pd.DataFrame, attributes: list[str] | None) -> str:
        columns = [c for c in df.columns if c not in _WIDE_COLUMNS]
        if attributes:
            keep = {"propertyId", "locationId", *attributes}
            columns = [c for c in columns if c.split(".")[0] in keep]
        shown = df.loc[:, columns].head(PREVIEW_ROWS)
        caption = f"{len(df):,} properties"
        if len(df) > PREVIEW_ROWS:
            caption += f"; the first {PREVIEW_ROWS} shown (form.value has them all)"
        table = shown.to_html(index=False, border=0, na_rep="", classes="propertykit-table")
        return (
            f"<div style='max-height:420px;overflow:auto'><p>{html.escape(caption)}</p>"
            f"{table}</div>"
        )

    # -- messages and status ----------------------------------------------------------------

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = paragraph(text, kind=kind)
        self._refresh_status()

    def _note_credit(self, failure: BaseException | None) -> None:
        if isinstance(failure, DailyCapReached):
            self._credit_problem = "daily cap reached"
        elif isinstance(failure, InsufficientCredit):
            self._credit_problem = "too little credit (402)"
        elif failure is None:
            self._credit_problem = None

    def _refresh_status(self) -> None:
        usage = self.client.usage
        if self._credit_problem:
            credit = self._credit_problem
        elif usage.budget_left is not None:
            credit = f"{usage.budget_left} of {usage.budget} budgeted requests left"
        else:
            credit = "no problem reported"
        self.status.value = paragraph(
            f"Requests sent: {usage.requests_sent} · cache hits: {usage.cache_hits} · "
            f"billable: {usage.billable_requests} · credit: {credit}"
        )
