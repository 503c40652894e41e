"""``propertykit portfolio``: a client's address list in, a portfolio workbook (and report) out.

``propertykit portfolio addresses.csv --column Address --out book.xlsx [--report book.html]
[--value [--radius M] [--as-of D] [--budget CREDITS]]`` reads the list
(:mod:`~propertykit.cli._address_list`: CSV or XLSX, one address column or several joined), matches
each address to a property (``client.match_addresses``: never a guess), fetches the matched
properties, with ``--value`` values each from the sales around it within a budget
(``client.appraise``, :mod:`~propertykit.cli._portfolio_value`), and writes the workbook
(:func:`propertykit.views.write_workbook`) and, when asked, the report. The addresses not matched,
ambiguous or unmatched, are listed on the terminal (text from the file with its control characters
spelled out) and on the workbook's Matches sheet.

``--book NAME`` names the client's book: reviewed decisions of that book
(:class:`propertykit.widgets.MatchReview`) answer their addresses, and no other book's do; without
it, the default book's (said on the terminal). Every row of the file is on the Matches sheet,
blank ones too, a repeated address names the row it repeats, and text that began as a formula
would is flagged (and written as text).

``--dry-run`` reads the list and says what matching would send and cost, and how many property
lookups could follow, sending nothing. A file that cannot be read, is empty, or lacks the named
column, and an ``--out`` or ``--report`` of the wrong kind, are one error line before anything
is sent. Against the service ``pk.Client()`` finds, or, with ``--sandbox``, a local sandbox of
made-up data (said on the terminal and in the workbook's notes).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from propertykit.cli._address_list import read_address_list
from propertykit.cli._portfolio_value import (
    check_pdf_extra,
    check_value_options,
    configure_value,
    matched_ids,
    plan_within_budget,
    say_charged,
    value_book,
)
from propertykit.cli._service import open_service
from propertykit.client import Client, check_book
from propertykit.errors import FewPairsWarning, InvalidInput, MissingIdsWarning
from propertykit.frames import frame
from propertykit.text import plural, visible
from propertykit.views import match_sheet, write_report, write_workbook

#: Uncertain rows listed on the terminal (all of them are on the Matches sheet).
LISTED = 20
#: Candidates named with an ambiguous row on the terminal.
CANDIDATES_SHOWN = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("addresses", metavar="FILE", help="the address list: .csv or .xlsx")
    parser.add_argument(
        "--column",
        action="append",
        required=True,
        metavar="NAME",
        help="the column holding the address; repeat to join several (Line1, Town, Postcode)",
    )
    parser.add_argument("--sheet", help="the worksheet of an .xlsx to read (default: the first)")
    parser.add_argument("--out", default="portfolio.xlsx", help="the workbook to write (.xlsx)")
    parser.add_argument("--report", metavar="FILE", help="also write the report: .html or .pdf")
    parser.add_argument(
        "--book",
        metavar="NAME",
        help="the client's book: its reviewed match decisions are used (default: the default book)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="say what matching would send and cost, and send nothing",
    )
    parser.add_argument(
        "--sandbox", action="store_true", help="use a local sandbox even if the service is set"
    )
    parser.add_argument("--seed", type=int, default=0, help="sandbox data seed")
    configure_value(parser)


def run(args: argparse.Namespace) -> int:
    out = _checked_path(args.out, (".xlsx",), "--out") or Path("portfolio.xlsx")
    report = _checked_path(args.report, (".html", ".htm", ".pdf"), "--report")
    if report is not None and report.suffix.lower() == ".pdf":
        check_pdf_extra()
    valuing = check_value_options(args)
    book = _checked_book(args.book)
    held = read_address_list(args.addresses, args.column, sheet=args.sheet)
    addresses = held.addresses
    # the sandbox's world with real address geography: postcode units, flats in buildings
    with open_service(use_sandbox=args.sandbox, seed=args.seed, realism="real") as svc:
        client = svc.client
        if args.dry_run:
            say_dry_run(client, addresses, book=book)
            return 0
        matches = client.match_addresses(addresses, book=book)
        say_matches(matches)
        sandbox = svc.sandbox
        charged = sandbox.credits_charged if sandbox else None  # the service reports none
        plan = None
        if valuing is not None:  # the plan within the budget before any lookup is sent
            plan = plan_within_budget(client, matched_ids(matches), valuing)
        df = fetch_matched(client, matches)
        valuation = value(df) if valuing is None else None
        if valuing is not None and plan is not None:
            valuation = value_book(client, matched_ids(matches), valuing, plan)
            spent = (
                None if sandbox is None or charged is None else sandbox.credits_charged - charged
            )
            say_charged(valuation, plan, spent)
        path = write_workbook(
            df,
            out,
            valuation=valuation,
            matches=beside_the_file(held.table, matches),
            usage=client.usage,
            source=svc.source,
        )
        print(f"Workbook: {path} ({plural(len(df), 'property', 'properties')})")
        if valuation is not None and valuing is None:
            valued = int(valuation["estimate"].notna().sum())
            print(
                f"Valued {valued:,} of {plural(len(df), 'property', 'properties')} from the "
                "book's own sales; the rest had too few comparables (the Valuation sheet says why)"
            )
        if report is not None:
            page = write_report(
                df, report, title="Portfolio report", usage=client.usage, source=svc.source
            )
            print(f"Report: {page}")
        print(f"Usage: {client.usage}")
    return 0


def _checked_path(given: str | None, suffixes: tuple[str, ...], option: str) -> Path | None:
    """``given`` as a path if its suffix is one of ``suffixes``; refused before anything runs."""
    if given is None:
        return None
    path = Path(given).expanduser()
    if path.suffix.lower() not in suffixes:
        raise InvalidInput(f"{option} {visible(given)!r}: write it as {' or '.join(suffixes)}")
    return path


def _checked_book(given: str | None) -> str | None:
    """``--book NAME`` checked before anything is sent (``InvalidInput`` names the rule)."""
    if given is None:
        return None
    try:
        return check_book(given)
    except InvalidInput as exc:
        raise InvalidInput(f"--book: {exc}") from exc


def say_dry_run(client: Client, addresses: pd.Series, *, book: str | None = None) -> None:
    """What matching would send (nothing is sent), and the property lookups that could follow."""
    plan = client.match_addresses(addresses, book=book, dry_run=True)
    print(f"Addresses: {plural(len(addresses), 'row')} read; nothing was sent.")
    print(f"Matching: {_plain(plan)}")
    print(f"Book: {visible(check_book(book))} (its reviewed decisions answer without asking)")
    batch = client.endpoints.batch_size
    most = int(getattr(plan, "distinct", len(addresses)))  # blank rows and repeats aside
    print(
        f"Then: at most {plural(most, 'property', 'properties')} to look up (one per matched "
        f"address), in at most {plural(math.ceil(most / batch), 'billable request')} of "
        f"{batch} ids; fewer when addresses are not matched, repeat, or are cached."
    )


def _plain(plan: object) -> str:
    """A dry run's summary without its angle brackets."""
    return visible(repr(plan)).removeprefix("<").removesuffix(">")


def say_matches(matches: pd.DataFrame) -> None:
    """How many matched, and each row that did not (up to :data:`LISTED`), with why."""
    status = matches["status"].astype("object")
    matched = int((status == "matched").sum())
    uncertain = matches[status != "matched"]
    counts = ", ".join(
        f"{int((status == name).sum()):,} {name}" for name in ("ambiguous", "unmatched")
    )
    print(f"Matched {matched:,} of {plural(len(matches), 'address', 'addresses')}; {counts}.")
    book = matches.attrs.get("book")
    if isinstance(book, str):
        applied = int(matches.attrs.get("decisions_applied", 0))
        print(f"Book: {visible(book)} ({plural(applied, 'reviewed decision')} of it applied)")
    for row, entry in list(uncertain.iterrows())[:LISTED]:
        text = visible(entry["input"])
        print(f'  row {visible(row)}: {entry["status"]}: "{text}"{_why(entry)}')
    if len(uncertain) > LISTED:
        print(f"  and {len(uncertain) - LISTED:,} more")
    if len(uncertain):
        print("  (all on the workbook's Matches sheet: filter its status column)")
    sheet = match_sheet(matches)  # its columns "repeats row" and "flag"
    repeated, flagged = (int(sheet[name].notna().sum()) for name in ("repeats row", "flag"))
    if repeated or flagged:
        print(
            f"  {plural(repeated, 'row')} repeating an earlier row, {plural(flagged, 'row')} "
            "flagged (text that began as a formula would, or control characters): the "
            "Matches sheet's 'repeats row' and 'flag' columns"
        )


def _why(entry: pd.Series) -> str:
    parts = []
    reason = entry.get("reason")
    if isinstance(reason, str) and reason:
        parts.append(visible(reason))
    candidates = entry.get("candidates")
    if entry["status"] == "ambiguous" and candidates is not None and len(candidates):
        shown = ", ".join(visible(c) for c in list(candidates)[:CANDIDATES_SHOWN])
        more = len(candidates) - CANDIDATES_SHOWN
        parts.append(f"could be {shown}" + (f" and {more:,} more" if more > 0 else ""))
    return f" ({'; '.join(parts)})" if parts else ""


def beside_the_file(table: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """The client's own columns (their references, the address as typed), then the match's, by
    row: what the workbook's Matches sheet shows. A name both have is kept twice, the file's
    with " (file)" after it."""
    own = table.rename(columns={c: f"{c} (file)" for c in table.columns if c in matches.columns})
    combined = pd.concat([own, matches], axis=1)
    combined.attrs = dict(matches.attrs)
    return combined


def fetch_matched(client: Client, matches: pd.DataFrame) -> pd.DataFrame:
    """The matched properties, each once, in the order of the list."""
    status = matches["status"].astype("object")
    ids = matches.loc[status == "matched", "locationId"].dropna().astype(str)
    unique = list(dict.fromkeys(ids))
    if not unique:
        print("propertykit: no address matched: the workbook lists them all", file=sys.stderr)
        return frame([])
    bought = matches.attrs.get("place_records") or {}
    if any(location_id in bought for location_id in unique):
        df = _with_bought(client, unique, bought)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingIdsWarning)  # said once below
            df = client.properties(unique)
    missing = df.attrs.get("missing_ids") or ()
    if missing:
        print(
            f"propertykit: {plural(len(missing), 'matched id')} returned no record",
            file=sys.stderr,
        )
    return df


def _with_bought(
    client: Client, unique: list[str], bought: Mapping[str, Mapping[str, Any]]
) -> pd.DataFrame:
    """The matched properties where matching bought some records already (to confirm a place
    its answers could not show): those records as they are, the others looked up; none bought
    twice."""
    rest = [location_id for location_id in unique if location_id not in bought]
    fetched = {str(r.get("locationId")): r for r in client.property_records(rest)} if rest else {}
    records = [bought.get(i) or fetched[i] for i in unique if i in bought or i in fetched]
    df = frame(records, money_unit=client.endpoints.money_unit)
    df.attrs["missing_ids"] = [i for i in unique if i not in bought and i not in fetched]
    return df


def value(df: pd.DataFrame) -> pd.DataFrame | None:
    """Each property valued from the book's own sales; ``None`` (said) when it cannot be."""
    if df.empty:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewPairsWarning)  # said in the notes as thin rows
            return df.pk.valuation()
    except InvalidInput as exc:
        print(f"propertykit: no valuation: {visible(exc)}", file=sys.stderr)
        return None
