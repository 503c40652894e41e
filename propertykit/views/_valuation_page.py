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

from propertykit.errors import InvalidInput
from propertykit.frames import OWN_SALE_SOURCE, money_unit_of
from propertykit.text import plural, short_address

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
    ".pk-val .comparables td:nth-child(2){min-width:7.5em}"
    ".pk-val .own{color:#8a5300;font-size:12px}.pk-val .as-of{color:#5a3a00}"
    ".pk-val .disclosure{border-left:3px solid #8a5300;padding-left:8px;color:#5a3a00}</style>"
)
TIMES, MINUS, NBSP = "\N{MULTIPLICATION SIGN}", "\N{MINUS SIGN}", "\N{NO-BREAK SPACE}"
#: The schedule as shown: heading, and whether it is a number (right-aligned).
#: The home sold is its address over its distance from the subject, type, bedrooms, tenure and
#: new build (one column, so that the arithmetic's columns fit 590 px of notebook output and an
#: A4 page); the date sold may break before its year.
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
    OWN_SALE_SOURCE: "The property's own last sale",
    "the service's estimatedSaleValue": "The data service's own current estimate",
}
#: What the subject's own earlier sale is called where it is one of its comparables.
OWN_SALE = "this property's own earlier sale"


def distance_text(metres: float) -> str:
    """``2 km``, ``750 m``."""
    return f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:,.0f} m"


def day_text(when: Any) -> str:
    """A date as the page writes every date: ``6 March 2025``.

    >>> day_text("2025-03-06")
    '6 March 2025'
    """
    day = pd.Timestamp(when)
    return f"{day.day} {day:%B %Y}"


def age_text(earlier: Any, later: Any) -> str:
    """How long before ``later`` ``earlier`` is, in years and months (days under a month).

    >>> age_text("2025-03-06", "2026-12-07"), age_text("2026-11-20", "2026-12-07")
    ('1 year and 9 months', '17 days')
    """
    start, end = pd.Timestamp(earlier), pd.Timestamp(later)
    months = (end.year - start.year) * 12 + end.month - start.month - (end.day < start.day)
    if months < 1:
        return plural((end - start).days, "day")
    years, months = divmod(months, 12)
    parts = [plural(years, "year")] * bool(years) + [plural(months, "month")] * bool(months)
    return " and ".join(parts)


def rounded(pounds: float) -> str:
    """A headline figure: three significant figures, in pounds.

    >>> rounded(254_651), rounded(1_234_567), rounded(95_432)
    ('£255,000', '£1,230,000', '£95,400')
    """
    if not pounds > 0:
        return f"£{pounds:,.0f}"
    step = 10 ** max(0, math.floor(math.log10(pounds)) - 2)
    return f"£{round(pounds / step) * step:,.0f}"


def estimated(appraisal: Appraisal, position: int = 0) -> bool:
    """Whether the subject has a value at all (a figure or a range)."""
    row = appraisal.values.iloc[position]
    return not (bool(row["thin"]) or pd.isna(row["estimate"]))


def range_only(appraisal: Appraisal, position: int = 0) -> bool:
    """Whether the value is a range and no single figure (low confidence), everywhere shown."""
    return estimated(appraisal, position) and appraisal.values.iloc[position]["confidence"] == "low"


def value_range_text(appraisal: Appraisal, position: int = 0) -> str:
    """The value in one plain sentence: a figure and its range, only a range when confidence is
    low, or why there is none and what to change."""
    row = appraisal.values.iloc[position]
    name, when = subject_name(appraisal.subject(position)), day_text(row["as_of"])
    used, needed = int(row["comparables"]), appraisal.search.min_comparables
    sales = plural(used, "comparable sale")
    if not estimated(appraisal, position):
        if used == 0 and str(row["method"]) != "too few comparables":
            return f"No estimate for {name}: {row['method']}."
        return (
            f"No estimate for {name} on {when}: {sales} found of the {needed} needed, within "
            f"{distance_text(float(row['radius_m']))} and {int(row['months'])} months "
            "before that date. Try a wider radius (up to 8 km) or more months; propertykit "
            "gives no value rather than a guess."
        )
    span = f"{rounded(row['lower'])} and {rounded(row['upper'])}"
    band = appraisal.values.attrs.get("band") or {}
    chance = (
        f"8 in 10 of {int(band.get('calibrated_on') or 0):,} earlier sales valued this way fell "
        "within their range"
        if bool(row["calibrated"])
        else "a range from the comparables' spread, not checked on enough earlier sales"
    )
    if range_only(appraisal, position):
        return (
            f"{name} on {when}: between {span}, from {sales}; low confidence, so a range and "
            f"no single figure ({chance})."
        )
    return (
        f"{name} on {when}: about {rounded(row['estimate'])}, likely between {span} ({chance}), "
        f"from {sales}; {row['confidence']} confidence."
    )


def date_note(appraisal: Appraisal, position: int = 0, *, today: Any = None) -> str:
    """Why the valuation date is earlier than today and how old it is, when no date was given
    (``""`` when a date was asked for, or it is today)."""
    as_of = pd.Timestamp(appraisal.values.iloc[position]["as_of"])
    now = pd.Timestamp.now().normalize() if today is None else pd.Timestamp(today)
    if not appraisal.basis.get("as_of_default") or as_of >= now:
        return ""
    return (
        f"Valued as of {day_text(as_of)}, {age_text(as_of, now)} before today "
        f"({day_text(now)}). Why this date: {appraisal.basis['as_of_why']}."
    )


def evidence_html(appraisal: Appraisal, position: int = 0, *, with_range: bool = True) -> str:
    """The comparable evidence of one subject as HTML: the value and why its date is earlier
    than today (unless ``with_range=False``), the disclosure (over an estimate only), the
    property, the schedule, the reconciliation, the basis and the method.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> found = pk.views.comparable_evidence(pk.frame(generate_records(3000)), "PK00000007",
    ...                                      as_of="2025-01-01")
    >>> page = evidence_html(found)
    >>> page.count("<h3>"), "No estimate" in page, 'class="disclosure"' in page
    (5, True, False)
    """
    unit = money_unit_of(appraisal.values)  # the page shows pounds: read, never assumed
    if unit == "minor":
        raise InvalidInput(
            "This appraisal is in pence and the page shows pounds: appraise df.pk.in_pounds(), "
            "or use pk.views.comparable_evidence, which does"
        )
    value = html.escape(value_range_text(appraisal, position))
    head, dated = "", date_note(appraisal, position)
    if with_range:
        head = f'<p class="value-range"><strong>{value}</strong></p>'
        head += f'<p class="as-of">{html.escape(dated)}</p>' if dated else ""
    if estimated(appraisal, position):
        disclosure = html.escape(appraisal.basis["disclosure"])
        head += f'<p class="disclosure">This is {disclosure}.</p>'
    if unit is None:
        head += (
            '<p class="disclosure">The frame says no money unit (pounds or pence): its figures '
            "are shown as given.</p>"
        )
    sections = {
        "The property": _described(appraisal.subject(position)),
        "Comparable sales": _schedule(appraisal, position),
        "Reconciliation": _reconciliation(appraisal, position),
        "Basis": _basis(appraisal, position),
        "Method": _method(appraisal, position),
    }
    body = "".join(f"<h3>{heading}</h3>{text}" for heading, text in sections.items())
    return f'{STYLE}<div class="pk-val">{head}{body}</div>'


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
    """A schedule's home sold, as HTML: its address, and under it its type, bedrooms, tenure and
    new build (and, for the subject's own sale, that it is)."""
    address = short_address(getattr(sale, "address", None), postcode=True) or str(sale.propertyId)
    new = NEW_BUILD[_text(getattr(sale, "newBuild", None), yes_no=True)]
    beds = getattr(sale, "beds", None)
    rooms = "bedrooms not recorded" if _text(beds) == "—" else plural(int(str(beds)), "bedroom")
    away = f"{away_text(float(sale.distance_m))} away"
    kind = ", ".join(
        [away, _text(sale.propertyType), rooms, _text(getattr(sale, "tenure", None)), new]
    )
    own = f'<br><strong class="own">{OWN_SALE}</strong>' if bool(sale.own_sale) else ""
    return f'{html.escape(address)}<br><span class="d">{html.escape(kind)}</span>{own}'


def away_text(metres: float) -> str:
    """A comparable's distance from the subject: ``850 m``, ``1.2 km``."""
    return f"{metres:,.0f}{NBSP}m" if metres < 1000 else f"{metres / 1000:,.1f}{NBSP}km"


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
            day_text(sale.date).replace(" ", NBSP, 1),
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


def own_rows(table: pd.DataFrame) -> list[int]:
    """The schedule's row numbers (from 1) that are the subject's own earlier sales."""
    return [int(n) + 1 for n in np.flatnonzero(table["own_sale"].to_numpy(dtype=bool))]


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
        "adj. brings the price to the valuation date, size adj. to the subject's floor area; "
        "away: the straight-line distance from the subject."
    ]
    own = own_rows(table)
    if own:
        said.append(
            f"Row {', '.join(map(str, own))}: {OWN_SALE}, used as one comparable with the weight "
            "shown."
        )
    if bool(table["clipped"].any()):
        said.append("* pulled back towards the weighted median before weighting (see Method).")
    row, area = appraisal.values.iloc[position], appraisal.subject(position)["floorAreaSqM"]
    if estimated(appraisal, position):
        said.append(
            f"Weighted geometric mean of £/m² used (each to the power of its weight, "
            f"multiplied): £{row['price_per_sqm']:,.0f}; {TIMES} the subject's {float(area):,.1f}"
            f" m² = £{row['estimate']:,.0f}, the centre of the range before rounding."
            if range_only(appraisal, position)
            else f"Weighted geometric mean of £/m² used (each to the power of its weight, "
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
            span = f"{rounded(item.lower)} to {rounded(item.upper)}"
            if range_only(appraisal, position) or pd.isna(item.value):
                value, detail = span, f"low confidence: a range, no single figure; {detail}"
            else:
                detail = f"range {span}, {detail}"
        elif not pd.isna(item.price):
            sold = f"sold {day_text(item.date)} for £{item.price:,.0f}"
            moved = item.factor != 1  # exactly 1: no index to bring it forward by
            detail = f"{sold}, {TIMES} {item.factor:.3f}: {detail}" if moved else (
                f"{sold}; not brought forward: {detail}")  # fmt: skip
            value = value if moved else "—"  # its schedule row: said in the detail
        rows.append(
            f"<tr><th>{html.escape(SOURCES.get(item.source, str(item.source)))}</th>"
            f'<td class="n">{html.escape(value)}</td><td>{html.escape(detail)}</td></tr>'
        )
    head = '<tr><th>Source</th><th class="n">Value</th><th>How</th></tr>'
    return f'<div class="pk-scroll"><table>{head}{"".join(rows)}</table></div>'


def _basis(appraisal: Appraisal, position: int) -> str:
    """Basis of value, assumptions and purpose: one short paragraph."""
    row = appraisal.values.iloc[position]
    name = subject_name(appraisal.subject(position))
    return _paragraphs([
        f"This is {appraisal.basis['disclosure']}. Basis of value: the price {name} would most "
        f"likely have sold for on {day_text(row['as_of'])} on the open market, judged from the "
        "recorded sales of similar homes nearby. Assumptions: the property as recorded now "
        "(floor area, type, tenure), in the usual condition of the homes sold around it; nothing "
        "was inspected or measured. Purpose: a first view of value for research or for "
        "screening a book of homes, not for lending, tax or a sale."
    ])  # fmt: skip


def _method(appraisal: Appraisal, position: int) -> str:
    row, basis, attrs = appraisal.values.iloc[position], appraisal.basis, appraisal.values.attrs
    said = [
        f"Valuation date: {day_text(row['as_of'])}, {basis['as_of_why']}.",
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
