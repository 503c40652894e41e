"""``propertykit portfolio ... --value [--radius M] [--as-of D] [--budget CREDITS]`` as a user
runs it against a real-shaped service (the sandbox over real HTTP, found through the environment):
bad options are one line and send nothing; a plan over the budget ends the command before any
lookup; within it, every matched home is a row of the Valuation sheet (those not valued with why),
and the terminal and the notes give the credits planned and charged."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest

import propertykit as pk
from propertykit.sandbox import Sandbox, typed_addresses
from tests.cli._portfolio_run import Run, portfolio_runner

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def real_world() -> Iterator[Sandbox]:
    with pk.sandbox.serve(realism="real") as sb:
        yield sb


@pytest.fixture
def portfolio(
    real_world: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Run:
    """``propertykit portfolio ARGS`` by ``main()``, against the real-shaped sandbox."""
    return portfolio_runner(real_world, monkeypatch, capsys, tmp_path)


@pytest.fixture
def address_file(tmp_path: Path) -> Path:
    """Three clean addresses of the real-shaped world's homes."""
    typed = typed_addresses(3, n_properties=5000, kinds={"standard": 1})
    path = tmp_path / "addresses.csv"
    with path.open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows([["Address"], *[[row.text] for row in typed]])
    return path


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--value", "--budget", "lots"], "--budget 'lots' is not a number of credits"),
        (["--value", "--budget", "-5"], "give 0 credits or more"),
        (["--value", "--radius", "0"], "above 0 and at most 8,000"),
        (["--value", "--as-of", "2999-01-01"], "after today"),
        (["--budget", "100"], "--budget only apply with --value"),
        (["--value", "--out", "book.csv"], "--out"),
    ],
)
def test_bad_options_are_one_line_and_send_nothing(
    portfolio: Run, real_world: Sandbox, address_file: Path, options: list[str], said: str
) -> None:
    done = portfolio(str(address_file), "--column", "Address", *options)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and said in lines[0], done.stderr
    assert real_world.requests == []


def test_a_plan_over_the_budget_sends_no_lookup(
    portfolio: Run, real_world: Sandbox, address_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "book.xlsx"
    done = portfolio(str(address_file), "--column", "Address", "--out", str(out),
                     "--value", "--budget", "10")  # fmt: skip
    assert done.returncode == 1 and "over --budget 10; nothing was sent for it" in done.stderr
    assert "Valuing: at most" in done.stdout and "credits planned" in done.stdout
    assert real_world.credits_charged == 0 and not out.exists()
    assert all("/suggest" in r.path for r in real_world.requests)  # matching only (free)


def test_within_the_budget_every_home_is_a_row_and_the_credits_are_said(
    portfolio: Run, real_world: Sandbox, address_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "book.xlsx"
    done = portfolio(str(address_file), "--column", "Address", "--out", str(out),
                     "--value", "--radius", "1500", "--as-of", "2025-06-01",
                     "--budget", "100000")  # fmt: skip
    assert done.returncode == 0, done.stderr
    planned = next(line for line in done.stdout.splitlines() if "planned, before" in line)
    most = int(planned.split("at most ")[1].split(" credits")[0].replace(",", ""))
    assert 0 < real_world.credits_charged <= most
    assert "Valuing: charged" in done.stdout
    workbook = openpyxl.load_workbook(out)
    sheet = workbook["Valuation"]
    header = [cell.value for cell in sheet[1]]
    rows = [dict(zip(header, row, strict=True)) for row in sheet.iter_rows(2, values_only=True)]
    matched = workbook["Properties"].max_row - 1
    assert len(rows) == matched >= 2  # every matched home, valued or saying why not
    for row in rows:
        assert row["estimate"] is not None or row["method"]
    notes = {r[0]: r[1] for r in workbook["Notes"].iter_rows(min_row=2, values_only=True)}
    assert f"at most {most:,} planned before sending" in notes["Valuation"]
    charged_before = real_world.credits_charged
    again = portfolio(str(address_file), "--column", "Address", "--out", str(out),
                      "--value", "--radius", "1500", "--as-of", "2025-06-01",
                      "--budget", "0")  # fmt: skip
    assert again.returncode == 0, again.stderr  # the cache holds it all: it plans 0
    assert "Valuing: 0 credits planned" in again.stdout
    assert real_world.credits_charged == charged_before
