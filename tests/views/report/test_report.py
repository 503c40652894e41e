"""The HTML report: one self-contained file, plotly.js once, tables, charts, an honest footer."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from propertykit.errors import InvalidInput, MoneyUnitWarning
from propertykit.views import build_report, write_report

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
USAGE = {"requests_sent": 4, "cache_hits": 9, "billable_requests": 3}


@pytest.fixture(scope="module")
def page(properties: pd.DataFrame) -> str:
    """The report of the 150 properties, built once for the tests that only read it."""
    return build_report(properties, usage=USAGE, source="the local sandbox", generated_at=WHEN)


@pytest.fixture(scope="module")
def small_page(properties: pd.DataFrame) -> str:
    """The report of no properties (its charts empty: what is read here is the title, the
    source and the footer), its title and source holding markup, no usage given: built once for
    the tests that only read it."""
    return build_report(
        properties.iloc[:0], title="<b>Q1</b> & co", source="<script>x</script>", generated_at=WHEN
    )


@pytest.fixture(scope="module")
def empty_page(properties: pd.DataFrame) -> str:
    """The report of no properties, its usage given as a plain object with the three counts:
    built once for the two tests that read it."""
    usage = SimpleNamespace(requests_sent=0, cache_hits=2, billable_requests=0, retries=0)
    return build_report(properties.iloc[:0], usage=usage, generated_at=WHEN)


def test_report_is_one_document_with_plotly_embedded_once(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.count("plotly.js v") == 1  # the library's licence banner, embedded once
    assert len(re.findall(r'<div id="pk-figure-\d+"', page)) == 7  # index and EPC trend added


def test_report_loads_nothing_from_the_network(page: str) -> None:
    assert not re.search(r"<script[^>]+src=", page)
    assert not re.search(r"<link[^>]+href=", page)
    assert not re.search(r"<img[^>]+src=", page)
    assert "cdn.plot.ly/plotly" not in page.replace("https://cdn.plot.ly/un/", "")


def test_summary_and_type_tables_hold_the_frame_figures(
    properties: pd.DataFrame, page: str
) -> None:
    assert f'<th>Properties</th><td class="number">{len(properties):,}</td>' in page
    median = properties["pricing.estimatedSaleValue"].median()
    assert f'Median estimated sale value (GBP)</th><td class="number">{median:,.0f}</td>' in page
    flats = int((properties["propertyType"] == "flat").sum())
    assert re.search(rf"<tr><th>flat</th><td class=\"number\">{flats}</td>", page)


def test_footer_says_source_time_and_cost(page: str) -> None:
    footer = page[page.index("<footer>") :]
    assert "150 property records from the local sandbox" in footer
    assert "2026-03-04 05:06:07 UTC" in footer
    assert "4 requests over the network, 3 of them billable" in footer
    assert "9 answers came from the local cache" in footer


def test_usage_may_be_any_object_with_the_counts_or_none(
    properties: pd.DataFrame, empty_page: str, small_page: str
) -> None:
    assert "0 requests over the network" in empty_page  # built with a SimpleNamespace
    assert "2 answers came from the local cache" in empty_page
    assert "usage was not recorded" in small_page  # built with no usage
    with pytest.raises(InvalidInput, match="billable_requests"):
        build_report(properties.head(5), usage={"requests_sent": 1})


def test_text_from_the_data_is_escaped(small_page: str) -> None:
    page = small_page
    assert "&lt;b&gt;Q1&lt;/b&gt; &amp; co" in page and "<script>x</script>" not in page


def test_an_empty_frame_still_gives_a_report(empty_page: str) -> None:
    page = empty_page  # build_report(properties.iloc[:0], ...)
    assert page.count("left out, nothing to show (") >= 4 and "0 property records" in page
    assert "No data:" not in page  # no empty panel: each left out with a line saying why


def test_missing_columns_leave_a_chart_out_with_a_note(properties: pd.DataFrame) -> None:
    page = build_report(properties.drop(columns=["pricing.estimatedSaleValue"]), generated_at=WHEN)
    assert "Energy performance and price: not drawn" in page


def test_write_report_writes_the_file_and_returns_its_path(
    properties: pd.DataFrame, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "report.html"
    written = write_report(properties.head(5), target, title="Weekly", generated_at=WHEN)
    assert (
        written == target.resolve()
        and written.read_text(encoding="utf-8").count("<title>Weekly</title>") == 1
    )
    assert [p.name for p in written.parent.iterdir()] == ["report.html"]  # no temporary left


def test_footer_of_a_report_from_pence_says_pounds_not_as_served(
    properties: pd.DataFrame,
) -> None:
    # The report shows pence-served prices in pounds (issue 16); its footer must not say
    # "as served", which read true only for frames served in pounds.
    pence = properties.head(20).copy()
    pence.attrs = {**properties.attrs, "money_unit": "minor"}
    footer = build_report(pence, generated_at=WHEN)
    footer = footer[footer.index("<footer>") :]
    assert "as served" not in footer
    assert "Prices are shown in pounds" in footer


def test_a_written_report_is_made_as_any_file_is_not_owner_only(
    properties: pd.DataFrame, tmp_path: Path
) -> None:
    path = write_report(properties.head(5), tmp_path / "shared.html")
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # before: 0600, from tempfile.mkstemp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.html"]  # nothing left beside


def in_pence(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as the vepler profile serves it: its prices in pence, said."""
    from propertykit.frames import MINOR_UNIT_COLUMNS

    pence = df.copy()
    for column in ("pricing.estimatedSaleValue", "pricing.currentSalePrice"):
        assert column in MINOR_UNIT_COLUMNS
        pence[column] = pence[column] * 100
    pence.attrs = {**df.attrs, "money_unit": "minor", "money_unit_assumed": False}
    return pence


def summary_median(page: str) -> str:
    found = re.search(r"Median estimated sale value \(([^)]*)\)</th><td class=\"number\">([^<]*)<",
                      page)  # fmt: skip
    assert found is not None
    return f"{found[2]} ({found[1]})"


def test_a_report_shows_the_same_pounds_from_a_frame_in_pence_and_in_pounds(
    properties: pd.DataFrame,
) -> None:
    book = properties.head(20)
    median = f"{book['pricing.estimatedSaleValue'].median():,.0f} (GBP)"
    from_pounds = build_report(book, generated_at=WHEN)
    from_pence = build_report(in_pence(book), generated_at=WHEN)
    assert summary_median(from_pounds) == summary_median(from_pence) == median
    assert "the frame served in pence, divided by 100" in from_pence[from_pence.index("<footer>") :]


def test_a_report_of_a_frame_that_says_no_unit_says_so_and_warns(
    properties: pd.DataFrame,
) -> None:
    book = properties.head(20)
    mixed = pd.concat([in_pence(book.iloc[:10]), book.iloc[10:]])  # attrs differ: dropped
    with pytest.warns(MoneyUnitWarning, match="the frame in the report says no money unit"):
        page = build_report(mixed, generated_at=WHEN)
    assert summary_median(page).endswith("(unit not stated)")
    assert "the frame says no unit (pounds or pence)" in page[page.index("<footer>") :]
