"""Pieces both forms of :mod:`propertykit.widgets.lookup_form` use: the base class and output
helpers."""

from __future__ import annotations

import html
import threading
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.io as pio

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from propertykit.client import Client

__all__ = ["Form", "figure_output", "paragraph", "text_output"]

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
