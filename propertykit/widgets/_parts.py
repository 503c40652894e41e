"""Pieces the forms use: the base class, output helpers, and the boxes of a layout that holds
from 1024 px up.

Layout: inputs sit in :func:`column` boxes inside a :func:`row` that wraps, so at a narrow width a
column moves below the others instead of being squeezed; each input fills its column
(:func:`fill`), with its name above it (:func:`label`) and its hint on screen under it
(:func:`hint`), not in a tooltip.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.io as pio

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client

_COLOURS = {"info": "#1b1b1b", "error": "#a4000f", "ok": "#0b6e2b", "warn": "#8a5300"}


def paragraph(text: str, *, kind: str = "info") -> str:
    """``text`` as an HTML paragraph, escaped, coloured by ``kind`` (info, ok, warn, error).

    Examples
    --------
    >>> paragraph("<b>", kind="error")
    '<p class="pk-error" style="color:#a4000f;margin:4px 0;line-height:1.4">&lt;b&gt;</p>'

    Its own line height: a widget's HTML is set at the height of an input line (28 px), which
    made a wrapped message look double-spaced.
    """
    colour = _COLOURS[kind]
    return (
        f'<p class="pk-{kind}" style="color:{colour};margin:4px 0;line-height:1.4">'
        f"{html.escape(text)}</p>"
    )


def label(text: str) -> widgets.HTML:
    """An input's name, above it.

    Examples
    --------
    >>> label("Ids").value
    '<b>Ids</b>'
    """
    return widgets.HTML(f"<b>{html.escape(text)}</b>", layout=widgets.Layout(margin="0"))


def hint(text: str) -> widgets.HTML:
    """A hint under an input, on screen (never only in a tooltip).

    Examples
    --------
    >>> "0 means no limit" in hint("0 means no limit").value
    True
    """
    return widgets.HTML(
        f'<div class="pk-hint" style="color:#555;font-size:12px;line-height:1.35">'
        f"{html.escape(text)}</div>",
        layout=widgets.Layout(margin="0 2px 6px 2px"),
    )


def fill() -> widgets.Layout:
    """A fresh layout for an input that takes its column's whole width, and never more.

    Stretched by its column rather than ``width="100%"``: a widget's own margin comes on top of a
    percentage width, and pushed its right edge out of the column, where it was cut.
    """
    return widgets.Layout(width="auto", min_width="0", align_self="stretch")


def options_width(options: Iterable[str]) -> str:
    """The width a list needs to show its longest option whole, beside its scroll bar.

    Examples
    --------
    >>> options_width(["flat", "semi-detached"])
    'calc(13ch + 44px)'
    """
    longest = max((len(str(option)) for option in options), default=4)
    return f"calc({longest}ch + 44px)"


def fit_options(options: Iterable[str]) -> widgets.Layout:
    """A layout for a list as wide as its longest option needs (:func:`options_width`).

    Examples
    --------
    >>> fit_options(["flat", "semi-detached"]).width
    'calc(13ch + 44px)'
    """
    return widgets.Layout(width=options_width(options), min_width="0", flex="0 0 auto")


def column(children: list[widgets.Widget], *, basis: str, grow: int = 1) -> widgets.VBox:
    """A column of a :func:`row`: ``basis`` wide, growing into free space, never overflowing.

    Examples
    --------
    >>> column([label("Ids")], basis="260px").layout.flex
    '1 1 260px'
    """
    return widgets.VBox(
        children,
        layout=widgets.Layout(flex=f"{grow} 1 {basis}", min_width="0", margin="0 16px 8px 0"),
    )


def row(children: list[widgets.Widget]) -> widgets.HBox:
    """Columns side by side while they fit, wrapping onto the next line when they do not.

    Examples
    --------
    >>> row([]).layout.flex_flow
    'row wrap'
    """
    return widgets.HBox(children, layout=widgets.Layout(flex_flow="row wrap", width="100%"))


#: Characters of a title line, and of its smaller detail line, that fit a 590 px output area.
TITLE_LINE = 48
DETAIL_LINE = 64
#: Room kept above a chart's title for plotly's toolbar (its modebar), in pixels.
MODEBAR_ROOM = 44
#: Height of a chart in the form, when its figure sets none.
CHART_HEIGHT = 460
#: How the form's charts are shown: as wide as the output area, following its width.
CHART_CONFIG = {"responsive": True, "displaylogo": False}


def title_lines(title: str) -> tuple[list[str], list[str]]:
    """A chart title as short lines: the title, then its details (a closing parenthesis, or a
    second line it already had), each wrapped at a word to fit a 590 px output area.

    Examples
    --------
    >>> title_lines("Median sale price per year by property type: no data (no period with 5 or "
    ...             "more sales)")
    (['Median sale price per year by property type'], ['No data (no period with 5 or more sales)'])
    """
    first, _, rest = title.partition("<br>")
    details = [re.sub(r"</?sup>", "", rest)] if rest else []
    empty = re.fullmatch(r"(.*\S): (no data.*)", first.strip())
    detail = re.fullmatch(r"(.*\S)\s+(\([^()]*\))", first.strip())
    if empty:
        first, details = empty[1], [empty[2].capitalize(), *details]
    elif detail:
        first, details = detail[1], [detail[2], *details]
    main = textwrap.wrap(first, TITLE_LINE) or [""]
    small = [line for detail in details for line in textwrap.wrap(detail, DETAIL_LINE)]
    return main, small


def fit_to_panel(figure: go.Figure) -> dict[str, Any]:
    """The figure as the form shows it: its title wrapped (never cut at 590 px) and below the
    toolbar, its width the output area's, and a height when it has none.

    Returns a figure dict; ``figure`` itself is not changed.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fitted = fit_to_panel(go.Figure(layout={"title": "A title (12 sales)"}))
    >>> fitted["layout"]["title"]["text"], fitted["layout"]["margin"]["t"]
    ('A title<br><span style="font-size:13px">(12 sales)</span>', 106)
    """
    fitted: dict[str, Any] = figure.to_dict()
    layout = fitted.setdefault("layout", {})
    title = layout.get("title", {}).get("text") or ""
    main, small = title_lines(str(title))
    text = "<br>".join([*main, *(f'<span style="font-size:13px">{line}</span>' for line in small)])
    room = MODEBAR_ROOM + 24 * len(main) + 18 * len(small) + 20
    margin = layout.get("margin", {})
    layout["title"] = {
        **layout.get("title", {}),
        "text": text,
        "x": 0.01,
        "xanchor": "left",
        "xref": "container",
        "y": 1,
        "yanchor": "top",
        "yref": "container",
        "pad": {"t": MODEBAR_ROOM, "l": 8},
    }
    layout["margin"] = {**margin, "t": max(int(margin.get("t", 0)), room)}
    layout.pop("width", None)
    layout["autosize"] = True
    layout["height"] = int(layout.get("height") or CHART_HEIGHT) + room - 80
    return fitted


def figure_output(figure: go.Figure) -> dict[str, Any]:
    """A display_data output for a figure (plotly's own mime type, rendered by JupyterLab),
    fitted to the form's output area (:func:`fit_to_panel`) and resized with it.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> output = figure_output(go.Figure())
    >>> sorted(output["data"]), output["data"]["application/vnd.plotly.v1+json"]["config"]
    (['application/vnd.plotly.v1+json', 'text/plain'], {'responsive': True, 'displaylogo': False})
    """
    fitted = fit_to_panel(figure)
    fitted["config"] = dict(CHART_CONFIG)
    plain: dict[str, Any] = json.loads(pio.to_json(fitted, validate=False) or "{}")
    bundle = {"application/vnd.plotly.v1+json": plain}
    title = figure.layout.title.text or "plotly figure"
    return {
        "output_type": "display_data",
        "data": {**bundle, "text/plain": f"<Figure: {title}>"},
        "metadata": {},
    }


def text_output(text: str) -> dict[str, Any]:
    """A display_data output of plain text.

    Examples
    --------
    >>> text_output("hi")["data"]
    {'text/plain': 'hi'}
    """
    return {"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}


#: The forms of each client: a status line speaks for its client, so all of them are redrawn
#: together (two forms of one client never disagree on what it has sent).
_FORMS: weakref.WeakKeyDictionary[Client, weakref.WeakSet[Form]] = weakref.WeakKeyDictionary()


class Form:
    """What the forms share: the client, display as a widget, one client call at a time, and
    one status line for the client in every form of it."""

    widget: widgets.Widget

    def __init__(self, client: Client) -> None:
        self.client = client
        self._lock = threading.RLock()  # timer threads (suggest, delivery checks) share the client
        _FORMS.setdefault(client, weakref.WeakSet()).add(self)

    def _refresh_status(self) -> None:
        """Redraw the status line of every form of this client (each says the client's counts)."""
        for form in list(_FORMS.get(self.client, ())):
            form._show_status()

    def _show_status(self) -> None:
        """Draw this form's status line, if it has one (``status``): the client's counts so
        far, and the credit problem a fetch met (``_credit_problem``), if any."""
        from propertykit.widgets._messages import describe_usage

        status = getattr(self, "status", None)
        if status is not None:
            usage = self.client.usage
            status.value = paragraph(
                describe_usage(
                    sent=usage.requests_sent, cached=usage.cache_hits,
                    billable=usage.billable_requests, budget=usage.budget,
                    credit_problem=getattr(self, "_credit_problem", None),
                )
            )  # fmt: skip

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
