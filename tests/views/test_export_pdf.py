"""The print-ready PDF report, read back page by page with poppler (``pdfinfo``, ``pdftotext``,
``pdftoppm``, ``pdfimages``): A4 pages, none blank, every figure whole on one page, figures
as vectors (the only raster images are the street tiles), street tiles and their credit printed.

Needs Debian's ``chromium`` and ``poppler-utils`` (``make test`` installs both as root) and
Playwright; without them these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import propertykit as pk
from propertykit.cli import main
from propertykit.config import ENV_CACHE_DIR
from propertykit.frames import frame
from propertykit.sandbox import generate_records, serve
from propertykit.views import build_report, write_report
from propertykit.views._static import print_pdf
from tests._system import require
from tests.views.tile_server import TileServer

pytestmark = pytest.mark.timeout(600)

CREDIT = "Test Tiles Ltd"
USAGE = {"requests_sent": 3, "cache_hits": 1, "billable_requests": 3}
A4_POINTS = (595.28, 841.89)
POPPLER = ("pdfinfo", "pdftotext", "pdftoppm", "pdfimages")


def _require_tools() -> None:
    require(
        all(shutil.which(tool) for tool in POPPLER),
        "poppler-utils not installed (pdfinfo, pdftoppm): apt-get install poppler-utils "
        "(`make test` does it when run as root)",
    )


def _run(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120).stdout


@dataclass
class Printed:
    pdf: Path
    page: str  # the same report as HTML
    pages: int


@pytest.fixture(scope="module")
def printed_report(tmp_path_factory: pytest.TempPathFactory, system_chromium: str) -> Printed:
    """One report of 150 sandbox properties with street tiles, as HTML and that page printed as
    PDF (what ``write_report`` does for a ``.pdf``: built once, printed by ``print_pdf``; the
    report command's test below writes a PDF through ``write_report`` itself)."""
    _require_tools()
    folder = tmp_path_factory.mktemp("pdf")
    df = frame(generate_records(150))
    with pytest.MonkeyPatch.context() as patch, TileServer() as tiles:
        patch.setenv(ENV_CACHE_DIR, str(folder / "cache"))
        options = {"tiles": tiles.template, "attribution": CREDIT, "usage": USAGE}
        html_file = write_report(df, folder / "report.html", **options)
    pdf = folder / "report.pdf"
    print_pdf(html_file, pdf)
    page = html_file.read_text(encoding="utf-8")
    pages = int(re.search(r"^Pages:\s+(\d+)", _run("pdfinfo", str(pdf)), re.M).group(1))  # type: ignore[union-attr]
    return Printed(pdf, page, pages)


def _page_text(printed: Printed, number: int) -> str:
    return _run("pdftotext", "-layout", "-f", str(number), "-l", str(number), str(printed.pdf), "-")


def _headings(page: str) -> list[str]:
    return [html.unescape(text) for text in re.findall(r"<h2>(.*?)</h2>", page)]


def test_the_pdf_is_a_pdf_of_several_a4_pages(printed_report: Printed) -> None:
    assert printed_report.pdf.read_bytes()[:5] == b"%PDF-"
    sizes = re.findall(
        r"size:\s+([\d.]+) x ([\d.]+) pts",
        _run("pdfinfo", "-f", "1", "-l", str(printed_report.pages), str(printed_report.pdf)),
    )
    assert len(sizes) == printed_report.pages >= 2
    for width, height in sizes:
        assert (float(width), float(height)) == pytest.approx(A4_POINTS, abs=1.5)


def test_every_page_carries_content(printed_report: Printed, tmp_path: Path) -> None:
    _run("pdftoppm", "-r", "30", "-gray", "-png", str(printed_report.pdf), str(tmp_path / "page"))
    renders = sorted(tmp_path.glob("page-*.png"))
    assert len(renders) == printed_report.pages
    for render in renders:
        with Image.open(render) as image:
            assert image.size == pytest.approx(
                (A4_POINTS[0] * 30 / 72, A4_POINTS[1] * 30 / 72), abs=2
            )
            inked = (np.asarray(image) < 200).mean()
        assert inked > 0.01, render.name  # not blank


def test_every_figure_is_whole_on_one_page(printed_report: Printed) -> None:
    headings = _headings(printed_report.page)
    assert "Where the properties are" in headings
    starts = (*headings, "Property report", "Data:")
    where: dict[str, list[int]] = {heading: [] for heading in headings}
    for number in range(1, printed_report.pages + 1):
        lines = [
            line.strip() for line in _page_text(printed_report, number).splitlines() if line.strip()
        ]
        # A section split across pages would start the next page with its remains.
        assert lines and lines[0].startswith(starts), (number, lines[:2])
        for heading in headings:
            where[heading] += [number] * lines.count(heading)
    assert all(len(pages) == 1 for pages in where.values()), where
    assert printed_report.pages <= len(headings) + 1  # each page starts a section: none spilled


def test_figures_are_vectors_and_only_street_tiles_are_images(printed_report: Printed) -> None:
    listed = _run("pdfimages", "-list", str(printed_report.pdf)).splitlines()[2:]
    baked = printed_report.page.count('"source":"data:image')
    assert baked >= 2
    assert len([line for line in listed if " image " in line]) == baked
    text = _run("pdftotext", str(printed_report.pdf), "-")
    assert text.count(CREDIT) >= baked  # the credit, as text on every map panel
    assert "London" in text  # place names are text, not pixels


def test_report_command_writes_a_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system_chromium: str
) -> None:
    _require_tools()
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    out = tmp_path / "report.pdf"
    with TileServer() as tiles:
        code = main(
            ["report", "--sample", "40", "--out", str(out), "--tiles", tiles.template,
             "--attribution", CREDIT]
        )  # fmt: skip
        assert code == 0 and tiles.requests
    assert out.read_bytes()[:5] == b"%PDF-"
    assert CREDIT in _run("pdftotext", str(out), "-")


def test_a_report_is_html_or_pdf_nothing_else(tmp_path: Path) -> None:
    df = frame(generate_records(5))
    with pytest.raises(pk.InvalidInput, match=r"\.html or \.pdf"):
        write_report(df, tmp_path / "report.docx")
    assert not list(tmp_path.iterdir())
    assert write_report(df, tmp_path / "REPORT.HTM").read_text().startswith("<!DOCTYPE html>")


def test_print_styles_keep_cards_whole_and_pages_a4() -> None:
    page = build_report(pd.DataFrame())
    assert "@page { size: A4;" in page
    assert re.search(r"@media print \{[^@]*section\.card \{[^}]*break-inside: avoid", page)


def test_a_page_that_reaches_for_the_network_is_not_printed(
    tmp_path: Path, system_chromium: str
) -> None:
    _require_tools()
    page = tmp_path / "page.html"
    page.write_text('<h1>Hi</h1><img src="http://192.0.2.1/logo.png">')
    with pytest.raises(pk.ConfigError, match="1 address"):
        print_pdf(page, tmp_path / "page.pdf")
    assert not (tmp_path / "page.pdf").exists()


def test_a_browser_that_cannot_print_is_said_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system_chromium: str
) -> None:
    _require_tools()
    monkeypatch.setenv("BROWSER_PATH", "/bin/false")
    (tmp_path / "page.html").write_text("<h1>Hi</h1>")
    with pytest.raises(pk.ConfigError, match=r"The browser could not print the PDF \(/bin/false\)"):
        print_pdf(tmp_path / "page.html", tmp_path / "page.pdf")


def test_the_valuation_map_is_whole_on_one_page_and_no_panel_is_empty(
    tmp_path: Path, system_chromium: str
) -> None:
    """The issue's report (L00000067 at 3 km, fetched from a sandbox): the comparables' map had
    its title on page 1 and its figure on page 2, and two panels said only "No data"."""
    _require_tools()
    with serve() as sb, pk.Client(sb.api_key, sb.url, cache=False, progress=False) as client:
        nearby = client.neighbourhood("L00000067", radius_m=3000)
    subject = str(nearby.attrs["neighbourhood"]["propertyId"])
    search = pk.frames.ValuationSearch(radius_m=3000)
    out = write_report(nearby, tmp_path / "valued.pdf", subject=subject, search=search)
    count = int(re.search(r"^Pages:\s+(\d+)", _run("pdfinfo", str(out)), re.M).group(1))  # type: ignore[union-attr]
    pages = [
        _run("pdftotext", "-layout", "-f", str(n), "-l", str(n), str(out), "-")
        for n in range(1, count + 1)
    ]
    titled = [n for n, text in enumerate(pages) if "Comparable sales of" in text]
    drawn = [n for n, text in enumerate(pages) if "Searched within" in text]
    assert len(titled) == 1 and titled == drawn, (titled, drawn)
    text = " ".join(pages)
    assert "No data:" not in text and "left out, nothing to show" in text
