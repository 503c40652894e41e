"""``propertykit report --subject ID``: the comparable evidence of one property."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from propertykit.cli import main

#: Every test here talks to a local sandbox: none may hang.
pytestmark = pytest.mark.timeout(180)

AS_OF = "2025-06-01"


@pytest.fixture
def subject(valuable_home: tuple[str, str]) -> str:
    """A home of the default sandbox with enough comparables within 2 km (its location id)."""
    return valuable_home[0]


def test_a_subject_alone_is_fetched_with_its_neighbourhood(
    subject: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "valued.html"
    args = ["--subject", subject, "--radius", "3000", "--as-of", AS_OF, "--out", str(out_file)]
    assert main(["report", "--sandbox", *args]) == 0
    said = capsys.readouterr()
    fetched = re.search(r"fetched (\d+) homes of its type and size within 3,000 m", said.err)
    assert fetched and int(fetched.group(1)) >= 5
    page = out_file.read_text()
    shown = page[page.index("<h2>Comparable evidence</h2>") :]
    assert re.search(r"about £[\d,]+, likely between £[\d,]+ and £[\d,]+", shown)
    sent = re.search(r"Usage: (\d+) requests? sent", said.out)
    assert sent and int(sent.group(1)) >= 2  # the subject, then its neighbourhood's pages


def test_a_subject_among_the_ids_costs_nothing_more(
    subject: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "valued.html"
    ids = [f"L00000001,{subject}"]
    args = ["report", "--sandbox", "--ids", *ids, "--subject", subject, "--out", str(out_file)]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "1 request sent" in said.out and "fetched" not in said.err
    assert "<h2>Comparable evidence</h2>" in out_file.read_text()


def test_an_unknown_subject_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "never.html"
    assert main(["report", "--sandbox", "--subject", "L99999999", "--out", str(out_file)]) == 1
    assert "returned no record" in capsys.readouterr().err
    assert not out_file.exists()


def test_nothing_to_report_on_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--sandbox"]) == 1
    assert "--ids, --sample or --subject" in capsys.readouterr().err
