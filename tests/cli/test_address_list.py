"""A client's address list as a person saves it: CSV from Excel (UTF-8 or Windows-1252,
commas or semicolons, quoted commas and line breaks), an .xlsx with numbers and blank rows;
every cell read as text, each address keeping the row it came from."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from propertykit.cli._address_list import ROW, read_address_list
from propertykit.errors import InvalidInput


def test_csv_columns_are_joined_and_rows_numbered_as_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "book.csv"
    path.write_text(
        "Ref,Line1,Town,Postcode\n"
        'A1,"Flat 6, 72 High St",Bedford,MK40 1NN\n'
        "\n"  # a blank line: kept, blank, with its row number
        'A2,"12 Mill Lane\nRear",,mk401nn\n'  # a quoted line break: one row
        "A3,NA,,\n"
        "A4,,,\n"
        "\n\n",  # blank lines at the end: nothing follows them, left out
        encoding="utf-8",
    )
    read = read_address_list(path, ["Line1", "Town", "Postcode"])
    addresses = read.addresses
    assert addresses.index.name == ROW and read.table.index.equals(addresses.index)
    assert read.table["Ref"].tolist() == ["A1", "", "A2", "A3", "A4"]  # every column kept
    assert addresses.to_dict() == {  # rows as a spreadsheet numbers them: no jumps
        2: "Flat 6, 72 High St, Bedford, MK40 1NN",
        3: "",  # the blank line
        4: "12 Mill Lane\nRear, mk401nn",
        5: "NA",  # text, not a missing value
        6: "",  # blank: answered by matching, not dropped
    }


def test_windows_csv_with_semicolons_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "book.csv"
    path.write_bytes("Adresse;Code\n3 Rue Café;0123\n".encode("cp1252"))
    assert read_address_list(path, ["Adresse", "Code"]).addresses.tolist() == ["3 Rue Café, 0123"]
    path.write_bytes("\ufeffAddress\n4 Mill Lane\n".encode())
    assert read_address_list(path, ["Address"]).addresses.tolist() == ["4 Mill Lane"]


def test_xlsx_cells_are_text_and_blank_rows_keep_the_numbering(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Number", "Street", "Postcode"])
    sheet.append([12, "Mill Lane", "MK40 1NN"])
    sheet.append([None, None, None])
    sheet.append(["0013", "High St", None])
    sheet.append([None, None, None])  # blank at the end: left out
    other = book.create_sheet("Held")
    other.append(["Address"])
    other.append(["1 Elsewhere Road"])
    path = tmp_path / "book.xlsx"
    book.save(path)
    found = read_address_list(path, ["Number", "Street", "Postcode"]).addresses
    assert found.to_dict() == {2: "12, Mill Lane, MK40 1NN", 3: "", 4: "0013, High St"}
    assert read_address_list(path, ["Address"], sheet="Held").addresses.tolist() == [
        "1 Elsewhere Road"
    ]


@pytest.mark.parametrize(
    ("content", "name", "said"),
    [
        (b"", "empty.csv", "is empty"),
        (b"  \n\n", "blank.csv", "is empty"),
        (b"Address\n", "header.csv", "a header row but no addresses"),
        (
            b"Ref,Addr\nA1,x\n",
            "other.csv",
            "has no column 'Address'; its columns are 'Ref', 'Addr'",
        ),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "picture.csv", "not a text file"),
        (b"PK\x03\x04 not really a zip", "broken.xlsx", "cannot be read as an .xlsx workbook"),
        (b"Addr\x1b[31m\nA1\n", "hostile.csv", "its columns are 'Addr\\x1b[31m'"),
    ],
)
def test_files_that_cannot_give_addresses_are_one_clear_line(
    tmp_path: Path, content: bytes, name: str, said: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as raised:
        read_address_list(path, ["Address"])
    message = str(raised.value)
    assert said in message and "\n" not in message and "\x1b" not in message


def test_a_missing_file_or_sheet_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="No such file"):
        read_address_list(tmp_path / "nowhere.csv", ["Address"])
    book = openpyxl.Workbook()
    book.active.append(["Address"])
    book.save(tmp_path / "book.xlsx")
    with pytest.raises(InvalidInput, match="no worksheet 'Held'"):
        read_address_list(tmp_path / "book.xlsx", ["Address"], sheet="Held")


def test_repeated_column_names_are_told_apart(tmp_path: Path) -> None:
    path = tmp_path / "book.csv"
    path.write_text("Address,Address,Ref\n4 Mill Lane,Bedford,A1\n")
    read = read_address_list(path, ["Address", "Address (2)"])
    assert list(read.table.columns) == ["Address", "Address (2)", "Ref"]
    assert read.addresses.tolist() == ["4 Mill Lane, Bedford"]
