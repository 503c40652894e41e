from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest

from propertykit.frames import frame
from propertykit.sandbox import generate_records


@pytest.fixture(scope="module")
def properties() -> pd.DataFrame:
    """A property frame built from the sandbox's synthetic records."""
    return frame(generate_records(200))


@pytest.fixture(autouse=True)
def figures_are_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plot functions return figures; showing one (opening a browser, printing) is a bug."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a propertykit plot function called Figure.show()")

    monkeypatch.setattr(go.Figure, "show", refuse)
