"""``propertykit deeds list``: show the title-deed purchase journal.

One row per logical purchase (one idempotency key): when it was started, the title, what the
account paid (``charged``, ``not_charged``, or ``open (unknown)`` for an intent whose outcome was
never established), the delivery status, the key and the service. ``--open`` shows only open
intents: run ``client.buy_title_deed(title)`` again for those, which asks purchase-status first.
"""

from __future__ import annotations

import argparse
import json
import sys

from propertykit.deeds import Journal, as_rows
from propertykit.text import plural, visible

_COLUMNS = ("intent_at", "title_number", "money_state", "status", "idempotency_key", "service")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``list`` action and its options."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="one row per purchase in the journal")
    listing.add_argument(
        "--journal",
        metavar="PATH",
        help="journal file (default: title-deeds.jsonl in PROPERTYKIT_CACHE_DIR / user cache dir)",
    )
    listing.add_argument("--open", action="store_true", help="only purchases of unknown outcome")
    listing.add_argument("--title", metavar="TITLE_NUMBER", help="only this title")
    listing.add_argument("--json", action="store_true", help="JSON lines instead of a table")


def run(args: argparse.Namespace) -> int:
    """Print the journal; returns 0 (1 is left to the dispatcher for propertykit errors)."""
    journal = Journal(args.journal)
    records = journal.purchases(title_number=args.title)
    if args.open:
        records = [record for record in records if record.is_open]
    rows = as_rows(records)
    if args.json:
        for row in rows:
            print(json.dumps(row))  # ASCII: every control character escaped as JSON does
        return 0
    # A status or money state the service sent is shown, never obeyed by the terminal.
    rows = [{name: visible(row[name]) for name in _COLUMNS} for row in rows]
    if not rows:
        print(f"No purchases in {journal.path}")
        return 0
    widths = {name: max(len(name), *(len(row[name]) for row in rows)) for name in _COLUMNS}
    print("  ".join(name.ljust(widths[name]) for name in _COLUMNS).rstrip())
    for row in rows:
        print("  ".join(row[name].ljust(widths[name]) for name in _COLUMNS).rstrip())
    open_count = sum(record.is_open for record in records)
    if open_count:
        print(
            f"\n{plural(open_count, 'purchase')} of unknown outcome: buy the same title again with "
            "propertykit, which asks purchase-status before sending anything.",
            file=sys.stderr,
        )
    return 0
