"""The report in a real browser: headless Debian Chromium (Playwright) opens report.html from disk,
with the network cut off.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``; ``make test`` installs it as root) and
Playwright. Without them these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from propertykit.views import write_report
from tests._browser import OfflinePage, chromium, open_offline, wait_for_plotly

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: Draws every figure div's content and reads it back: SVG marks per figure, and the figures
#: plotly knows about (``_fullLayout`` is set once a plot has been drawn).
FIGURES_JS = """
Array.from(document.querySelectorAll('.plotly-graph-div')).map(div => ({
  id: div.id,
  drawn: Boolean(div._fullLayout),
  traces: (div.data || []).length,
  svgs: div.querySelectorAll('svg.main-svg').length,
  traceGroups: div.querySelectorAll('g.trace').length,
  marks: Array.from(div.querySelectorAll('g.trace path, g.trace rect'))
    .filter(el => (el.getAttribute('d') || '').length > 5 || Number(el.getAttribute('width')) > 0)
    .length,
}))
"""

#: Decodes a PNG (base64) in the page and counts distinct colours and non-background pixels.
PIXELS_JS = """
async (png) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + png;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  const colours = new Set();
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    if (Math.max(data[i], data[i + 1], data[i + 2]) < 200) inked += 1;
  }
  return {colours: colours.size, inkedShare: inked / (data.length / 4)};
}
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as running:
        yield running


@pytest.fixture(scope="module")
def opened(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, properties: pd.DataFrame
) -> OfflinePage:
    """report.html written to disk, opened from file:// with no network, every figure drawn."""
    path = write_report(
        properties,
        tmp_path_factory.mktemp("report") / "report.html",
        usage={"requests_sent": 3, "cache_hits": 0, "billable_requests": 3},
        source="the local sandbox",
    )
    page = open_offline(browser, path.as_uri())
    wait_for_plotly(page.page)
    return page


def test_no_console_errors_or_exceptions(opened: OfflinePage) -> None:
    assert opened.problems == []


def test_nothing_is_fetched_from_the_network(opened: OfflinePage) -> None:
    assert opened.blocked == []
    assert [url for url in opened.requested if not url.startswith("data:")] == [opened.page.url]


def test_every_figure_is_drawn(opened: OfflinePage) -> None:
    figures = opened.page.evaluate(f"() => {FIGURES_JS.strip()}")
    assert len(figures) == 5
    for figure in figures:
        assert figure["drawn"] and figure["svgs"] >= 1, figure
        assert figure["traceGroups"] == figure["traces"] > 0, figure
        assert figure["marks"] >= figure["traces"], figure


def test_screenshot_is_not_blank(opened: OfflinePage) -> None:
    shot = opened.page.screenshot(full_page=True, scale="css", type="png")
    pixels = opened.page.evaluate(PIXELS_JS, base64.b64encode(shot).decode())
    assert pixels["colours"] > 200  # EPC bands, lines, text anti-aliasing: many colours
    assert pixels["inkedShare"] > 0.01  # charts and text, not an empty white page
