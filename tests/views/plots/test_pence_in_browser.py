"""Prices served in pence are drawn and labelled in pounds: a real chart in headless Chromium.

The data comes over real HTTP from the sandbox's ``vepler`` profile (pence) and its ``spec``
profile (pounds); the rendered price trend and report must read the same in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

import propertykit as pk
from propertykit.views import write_report
from tests._browser import open_offline, wait_for_plotly

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(180)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

#: The y-axis title and tick labels of each figure, as drawn in the SVG.
AXES_JS = """
() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(div => {
  const title = div.querySelector('.g-ytitle text');
  return {
    title: title ? title.textContent : null,
    ticks: Array.from(div.querySelectorAll('.ytick text')).map(t => t.textContent),
  };
})
"""


@pytest.fixture(scope="module")
def pence_and_pounds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """The same 300 homes fetched from each profile's sandbox."""
    got = {}
    for profile in ("spec", "vepler"):
        with (
            pk.sandbox.serve(profile=profile) as sb,
            pk.Client(sb.api_key, sb.url, profile=profile, cache=False, progress=False) as client,
        ):
            got[profile] = client.properties(sb.location_ids[:300])
    return got


def drawn_axes(browser: Browser, path: Path) -> list[dict[str, object]]:
    """The y axis of each figure on the page at ``path``, as Chromium drew it."""
    opened = open_offline(browser, path.as_uri())
    page: Page = opened.page
    wait_for_plotly(page)
    axes: list[dict[str, object]] = page.evaluate(AXES_JS)
    assert opened.blocked == [] and opened.problems == []
    page.context.close()
    return axes


def tick_values(ticks: list[str]) -> list[float]:
    numbers = []
    for tick in ticks:
        text = tick.replace(",", "").replace("\u2212", "-").strip()
        if text.endswith("k"):
            numbers.append(float(text[:-1]) * 1_000)
        elif text.endswith("M"):
            numbers.append(float(text[:-1]) * 1_000_000)
        elif text:
            numbers.append(float(text))
    return numbers


def test_a_price_trend_from_pence_is_drawn_in_pounds(browser, pence_and_pounds, tmp_path):
    pence, pounds = pence_and_pounds["vepler"], pence_and_pounds["spec"]
    assert pence.attrs["money_unit"] == "minor"
    # Both charts on one page, side by side in the same layout (one load of plotly.js), each
    # as write_html draws a figure of its own
    charts = [
        df.pk.price_trend(by=None).to_html(
            full_html=False, include_plotlyjs=first, default_width="100%", default_height="900px"
        )
        for df, first in ((pence, True), (pounds, False))
    ]
    path = tmp_path / "trends.html"
    path.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + "".join(charts)
        + "</body></html>",
        encoding="utf-8",
    )
    drawn = dict(zip(("pence", "pounds"), drawn_axes(browser, path), strict=True))
    assert drawn["pence"]["title"] == "Median sale price (GBP)"
    assert "minor" not in str(drawn["pence"]["title"])
    assert drawn["pence"] == drawn["pounds"]  # the same axis, the same ticks
    assert max(tick_values(drawn["pence"]["ticks"])) < 5_000_000  # pounds, not pence
    # The frame the user holds is untouched.
    assert pence.attrs["money_unit"] == "minor"
    pd.testing.assert_series_equal(
        pence["pricing.estimatedSaleValue"], pounds["pricing.estimatedSaleValue"] * 100
    )


def test_the_report_from_pence_reads_in_pounds(browser, pence_and_pounds, tmp_path):
    pence, pounds = pence_and_pounds["vepler"], pence_and_pounds["spec"]
    pages = {}
    for name, df in (("pence", pence), ("pounds", pounds)):
        path = write_report(df, tmp_path / f"{name}.html", source="the local sandbox")
        opened = open_offline(browser, path.as_uri())
        wait_for_plotly(opened.page)
        pages[name] = opened.page.inner_text("table")
        opened.page.context.close()
    assert "minor units" not in pages["pence"]
    assert pages["pence"] == pages["pounds"]
    median = f"{pounds['pricing.estimatedSaleValue'].median():,.0f}"
    assert median in pages["pence"]
