"""client.match_addresses on every style a search answers in (the sandbox's ``search_style``),
over real HTTP: typed addresses matched right and never wrong, at most three requests an
address and none the second time; a place the answer cannot show never matched on; a name with
a word left out never matched; a full page followed by a narrower question; a typo matched
where the search forgives it; a number the street lacks answered with the numbers suggested."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import propertykit as pk
from propertykit.client import Client
from propertykit.sandbox import Sandbox, TypedAddress, serve, typed_addresses, world_addresses
from propertykit.sandbox._search import STYLES

pytestmark = pytest.mark.timeout(300)

HOMES = 2000
FAST = 100_000


#: Every style on search-suggest; the vepler autocomplete (paged) in its default and the
#: hardest style.
SERVED = [(style, "spec") for style in STYLES] + [("ranked", "vepler"), ("display-only", "vepler")]


@pytest.fixture(scope="module", params=SERVED, ids=lambda p: f"{p[0]}-{p[1]}")
def styled(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    style, profile = request.param
    with serve(profile=profile, realism="real", n_properties=HOMES, search_style=style) as sb:
        sb.set_suggest_limit(FAST)
        yield sb


@pytest.fixture(scope="module", params=STYLES)
def spec_styled(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with serve(realism="real", n_properties=HOMES, search_style=request.param) as sb:
        sb.set_suggest_limit(FAST)
        yield sb


def client_of(make_client: Callable[..., Client], sb: Sandbox) -> Client:
    endpoints = (pk.Endpoints.vepler if sb.profile == "vepler" else pk.Endpoints)(
        suggest_per_minute=FAST
    )
    return make_client(sb, endpoints=endpoints)


def address_requests(sb: Sandbox) -> list[str]:
    return [r.query for r in sb.requests if "suggest" in r.path or "autocomplete" in r.path]


def outcome(row: TypedAddress, status: str, location_id: Any) -> str:
    if row.expected == "absent":
        return "absent matched" if status == "matched" else "absent kept"
    if row.expected == "ambiguous":
        return "guessed" if status == "matched" else "ambiguous kept"
    if status != "matched":
        return "missed"
    return "right" if location_id == row.expected else "wrong"


def test_typed_addresses_on_every_style_right_never_wrong_cheap_and_cached(
    styled: Sandbox, make_client: Callable[..., Client]
) -> None:
    rows = typed_addresses(32, n_properties=HOMES, draw_seed=5)
    rows += typed_addresses(8, n_properties=HOMES, draw_seed=6, kinds={"register": 1})
    client = client_of(make_client, styled)
    texts = [row.text for row in rows]
    before = len(address_requests(styled))
    for text in texts[:6]:  # one at a time: what the sandbox received for each address
        start = len(address_requests(styled))
        client.match_addresses([text])
        assert len(address_requests(styled)) - start <= 3, text
    df = client.match_addresses(texts)
    sent = len(address_requests(styled)) - before
    outcomes = Counter(outcome(r, s, i) for r, s, i in zip(rows, df["status"], df["locationId"],
                                                           strict=True))  # fmt: skip
    present = sum(1 for row in rows if row.expected.startswith("L"))
    assert outcomes["wrong"] == outcomes["absent matched"] == outcomes["guessed"] == 0, outcomes
    # display-only answers cannot show a postcode: an address typed with a postcode and no town
    # is matched only once the record of its one fitting suggestion confirms the postcode.
    least = 0.95
    assert outcomes["right"] >= least * present, outcomes
    assert sent <= 3 * len(set(texts))
    again = client.match_addresses(texts)
    assert len(address_requests(styled)) - before == sent  # the sandbox received nothing more
    assert again.attrs["requests_sent"] == 0
    assert again[["status", "locationId", "reason"]].equals(df[["status", "locationId", "reason"]])


def _other_town_text(homes: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A home's number and street with another town and its postcode, where neither has it."""
    for home in homes:
        if not home.get("streetNumber") or home.get("subBuilding"):
            continue
        for other in homes:
            if other["town"] == home["town"]:
                continue
            there = [h for h in homes if h["town"] == other["town"]
                     and h["streetName"] == home["streetName"]
                     and h.get("streetNumber") == home["streetNumber"]]  # fmt: skip
            if not there:
                text = f"{home['streetNumber']} {home['streetName']}, {other['town']}, "
                return text + other["postcode"], home
    raise AssertionError("no such home")


def test_another_town_with_its_postcode_is_not_matched_and_the_row_says_why(
    spec_styled: Sandbox, make_client: Callable[..., Client]
) -> None:
    homes = world_addresses(HOMES, realism="real")
    text, home = _other_town_text(homes)
    rows = typed_addresses(15, n_properties=HOMES, kinds={"other_town": 1})
    df = client_of(make_client, spec_styled).match_addresses([text] + [r.text for r in rows])
    assert (df["status"] != "matched").all(), df[df["status"] == "matched"]
    for given, reason, shown in zip(df["input"], df["reason"], df["candidate_addresses"],
                                    strict=True):  # fmt: skip
        number_and_street = given.split(",")[0]
        if any(address.startswith(number_and_street) for address in shown):
            # the number and street were suggested elsewhere: the row says which part differs
            assert "postcode" in reason or "town" in reason, reason
    if spec_styled.search_style == "display-only":  # the answer shows no postcode: its record
        assert "its record says postcode" in df["reason"].iloc[0], df["reason"].iloc[0]
        assert home["streetName"] in df["reason"].iloc[0]


def test_a_house_name_with_a_word_left_out_is_not_matched(
    spec_styled: Sandbox, make_client: Callable[..., Client]
) -> None:
    rows = typed_addresses(8, n_properties=HOMES, kinds={"subset_name": 1})
    assert any(row.text.startswith("The ") for row in rows)
    df = client_of(make_client, spec_styled).match_addresses([row.text for row in rows])
    assert (df["status"] != "matched").all(), df[df["status"] == "matched"][
        ["input", "matched_address"]
    ]
    assert df["reason"].str.contains("named").any()


def test_a_full_page_is_followed_by_a_narrower_question_and_matches(
    make_client: Callable[..., Client],
) -> None:
    rows = [r for r in typed_addresses(60, n_properties=HOMES)
            if r.text == "46 north gdns ipswich ip3 6nz"]  # fmt: skip
    assert rows
    for profile in ("spec", "vepler"):
        with serve(profile=profile, realism="real", n_properties=HOMES,
                   search_style="display-only") as sb:  # fmt: skip
            sb.set_suggest_limit(FAST)
            client = client_of(make_client, sb)
            before = len(address_requests(sb))
            df = client.match_addresses([rows[0].text])
            asked = address_requests(sb)[before:]
            first = client.suggest("46 ip36nz")  # from the cache
            assert len(first) == 10  # a full page: the postcode is searched but not shown
            assert df["status"].iloc[0] == "matched", df["reason"].iloc[0]
            assert df["locationId"].iloc[0] == rows[0].expected
            assert len(asked) == 2 and "north+gardens+ipswich" in asked[1]


def test_a_typo_in_the_street_is_matched_where_the_search_forgives_it(
    make_client: Callable[..., Client],
) -> None:
    rows = typed_addresses(30, n_properties=HOMES, draw_seed=2,
                           kinds={"transposed": 1, "dropped": 1})  # fmt: skip
    rows = [row for row in rows if row.expected.startswith("L")]
    with serve(realism="real", n_properties=HOMES, search_style="fuzzy") as sb:
        sb.set_suggest_limit(FAST)
        df = client_of(make_client, sb).match_addresses([row.text for row in rows])
    outcomes = Counter(outcome(r, s, i) for r, s, i in zip(rows, df["status"], df["locationId"],
                                                           strict=True))  # fmt: skip
    assert outcomes["wrong"] == 0 and outcomes["right"] >= 0.9 * len(rows), outcomes


def test_a_number_the_street_lacks_lists_the_numbers_suggested(
    spec_styled: Sandbox, make_client: Callable[..., Client]
) -> None:
    rows = typed_addresses(12, n_properties=HOMES, draw_seed=4, kinds={"wrong_number": 1})
    df = client_of(make_client, spec_styled).match_addresses([row.text for row in rows])
    assert (df["status"] != "matched").all()
    reasons = df["reason"].tolist()
    assert not any("suggested nothing" in reason for reason in reasons)
    listed = [
        reason for reason in reasons if " among the " in reason and " suggested on " in reason
    ]
    assert len(listed) >= len(rows) // 2, reasons
