"""``propertykit report --subject ID``: the comparable evidence of one property."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from propertykit.cli import main
from propertykit.sandbox import Sandbox

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
    assert re.search(r"(about £[\d,]+, likely )?between £[\d,]+ and £[\d,]+", shown)
    assert "within 3 km" in shown or "Searched within 3 km" in shown  # what was fetched
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


# -- refused before spending: the service is a sandbox named in the environment, as a user's ----


@pytest.fixture
def on_service(
    fresh_sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Callable[..., tuple[int, str, int]]:
    """``on_service(*args)``: ``propertykit report ARGS`` against a fresh sandbox found through the
    environment (as the real service is): (exit status, stderr, credits the sandbox charged)."""
    for name in ("PROPERTYKIT_PROFILE", "PROPERTYKIT_OFFLINE", "VEPLER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROPERTYKIT_API_KEY", fresh_sandbox.api_key)
    monkeypatch.setenv("PROPERTYKIT_BASE_URL", fresh_sandbox.url)
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str) -> tuple[int, str, int]:
        capsys.readouterr()
        code = main(["report", "--out", str(tmp_path / "r.html"), *args])
        return code, capsys.readouterr().err, fresh_sandbox.credits_charged

    return run


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--as-of", "2025-13-45"], "--as-of"),  # was 21 credits, then a failure
        (["--as-of", "2030-01-01"], "after today"),  # main: accepted, 21 credits
        (["--radius", "0"], "--radius must be a number of metres above 0 and at most 8,000"),
        (["--radius", "9000"], "at most 8,000"),
        (["--months", "0"], "months must be a positive whole number"),
        (["--limit", "3"], "limit 3 is below min_comparables 5"),
    ],
)
def test_a_question_that_cannot_be_answered_costs_nothing(
    on_service: Callable[..., tuple[int, str, int]], subject: str, args: list[str], said: str
) -> None:
    code, err, credits = on_service("--subject", subject, *args)
    assert code == 1 and said in err and credits == 0


@pytest.mark.parametrize("given", ["L1,L2", "a/b", "rightmove:12"])
def test_a_subject_that_is_not_one_id_costs_nothing(
    on_service: Callable[..., tuple[int, str, int]], given: str
) -> None:
    code, err, credits = on_service("--subject", given)
    assert code == 1 and "propertykit: error: report: " in err and credits == 0


def test_a_subject_without_a_floor_area_says_so_and_what_it_spent(
    on_service: Callable[..., tuple[int, str, int]], tmp_path: Path
) -> None:
    code, err, credits = on_service("--subject", "L00000023")  # a home without a floor area
    assert code == 1 and credits == 1  # its own record only (31 on main: the neighbourhood too)
    assert "L00000023 (PK00000023) has no floor area" in err and "1 request sent" in err
    assert not (tmp_path / "r.html").exists()


def test_a_property_id_is_taken_among_the_ids_and_said_how_to_name_it_alone(
    on_service: Callable[..., tuple[int, str, int]], valuable_home: tuple[str, str]
) -> None:
    location, pid = valuable_home
    code, err, credits = on_service("--subject", pid)  # the service looks up location ids
    assert code == 1 and credits == 1
    assert "a propertyId is found only among --ids or --sample" in err
    code, err, more = on_service("--ids", location, "--subject", pid, "--as-of", AS_OF)
    assert code == 0 and more - credits == 1  # the ids' lookup, nothing more


@pytest.mark.parametrize(
    ("out", "extra", "said"),
    [
        ("v.pdf", {}, "Writing a PDF needs Playwright"),  # no export extra
        ("v.pdf", {"BROWSER_PATH": "/no/such/chromium"}, "is not a program"),  # no browser
        ("v.docx", {}, "written as .html or .pdf"),
        (".", {}, "written as .html or .pdf"),
        ("v.html", {"--tiles": "https://tiles.example/tile.png"}, "{z}"),
    ],
)
def test_a_report_that_cannot_be_written_is_refused_before_any_request(
    on_service: Callable[..., tuple[int, str, int]],
    fresh_sandbox: Sandbox,
    subject: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    out: str,
    extra: dict[str, str],
    said: str,
) -> None:
    """It fetched (and paid for) the neighbourhood before saying Playwright is missing."""
    if said.startswith("Writing a PDF"):  # the export extra not installed: its import fails
        monkeypatch.setitem(sys.modules, "playwright", None)
    args = ["--subject", subject, "--out", str(tmp_path / out)]
    for name, value in extra.items():
        if name.startswith("--"):
            args += [name, value]
        else:
            monkeypatch.setenv(name, value)
    sent = len(fresh_sandbox.requests)
    code, err, credits = on_service(*args)
    assert code == 1 and said in err, err
    assert len(fresh_sandbox.requests) == sent == 0 and credits == 0  # nothing was asked
    assert [path.name for path in tmp_path.iterdir() if path.suffix in (".pdf", ".docx")] == []
