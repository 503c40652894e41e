"""The lookup form: ids or a search in, a DataFrame, a chart and a map out."""

from __future__ import annotations

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
from propertykit.text import plural, short_address, visible
from propertykit.widgets import _messages as words
from propertykit.widgets._find import FindPanel
from propertykit.widgets._id_messages import EMPTY_IDS, describe_ids, describe_not_sent
from propertykit.widgets._messages import describe_error
from propertykit.widgets._parts import (
    Form,
    column,
    figure_output,
    fill,
    hint,
    label,
    options_width,
    paragraph,
    row,
    text_output,
)
from propertykit.widgets._results_table import table_html
from propertykit.widgets._timing import Debouncer, RateWindow, Scheduler, start_timer

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client

logger = logging.getLogger("propertykit")

#: Top-level attributes of a property record, as the attribute picker offers them
#: (``propertyId`` and ``locationId`` always come back).
RECORD_ATTRIBUTES: tuple[str, ...] = tuple(
    name
    for name in dict.fromkeys(column.split(".")[0] for column in COLUMNS)
    if name not in ("propertyId", "locationId")
)


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
        The widgets, for driving the form from code. ``message`` is the Ids tab's, under Fetch;
        the Find tab says what it found in ``finder.message``.
    all_columns
        The toggle between the readable table (address, type, beds, value in pounds, EPC, id)
        and every column of the frame.
    stale_note
        Says, after an error, that the results shown are still those of an earlier fetch.
    finder
        The "Find" tab (:class:`~propertykit.widgets._find.FindPanel`): properties by area and
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
        self.ids = widgets.Textarea(
            placeholder="Location ids, or source ids such as rightmove::123",
            rows=5,
            layout=fill(),
        )
        self.ids_feedback = widgets.HTML()
        self.search = widgets.Text(
            placeholder="Type an address, street, town or postcode",
            continuous_update=True,
            layout=fill(),
        )
        self.suggestions = widgets.Select(options=[], rows=5, layout=fill())
        self.suggest_note = widgets.HTML()
        self.attributes = widgets.SelectMultiple(
            options=list(RECORD_ATTRIBUTES), rows=8, layout=fill()
        )
        self.fetch_button = widgets.Button(
            description="Fetch", button_style="primary", icon="download"
        )
        self.progress = widgets.IntProgress(
            value=0, min=0, max=1, description="Fetching", layout=widgets.Layout(display="none")
        )
        self.message = widgets.HTML(layout=fill())  # the Ids tab's: under its Fetch button
        self.status = widgets.HTML()
        self.stale_note = widgets.HTML()
        # A table wider than the form scrolls inside its own box, as wide as the form.
        self.table = widgets.HTML(layout=fill())
        self.all_columns = widgets.ToggleButton(
            value=False,
            description=words.SHOW_EVERY_COLUMN,
            icon="table",
            layout=widgets.Layout(width="auto", align_self="flex-start"),
        )
        self.outputs = {
            name: widgets.Output(layout=fill()) for name in ("price_trend", "epc", "map")
        }
        self.tabs = widgets.Tab(
            children=[widgets.VBox([self.all_columns, self.table]), *self.outputs.values()],
            titles=("Table", "Price trend", "EPC", "Map"),
        )
        self.results = widgets.VBox(
            [self.stale_note, self.tabs], layout=widgets.Layout(display="none")
        )
        # Ids, then Attributes beside them (both fit 590 px), then Search: Fetch and what it
        # said stay under the ids, whatever wraps.
        by_id = row(
            [
                column(
                    [
                        label("Ids"),
                        self.ids,
                        hint(words.IDS_HINT),
                        self.ids_feedback,
                        widgets.HBox([self.fetch_button, self.progress]),
                        self.message,
                    ],
                    basis="300px",
                    grow=2,
                ),
                column(  # as wide as the list's options need
                    [label("Attributes"), self.attributes, hint(words.ATTRIBUTES_HINT)],
                    basis=options_width(RECORD_ATTRIBUTES),
                    grow=0,
                ),
                column(
                    [
                        label("Search"),
                        self.search,
                        hint(words.SEARCH_HINT),
                        label("Matches"),
                        self.suggestions,
                        self.suggest_note,
                    ],
                    basis="380px",
                    grow=3,
                ),
            ]
        )
        self.finder = FindPanel(
            self.client, show=self._found, on_error=self._find_failed, lock=self._lock
        )
        self.inputs = widgets.Tab(children=[by_id, self.finder.widget], titles=("Ids", "Find"))
        self.widget = widgets.VBox([self.inputs, self.status, self.results])
        self.ids.observe(lambda change: self._check_ids(str(change["new"])), names="value")
        self.search.observe(lambda change: self._debounce(str(change["new"])), names="value")
        self.suggestions.observe(self._pick_suggestion, names="value")
        self.fetch_button.on_click(lambda _button: self.fetch())
        self.all_columns.observe(lambda _change: self._show_table(), names="value")
        self._shown: tuple[str, list[str] | None] | None = None  # what the results are, and how
        self._refresh_status()

    # -- ids --------------------------------------------------------------------------------

    def _check_ids(self, text: str) -> ParsedIds:
        parsed = parse_ids(text)  # the client's own check, id by id
        sentence, kind = describe_ids(parsed.location_ids, parsed.source_ids, parsed.invalid)
        self.ids_feedback.value = paragraph(sentence, kind=kind) if sentence else ""
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
        ('113 Mill Lane, Littleover, Derby, DE23 1EN (L00000350)', 'L00000350')
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
                words.describe_suggest_paused(limit, wait), kind="warn"
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
                options.append((visible(f"{label} ({location_id})"), location_id))
        self.suggestions.options = options
        self.suggest_note.value = paragraph(words.describe_suggestions(len(options)))
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
            self._failed(describe_not_sent(parsed.invalid))
            return self.value
        if not parsed.count:
            self._failed(EMPTY_IDS)
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
        self._say(f"Fetching {plural(parsed.count, 'id')}…")
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
        cost = {"sent": usage.requests_sent - sent, "cached": usage.cache_hits - hits}
        self._note_credit(failure)
        if failure is not None and not records:
            self._failed(describe_error(failure))
            return self.value
        if not records:  # nothing found: the earlier results stay, marked as earlier
            asked = [*parsed.location_ids, *parsed.source_ids]
            self._failed(
                words.describe_nothing_found(asked, **cost),
                kind="warn",
                why="this fetch found nothing",
            )
            return self.value
        what = f"the fetch of {plural(len(records), 'property', 'properties')}"
        notes = self._show(records, attributes, what=what)
        if failure is not None:
            self._say(
                words.describe_partial(describe_error(failure), len(records), **cost), "error"
            )
            return self.value
        missing = sorted(set(parsed.location_ids) - {str(r.get("locationId")) for r in records})
        names = [_name_of(record) for record in records]
        text = words.describe_fetch(len(records), missing=missing, notes=notes, names=names, **cost)
        self._say(text, "warn" if missing or notes else "ok")
        return self.value

    def _found(self, records: list[dict[str, Any]], where: str) -> tuple[str, str]:
        """Show what the Find tab found, as a fetch would; returns what to say, and its kind."""
        if not records:  # the earlier results stay, marked as earlier
            self._find_failed("this search found nothing")
            return words.describe_found(0, [], where=where), "warn"
        what = f"the search that found {plural(len(records), 'property', 'properties')}"
        notes = self._show(records, None, what=f"{what} {where}")
        self._refresh_status()
        return words.describe_found(len(records), notes, where=where), "warn" if notes else "ok"

    def _find_failed(self, why: str) -> None:
        self._mark_stale(why)
        self._refresh_status()

    @contextmanager
    def _progress(self, steps: int) -> Iterator[None]:
        self.progress.max = max(1, steps)
        self.progress.value = 0
        self.progress.layout.display = None if steps > 1 else "none"
        try:
            yield
        finally:
            self.progress.layout.display = "none"

    def _show(
        self, records: list[dict[str, Any]], attributes: list[str] | None, *, what: str
    ) -> list[str]:
        """Build the frame, the table and the figures; returns warnings worth telling."""
        notes: list[str] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = frame(records, money_unit=self.client.endpoints.money_unit)
            self.value = df
            self._shown = (f"{what} at {time.strftime('%H:%M')}", attributes)
            self._show_table()
            self.stale_note.value = ""
            self.results.layout.display = None
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

    def _show_table(self) -> None:
        every = bool(self.all_columns.value)
        self.all_columns.description = words.SHOW_READABLE if every else words.SHOW_EVERY_COLUMN
        if self.value is not None and self._shown is not None:
            attributes = self._shown[1]
            self.table.value = table_html(self.value, attributes, all_columns=every)

    def _failed(self, text: str, *, kind: str = "error", why: str | None = None) -> None:
        """Say what failed; mark results left from an earlier fetch as earlier."""
        self._say(text, kind)
        self._mark_stale(why or "from before the error above")

    def _mark_stale(self, why: str) -> None:
        if self._shown is not None:
            self.stale_note.value = paragraph(
                words.describe_stale(self._shown[0], why=why), kind="warn"
            )

    # -- messages and status ----------------------------------------------------------------

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = paragraph(text, kind=kind)
        self._refresh_status()

    def _note_credit(self, failure: BaseException | None) -> None:
        if isinstance(failure, DailyCapReached):
            self._credit_problem = words.DAILY_CAP_PROBLEM
        elif isinstance(failure, InsufficientCredit):
            self._credit_problem = words.NO_CREDIT_PROBLEM
        elif failure is None:
            self._credit_problem = None


def _name_of(record: dict[str, Any]) -> str:
    """How a fetched property is named in the outcome: its street address, else its id."""
    address = record.get("address")
    shown = short_address(address.get("displayAddress") if isinstance(address, dict) else None)
    return shown or str(record.get("locationId") or record.get("propertyId") or "a property")
