"""Review decisions belong to a book and to the service (its profile, host and path, never its
port): a book's decision answers its text in that book, from any client or kernel, and from a
sandbox of the same world served on another port; another book asks the service, unless it
copied the decisions; a book's name that is not one is refused before anything is sent."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from propertykit.client import Client
from propertykit.errors import InvalidInput
from propertykit.sandbox import Sandbox, serve
from propertykit.wire import notes_for

pytestmark = pytest.mark.timeout(120)

#: A text the sandbox's world does not hold: the matcher leaves it unmatched.
NOWHERE = "7 Imaginary Close, ZZ9 9ZZ"
HOMES = 300


@pytest.fixture
def twin_sandboxes() -> Iterator[tuple[Sandbox, Sandbox]]:
    """Two sandboxes of one world (same seed and size), each on its own port."""
    with serve(n_properties=HOMES) as first, serve(n_properties=HOMES) as second:
        yield first, second


def suggest_requests(sb: Sandbox) -> int:
    return sum(1 for r in sb.requests if "suggest" in r.path or "autocomplete" in r.path)


@pytest.mark.parametrize(
    ("book", "said"),
    [
        ("", "a book's name is 1 to 64"),
        ("acme/2026", "'acme/2026': a book's name"),
        (" acme", "a book's name"),
        ("a" * 65, "a book's name"),
        ("acme\x1b[31m", "\\x1b"),
        (2026, "takes a name (text), got int"),
    ],
)
def test_a_book_name_that_is_not_one_is_refused_before_sending(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client], book: object, said: str
) -> None:
    client = make_client(fresh_sandbox)
    with pytest.raises(InvalidInput, match="book=") as raised:
        client.match_addresses([NOWHERE], book=book)  # type: ignore[arg-type]
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert "\x1b" not in str(raised.value)
    assert fresh_sandbox.requests == []


def test_a_books_decision_is_not_applied_in_another_book(
    twin_sandboxes: tuple[Sandbox, Sandbox], make_client: Callable[..., Client]
) -> None:
    sb = twin_sandboxes[0]
    client = make_client(sb)
    picked = sb.location_ids[3]
    client.match_decisions("acme-2026").pick(NOWHERE, picked, "3 Somewhere Road")

    in_book = client.match_addresses([NOWHERE], book="acme-2026")
    assert in_book[["status", "locationId"]].iloc[0].tolist() == ["matched", picked]
    assert in_book["reason"].iloc[0].startswith("picked in review (")
    assert in_book.attrs["book"] == "acme-2026" and in_book.attrs["requests_sent"] == 0

    for other in ("acme-2027", None):
        elsewhere = client.match_addresses([NOWHERE], book=other)
        assert elsewhere["status"].iloc[0] == "unmatched"
        assert elsewhere["locationId"].isna().iloc[0]
        assert elsewhere.attrs["decisions_applied"] == 0
    assert elsewhere.attrs["book"] == "default"  # book=None: the default book, said
    assert suggest_requests(sb) > 0  # the other books asked the service


def test_a_decision_is_applied_after_a_new_kernel_and_a_new_port(
    twin_sandboxes: tuple[Sandbox, Sandbox], make_client: Callable[..., Client]
) -> None:
    first, second = twin_sandboxes
    assert first.url != second.url and first.location_ids == second.location_ids
    picked = first.location_ids[5]
    make_client(first).match_decisions("acme-2026").pick(NOWHERE, picked, "5 Somewhere Road")
    make_client(first).match_decisions("acme-2026").not_held("1 Gone Street, ZZ1 1ZZ")

    # Another client on the same cache folder (a restarted kernel), the sandbox on a new port.
    again = make_client(second).match_addresses(
        [NOWHERE, "1 gone street, zz1 1zz"], book="acme-2026"
    )
    assert again["locationId"].iloc[0] == picked and again["locationId"].isna().iloc[1]
    assert again["status"].tolist() == ["matched", "unmatched"]
    assert again["reason"].iloc[1].startswith("not held by the service (review, ")
    assert again.attrs["decisions_applied"] == 2
    assert suggest_requests(second) == 0


def test_another_host_does_not_share_a_books_decisions(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    picked = fresh_sandbox.location_ids[2]
    make_client(fresh_sandbox).match_decisions("acme").pick(NOWHERE, picked)
    by_name = fresh_sandbox.url.replace("127.0.0.1", "localhost")
    other = make_client(fresh_sandbox, base_url=by_name).match_addresses([NOWHERE], book="acme")
    assert other["locationId"].isna().iloc[0]
    assert other.attrs["decisions_applied"] == 0


def test_a_book_takes_anothers_decisions_only_when_it_copies_them(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(fresh_sandbox)
    old, new = client.match_decisions("acme-2026"), client.match_decisions("acme-2027")
    old.pick(NOWHERE, fresh_sandbox.location_ids[1], "1 Somewhere Road")
    old.not_held("1 Gone Street, ZZ1 1ZZ")
    new.pick("1 Gone Street, ZZ1 1ZZ", fresh_sandbox.location_ids[9])  # its own: kept
    assert new.get(NOWHERE) is None

    assert new.copy_from("acme-2026") == 1
    assert (old.count(), new.count()) == (2, 2)
    assert new.copy_from("acme-2026") == 0  # nothing left to copy
    reopened = make_client(fresh_sandbox).match_addresses(
        [NOWHERE, "1 Gone Street, ZZ1 1ZZ"], book="acme-2027"
    )
    ids = fresh_sandbox.location_ids
    assert reopened["locationId"].tolist() == [ids[1], ids[9]]
    with pytest.raises(InvalidInput, match="that is this book"):
        new.copy_from("acme-2027")


def test_decisions_kept_before_books_are_the_default_books(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client], cache_file: Path
) -> None:
    """A decision written by an earlier version (under host:port) still answers its text."""
    client = make_client(fresh_sandbox)
    host_and_port = fresh_sandbox.url.split("://", 1)[1].rstrip("/")
    earlier = {"locationId": fresh_sandbox.location_ids[4], "matched_address": None, "at": ""}
    notes = notes_for(client._transport.cache, "address-matches")
    notes.put(f"{host_and_port}|{NOWHERE.casefold()}", json.dumps(earlier))
    found = client.match_addresses([NOWHERE])
    assert found["locationId"].iloc[0] == fresh_sandbox.location_ids[4]
    assert client.match_addresses([NOWHERE], book="acme")["locationId"].isna().iloc[0]
