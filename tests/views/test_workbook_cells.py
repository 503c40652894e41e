"""Any text at all becomes a cell the file format holds: refused characters spelled out, within
Excel's limit, never a formula, and read back as written (openpyxl)."""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import xlsxwriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from propertykit.views._workbook_cells import MAX_CELL_CHARACTERS, SheetWriter, cell_text
from tests._hypothesis import examples

REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Text as the service or a client's file might hold it: every code point, surrogates included,
#: weighted towards the characters that matter here.
TEXT = st.text(
    st.one_of(
        st.characters(codec=None),  # anything, lone surrogates too
        st.sampled_from(list("=+-@\t\r\n\x00\x1b\ufffe_x")),
    ),
    max_size=60,
)


@settings(max_examples=examples(300), deadline=None)
@given(TEXT)
def test_any_text_becomes_text_the_format_holds(text: str) -> None:
    cell = cell_text(text)
    assert not REFUSED.search(cell)
    assert len(cell.encode("utf-16-le")) // 2 <= MAX_CELL_CHARACTERS
    if not REFUSED.search(text):
        assert cell == text  # nothing else is changed


@settings(max_examples=examples(30), deadline=None)
@given(st.text(st.characters(codec=None), min_size=1, max_size=40), st.integers(0, 3))
def test_long_text_of_wide_characters_is_cut_within_the_limit(text: str, offset: int) -> None:
    wide = text * (16_400 // len(text)) + "x" * offset + "\U0001f3e0" * 9000  # two units each
    cell = cell_text(wide)
    assert len(cell.encode("utf-16-le", "surrogatepass")) // 2 <= MAX_CELL_CHARACTERS
    assert cell.endswith(" characters in all]")


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_written_cells_read_back_as_text_and_never_a_formula(
    tmp_path: Path, texts: list[str]
) -> None:
    path = tmp_path / "cells.xlsx"
    with xlsxwriter.Workbook(path) as book:
        sheet = book.add_worksheet("Cells")
        writer = SheetWriter(book)
        for row, text in enumerate(texts):
            writer.write_value(sheet, row, 0, text)
    read = openpyxl.load_workbook(path)["Cells"]
    for row, text in enumerate(texts, start=1):
        cell = read.cell(row, 1)
        assert cell.data_type == ("s" if text else "n")  # "" is a blank cell
        starts_like_a_formula = cell_text(text).startswith(("=", "+", "-", "@", "\t", "\r"))
        assert bool(cell.quotePrefix) == starts_like_a_formula
