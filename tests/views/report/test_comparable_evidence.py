"""``write_report(df, path, subject=...)``: the "Comparable evidence" section."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest

from propertykit.errors import InvalidInput
from propertykit.views import build_report, write_report
from propertykit.views._valuation_page import age_text, rounded
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
def test_the_evidence_comes_first_and_a_client_can_follow_it(df, valued_page: str):
    page = valued_page  # write_report(df, path, subject=SUBJECT, as_of=VALUED_AS_OF)
    value = df.pk.valuation([SUBJECT], as_of=VALUED_AS_OF).iloc[0]
    shown = html.unescape(section(page))
    assert page.index("Comparable evidence") < page.index("<h2>Summary</h2>")  # before the rest
    assert f"between {rounded(value['lower'])} and {rounded(value['upper'])}" in shown
    assert "not a RICS Red Book valuation" in shown
    assert shown.count("<tr>") >= 1 + int(value["comparables"])  # the numbered schedule
    what = "the estimate" if value["confidence"] != "low" else "the centre of the range"
    assert f"= £{value['estimate']:,.0f}, {what} before rounding" in shown
    assert 'class="plotly-graph-div"' in shown  # the comparables' map
    assert f"Index: {value['index']}" in shown and "Valuation date: " in shown
    assert "attrs[" not in shown and "adjusted_price" not in shown
    assert page.count("plotly.js v") == 1


def test_the_date_left_out_is_stated_with_why(df):
    shown = html.unescape(section(build_report(df, subject=SUBJECT)))
    assert "no date was given" in shown and "the day after the frame's latest sale" in shown
    # earlier than today: the page says how old the date is, beside the value
    as_of = pd.Timestamp(df.pk.valuation([SUBJECT])["as_of"].iloc[0])
    today = pd.Timestamp.now().normalize()
    assert as_of < today
    said = f"Valued as of {as_of.day} {as_of:%B %Y}, {age_text(as_of, today)} before today"
    assert said in shown and shown.index(said) < shown.index("<h3>The property</h3>")


def test_how_old_a_date_is_counts_whole_months():
    assert age_text("2024-01-31", "2025-03-01") == "1 year and 1 month"


def test_a_date_after_today_is_refused_and_nothing_written(df, tmp_path: Path):
    with pytest.raises(InvalidInput, match="after today"):
        write_report(df, tmp_path / "never.html", subject=SUBJECT, as_of="2030-01-01")
    assert not (tmp_path / "never.html").exists()


def test_without_a_subject_there_is_no_section(df):
    assert "Comparable evidence" not in build_report(df.head(20))


def test_a_subject_the_frame_does_not_hold_is_refused_and_nothing_written(df, tmp_path: Path):
    with pytest.raises(InvalidInput, match="PK-NOT-HERE"):
        write_report(df, tmp_path / "never.html", subject="PK-NOT-HERE")
    assert not (tmp_path / "never.html").exists()


def test_the_evidence_of_a_pence_frame_is_in_pounds(valued_page: str, hostile_pence_page: str):
    # The same records' report, served in pounds; up to the reconciliation (the fixture leaves
    # the service's estimatedSaleValue in pounds, so only the sales are in pence).
    in_pounds = section(valued_page).split("<h3>Reconciliation</h3>")[0]
    in_pence = section(hostile_pence_page).split("<h3>Reconciliation</h3>")[0]
    amounts = [re.findall(r"£[\d,]+", shown) for shown in (in_pounds, in_pence)]
    assert amounts[0] == amounts[1] and amounts[0]


def test_addresses_in_the_section_are_escaped(hostile_pence_page: str):
    shown = section(hostile_pence_page)
    assert "<script>alert" not in shown and "&lt;script&gt;" in shown


#: Every element of the evidence section wider than its card, or reaching past the window, and
#: whether the schedule's own box scrolls (it is wider than the card, the card is not).
OVERFLOW_JS = """
() => {
  const card = document.querySelector('section.evidence');
  const room = card.getBoundingClientRect();
  const out = [];
  for (const el of card.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || el.closest('.pk-scroll, .plotly-graph-div') !== null) continue;
    if (box.right > room.right + 1 || box.right > innerWidth + 1) out.push(el.tagName + ' ' +
        (el.className || '') + ' ' + (el.innerText || '').slice(0, 30));
  }
  const scroll = card.querySelector('.pk-scroll');
  return {out, pageWidth: document.documentElement.scrollWidth, window: innerWidth,
          scrolls: scroll.scrollWidth > scroll.clientWidth &&
                   getComputedStyle(scroll).overflowX === 'auto',
          fits: scroll.getBoundingClientRect().right <= room.right + 1};
}
"""


@pytest.mark.timeout(120)
def test_at_400_px_nothing_overflows_and_the_schedule_scrolls_in_its_card(
    browser, valued_page: str, tmp_path: Path
):
    from tests._browser import open_offline

    path = tmp_path / "valued.html"
    path.write_text(valued_page, encoding="utf-8")
    page = open_offline(browser, path.as_uri(), width=400, height=900)
    try:
        seen = page.page.evaluate(OVERFLOW_JS)
        page.page.screenshot(path=str(tmp_path / "evidence-400.png"), full_page=False)
    finally:
        page.page.context.close()
    assert seen["out"] == [] and seen["pageWidth"] <= seen["window"]
    assert seen["scrolls"] and seen["fits"]


def test_an_appraisal_in_pence_is_refused_by_the_page_that_shows_pounds() -> None:
    import warnings

    import propertykit as pk
    from propertykit.sandbox import generate_records
    from propertykit.views._valuation_page import evidence_html

    served = pk.frame(generate_records(300), money_unit="minor")  # said to be pence
    subject = str(served["propertyId"].iloc[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.errors.FewPairsWarning)
        appraisal = pk.frames.appraise(served, [subject], as_of=VALUED_AS_OF)
        in_pounds = pk.views.comparable_evidence(served, subject, as_of=VALUED_AS_OF)
    with pytest.raises(InvalidInput, match="This appraisal is in pence"):
        evidence_html(appraisal)
    assert "£" in evidence_html(in_pounds)  # the views' own appraisal is in pounds
