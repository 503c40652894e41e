"""``propertykit portfolio``, run as a user runs it against a service (the sandbox, over real
HTTP, found through the shell's environment): bad input is one line and sends nothing; a dry
run says what matching would send and sends nothing; a run lists what did not match, with the
file's control characters spelled out, and writes the workbook."""

from __future__ import annotations

import csv
import subprocess
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest

from propertykit.cli import main
from propertykit.sandbox import Sandbox

pytestmark = pytest.mark.timeout(120)

Run = Callable[..., subprocess.CompletedProcess[str]]
_SERVICE_VARIABLES = (
    "PROPERTYKIT_API_KEY",
    "PROPERTYKIT_BASE_URL",
    "PROPERTYKIT_PROFILE",
    "PROPERTYKIT_OFFLINE",
    "VEPLER_API_KEY",
)


@pytest.fixture
def portfolio(
    fresh_sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Run:
    """``propertykit portfolio ARGS`` by ``main()`` in this process, the service found through
    the environment (a fresh sandbox's address and key, a cache of its own)."""
    for name in _SERVICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROPERTYKIT_API_KEY", fresh_sandbox.api_key)
    monkeypatch.setenv("PROPERTYKIT_BASE_URL", fresh_sandbox.url)
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        code = main(["portfolio", *args])
        said = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, said.out, said.err)

    return run


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
    matches = openpyxl.load_workbook(out)["Matches"]
    inputs = [row[1].value for row in matches.iter_rows(min_row=2)]
    assert inputs == ["92 Nowhere Lane, ZZ1 1ZZ", '=HYPERLINK("x")\\x1b[2J\u202e', None]
    assert matches["B3"].data_type == "s" and matches["B3"].quotePrefix
    assert [row[0].value for row in matches.iter_rows(min_row=2)] == [2, 3, 4]
