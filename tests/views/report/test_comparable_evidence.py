"""``write_report(df, path, subject=...)``: the "Comparable evidence" section."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from propertykit.errors import InvalidInput
from propertykit.frames.tables import frame
from propertykit.sandbox.data import generate_records
from propertykit.views import build_report, write_report

SUBJECT = "PK00000505"  # a London house with a dozen comparables in 3,000 records


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return generate_records(3000)


@pytest.fixture(scope="module")
def df(records: list[dict[str, Any]]) -> pd.DataFrame:
    return frame(records)


def section(page: str) -> str:
    start = page.index("<h2>Comparable evidence</h2>")
    return page[start : page.index("</section>", start)]


@pytest.mark.timeout(120)
def test_the_section_gives_the_range_table_map_index_and_caveats_first(df, tmp_path: Path):
    path = write_report(df, tmp_path / "valued.html", subject=SUBJECT, as_of="2025-01-01")
    page = path.read_text()
    value = df.pk.valuation([SUBJECT], as_of="2025-01-01").iloc[0]
    shown = section(page)
    assert page.index("Comparable evidence") < page.index("Sale prices over time")
    assert f"likely between £{value['lower']:,.0f} and £{value['upper']:,.0f}" in shown
    assert shown.count("<tr>") == 1 + int(value["comparables"])
    assert 'class="plotly-graph-div"' in shown  # the comparables' map
    assert "Index used" in shown and "repeat-sales index" in shown
    assert "attrs[" not in shown and "adjusted_price" not in shown
    assert page.count("plotly.js v") == 1


def test_without_a_subject_there_is_no_section(df):
    assert "Comparable evidence" not in build_report(df.head(200))


def test_a_subject_the_frame_does_not_hold_is_refused_and_nothing_written(df, tmp_path: Path):
    with pytest.raises(InvalidInput, match="not a propertyId"):
        write_report(df, tmp_path / "never.html", subject="PK-NOT-HERE")
    assert not (tmp_path / "never.html").exists()


def test_the_evidence_of_a_pence_frame_is_in_pounds(records, df):
    pence = copy.deepcopy(records)
    for record in pence:
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
    in_pence = frame(pence, money_unit="minor")
    amounts = [
        re.findall(r"£[\d,]+", section(build_report(data, subject=SUBJECT, as_of="2025-01-01")))
        for data in (df, in_pence)
    ]
    assert amounts[0] == amounts[1] and amounts[0]


def test_addresses_in_the_section_are_escaped(records):
    hostile = copy.deepcopy(records)
    for record in hostile:
        record["address"]["displayAddress"] = "<script>alert('x')</script> Flat 1"
    shown = section(build_report(frame(hostile), subject=SUBJECT, as_of="2025-01-01"))
    assert "<script>alert" not in shown and "&lt;script&gt;" in shown
