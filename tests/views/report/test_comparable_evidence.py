"""``write_report(df, path, subject=...)``: the "Comparable evidence" section."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from propertykit.errors import InvalidInput
from propertykit.views import build_report, write_report
from tests.views.conftest import VALUED_AS_OF, VALUED_SUBJECT

SUBJECT = VALUED_SUBJECT  # a London house with a dozen comparables in 3,000 records


@pytest.fixture
def df(valued_frame: pd.DataFrame) -> pd.DataFrame:
    return valued_frame


@pytest.fixture(scope="module")
def hostile_pence_page(valued_frame_in_pence: pd.DataFrame) -> str:
    """The report with the evidence of :data:`SUBJECT`, from the records served in pence, every
    address script-laden: built once, for the test of its amounts and that of its escaping
    (an address has no amount in it, a price no text)."""
    hostile = valued_frame_in_pence.copy()  # attrs (money_unit="minor") kept
    hostile["address.displayAddress"] = "<script>alert('x')</script> Flat 1"
    return build_report(hostile, subject=SUBJECT, as_of=VALUED_AS_OF)


def section(page: str) -> str:
    start = page.index("<h2>Comparable evidence</h2>")
    return page[start : page.index("</section>", start)]


@pytest.mark.timeout(120)
def test_the_section_gives_the_range_table_map_index_and_caveats_first(df, valued_page: str):
    page = valued_page  # write_report(df, path, subject=SUBJECT, as_of=VALUED_AS_OF)
    value = df.pk.valuation([SUBJECT], as_of=VALUED_AS_OF).iloc[0]
    shown = section(page)
    assert page.index("Comparable evidence") < page.index("Sale prices over time")
    assert f"likely between £{value['lower']:,.0f} and £{value['upper']:,.0f}" in shown
    assert shown.count("<tr>") == 1 + int(value["comparables"])
    assert 'class="plotly-graph-div"' in shown  # the comparables' map
    assert "Index used" in shown and "repeat-sales index" in shown
    assert "attrs[" not in shown and "adjusted_price" not in shown
    assert page.count("plotly.js v") == 1


def test_without_a_subject_there_is_no_section(df):
    assert "Comparable evidence" not in build_report(df.head(20))


def test_a_subject_the_frame_does_not_hold_is_refused_and_nothing_written(df, tmp_path: Path):
    with pytest.raises(InvalidInput, match="not a propertyId"):
        write_report(df, tmp_path / "never.html", subject="PK-NOT-HERE")
    assert not (tmp_path / "never.html").exists()


def test_the_evidence_of_a_pence_frame_is_in_pounds(valued_page: str, hostile_pence_page: str):
    in_pounds = section(valued_page)  # the same records' report, served in pounds
    in_pence = section(hostile_pence_page)
    amounts = [re.findall(r"£[\d,]+", shown) for shown in (in_pounds, in_pence)]
    assert amounts[0] == amounts[1] and amounts[0]


def test_addresses_in_the_section_are_escaped(hostile_pence_page: str):
    shown = section(hostile_pence_page)
    assert "<script>alert" not in shown and "&lt;script&gt;" in shown
