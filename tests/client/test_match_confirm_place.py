"""A place a display-only answer cannot show, confirmed from the candidate's record (real HTTP):
matched when the record agrees, never when it disagrees; refused on request; stated by a dry
run; cached; looked up only where answers do not show the postcode; never bought twice when
the matched properties are fetched."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import propertykit as pk
from propertykit.cli._portfolio import fetch_matched
from propertykit.client import Client
from propertykit.sandbox import Sandbox, serve, world_addresses

pytestmark = pytest.mark.timeout(120)

HOMES = 2000
FAST = 100_000


@pytest.fixture(scope="module")
def display_only() -> Iterator[Sandbox]:
    with serve(realism="real", n_properties=HOMES, search_style="display-only") as sb:
        sb.set_suggest_limit(FAST)
        yield sb


def client_of(make_client: Callable[..., Client], sb: Sandbox) -> Client:
    return make_client(sb, endpoints=pk.Endpoints(suggest_per_minute=FAST))


def postcode_only_texts(skip: int = 0) -> tuple[str, str, str, str]:
    """A house (number and street, one of its kind in the world; ``skip`` such houses passed
    over) typed with its postcode and no town; the same with another town's postcode; and its
    location id (the world's homes are the sandbox's, in order)."""
    homes = world_addresses(HOMES, realism="real")
    for position, home in enumerate(homes):
        if not home.get("streetNumber") or home.get("subBuilding") or home.get("buildingName"):
            continue
        same = [h for h in homes if h.get("streetNumber") == home["streetNumber"]
                and h["streetName"] == home["streetName"]]  # fmt: skip
        if len(same) != 1:
            continue
        if skip:
            skip -= 1
            continue
        other = next(h for h in homes if h["postcode"].split()[0] != home["postcode"].split()[0])
        typed = f"{home['streetNumber']} {home['streetName']}, "
        return (typed + home["postcode"], typed + other["postcode"], f"L{position:08d}",
                typed + home["town"])  # fmt: skip
    raise AssertionError("no such home")


def lookups(sb: Sandbox) -> list[Any]:
    """The property lookups the sandbox received (not its suggestions)."""
    return [r for r in sb.requests if "/property/" in r.path and not r.path.endswith("suggest")]


def test_a_postcode_only_address_is_matched_once_its_record_confirms_it_and_never_otherwise(
    display_only: Sandbox, make_client: Callable[..., Client]
) -> None:
    right, other_town, location_id, _ = postcode_only_texts()
    charged = display_only.credits_charged
    df = client_of(make_client, display_only).match_addresses([right, other_town])
    assert df["status"].tolist() == ["matched", "unmatched"], df["reason"].tolist()
    assert df["locationId"].iloc[0] == location_id
    postcode = right.rsplit(", ", 1)[1]
    assert df["reason"].iloc[0] == f"postcode {postcode} confirmed from its record"
    other = other_town.rsplit(", ", 1)[1]
    assert f"its record says postcode {postcode}, not {other}" in df["reason"].iloc[1]
    # one record bought, in one request, for both rows
    assert display_only.credits_charged - charged == 1
    assert df.attrs["records_looked_up"] == df.attrs["lookup_requests_sent"] == 1


def test_refusing_confirmation_keeps_the_unconfirmed_rows_and_buys_nothing(
    display_only: Sandbox, make_client: Callable[..., Client]
) -> None:
    right, other_town, _, _ = postcode_only_texts()
    before, charged = len(lookups(display_only)), display_only.credits_charged
    client = client_of(make_client, display_only)
    dry = client.match_addresses([right, other_town], dry_run=True, confirm_places=False)
    assert dry.lookups == dry.lookup_requests == dry.lookup_credits == 0
    df = client.match_addresses([right, other_town], confirm_places=False)
    assert (df["status"] == "unmatched").all()
    assert df["reason"].str.contains("could not be confirmed").all(), df["reason"].tolist()
    assert len(lookups(display_only)) == before and display_only.credits_charged == charged


def test_a_dry_run_states_the_lookups_and_the_same_list_again_sends_nothing(
    display_only: Sandbox, make_client: Callable[..., Client]
) -> None:
    right, other_town, location_id, _ = postcode_only_texts()
    client = client_of(make_client, display_only)
    sent = len(display_only.requests)
    dry = client.match_addresses([right, other_town], dry_run=True)
    assert len(display_only.requests) == sent  # a dry run sends nothing
    # two addresses typed with a postcode: up to three records each, one round each
    assert dry.lookups == dry.lookup_credits == 6 and dry.lookup_requests == 3
    assert "at most 6 records looked up in at most 3 requests, 6 credits" in repr(dry)
    first = client.match_addresses([right, other_town])
    sent, charged = len(display_only.requests), display_only.credits_charged
    again = client.match_addresses([right, other_town])
    assert len(display_only.requests) == sent and display_only.credits_charged == charged
    assert again.attrs["requests_sent"] == 0
    assert again["locationId"].iloc[0] == location_id
    assert again[["status", "reason"]].equals(first[["status", "reason"]])


def test_answers_that_show_the_postcode_need_no_lookup(
    make_client: Callable[..., Client],
) -> None:
    right, other_town, location_id, _ = postcode_only_texts()
    with serve(realism="real", n_properties=HOMES, search_style="ranked") as sb:
        sb.set_suggest_limit(FAST)
        df = client_of(make_client, sb).match_addresses([right, other_town])
        assert not lookups(sb) and sb.credits_charged == 0
    assert df["status"].tolist() == ["matched", "unmatched"]
    assert df["locationId"].iloc[0] == location_id and df.attrs["records_looked_up"] == 0


def test_fetching_the_matched_properties_never_buys_a_confirming_record_again(
    display_only: Sandbox, make_client: Callable[..., Client]
) -> None:
    right, _, location_id, _ = postcode_only_texts()
    shown = postcode_only_texts(skip=1)[3]  # its town shown by the answer: no lookup
    client = client_of(make_client, display_only)
    charged = display_only.credits_charged
    matches = client.match_addresses([right, shown, right])
    assert matches["locationId"].iloc[0] == location_id
    df = fetch_matched(client, matches)
    matched = set(matches.loc[matches["status"] == "matched", "locationId"])
    assert len(matched) == 2, matches["reason"].tolist()
    assert set(df["locationId"]) == matched
    assert not df.attrs["missing_ids"]
    # every record paid for once: the confirming record by matching, the rest by the fetch
    assert display_only.credits_charged - charged == len(matched)
    again = display_only.credits_charged
    fetch_matched(client, client.match_addresses([right, shown, right]))
    assert display_only.credits_charged == again


def test_the_same_number_and_street_in_several_towns_is_matched_by_the_record_that_agrees(
    display_only: Sandbox, make_client: Callable[..., Client]
) -> None:
    homes = world_addresses(HOMES, realism="real")
    plain = [(position, home) for position, home in enumerate(homes) if home.get("streetNumber")
             and not home.get("subBuilding") and not home.get("buildingName")]  # fmt: skip
    places: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    for position, home in plain:
        places.setdefault((home["streetNumber"], home["streetName"]), []).append((position, home))
    several = next(found for found in places.values() if 2 <= len(found) <= 3
                   and len({home["postcode"] for _, home in found}) == len(found))  # fmt: skip
    position, home = several[-1]
    df = client_of(make_client, display_only).match_addresses(
        [f"{home['streetNumber']} {home['streetName']}, {home['postcode']}"]
    )
    assert df["status"].iloc[0] == "matched", df["reason"].iloc[0]
    assert df["locationId"].iloc[0] == f"L{position:08d}"
    assert df["reason"].iloc[0] == f"postcode {home['postcode']} confirmed from its record"
