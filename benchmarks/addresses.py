"""Address matching benchmark: ``client.match_addresses`` beside a naive first-suggestion pick.

A sandbox of the real address geography (``--homes``, default 100,000) serves search-suggest over
real HTTP, its per-minute limit raised so nothing waits; ``--addresses`` rows (default 10,000)
are drawn from its world, typed as clients type them (``propertykit.sandbox._address_book``: case,
abbreviations, no postcode, a shop in front, a transposed letter, the flat after the street, and
the negatives: a house number the street lacks, a building without its flat), each with the truth.

- **naive, as typed**: each address's text asked of search-suggest as typed (one request), the
  first suggestion taken, as a hurried person picks in the lookup form;
- **naive, same queries**: the queries ``match_addresses`` asks (answers from its cache), the
  first suggestion of the first query that has one taken: the same candidates without the rules;
- **match_addresses**: cold (every query sent), then warm (all from the cache); and the local
  work alone (reading, planning, deciding on the answers already fetched), timed in CPU seconds.

Both are scored against the truth: right, wrong (a property, but another), matched where no
property has the address or where several could be it (guesses), and not matched.

Run: ``.venv/bin/python benchmarks/addresses.py [--addresses 10000] [--homes 100000]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import propertykit as pk
from propertykit.client._address_match import Candidate, decide
from propertykit.client._address_queries import plan_queries
from propertykit.client._addresses import read_address
from propertykit.sandbox import TypedAddress, typed_addresses

#: A per-minute limit high enough that neither side waits (the sandbox's is raised to match).
FAST = 1_000_000


def score(rows: list[TypedAddress], picks: list[tuple[str, str | None]]) -> Counter[str]:
    """Outcomes of ``picks`` (status, location id) against the truth of ``rows``."""
    outcomes: Counter[str] = Counter()
    for row, (status, location_id) in zip(rows, picks, strict=True):
        matched = status == "matched"
        if row.expected == "absent":
            outcomes["matched a missing address" if matched else "kept out (absent)"] += 1
        elif row.expected == "ambiguous":
            outcomes["guessed among several" if matched else "kept out (ambiguous)"] += 1
        elif not matched:
            outcomes["not matched"] += 1
        else:
            outcomes["right" if location_id == row.expected else "wrong"] += 1
    return outcomes


def naive(client: pk.Client, rows: list[TypedAddress]) -> list[tuple[str, str | None]]:
    """The first suggestion for each address as typed."""
    picks: list[tuple[str, str | None]] = []
    for row in rows:
        found = client.suggest(row.text) if row.text.strip() else []
        picks.append(("matched", str(found[0]["locationId"])) if found else ("unmatched", None))
    return picks


def first_of_same_queries(
    client: pk.Client, rows: list[TypedAddress]
) -> list[tuple[str, str | None]]:
    """The first suggestion of the first of ``match_addresses``' queries that has one."""
    picks: list[tuple[str, str | None]] = []
    for row in rows:
        found = [s for q in plan_queries(read_address(row.text)) for s in client.suggest(q)]
        picks.append(("matched", str(found[0]["locationId"])) if found else ("unmatched", None))
    return picks


def local_seconds(client: pk.Client, rows: list[TypedAddress]) -> tuple[float, float]:
    """CPU seconds of the local work (reading, planning, deciding) on answers from the cache;
    and the wall seconds of reading those answers from the cache."""
    texts = list(dict.fromkeys(row.text for row in rows))
    read = [read_address(text) for text in texts]
    started = time.perf_counter()
    answers = {q: client.suggest(q) for typed in read for q in plan_queries(typed)}
    cache_s = time.perf_counter() - started
    started = time.process_time()
    for text in texts:
        typed = read_address(text)
        found = [Candidate.of(s) for q in plan_queries(typed) for s in answers[q]]
        decide(typed, found)
    return time.process_time() - started, cache_s


def report(name: str, outcomes: Counter[str], present: int) -> None:
    right, wrong = outcomes["right"], outcomes["wrong"]
    guesses = outcomes["matched a missing address"] + outcomes["guessed among several"]
    print(
        f"{name:<22} right {right / present:7.2%}  wrong {wrong / present:6.2%}  "
        f"guesses {guesses:,}  not matched {outcomes['not matched']:,}  ({dict(outcomes)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=10_000)
    parser.add_argument("--homes", type=int, default=100_000)
    arguments = parser.parse_args()
    started = time.perf_counter()
    rows = typed_addresses(arguments.addresses, n_properties=arguments.homes)
    print(f"{len(rows):,} typed addresses drawn in {time.perf_counter() - started:.1f} s")
    present = sum(1 for row in rows if row.expected.startswith("L"))
    texts = [row.text for row in rows]
    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(realism="real", n_properties=arguments.homes) as sb,
    ):
        sb.set_suggest_limit(FAST)
        endpoints = pk.Endpoints(suggest_per_minute=FAST)
        options = {"endpoints": endpoints, "progress": False}
        with pk.Client(sb.api_key, sb.url, cache=Path(folder) / "naive", **options) as client:
            started = time.perf_counter()
            naive_picks = naive(client, rows)
            naive_s, naive_sent = time.perf_counter() - started, client.usage.requests_sent
        with pk.Client(sb.api_key, sb.url, cache=Path(folder) / "match", **options) as client:
            planned = client.match_addresses(texts, dry_run=True)
            started = time.perf_counter()
            cold = client.match_addresses(texts)
            cold_s = time.perf_counter() - started
            started = time.perf_counter()
            warm = client.match_addresses(texts)
            warm_s = time.perf_counter() - started
            scoring_s, cache_s = local_seconds(client, rows)
            sent = client.usage.requests_sent
            same_queries = first_of_same_queries(client, rows)
            assert client.usage.requests_sent == sent, "the same queries were not all cached"
    assert cold.attrs["requests_sent"] == planned.requests, "the dry run was not exact"
    assert warm.attrs["requests_sent"] == 0 and cold.attrs["charged"] == 0
    distinct = planned.distinct
    print(f"{arguments.homes:,} homes; {len(rows):,} rows ({distinct:,} distinct, "
          f"{present:,} of homes that exist once)")  # fmt: skip
    print(f"naive, as typed:       {naive_sent:,} requests ({naive_sent / len(rows):.2f} a row), "
          f"{naive_s:.1f} s")  # fmt: skip
    print(f"match_addresses cold:  {cold.attrs['requests_sent']:,} requests "
          f"({cold.attrs['requests_sent'] / distinct:.2f} an address; dry run said "
          f"{planned.requests:,}), {cold_s:.1f} s")  # fmt: skip
    print(f"match_addresses warm:  {warm.attrs['requests_sent']} requests, {warm_s:.1f} s "
          f"(the same answers one query at a time by client.suggest: {cache_s:.1f} s)")  # fmt: skip
    print(f"local scoring:         {scoring_s:.2f} CPU s for {distinct:,} addresses "
          f"({1000 * scoring_s / distinct:.2f} ms each)")  # fmt: skip
    report("naive, as typed", score(rows, naive_picks), present)
    report("naive, same queries", score(rows, same_queries), present)
    picks = list(zip(cold["status"], cold["locationId"], strict=True))
    report("match_addresses", score(rows, picks), present)
    return 0


if __name__ == "__main__":
    sys.exit(main())
