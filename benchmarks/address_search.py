"""What the sandbox's address index buys: search-suggest over a 100,000-home real world.

Side by side in one run, the same queries answered both ways, and the answers checked equal:

- the naive way: for each query, read every address's tokens and keep those holding every token
  of the query (the last may be the start of one), then rank them;
- :class:`propertykit.sandbox._search.AddressIndex`: token -> sorted array of addresses, built
  once; a query intersects the arrays of its tokens.

And the same for the ranked style (any token counts, BM25): the naive way scores every address
by the tokens it holds; the index adds the scores of its tokens' postings. The fuzzy style's
per-query time is printed too (its near tokens found by rapidfuzz over the vocabulary).

The queries are what a careful client sends for rows of a client's list
(:func:`propertykit.sandbox.typed_addresses`): the house number, the street's first word and the
postcode without its space; and, to weigh a broad one, a town's name. Printed: the time to draw
the world's addresses, to build the index, and per query both ways.

    python benchmarks/address_search.py
"""

from __future__ import annotations

import math
import statistics
import sys
import time

from propertykit.sandbox import typed_addresses, world_addresses
from propertykit.sandbox._search import BM25_B, BM25_K1, AddressIndex, address_tokens, tokens

HOMES = 100_000
QUERIES = 200
NAIVE_QUERIES = 40  # the naive way reads every address for each; fewer of them suffice


def naive(token_sets: list[set[str]], query: str, limit: int = 10) -> list[int]:
    """The matches of ``query``, ranked as the index ranks them, by reading every address."""
    words = tokens(query)
    whole, last = set(words[:-1]), words[-1]
    found = []
    for position, held in enumerate(token_sets):
        if not whole <= held:
            continue
        prefixed = {token for token in held if token.startswith(last)}
        if last not in whole and not prefixed:
            continue
        covered = len(whole | prefixed)
        found.append((-covered / len(held), last not in held, position))
    return [position for *_, position in sorted(found)[:limit]]


def naive_ranked(token_sets: list[set[str]], query: str, limit: int = 10) -> list[int]:
    """The best ``limit`` addresses by BM25 over the query's tokens, reading every address."""
    words = set(tokens(query))
    size = len(token_sets)
    frequency = {word: sum(1 for held in token_sets if word in held) for word in words}
    idf = {w: math.log(1 + (size - f + 0.5) / (f + 0.5)) for w, f in frequency.items() if f}
    average = sum(len(held) for held in token_sets) / size
    scored = []
    for position, held in enumerate(token_sets):
        total = sum(weight for word, weight in idf.items() if word in held)
        if total:
            norm = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * len(held) / average))
            scored.append((-round(total * norm, 9), position))
    return [position for _, position in sorted(scored)[:limit]]


def timed(index: AddressIndex, queries: list[str], style: str) -> list[float]:
    spent = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, style=style)
        spent.append(time.perf_counter() - started)
    return spent


def main() -> int:
    started = time.perf_counter()
    addresses = world_addresses(HOMES)
    drawn = time.perf_counter() - started
    started = time.perf_counter()
    index = AddressIndex(addresses)
    built = time.perf_counter() - started
    rows = typed_addresses(QUERIES, n_properties=HOMES, kinds={"standard": 1})
    queries = []
    for row in rows:
        address = addresses[row.index]
        first = address["streetName"].split()[0]
        queries.append(f"{address['streetNumber'] or ''} {first} {address['postcodeNoSpace']}")
    queries[::20] = [addresses[row.index]["town"] for row in rows[::20]]
    token_sets = [address_tokens(address) for address in addresses]

    fast = []
    for query in queries:
        started = time.perf_counter()
        index.search(query)
        fast.append(time.perf_counter() - started)
    slow = []
    for query in queries[:NAIVE_QUERIES]:
        started = time.perf_counter()
        expected = naive(token_sets, query)
        slow.append(time.perf_counter() - started)
        if index.search(query)[0] != expected:
            print(f"different answers for {query!r}", file=sys.stderr)
            return 1
    among = sum(
        row.index in index.search(query)[0]
        for position, (row, query) in enumerate(zip(rows, queries, strict=True))
        if position % 20
    )
    print(f"{HOMES:,} homes: addresses drawn in {drawn:.2f} s, index built in {built:.2f} s")
    fast_ms, slow_ms = statistics.median(fast) * 1e3, statistics.median(slow) * 1e3
    slowest = max(fast) * 1e3
    print(f"per query (median): naive scan {slow_ms:.1f} ms, index {fast_ms:.3f} ms "
          f"({slow_ms / fast_ms:.0f}x); slowest indexed query {slowest:.2f} ms")  # fmt: skip
    print(f"the home among the (at most 10) answers to its number, street word and postcode: "
          f"{among} of {len(queries) - len(queries[::20])}")  # fmt: skip
    ranked = timed(index, queries, "ranked")
    fuzzy = timed(index, queries, "fuzzy")
    slow_ranked = []
    for query in queries[: NAIVE_QUERIES // 4]:
        started = time.perf_counter()
        expected = naive_ranked(token_sets, query)
        slow_ranked.append(time.perf_counter() - started)
        if index.search(query, style="ranked")[0] != expected:
            print(f"different ranked answers for {query!r}", file=sys.stderr)
            return 1
    ranked_ms, naive_ms = statistics.median(ranked) * 1e3, statistics.median(slow_ranked) * 1e3
    fuzzy_ms = statistics.median(fuzzy) * 1e3
    print(f"ranked, per query (median): naive scan {naive_ms:.1f} ms, index {ranked_ms:.2f} ms "
          f"({naive_ms / ranked_ms:.0f}x); slowest {max(ranked) * 1e3:.1f} ms; fuzzy "
          f"{fuzzy_ms:.2f} ms (slowest {max(fuzzy) * 1e3:.1f} ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
