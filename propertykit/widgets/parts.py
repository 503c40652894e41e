"""Pieces the forms use: the base class, output helpers, and the boxes of a layout that holds
from 1024 px up.

Layout: inputs sit in :func:`column` boxes inside a :func:`row` that wraps, so at a narrow width a
column moves below the others instead of being squeezed; each input fills its column
(:func:`fill`), with its name above it (:func:`label`) and its hint on screen under it
(:func:`hint`), not in a tooltip.
"""

from __future__ import annotations

import html
import threading
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.io as pio

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client

__all__ = [
    "Form",
    "column",
    "figure_output",
    "fill",
    "hint",
    "label",
    "paragraph",
    "row",
    "text_output",
]

_COLOURS = {"info": "#1b1b1b", "error": "#a4000f", "ok": "#0b6e2b", "warn": "#8a5300"}


def paragraph(text: str, *, kind: str = "info") -> str:
    """``text`` as an HTML paragraph, escaped, coloured by ``kind`` (info, ok, warn, error).

    Examples
    --------
    >>> paragraph("<b>", kind="error")
    '<p class="pk-error" style="color:#a4000f;margin:4px 0">&lt;b&gt;</p>'
    """
    return (
        f'<p class="pk-{kind}" style="color:{_COLOURS[kind]};margin:4px 0">{html.escape(text)}</p>'
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


def figure_output(figure: go.Figure) -> dict[str, Any]:
    """A display_data output for a figure (plotly's own mime type, rendered by JupyterLab).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> sorted(figure_output(go.Figure())["data"])
    ['application/vnd.plotly.v1+json', 'text/plain']
    """
    bundle = dict(pio.renderers["plotly_mimetype"].to_mimebundle(figure.to_dict()))
    title = figure.layout.title.text or "plotly figure"
    bundle["text/plain"] = f"<Figure: {title}>"
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def text_output(text: str) -> dict[str, Any]:
    """A display_data output of plain text.

    Examples
    --------
    >>> text_output("hi")["data"]
    {'text/plain': 'hi'}
    """
    return {"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}


class Form:
    """What both forms share: the client, display as a widget, one client call at a time."""

    widget: widgets.Widget

    def __init__(self, client: Client) -> None:
        self.client = client
        self._lock = threading.RLock()  # timer threads (suggest, delivery checks) share the client

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
