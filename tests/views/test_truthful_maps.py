"""Maps and charts that tell the truth: each bug an analyst hit, fixed and kept fixed.

Most are checked on the figure's data and layout; what only a browser shows (labels that
collide at 800 px, tick labels that repeat) is checked in headless Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import propertykit as pk
from propertykit.sandbox import generate_records
from propertykit.views import epc_chart, epc_price_chart, property_map
from tests._browser import open_offline, wait_for_plotly

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def more_records() -> list[dict[str, Any]]:
    """The first 5,200 records of the sandbox's world, drawn once (read them, never change them)."""
    return generate_records(5_200)


@pytest.fixture(scope="module")
def records(more_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first 5,000 of them (``generate_records(5_000)``)."""
    return more_records[:5_000]


@pytest.fixture(scope="module")
def everyone(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The 5,000 records as a frame (read it, never change it)."""
    return pk.frame(records)


def data_traces(figure: go.Figure) -> list[Any]:
    """The traces drawing properties: not the basemap, a key, or invisible hover markers."""
    hidden = ("basemap", "key")
    return [t for t in figure.data if t.meta not in hidden and t.showlegend is not False]


def with_boundaries(records: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    return [r for r in records if r["spatial"].get("boundary")][:count]


@pytest.mark.parametrize("count", [1, 2])
def test_a_boundary_map_coloured_by_one_value_draws_it_and_counts_what_it_draws(
    records: list[dict[str, Any]], count: int
) -> None:
    chosen = with_boundaries(records, count)
    same = [r | {"pricing": r["pricing"] | {"estimatedSaleValue": 300_000}} for r in chosen]
    figure = property_map(
        pk.frame(same), geometry="boundary", color="pricing.estimatedSaleValue", basemap="none"
    )
    fills = [t for t in figure.data if t.fill == "toself"]
    rings = sum(int(np.isnan(np.asarray(t.x, dtype=float)).sum()) + 1 for t in fills)
    assert rings == count  # every boundary is drawn (once per map it appears on)...
    assert {t.name for t in fills} == {"300,000 GBP"}  # ...in the one class its value makes
    said = re.search(r"\(([\d,]+)(?: of [\d,]+ drawn| mapped)", figure.layout.title.text)
    assert said is not None and int(said[1]) == count, figure.layout.title.text


def test_a_title_counts_the_boundaries_it_drew(records: list[dict[str, Any]]) -> None:
    df = pk.frame(with_boundaries(records, 40))
    figure = property_map(df, geometry="boundary", color="pricing.estimatedSaleValue")
    said = re.search(r"\(([\d,]+) of ([\d,]+) drawn", figure.layout.title.text)
    assert said is not None, figure.layout.title.text
    fills = [t for t in figure.data if t.fill == "toself" and t.meta != "basemap"]
    rings = sum(int(np.isnan(np.asarray(t.x, dtype=float)).sum()) + 1 for t in fills)
    assert int(said[1]) == rings and int(said[2]) == 40


@pytest.mark.parametrize("color", ["epc.currentEnergyRating", "pricing.currentSalePrice"])
def test_not_given_markers_lie_under_the_coloured_ones_and_are_listed_last(
    everyone: pd.DataFrame, color: str
) -> None:
    df = everyone  # 5,000 properties: every one drawn (WebGL)
    assert df[color].isna().any() and df[color].notna().any()
    traces = data_traces(property_map(df, color=color, basemap="none"))
    names = [t.name for t in traces]
    assert names[0] == "not given"  # drawn first: underneath every coloured marker
    assert all(t.type == "scattergl" for t in traces)
    given, rest = traces[0], traces[1:]
    assert all(given.legendrank > t.legendrank for t in rest)  # but last in the legend
    assert len(given.x) == int(df[color].isna().sum())


def test_the_outcode_map_keys_bubble_size_and_keeps_its_legend_off_the_colour_bar(
    more_records: list[dict[str, Any]],
) -> None:
    df = pk.frame(more_records)  # over 5,000: one bubble an outcode
    figure = property_map(df, color="pricing.estimatedSaleValue", basemap="none")
    assert "areas)" in figure.layout.title.text
    (bubbles,) = [t for t in data_traces(figure) if t.marker.colorbar.title.text]
    assert bubbles.marker.colorbar.title.text == "Estimated sale value (GBP)"
    # the legend is under the map, laid out across, without a title of its own
    assert figure.layout.legend.orientation == "h" and figure.layout.legend.yanchor == "top"
    assert not figure.layout.legend.title.text
    key = [t for t in figure.data if t.meta == "key"]
    counts = [int(re.match(r"([\d,]+) propert", t.name)[1].replace(",", "")) for t in key]
    assert len(key) >= 2 and counts == sorted(counts, reverse=True)
    assert key[0].legendgrouptitle.text == "Properties per area"
    held = [int(re.search(r": ([\d,]+) propert", t)[1].replace(",", "")) for t in bubbles.text]
    # a key bubble is as big as an area's bubble holding as many properties
    for trace, count in zip(key, counts, strict=True):
        assert trace.marker.size == pytest.approx(np.sqrt(count / max(held)) * 34)


def test_the_epc_chart_names_every_bar_on_its_axis_and_shows_no_swatch_unlike_its_bars(
    records: list[dict[str, Any]],
) -> None:
    figure = epc_chart(pk.frame(records[:200]))
    bars = [t for t in figure.data if t.type == "bar"]
    # a legend swatch shows one colour, the bars seven: no legend; the axis names each bar
    assert [t for t in figure.data if t.showlegend is not False] == []
    assert [list(dict.fromkeys(bar.x[0])) for bar in bars] == [
        ["Current rating"],
        ["Potential rating"],
    ]
    assert all(list(bar.x[1]) == list("ABCDEFG") for bar in bars)
    assert bars[0].marker.opacity != bars[1].marker.opacity


def test_a_box_plot_of_one_property_has_an_axis_that_reads(records: list[dict[str, Any]]) -> None:
    figure = epc_price_chart(pk.frame(records[:1]))
    low, high = figure.layout.yaxis.range
    price = records[0]["pricing"]["estimatedSaleValue"]
    assert low < price < high and high - low >= 0.2 * price


# --- what only a browser shows ------------------------------------------------------------------

#: Boxes of the place labels, and centres of the markers, in screen pixels.
LABELS_JS = """
() => {
  const div = document.querySelector('.plotly-graph-div');
  const names = Array.from(div.querySelectorAll('.annotation')).filter(a =>
    !/^[\\d.]+ (km|m)$/.test(a.textContent.trim()) && !/^\\d+$/.test(a.textContent.trim()));
  const boxes = names.map(a => {
    const b = (a.querySelector('rect.bg') || a).getBoundingClientRect();
    return [a.textContent, b.left, b.top, b.right, b.bottom];
  });
  const points = Array.from(
    div.querySelectorAll('.scatterlayer path.point')
  ).map(p => {
    const b = p.getBoundingClientRect();
    return [(b.left + b.right) / 2, (b.top + b.bottom) / 2];
  });
  const ticks = Array.from(div.querySelectorAll('.ytick text')).map(t => t.textContent);
  return {boxes, points, ticks};
}
"""


def drawn(browser: Browser, figure: go.Figure, folder: Path, width: int) -> dict[str, Any]:
    path = folder / "figure.html"
    figure.write_html(path, include_plotlyjs="directory", full_html=True)
    opened = open_offline(browser, path.as_uri(), width=width, height=900)
    wait_for_plotly(opened.page)
    found: dict[str, Any] = opened.page.evaluate(LABELS_JS)
    opened.page.context.close()
    assert opened.blocked == [] and opened.problems == []
    return found


def overlap(a: list[Any], b: list[Any]) -> bool:
    return a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]


def test_town_labels_never_collide_at_800_px_and_hide_few_markers(
    browser: Browser, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    df = pk.frame(records[:1_500])  # SVG markers, so the page can list them
    figure = property_map(df, color="epc.currentEnergyRating", basemap="outline")
    figure.update_layout(width=800)
    seen = drawn(browser, figure, tmp_path, width=820)
    boxes, points = seen["boxes"], np.array(seen["points"])
    assert len(boxes) >= 8 and boxes[0][0] == "London", boxes  # towns are named...
    for position, box in enumerate(boxes):  # ...and no two labels touch
        assert not any(overlap(box, other) for other in boxes[position + 1 :]), (box, boxes)
    hidden = sum(
        int(((points[:, 0] >= b[1]) & (points[:, 0] <= b[3]) & (points[:, 1] >= b[2])
             & (points[:, 1] <= b[4])).sum())
        for b in boxes
    )  # fmt: skip
    assert hidden <= 0.02 * len(points), f"{hidden} of {len(points)} markers under labels"


def test_the_box_plot_of_one_property_reads_distinct_ticks_in_the_browser(
    browser: Browser, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    figure = epc_price_chart(pk.frame(records[:1]))
    ticks = drawn(browser, figure, tmp_path, width=800)["ticks"]
    assert len(ticks) >= 3 and len(set(ticks)) == len(ticks), ticks
    values = [float(t.replace(",", "").replace("k", "e3")) for t in ticks]
    assert values == sorted(values) and values[-1] - values[0] >= 10_000
    assert pd.Series(values).diff().dropna().nunique() == 1  # evenly spaced, round steps
