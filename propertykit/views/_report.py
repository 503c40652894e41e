"""A self-contained report: summary tables, price and EPC charts, maps, and what it cost.

The report is one HTML file with plotly.js embedded once and no external resource of any kind
(no CDN, no web fonts, no tile addresses), so it opens offline and survives being e-mailed. Its
footer says where the data came from, when the report was built, and how many requests and
credits the data cost (from a ``client.usage``).

:func:`write_report` picks the format by the file's suffix: ``.html`` as above, or ``.pdf``, the
same page printed by the system's Chromium (:mod:`~propertykit.views._static`): A4, each figure
kept whole on one page, figures as vectors. ``tiles=`` puts street tiles under the maps, fetched
once when the report is built (:mod:`~propertykit.views._street`) and embedded as images.
"""

from __future__ import annotations

import html
import os
import tempfile
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go

from propertykit.config import VERSION
from propertykit.errors import InvalidInput
from propertykit.frames import in_pounds_for
from propertykit.views import _figures as shared
from propertykit.views import _static as static
from propertykit.views import _street as street
from propertykit.views import _valuation as valuation
from propertykit.views._epc_profile import epc_profile_html
from propertykit.views._files import write_atomically
from propertykit.views._report_figures import report_figures
from propertykit.views._valuation_page import evidence_html

if TYPE_CHECKING:
    from xyzservices import TileProvider

    from propertykit.frames import Appraisal, ValuationSearch
    from propertykit.views._tile_source import FetchTile

#: The heading of the section a ``subject=`` adds.
EVIDENCE = "Comparable evidence"

_PLOT_CONFIG = {"displaylogo": False, "responsive": True}
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1b1b1b; background: #f6f7f9; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { margin: 0 0 4px; font-size: 28px; }
h2 { margin: 32px 0 8px; font-size: 20px; }
.lede { color: #555; margin: 0 0 16px; }
section.card { background: white; border-radius: 8px; padding: 16px; margin: 16px 0;
               box-shadow: 0 1px 3px rgba(0,0,0,.08); overflow-x: auto; }
@media (max-width: 600px) { main { padding: 8px; } section.card { padding: 10px; } }
table { border-collapse: collapse; font-size: 14px; }
th, td { padding: 6px 12px; border-bottom: 1px solid #e3e3e3; text-align: left; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #8a5300; font-size: 13px; }
footer { color: #444; font-size: 13px; border-top: 1px solid #ddd; margin-top: 32px;
         padding-top: 12px; }
@page { size: A4; margin: 12mm; }
@media print {
  body { background: white; }
  main { max-width: none; padding: 0; }
  section.card { box-shadow: none; border: 1px solid #ddd; margin: 0 0 8mm;
                 break-inside: avoid; page-break-inside: avoid; }
  section.card.evidence { break-inside: auto; page-break-inside: auto; }
  .pk-figure { break-inside: avoid; page-break-inside: avoid; }
  .pk-val tr, .pk-val p { break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  footer { break-inside: avoid; }
}
"""


def build_report(
    df: pd.DataFrame,
    *,
    title: str = "Property report",
    usage: Any = None,
    source: str | None = None,
    generated_at: datetime | None = None,
    tiles: str | TileProvider | None = None,
    attribution: str | None = None,
    fetch: FetchTile | None = None,
    subject: str | Mapping[str, Any] | None = None,
    as_of: Any = None,
    search: ValuationSearch | None = None,
) -> str:
    """Build the report as one complete HTML document (plotly.js embedded once, no network).

    Parameters
    ----------
    df
        The property frame (``pk.frame(records)`` or ``client.properties(...)``).
    title
        The report's heading and ``<title>``.
    usage
        What fetching the data cost: ``client.usage``, a mapping, or any object with
        ``requests_sent``, ``cache_hits`` and ``billable_requests``; ``None`` if unknown.
    source
        Where the data came from (e.g. the service URL or "the local sandbox"); never a key.
    generated_at
        When the report was built (default: now, UTC).
    tiles
        Street tiles under the maps: a ``.../{z}/{x}/{y}.png`` address template
        (:data:`~propertykit.views._tile_source.OSM_TILES` for OpenStreetMap's) or an xyzservices
        ``TileProvider``. Fetched now, once per tile (cached on disk), each bounded in bytes,
        pixels and time, and embedded: the report names no tile address. ``None``: the bundled
        outline basemap. If tiles cannot be had (the server unreachable, too slow, or sending
        something that is not a tile), the maps keep the outline, with one warning per map and
        a note in the report: the report is always written.
    attribution
        The credit the tile server asks for (OpenStreetMap's and a provider's are known).
    fetch
        The tile fetcher (:class:`~propertykit.views._tile_source.FetchTile`); default
        propertykit's.
    subject
        A property to value: a ``propertyId`` of ``df`` or a mapping (``lat``, ``lng``,
        ``floorAreaSqM``, ``propertyType``, optionally ``beds``). Adds a "Comparable evidence"
        section first, before the summary: the value, the disclosure, the property described,
        the numbered schedule of comparables, the reconciliation, the basis, and their map
        (:mod:`~propertykit.views._valuation_page`), all from one appraisal.
    as_of
        The valuation date for ``subject`` (default: the day after the frame's latest sale,
        and the report says so).
    search
        The comparables' search (:class:`~propertykit.frames.ValuationSearch`; ``None``: its
        defaults).

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    InvalidInput
        ``subject`` is not a property of the frame, or lacks what a valuation needs.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> page = build_report(pk.frame(generate_records(20)), usage={"requests_sent": 1,
    ...     "cache_hits": 0, "billable_requests": 1})
    >>> page.startswith("<!DOCTYPE html>"), page.count("plotly.js v") == 1
    (True, True)
    """
    when = (generated_at or datetime.now(UTC)).astimezone(UTC)
    counts = _usage_counts(usage)  # refused before the figures are built, not after
    money = in_pounds_for({"the frame": df}, output="the report")  # said, never assumed
    df = money.tables["the frame"]  # pounds in the report, whatever the served unit
    notes: list[str] = []
    evidence = _evidence(df, subject, as_of, search) if subject is not None else None
    figures = report_figures(df, notes)
    if evidence is not None and subject is not None:
        found = valuation.comparables_map(df, subject, basemap="outline", appraisal=evidence)
        figures.insert(0, (EVIDENCE, found))
    credit = _bake_streets(figures, tiles, attribution, notes, fetch) if tiles is not None else None
    charts = []
    for position, (heading, figure) in enumerate(figures):
        body = figure.to_html(
            full_html=False,
            include_plotlyjs=position == 0,
            config=_PLOT_CONFIG,
            div_id=f"pk-figure-{position}",
            default_height="480px",
        )
        kind = "card"
        if heading == EVIDENCE and evidence is not None:  # the map kept whole on one page
            body = f'{evidence_html(evidence)}<div class="pk-figure">{body}</div>'
            kind = "card evidence"
        charts.append(f'<section class="{kind}"><h2>{html.escape(heading)}</h2>{body}</section>')
    if not figures:
        charts.append(
            '<section class="card"><p>No charts: the frame has nothing to plot.</p></section>'
        )
    notes_html = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    lede = f"{len(df):,} properties · generated {when:%d %B %Y, %H:%M} UTC"
    footer = _footer(df, counts=counts, source=source, when=when, streets=credit, money=money.note)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="propertykit">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(title)}</h1>
<p class="lede">{html.escape(lede)}</p>
{charts[0] if evidence is not None else ""}
<section class="card"><h2>Summary</h2>{_summary_table(df)}</section>
<section class="card"><h2>By property type</h2>{_type_table(df)}</section>
<section class="card"><h2>EPC profile</h2>{epc_profile_html(df)}</section>
{notes_html}
{"".join(charts[1:] if evidence is not None else charts)}
<footer>{footer}</footer>
</main>
</body>
</html>
"""


def write_report(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    tiles: str | TileProvider | None = None,
    attribution: str | None = None,
    **kwargs: Any,
) -> Path:
    """Build the report and write it to ``path`` (atomically), as HTML or PDF by its suffix.

    Parameters
    ----------
    df
        The property frame.
    path
        ``.html`` (or ``.htm``): the self-contained page, UTF-8. ``.pdf``: the same page printed
        on A4 by the system's Chrome or Chromium (needs the ``export`` extra), each figure whole
        on one page. Parent folders are created.
    tiles, attribution
        Street tiles under the maps, baked in now (see :func:`build_report`).
    **kwargs
        Passed to :func:`build_report` (``title``, ``usage``, ``source``, ``generated_at``,
        ``fetch``, and ``subject``, ``as_of`` and ``search`` for the comparable evidence of one
        property).

    Returns
    -------
    pathlib.Path
        The absolute path written.

    Examples
    --------
    >>> import tempfile, pathlib, propertykit as pk
    >>> from propertykit.sandbox import generate_records
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> out = write_report(pk.frame(generate_records(20)), folder / "r.html")
    >>> out.suffix, out.stat().st_size > 1_000_000
    ('.html', True)
    """
    target = check_report(path, tiles=tiles, attribution=attribution)
    suffix = target.suffix.lower()
    target.parent.mkdir(parents=True, exist_ok=True)
    page = build_report(df, tiles=tiles, attribution=attribution, **kwargs)
    if suffix != ".pdf":
        write_atomically(target, lambda out: out.write_text(page, encoding="utf-8"))
        return target
    with tempfile.TemporaryDirectory(prefix="propertykit-report-") as folder:
        source = Path(folder) / "report.html"
        source.write_text(page, encoding="utf-8")
        write_atomically(target, lambda out: static.print_pdf(source, out))
    return target


def check_report(
    path: str | os.PathLike[str],
    *,
    tiles: str | TileProvider | None = None,
    attribution: str | None = None,
) -> Path:
    """Every check a report can make before anything is fetched for it: the file's format, its
    place, what a PDF needs (Playwright and a browser), the street tiles' template and credit
    (and Pillow to draw them). The absolute path to write.

    Raises
    ------
    InvalidInput
        Not ``.html``/``.htm``/``.pdf``, a folder, a place that cannot be written, or tiles that
        are not an address template.
    propertykit.ConfigError
        A PDF without the ``export`` extra or a browser; tiles without Pillow.

    Examples
    --------
    >>> check_report("report.docx")
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: A report is written as .html or .pdf, not 'report.docx'
    """
    target = Path(path).expanduser().resolve()
    if target.suffix.lower() not in (".html", ".htm", ".pdf"):
        raise InvalidInput(f"A report is written as .html or .pdf, not {target.name!r}")
    if target.is_dir():
        raise InvalidInput(f"{target} is a folder: name the report's file")
    existing = next(folder for folder in (target.parent, *target.parents) if folder.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidInput(f"The report cannot be written in {existing}: not a writable folder")
    if target.suffix.lower() == ".pdf":
        static.pdf_ready()
    if tiles is not None:
        street.check_tiles(tiles, attribution)
    return target


def _bake_streets(
    figures: list[tuple[str, go.Figure]],
    tiles: str | TileProvider,
    attribution: str | None,
    notes: list[str],
    fetch: FetchTile | None,
) -> str | None:
    """Street tiles under every map; the credit to print, or ``None`` if none were drawn."""
    streets = street.StreetTiles(tiles, attribution=attribution, fetch=fetch)
    baked = [streets.bake(figure) for heading, figure in figures if street.is_map(figure)]
    if streets.failure is not None:
        notes.append(
            f"Street maps: not drawn ({streets.failure}); the maps use the outline basemap."
        )
    return streets.attribution if any(baked) else None


# --- content --------------------------------------------------------------------------------


def _evidence(
    df: pd.DataFrame, subject: str | Mapping[str, Any], as_of: Any, search: Any
) -> Appraisal:
    """The subject's appraisal. What its index warns of (too few pairs) is said in the section's
    basis, in plain words, so the warnings themselves are not repeated as notes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return valuation.comparable_evidence(df, subject, as_of=as_of, search=search)


def _summary_table(df: pd.DataFrame) -> str:
    money = shared.money_unit(df)
    rows: list[tuple[str, str]] = [("Properties", f"{len(df):,}")]
    if {"spatial.lat", "spatial.lng"} <= set(df.columns):
        located = int((df["spatial.lat"].notna() & df["spatial.lng"].notna()).sum())
        rows.append(("With a location", f"{located:,}"))
    if "spatial.boundary" in df.columns:
        rows.append(("With a plot boundary", f"{int(df['spatial.boundary'].notna().sum()):,}"))
    if "address.town" in df.columns:
        rows.append(("Towns", f"{df['address.town'].nunique():,}"))
    for column in ("pricing.estimatedSaleValue", "pricing.currentSalePrice"):
        if column in df.columns and df[column].notna().any():
            label = shared.label(column)
            rows.append(
                (f"Median {label[:1].lower()}{label[1:]} ({money})", f"{df[column].median():,.0f}")
            )
    if "saleHistory" in df.columns:
        sales = shared.sales(df)
        dated = sales["date"].dropna()
        span = f" ({dated.min():%Y} to {dated.max():%Y})" if len(dated) else ""
        rows.append(("Recorded sales", f"{len(sales):,}{span}"))
    if "epc.currentEnergyRating" in df.columns:
        rated = df["epc.currentEnergyRating"].dropna()
        rows.append(("With an EPC rating", f"{len(rated):,}"))
        if len(rated):
            rows.append(("Most common current EPC rating", str(rated.astype(str).mode().iloc[0])))
    cells = "".join(
        f'<tr><th>{html.escape(k)}</th><td class="number">{html.escape(v)}</td></tr>'
        for k, v in rows
    )
    return f"<table>{cells}</table>"


def _type_table(df: pd.DataFrame) -> str:
    if "propertyType" not in df.columns or df["propertyType"].isna().all():
        return "<p>No property types in the data.</p>"
    money = shared.money_unit(df)
    grouped = df.groupby(df["propertyType"].astype("object").fillna("not given"), sort=True)
    table = pd.DataFrame({"Properties": grouped.size()})
    if "pricing.estimatedSaleValue" in df.columns:
        table[f"Median estimated value ({money})"] = grouped["pricing.estimatedSaleValue"].median()
    if "floorAreaSqM" in df.columns:
        table["Median floor area (m²)"] = grouped["floorAreaSqM"].median()
    if "epc.currentEnergyRating" in df.columns:
        good = df["epc.currentEnergyRating"].astype("object").isin(["A", "B", "C"])
        rated = df["epc.currentEnergyRating"].notna()
        share = good.groupby(grouped.ngroup()).sum() / rated.groupby(grouped.ngroup()).sum()
        table["EPC C or better"] = share.set_axis(table.index).map(
            lambda v: "n/a" if pd.isna(v) else f"{v:.0%}"
        )
    table = table.sort_values("Properties", ascending=False)
    head = "".join(f'<th class="number">{html.escape(str(c))}</th>' for c in table.columns)
    body = "".join(
        f"<tr><th>{html.escape(str(name))}</th>"
        + "".join(f'<td class="number">{html.escape(_cell(v))}</td>' for v in row)
        + "</tr>"
        for name, row in zip(table.index, table.itertuples(index=False), strict=True)
    )
    return f"<table><tr><th>Property type</th>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    if pd.isna(value):
        return "n/a"
    return f"{value:,.0f}" if abs(float(value)) >= 100 else f"{value:,.1f}".removesuffix(".0")


def _footer(
    df: pd.DataFrame,
    *,
    counts: tuple[int, int, int] | None,
    source: str | None,
    when: datetime,
    streets: str | None,
    money: str,
) -> str:
    if counts is None:
        cost = "Request and credit usage was not recorded for this data."
    else:
        sent, hits, billable = counts
        cost = (
            f"Fetching the data took {sent:,} request{'' if sent == 1 else 's'} over the "
            f"network, {billable:,} of them billable (credits spent); {hits:,} "
            f"answer{' came' if hits == 1 else 's came'} from the local cache at no cost."
        )
    origin = source or "a property-data service"
    if streets is None:
        ground = "Maps are drawn without map tiles, so the report works offline; "
    else:
        credit = f" {streets}" if streets else ""
        ground = (
            f"Street maps{credit}, fetched when the report was built and kept in this file, "
            "so the report works offline; "
        )
    return (
        f"<p>Data: {len(df):,} property record{'' if len(df) == 1 else 's'} from "
        f"{html.escape(origin)}. "
        f"Report generated {when:%Y-%m-%d %H:%M:%S} UTC "
        f"by propertykit {html.escape(VERSION)}.</p>"
        f"<p>{html.escape(cost)}</p>"
        f"<p>{html.escape(money)} "
        f"{html.escape(ground)}coastlines, lakes, rivers and borders: Natural Earth "
        "(public domain).</p>"
    )


def _usage_counts(usage: Any) -> tuple[int, int, int] | None:
    """(requests sent, cache hits, billable requests) from a Usage, a mapping, or ``None``."""
    if usage is None:
        return None
    names = ("requests_sent", "cache_hits", "billable_requests")
    if isinstance(usage, Mapping):
        values = [usage.get(name) for name in names]
    else:
        values = [getattr(usage, name, None) for name in names]
    if any(v is None for v in values):
        raise InvalidInput(f"usage must give {', '.join(names)}; got {type(usage).__name__}")
    sent, hits, billable = (int(v) for v in values if v is not None)
    return sent, hits, billable
