"""The report in a real browser: headless Debian Chromium (Playwright) opens report.html from disk,
with the network cut off.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``; ``make test`` installs it as root) and
Playwright. Without them these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pytest

from propertykit.views import write_report
from tests._browser import OfflinePage, open_offline, wait_for_plotly

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
def report_page(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, properties: pd.DataFrame
) -> Iterator[OfflinePage]:
    """report.html written to disk, opened from file:// with no network, every figure drawn."""
    path = write_report(
        properties,
        tmp_path_factory.mktemp("report") / "report.html",
        usage={"requests_sent": 3, "cache_hits": 0, "billable_requests": 3},
        source="the local sandbox",
    )
    page = open_offline(browser, path.as_uri())
    wait_for_plotly(page.page)
    yield page
    page.page.context.close()


def test_no_console_errors_or_exceptions(report_page: OfflinePage) -> None:
    assert report_page.problems == []


def test_nothing_is_fetched_from_the_network(report_page: OfflinePage) -> None:
    assert report_page.blocked == []
    assert [url for url in report_page.requested if not url.startswith("data:")] == [
        report_page.page.url
    ]


def test_every_figure_is_drawn(report_page: OfflinePage) -> None:
    figures = report_page.page.evaluate(f"() => {FIGURES_JS.strip()}")
    assert len(figures) == 7  # with the price index and the EPC trend
    for figure in figures:
        assert figure["drawn"] and figure["svgs"] >= 1, figure
        assert figure["traceGroups"] == figure["traces"] > 0, figure
        assert figure["marks"] >= figure["traces"], figure


def test_screenshot_is_not_blank(report_page: OfflinePage) -> None:
    shot = report_page.page.screenshot(full_page=True, scale="css", type="png")
    pixels = report_page.page.evaluate(PIXELS_JS, base64.b64encode(shot).decode())
    assert pixels["colours"] > 200  # EPC bands, lines, text anti-aliasing: many colours
    assert pixels["inkedShare"] > 0.01  # charts and text, not an empty white page


# --- maps a reader can place -----------------------------------------------------------------

#: Colours of the land and sea on a map, counted in a screenshot of the map (within 3 levels).
COLOUR_SHARE_JS = """
async ([png, colours]) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + png;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  const wanted = colours.map(hex => [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16)));
  const counts = wanted.map(() => 0);
  for (let i = 0; i < data.length; i += 4) {
    wanted.forEach((rgb, k) => {
      if (Math.abs(data[i] - rgb[0]) <= 3 && Math.abs(data[i + 1] - rgb[1]) <= 3
          && Math.abs(data[i + 2] - rgb[2]) <= 3) counts[k] += 1;
    });
  }
  return counts.map(c => c / (data.length / 4));
}
"""

#: Per figure: the traces' names and the rendered SVG of each trace (fill and line paths),
#: the annotations' boxes and texts, and how many shapes were drawn.
MAP_JS = """
(id) => {
  const div = document.getElementById(id);
  const groups = Array.from(div.querySelectorAll('.scatterlayer g.trace'));
  const box = el => { const r = el.getBoundingClientRect();
                      return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {
    names: div.data.map(t => t.name),
    plot: box(div.querySelector('.nsewdrag')),
    traces: groups.map(g => ({
      fill: Array.from(g.querySelectorAll('path.js-fill')).map(p => p.getAttribute('d') || ''),
      line: Array.from(g.querySelectorAll('path.js-line')).map(p => p.getAttribute('d') || ''),
    })),
    annotations: Array.from(div.querySelectorAll('g.annotation')).map(g => ({
      text: g.textContent, box: box(g.querySelector('rect.bg') || g),
    })),
    shapes: div.querySelectorAll('.shapelayer path').length,
  };
}
"""


def map_of(report_page: OfflinePage, heading: str) -> dict[str, Any]:
    """The drawn map under the report heading ``heading``."""
    figure_id = report_page.page.evaluate(
        "(h) => Array.from(document.querySelectorAll('section.card'))"
        ".find(s => s.querySelector('h2').textContent.startsWith(h))"
        ".querySelector('.plotly-graph-div').id",
        heading,
    )
    drawn: dict[str, Any] = report_page.page.evaluate(MAP_JS, figure_id)
    drawn["id"] = figure_id
    return drawn


def rings_px(path: str) -> list[tuple[float, float]]:
    """(width, height) in pixels of every closed ring of an SVG path."""
    sizes = []
    for ring in re.findall(r"M([^M]*)", path):
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", ring)]
        xs, ys = numbers[0::2], numbers[1::2]
        if len(xs) >= 3:
            sizes.append((max(xs) - min(xs), max(ys) - min(ys)))
    return sizes


def test_national_map_draws_land_and_coast_offline(report_page: OfflinePage) -> None:
    from propertykit.views._basemap import LAND, SEA

    drawn = map_of(report_page, "Where the properties are")
    land = drawn["traces"][drawn["names"].index("Land (Natural Earth)")]
    coast = [size for path in land["line"] for size in rings_px(path)]
    assert max(w for w, _ in coast) > 150  # Great Britain's coastline, hundreds of px across
    assert sum(len(path) for path in land["fill"]) > 1000  # the land is filled
    shot = report_page.page.locator(f"#{drawn['id']}").screenshot(type="png")
    land_share, sea_share = report_page.page.evaluate(
        COLOUR_SHARE_JS, [base64.b64encode(shot).decode(), [LAND, SEA]]
    )
    assert land_share > 0.1 and sea_share > 0.1  # a reader sees land and sea


def test_national_map_labels_places_without_overlap_and_has_a_scale_bar(
    report_page: OfflinePage, properties: pd.DataFrame
) -> None:
    drawn = map_of(report_page, "Where the properties are")
    towns = set(properties["address.town"].dropna().astype(str))
    labels = [a for a in drawn["annotations"] if a["text"] in towns]
    assert len(labels) >= 5
    plot = drawn["plot"]
    for k, a in enumerate(labels):
        box = a["box"]
        assert plot["left"] <= box["left"] and box["right"] <= plot["right"] + 1, a
        for b in labels[k + 1 :]:
            other = b["box"]
            apart = (
                box["right"] <= other["left"] + 0.5
                or other["right"] <= box["left"] + 0.5
                or box["bottom"] <= other["top"] + 0.5
                or other["bottom"] <= box["top"] + 0.5
            )
            assert apart, (a, b)
    bars = [a for a in drawn["annotations"] if re.fullmatch(r"\d+ k?m", a["text"])]
    assert len(bars) == 1 and drawn["shapes"] >= 3  # caption, bar and its two end ticks


def test_boundary_map_draws_filled_plots_of_visible_size(report_page: OfflinePage) -> None:
    drawn = map_of(report_page, "Plot boundaries in")
    plots = [
        size
        for name, trace in zip(drawn["names"], drawn["traces"], strict=True)
        if "GBP" in (name or "") and trace["fill"]
        for path in trace["fill"]
        for size in rings_px(path)
    ]
    assert len(plots) >= 1
    assert float(np.median([max(w, h) for w, h in plots])) >= 4  # visible, not sub-pixel
