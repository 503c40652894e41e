"""The EPC trend chart in a real browser: headless Debian Chromium (Playwright) draws it from a
file with the network cut off, and the legend and the bars show the seven bands A to G in order,
each in its official colour.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``) and Playwright; without them these
tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import propertykit as pk
from propertykit.frames import EpcTrendWarning
from propertykit.sandbox import generate_records
from propertykit.views._figures import EPC_COLOURS
from tests._browser import OfflinePage, open_offline, wait_for_plotly

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: What plotly drew: legend entries (text and swatch fill) and each bar trace's fills, in order.
DRAWN_JS = """
() => {
  const div = document.querySelector('.plotly-graph-div');
  const legend = Array.from(div.querySelectorAll('.legend .traces')).map(entry => ({
    text: entry.querySelector('.legendtext').textContent,
    fill: (entry.querySelector('.legendpoints path') || {style: {}}).style.fill || null,
  }));
  const bars = Array.from(div.querySelectorAll('.barlayer .trace.bars')).map(trace => ({
    fills: Array.from(new Set(Array.from(trace.querySelectorAll('path'))
      .filter(p => (p.getAttribute('d') || '').length > 5).map(p => p.style.fill))),
    // the height of the tallest bar of the trace, on screen
    tallest: Math.max(...Array.from(trace.querySelectorAll('path')).map(p => p.getBBox().height)),
  }));
  return {legend, bars, title: div._fullLayout.title.text};
}
"""


def rgb(colour: str) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


@pytest.fixture(scope="module")
def epc_trend_drawn(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    df = pk.frame(generate_records(3000))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EpcTrendWarning)  # years pooled in pairs: said below
        figure = df.pk.epc_trend_chart(min_count=250)
    path = Path(tmp_path_factory.mktemp("epc-trend")) / "chart.html"
    figure.write_html(path, include_plotlyjs=True, full_html=True)
    opened: OfflinePage = open_offline(browser, path.as_uri(), width=1200, height=800)
    wait_for_plotly(opened.page)
    assert not opened.problems and not opened.blocked
    result: dict[str, Any] = opened.page.evaluate(DRAWN_JS.strip())
    opened.page.context.close()
    return result


@pytest.mark.timeout(180)
def test_the_legend_lists_the_seven_bands_in_order_in_their_colours(
    epc_trend_drawn: dict[str, Any],
) -> None:
    bands = [entry for entry in epc_trend_drawn["legend"] if len(entry["text"]) == 1]
    assert [entry["text"] for entry in bands] == list("ABCDEFG")
    assert [entry["fill"] for entry in bands] == [rgb(EPC_COLOURS[b]) for b in "ABCDEFG"]
    lines = [entry["text"] for entry in epc_trend_drawn["legend"] if len(entry["text"]) > 1]
    assert lines == ["Mean efficiency now", "Mean potential efficiency"]


@pytest.mark.timeout(180)
def test_the_bars_are_drawn_a_to_g_in_the_band_colours(epc_trend_drawn: dict[str, Any]) -> None:
    traces = epc_trend_drawn["bars"]
    assert len(traces) == 7  # stacked from the bottom in this order: A first
    for band, trace in zip("ABCDEFG", traces, strict=True):
        assert trace["fills"] == [rgb(EPC_COLOURS[band])], band
    assert all(trace["tallest"] > 1 for trace in traces)  # every band is visible somewhere


@pytest.mark.timeout(180)
def test_the_subtitle_says_what_the_data_is(epc_trend_drawn: dict[str, Any]) -> None:
    assert "not of the whole housing stock" in epc_trend_drawn["title"]
    assert "Pale bars pool years with fewer than 250 certificates" in epc_trend_drawn["title"]
