"""One appraisal as HTML a client can follow with a calculator: the value, the property, the
numbered schedule of comparables, the reconciliation, the basis and the disclosure (every text
from the data escaped; wide tables scroll in their own box). The rules are in docs/valuation.md.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from propertykit.text import short_address

if TYPE_CHECKING:
    from propertykit.frames import Appraisal

STYLE = (
    "<style>.pk-val{line-height:1.35}.pk-val h3{font-size:15px;margin:14px 0 4px}"
    ".pk-val p{margin:4px 0;font-size:14px}"
    ".pk-val table{border-collapse:collapse;font-size:13px;margin:2px 0}"
    ".pk-val th,.pk-val td{padding:2px 6px;border-bottom:1px solid #e3e3e3;text-align:left;"
    "vertical-align:top;line-height:1.3}.pk-val .d{color:#555;font-size:12px}"
    ".pk-val .n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    ".pk-val .pk-scroll{overflow-x:auto;max-width:100%;contain:inline-size}"
    ".pk-val .comparables th,.pk-val .comparables td{padding:2px 3px}"
    ".pk-val .comparables th.n{white-space:normal}"
    ".pk-val .comparables td:nth-child(2){min-width:8.5em}"
    ".pk-val .disclosure{border-left:3px solid #8a5300;padding-left:8px;color:#5a3a00}</style>"
)
TIMES, MINUS, NBSP = "\N{MULTIPLICATION SIGN}", "\N{MINUS SIGN}", "\N{NO-BREAK SPACE}"
#: The schedule as shown: heading, and whether it is a number (right-aligned).
#: The home sold is its address over its type, tenure and new build (one column, so that the
#: arithmetic's columns fit 590 px of notebook output and an A4 page).
SCHEDULE = (
    ("#", True), ("Home sold", False), ("Sold", False), ("Area m²", True), ("Price £", True),
    ("Time adj.", True), ("Size adj.", True), ("£/m² used", True), ("Weight", True),
)  # fmt: skip
NEW_BUILD = {"yes": "new build", "no": "not new build", "—": "new build not recorded"}
#: The property described: its field in ``Appraisal.subject`` -> its name.
DESCRIBED = {
    "address": "Address", "propertyType": "Type", "floorAreaSqM": "Floor area",
    "beds": "Bedrooms", "tenure": "Tenure", "newBuild": "New build", "epc": "EPC rating",
    "yearBuilt": "Year built",
}  # fmt: skip
#: A reconciliation's source -> how the report names it.
SOURCES = {
    "comparables": "This valuation (comparable sales)",
    "own last sale, brought forward by the index": "The property's own last sale, brought forward",
    "the service's estimatedSaleValue": "The data service's estimatedSaleValue",
}


def distance_text(metres: float) -> str:
    """``2 km``, ``750 m``."""
    return f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:,.0f} m"


def rounded(pounds: float) -> str:
    """A headline figure: three significant figures, in pounds.

    >>> rounded(254_651), rounded(1_234_567), rounded(95_432)
    ('£255,000', '£1,230,000', '£95,400')
    """
    if not pounds > 0:
        return f"£{pounds:,.0f}"
    step = 10 ** max(0, math.floor(math.log10(pounds)) - 2)
    return f"£{round(pounds / step) * step:,.0f}"


def value_range_text(appraisal: Appraisal, position: int = 0) -> str:
    """The value in one plain sentence: a figure and its range, only a range when confidence is
    low, or why there is none and what to change."""
    row = appraisal.values.iloc[position]
    name, when = subject_name(appraisal.subject(position)), f"{pd.Timestamp(row['as_of']):%d %B %Y}"
    used, needed = int(row["comparables"]), appraisal.search.min_comparables
    if bool(row["thin"]) or pd.isna(row["estimate"]):
        if used == 0 and str(row["method"]) != "too few comparables":
            return f"No estimate for {name}: {row['method']}."
        return (
            f"No estimate for {name} on {when}: {used} comparable sales found of the {needed} "
            f"needed, within {distance_text(float(row['radius_m']))} and "
            f"{appraisal.search.months} months before that date. Try a wider radius (up to 8 "
            "km) or more months; propertykit gives no value rather than a guess."
        )
    span = f"{rounded(row['lower'])} and {rounded(row['upper'])}"
    band = appraisal.values.attrs.get("band") or {}
    chance = (
        f"8 in 10 of {int(band.get('calibrated_on') or 0):,} earlier sales valued this way fell "
        "within their range"
        if bool(row["calibrated"])
        else "a range from the comparables' spread, not calibrated on enough earlier sales"
    )
    if row["confidence"] == "low":
        return (
            f"{name} on {when}: between {span} ({chance}), from {used} comparable sales; low "
            "confidence: the range is too wide to give one figure."
        )
    return (
        f"{name} on {when}: about {rounded(row['estimate'])}, likely between {span} ({chance}), "
        f"from {used} comparable sales; {row['confidence']} confidence."
    )


def evidence_html(appraisal: Appraisal, position: int = 0, *, with_range: bool = True) -> str:
    """The comparable evidence of one subject as HTML: the value (unless ``with_range=False``),
    the disclosure, the property, the schedule, the reconciliation and the basis.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> found = pk.views.comparable_evidence(pk.frame(generate_records(3000)), "PK00000007",
    ...                                      as_of="2025-01-01")
    >>> page = evidence_html(found)
    >>> page.count("<h3>"), "No estimate" in page, "RICS Red Book" in page
    (4, True, True)
    """
    value = html.escape(value_range_text(appraisal, position))
    head = f'<p class="value-range"><strong>{value}</strong></p>' if with_range else ""
    disclosure = f'<p class="disclosure">This is {html.escape(appraisal.basis["disclosure"])}.</p>'
    sections = {
        "The property": _described(appraisal.subject(position)),
        "Comparable sales": _schedule(appraisal, position),
        "Reconciliation": _reconciliation(appraisal, position),
        "Basis": _basis(appraisal, position),
    }
    body = "".join(f"<h3>{heading}</h3>{text}" for heading, text in sections.items())
    return f'{STYLE}<div class="pk-val">{head}{disclosure}{body}</div>'


def subject_name(described: dict[str, Any]) -> str:
    """How the subject is named: its address, else its id."""
    return str(described.get("address") or described.get("propertyId") or "the subject")


def _described(subject: dict[str, Any]) -> str:
    rows = []
    for field, name in DESCRIBED.items():
        value = subject.get(field)
        shown = (
            "not recorded" if value is None
            else f"{float(value):,.1f} m²" if field == "floorAreaSqM"
            else _text(value, yes_no=field == "newBuild")
        )  # fmt: skip
        rows.append(f"<tr><th>{name}</th><td>{html.escape(shown)}</td></tr>")
    return f"<table>{''.join(rows)}</table>"


def _text(value: object, *, yes_no: bool = False) -> str:
    """A cell: "—" when not known, a flag as yes or no."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    return ("yes" if bool(value) else "no") if yes_no else str(value)


def _home(sale: Any) -> str:
    """A schedule's home sold, as HTML: its address, and under it its type, tenure, new build."""
    address = short_address(getattr(sale, "address", None), postcode=True) or str(sale.propertyId)
    new = NEW_BUILD[_text(getattr(sale, "newBuild", None), yes_no=True)]
    kind = ", ".join([_text(sale.propertyType), _text(getattr(sale, "tenure", None)), new])
    return f'{html.escape(address)}<br><span class="d">{html.escape(kind)}</span>'


def _percent(factor: float) -> str:
    return f"{(factor - 1) * 100:+.1f} %".replace("-", MINUS)


def _row(cells: list[str], tag: str = "td") -> str:
    """A schedule row of cells already HTML, numbers right-aligned (class ``n``)."""
    shown = (f'<{tag} class="{"n" if n else ""}">{c}</{tag}>'
             for c, (_, n) in zip(cells, SCHEDULE, strict=True))  # fmt: skip
    return f"<tr>{''.join(shown)}</tr>"


def _schedule(appraisal: Appraisal, position: int) -> str:
    table = appraisal.schedule(position)
    if not len(table):
        return "<p>No comparable sales were found.</p>"
    tenths = _tenths(table["weight"].to_numpy(dtype=float))
    rows = [
        _row([
            str(number),
            _home(sale),
            f"{sale.date:%d %b %Y}".replace(" ", NBSP),
            f"{sale.floorAreaSqM:,.1f}",
            f"{sale.price:,.0f}",
            _percent(sale.time_adjustment),
            _percent(sale.size_adjustment),
            f"{sale.used_price_per_sqm:,.0f}{' *' if sale.clipped else ''}",
            f"{tenths[number - 1] / 10:.1f} %",
        ])
        for number, sale in enumerate(table.itertuples(index=False), start=1)
    ]  # fmt: skip
    head = _row([html.escape(title) for title, _ in SCHEDULE], "th")
    return (
        f'<div class="pk-scroll"><table class="comparables">{head}{"".join(rows)}'
        f"</table></div>{_arithmetic(appraisal, position, table)}"
    )


def _tenths(weights: np.ndarray) -> list[int]:
    """Weights in tenths of a per cent adding up to exactly 100.0 % (largest remainders)."""
    exact = weights / weights.sum() * 1000
    tenths = np.floor(exact).astype(int)
    short = 1000 - int(tenths.sum())
    tenths[np.argsort(tenths - exact, kind="stable")[:short]] += 1
    return [int(t) for t in tenths]


def _paragraphs(said: list[str]) -> str:
    return "".join(f"<p>{html.escape(text)}</p>" for text in said)


def _arithmetic(appraisal: Appraisal, position: int, table: pd.DataFrame) -> str:
    """How the schedule makes the estimate, in words a calculator follows."""
    said = [
        f"£/m² used = price ÷ floor area {TIMES} (1 + time adj.) {TIMES} (1 + size adj.); time "
        "adj. brings the price to the valuation date, size adj. to the subject's floor area."
    ]
    if bool(table["clipped"].any()):
        said.append("* pulled back towards the weighted median before weighting (see Method).")
    row, area = appraisal.values.iloc[position], appraisal.subject(position)["floorAreaSqM"]
    if not bool(row["thin"]):
        said.append(
            f"Weighted geometric mean of £/m² used (each to the power of its weight, "
            f"multiplied): £{row['price_per_sqm']:,.0f}; {TIMES} the subject's {float(area):,.1f}"
            f" m² = £{row['estimate']:,.0f}, the estimate before rounding."
        )
    return _paragraphs(said)


def _reconciliation(appraisal: Appraisal, position: int) -> str:
    table = appraisal.reconciliation(position)
    if not len(table):
        return "<p>Nothing to set beside it: no estimate, no earlier sale, no service figure.</p>"
    rows = []
    for item in table.itertuples(index=False):
        detail = str(item.detail)
        value = "—" if pd.isna(item.value) else rounded(item.value)  # low confidence: a range
        if item.source == "comparables":
            detail = f"range {rounded(item.lower)} to {rounded(item.upper)}, {detail}"
        elif not pd.isna(item.price):
            sold = f"sold {pd.Timestamp(item.date):%d %b %Y} for £{item.price:,.0f}"
            moved = item.factor != 1  # exactly 1: no index to bring it forward by
            detail = f"{sold}, {TIMES} {item.factor:.3f}: {detail}" if moved else (
                f"{sold}; not brought forward: {detail}")  # fmt: skip
            value = value if moved else "—"
        rows.append(
            f"<tr><th>{html.escape(SOURCES.get(item.source, str(item.source)))}</th>"
            f'<td class="n">{html.escape(value)}</td><td>{html.escape(detail)}</td></tr>'
        )
    head = '<tr><th>Source</th><th class="n">Value</th><th>How</th></tr>'
    return f'<div class="pk-scroll"><table>{head}{"".join(rows)}</table></div>'


def _basis(appraisal: Appraisal, position: int) -> str:
    row, basis, attrs = appraisal.values.iloc[position], appraisal.basis, appraisal.values.attrs
    said = [
        f"Valuation date: {pd.Timestamp(row['as_of']):%d %B %Y}, {basis['as_of_why']}.",
        f"Method: {basis['method']}",
        f"Index: {row['index']}.",
        f"Size: {row['size']}.",
        f"Range: {(attrs.get('band') or {}).get('how', 'not set')}.",
        f"Confidence: {attrs.get('confidence_rule', '')}.",
        *(f"{n:,} {why} could not be compared and were left out."
          for why, n in (attrs.get("left_out") or {}).items() if n),
        "Floor areas are the ones recorded now: a home extended since it was sold is compared "
        "at its present size.",
    ]  # fmt: skip
    return _paragraphs(said)
