"""``propertykit portfolio``, run as a user runs it against a service (the sandbox, over real
HTTP, found through the shell's environment): bad input is one line and sends nothing; a dry
run says what matching would send and sends nothing; a run lists what did not match, with the
file's control characters spelled out, and writes the workbook."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import openpyxl
import pytest

from propertykit.client import Client
from propertykit.sandbox import Sandbox, typed_addresses
from tests._system import NewProcess
from tests.cli._portfolio_run import Run, portfolio_runner
from tests.notebooks._kernels import SERVICE_VARIABLES as _SERVICE_VARIABLES

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def portfolio(
    fresh_sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Run:
    """``propertykit portfolio ARGS`` by ``main()`` in this process, the service found through
    the environment (a fresh sandbox's address and key, a cache of its own)."""
    return portfolio_runner(fresh_sandbox, monkeypatch, capsys, tmp_path)


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows(rows)
    return path


@pytest.mark.parametrize(
    ("content", "column", "said"),
    [
        ("Ref,Addr\nA1,4 Mill Lane\n", "Address", "has no column 'Address'; its columns are"),
        ("", "Address", "is empty"),
        ("Address\n", "Address", "a header row but no addresses"),
    ],
)
def test_bad_input_is_one_line_and_sends_nothing(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path, content: str, column: str, said: str
) -> None:
    source = tmp_path / "addresses.csv"
    source.write_text(content)
    out = tmp_path / "book.xlsx"
    done = portfolio(str(source), "--column", column, "--out", str(out))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("propertykit: error: portfolio: ") and said in lines[0]
    assert fresh_sandbox.requests == []  # nothing sent, not even a health check
    assert not out.exists()


def test_an_unreadable_file_or_a_wrong_output_sends_nothing(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    broken = tmp_path / "addresses.xlsx"
    broken.write_bytes(b"PK\x03\x04 not a workbook")
    done = portfolio(str(broken), "--column", "Address", "--out", str(tmp_path / "b.xlsx"))
    assert done.returncode == 1 and "cannot be read as an .xlsx workbook" in done.stderr
    good = write_csv(tmp_path / "good.csv", [["Address"], ["4 Mill Lane"]])
    done = portfolio(str(good), "--column", "Address", "--out", str(tmp_path / "book.csv"))
    assert done.returncode == 1 and "--out" in done.stderr and ".xlsx" in done.stderr
    done = portfolio(str(good), "--column", "Address", "--report", str(tmp_path / "r.txt"))
    assert done.returncode == 1 and "--report" in done.stderr
    assert fresh_sandbox.requests == []


def test_a_dry_run_says_what_matching_would_send_and_sends_nothing(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    rows = [["Ref", "Line1", "Postcode"], ["R1", "4 Mill Lane", "MK40 1NN"]]
    rows += [["R2", "4 Mill Lane", "MK40 1NN"], ["R3", "Flat 2, 9 High St", "SW2 8SU"]]
    rows += [["R4", "", ""], ["", "", ""]]  # a row without an address; an empty row, left out
    source = write_csv(tmp_path / "addresses.csv", rows)
    out = tmp_path / "book.xlsx"
    done = portfolio(str(source), "--column", "Line1", "--column", "Postcode", "--out", str(out),
                     "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "4 rows read; nothing was sent." in done.stdout
    assert "2 distinct" in done.stdout and "1 blank" in done.stdout
    assert "requests to send at 30 a minute" in done.stdout
    assert "at most 2 properties to look up" in done.stdout
    assert "Book: default (its reviewed decisions" in done.stdout
    assert fresh_sandbox.requests == [] and not out.exists()


def test_a_run_lists_what_did_not_match_visibly_and_writes_the_workbook(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    hostile = '=HYPERLINK("x")\x1b[2J\u202e'
    rows = [["Ref", "Address"], ["R1", "92 Nowhere Lane, ZZ1 1ZZ"], ["R2", hostile], ["R3", ""]]
    source = write_csv(tmp_path / "addresses.csv", rows)
    out = tmp_path / "book.xlsx"
    done = portfolio(str(source), "--column", "Address", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\u202e" not in done.stdout
    assert 'row 3: unmatched: "=HYPERLINK("x")\\x1b[2J\\u202e"' in done.stdout
    assert 'row 4: unmatched: "" (blank' in done.stdout
    assert f"Workbook: {out}" in done.stdout
    assert not any(r.path.endswith("/properties") for r in fresh_sandbox.requests)  # none bought
    sheet = openpyxl.load_workbook(out)["Matches"]
    header = [cell.value for cell in sheet[1]]
    assert header[:5] == ["row in file", "Ref", "Address", "input", "status"]  # the file's first
    rows = [dict(zip(header, row, strict=True)) for row in sheet.iter_rows(min_row=2)]
    assert [row["Ref"].value for row in rows] == ["R1", "R2", "R3"]
    assert [row["row in file"].value for row in rows] == [2, 3, 4]
    inputs = [row["input"] for row in rows]
    assert [cell.value for cell in inputs] == [
        "92 Nowhere Lane, ZZ1 1ZZ", '=HYPERLINK("x")\\x1b[2J\u202e', None
    ]  # fmt: skip
    assert inputs[1].data_type == "s" and inputs[1].quotePrefix


def test_end_to_end_a_clients_xlsx_becomes_a_workbook_and_report(
    new_process: NewProcess, tmp_path: Path
) -> None:
    """As a user runs it (a new process, ``--sandbox``: its world of real address geography),
    a client's .xlsx of typed addresses, a hostile one and a blank one among them."""
    typed = typed_addresses(14, n_properties=5000)  # the world `--sandbox` serves
    hostile = '=HYPERLINK("http://evil.example","pay")\u202egnp.exe'  # a bidi override
    book = openpyxl.Workbook()
    book.active.append(["Ref", "Address"])
    for number, row in enumerate(typed):
        book.active.append([f"R{number}", row.text])
    book.active.append(["R-evil", hostile])
    book.active.cell(book.active.max_row, 2).data_type = "s"  # text that looks like a formula
    book.active.append(["R-blank", None])
    source = tmp_path / "client.xlsx"
    book.save(source)
    out, page = tmp_path / "book.xlsx", tmp_path / "book.html"
    environment = {k: v for k, v in os.environ.items() if k not in _SERVICE_VARIABLES}
    environment["PROPERTYKIT_CACHE_DIR"] = str(tmp_path / "cache")
    done = new_process.run(
        "-m", "propertykit", "portfolio", str(source), "--column", "Address",
        "--out", str(out), "--report", str(page), "--sandbox", env=environment, timeout=110,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "using the local sandbox (made-up data" in done.stderr
    assert 'unmatched: "=HYPERLINK(\\"http' not in done.stdout  # shown once, not escaped twice
    assert '"=HYPERLINK("http://evil.example","pay")\\u202egnp.exe"' in done.stdout
    assert "\u202e" not in done.stdout + done.stderr
    workbook = openpyxl.load_workbook(out)
    sheet = workbook["Matches"]
    header = [cell.value for cell in sheet[1]]
    matches = [dict(zip(header, row, strict=True)) for row in sheet.iter_rows(2, values_only=True)]
    assert [m["Ref"] for m in matches] == [f"R{n}" for n in range(len(typed))] + [
        "R-evil",
        "R-blank",
    ]
    assert [m["row in file"] for m in matches] == list(range(2, 2 + len(typed) + 2))
    for match, row in zip(matches, typed, strict=False):
        if match["status"] == "matched":  # never a wrong property
            assert match["locationId"] == row.expected, (row.text, row.kind)
        else:
            assert row.expected in ("absent", "ambiguous") or row.kind in ("bare", "transposed")
    assert sum(m["status"] == "matched" for m in matches) >= len(typed) * 0.7
    assert [m["status"] for m in matches[-2:]] == ["unmatched", "unmatched"]
    matched = {m["locationId"] for m in matches if m["status"] == "matched"}
    properties = workbook["Properties"]
    assert properties.max_row - 1 == len(matched)
    header = [cell.value for cell in properties[1]]
    found = {row[header.index("locationId")] for row in properties.iter_rows(2, values_only=True)}
    assert found == matched
    price = workbook["Sales"]["C2"]
    assert price.data_type == "n" and "£" in price.number_format
    notes = {row[0]: row[1] for row in workbook["Notes"].iter_rows(min_row=2, values_only=True)}
    assert "sandbox" in notes["Source"] and "not real homes" in notes["Made-up data"]
    assert int(notes["Requests sent"].split()[0].replace(",", "")) > 0
    assert "EPC profile" in page.read_text(encoding="utf-8")


def test_a_book_name_that_is_not_one_is_one_line_and_sends_nothing(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    source = write_csv(tmp_path / "addresses.csv", [["Address"], ["4 Mill Lane"]])
    done = portfolio(str(source), "--column", "Address", "--book", "acme/2026")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "--book: book='acme/2026': a book's name is" in lines[0]
    assert fresh_sandbox.requests == []


def test_the_books_decisions_are_applied_and_every_row_is_on_the_matches_sheet(
    portfolio: Run, fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    """--book NAME uses that book's decisions, no other's; the sheet keeps the blank line with
    its number, names the row a repeat repeats, and flags the formula-like row."""
    picked = fresh_sandbox.location_ids[7]
    with Client(progress=False) as client:  # the same service and cache folder, another kernel
        client.match_decisions("acme").pick("92 Nowhere Lane, ZZ1 1ZZ", picked, "92 Nowhere")
    source = tmp_path / "addresses.csv"
    source.write_text(
        "Ref,Address\n"
        'R1,"92 Nowhere Lane, ZZ1 1ZZ"\n'
        "\n"  # a blank line: row 3, kept
        'R3,"92  nowhere lane, zz1 1zz"\n'  # the same address again
        'R4,"=92 Nowhere Lane, ZZ1 1ZZ"\n',
        encoding="utf-8",
    )
    out = tmp_path / "book.xlsx"
    done = portfolio(str(source), "--column", "Address", "--out", str(out), "--book", "acme")
    assert done.returncode == 0, done.stderr
    assert "Book: acme (2 reviewed decisions of it applied)" in done.stdout
    assert "1 row repeating an earlier row, 1 row flagged" in done.stdout
    rows = rows_of(out)
    assert [row["row in file"].value for row in rows] == [2, 3, 4, 5]
    assert [row["Ref"].value for row in rows] == ["R1", None, "R3", "R4"]
    assert [row["status"].value for row in rows][:3] == ["matched", "unmatched", "matched"]
    assert rows[0]["locationId"].value == picked
    assert rows[1]["reason"].value.startswith("blank")
    assert [row["repeats row"].value for row in rows] == [None, None, 2, None]
    assert rows[3]["flag"].value.startswith("“Address” began with “=”")
    assert rows[3]["Address"].data_type == "s" and rows[3]["Address"].quotePrefix

    default = portfolio(str(source), "--column", "Address", "--out", str(out))
    assert "Book: default (0 reviewed decisions of it applied)" in default.stdout
    assert picked not in [row["locationId"].value for row in rows_of(out)]


def rows_of(workbook: Path) -> list[dict[str, openpyxl.cell.Cell]]:
    sheet = openpyxl.load_workbook(workbook)["Matches"]
    header = [cell.value for cell in sheet[1]]
    return [dict(zip(header, row, strict=True)) for row in sheet.iter_rows(min_row=2)]
