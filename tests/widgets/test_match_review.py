"""MatchReview driven from Python: an uncertain address decided, kept beside the cache, and used
by every later match of the same text (another client, another process, a team's Redis)."""

from __future__ import annotations

import json
import os
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from propertykit.client import Client
from propertykit.errors import InvalidInput
from propertykit.sandbox import Sandbox
from propertykit.widgets import LookupForm, MatchReview
from propertykit.widgets._match_review import LATER, NOT_HELD

from .conftest import text_of

#: Every test here talks to a local sandbox: none may hang.
pytestmark = pytest.mark.timeout(120)

ODD = "Flat 2, 1 Quiet Rd\x1b[31m <script>alert(1)</script>"


def uncertain_matches(sb: Sandbox) -> pd.DataFrame:
    """A frame as match_addresses returns it: one matched, one ambiguous, one unmatched, one
    blank (real ids of the sandbox as candidates)."""
    ids = sb.location_ids[:3]
    rows = [
        ("4 Mill Lane", "matched", ids[0], "4 Mill Lane, Bedford", 100.0, [], [], None),
        ("12 Mill Lane", "ambiguous", None, None, 90.0, ids[1:3],
         ["Flat 1, 12 Mill Lane", "Flat 2, 12 Mill Lane"], "names the building but not which"),
        (ODD, "unmatched", None, None, 50.0, [ids[0]], ["1 Loud Rd"], "no number 1 on quiet road"),
        ("", "unmatched", None, None, None, [], [], "blank: no address given"),
    ]  # fmt: skip
    columns = ["input", "status", "locationId", "matched_address", "score", "candidates",
               "candidate_addresses", "reason"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns, index=[10, 11, 12, 13])


def seen(review: MatchReview) -> str:
    """Every word the form shows (its HTML parts and its choices), as a user reads them."""
    parts = [review.heading, review.book_line, review.position, review.address, review.reason,
             review.whole, review.choice_hint, review.message]  # fmt: skip
    labels = [name for name, _value in review.choice.options]
    return " | ".join([*(text_of(part.value) for part in parts), *labels])


def test_uncertain_and_blank_rows_are_reviewed(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    review = MatchReview(uncertain_matches(sandbox), make_client(sandbox))
    assert review.rows == [1, 2, 3]
    assert text_of(review.heading.value) == ("3 rows to review: 1 ambiguous, 1 unmatched, 1 blank.")
    assert "Address 1 of 3 (row 11 of the list)" in text_of(review.position.value)
    labels = [name for name, _value in review.choice.options]
    assert labels[:2] == [
        f"1. Flat 1, 12 Mill Lane ({sandbox.location_ids[1]})",
        f"2. Flat 2, 12 Mill Lane ({sandbox.location_ids[2]})",
    ]
    assert labels[2:] == ["Not held by the service", "Decide later"]
    assert seen(review).count("Flat 2, 12 Mill Lane") == 1  # each candidate listed once
    assert text_of(review.reason.value) == "Ambiguous: names the building but not which"
    assert "from the list above" in text_of(review.choice_hint.value)
    assert review.choice.value == LATER
    assert review.previous_button.disabled and not review.next_button.disabled

    review.show(2)  # the blank row: listed, said, nothing to decide
    assert text_of(review.reason.value).startswith("Blank row: no address given")
    assert review.keep_button.disabled and review.deciding.layout.display == "none"


def test_the_form_says_which_book_it_writes_to(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(sandbox)
    default = MatchReview(uncertain_matches(sandbox), client)
    assert "default book" in text_of(default.book_line.value)
    matched_in_a_book = uncertain_matches(sandbox)
    matched_in_a_book.attrs["book"] = "acme-2026"
    named = MatchReview(matched_in_a_book, client)
    assert "book “acme-2026”" in text_of(named.book_line.value)
    named.choice.value = NOT_HELD
    named.keep_button.click()
    assert client.match_decisions("acme-2026").get("12 Mill Lane") is not None
    assert client.address_decisions.get("12 Mill Lane") is None  # not the default book's
    with pytest.raises(InvalidInput, match="book="):
        MatchReview(uncertain_matches(sandbox), client, book="acme/2026")


def test_heading_and_status_follow_the_decisions(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(sandbox)
    review = MatchReview(uncertain_matches(sandbox), client, book="acme")
    picked = sandbox.location_ids[2]
    review.choice.value = picked
    review.keep_button.click()
    assert text_of(review.heading.value) == (
        "3 rows to review: 0 ambiguous, 1 unmatched, 1 decided, 1 blank."
    )
    review.choice.value = NOT_HELD  # the last row with text: kept, then read again
    review.keep_button.click()
    assert text_of(review.heading.value) == (
        "3 rows to review: 0 ambiguous, 0 unmatched, 2 decided, 1 blank."
    )
    assert not text_of(review.reason.value).startswith("Unmatched")
    review.previous_button.click()
    status = text_of(review.reason.value)
    assert status.startswith("Decided on ") and "not held by the service" in status
    assert not re.search(r"\d{4}-\d\d-\d\dT", seen(review))  # the time in words
    assert review.choice.value == NOT_HELD
    review.previous_button.click()
    assert text_of(review.reason.value).startswith("Decided on ")
    assert "Ambiguous" not in text_of(review.reason.value)
    assert "The matcher said: names the building but not which" in text_of(review.reason.value)
    assert review.choice.value == picked

    for rebuilt in (  # the same frame again, and a fresh match in the book
        MatchReview(uncertain_matches(sandbox), client, book="acme"),
        MatchReview(client.match_addresses(["12 Mill Lane", ODD, ""], book="acme"), client),
    ):
        assert "2 decided" in text_of(rebuilt.heading.value), text_of(rebuilt.heading.value)
        assert text_of(rebuilt.reason.value).startswith("Decided on ")
        assert rebuilt.choice.value == picked
        assert rebuilt.value["status"].iloc[0] == "matched"


def test_a_decided_row_can_be_revised_after_a_fresh_match(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(sandbox)
    client.match_decisions("acme").pick("12 Mill Lane", sandbox.location_ids[2], "Flat 2")
    fresh = client.match_addresses(["12 Mill Lane"], book="acme")
    review = MatchReview(fresh, client)
    assert review.rows == [0]  # the picked row stays in the review
    assert "Address 1 of 1 (item 1 of the list)" in text_of(review.position.value)
    review.choice.value = NOT_HELD
    review.keep_button.click()
    assert review.value["status"].tolist() == ["unmatched"]
    assert (
        client.match_addresses(["12 Mill Lane"], book="acme")["reason"]
        .iloc[0]
        .startswith("not held by the service (review, ")
    )
    review.choice.value = LATER
    review.keep_button.click()
    assert review.value["status"].tolist() == ["unmatched"]
    assert "match the address again" in review.value["reason"].iloc[0]
    assert "1 unmatched" in text_of(review.heading.value)


def test_text_from_outside_is_shown_as_text(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    review = MatchReview(uncertain_matches(sandbox), make_client(sandbox))
    review.next_button.click()
    assert "<script>" not in review.address.value
    assert "&lt;script&gt;" in review.address.value
    assert "\x1b" not in review.address.value and "\\x1b" in review.address.value


def test_a_pick_is_kept_and_used_by_another_client_without_asking(
    sandbox: Sandbox, make_client: Callable[..., Client], tmp_path: Path
) -> None:
    client = make_client(sandbox)
    review = MatchReview(uncertain_matches(sandbox), client)
    picked = sandbox.location_ids[2]
    review.choice.value = picked
    review.keep_button.click()
    assert "Kept" in text_of(review.message.value)
    assert review.value.loc[11, ["status", "locationId", "matched_address"]].tolist() == [
        "matched", picked, "Flat 2, 12 Mill Lane",
    ]  # fmt: skip
    assert client.address_decisions.get("12 Mill Lane").matched_address == "Flat 2, 12 Mill Lane"
    assert review.current == 1  # moved on to the next address

    other = make_client(sandbox)  # the same cache folder: another kernel of the machine
    again = other.match_addresses(pd.Series(["12  MILL LANE", "12 Mill Lane"], index=[5, 6]))
    assert again["status"].tolist() == ["matched", "matched"]
    assert again["locationId"].tolist() == [picked, picked]
    assert again.index.tolist() == [5, 6]
    assert again.attrs["decisions_applied"] == 2
    assert again.attrs["requests_sent"] == 0


def test_not_held_is_kept_and_later_is_forgotten(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(sandbox)
    review = MatchReview(uncertain_matches(sandbox), client)
    review.show(1)
    review.choice.value = NOT_HELD
    review.keep_button.click()
    assert review.value.loc[12, "status"] == "unmatched"
    decided = client.match_addresses([ODD])
    assert decided["reason"].iloc[0].startswith("not held by the service")
    assert decided.attrs["requests_sent"] == 0

    again = MatchReview(uncertain_matches(sandbox), client)
    again.show(1)
    assert again.choice.value == NOT_HELD  # the earlier decision is shown
    again.choice.value = LATER
    again.keep_button.click()
    assert client.address_decisions.get(ODD) is None


def test_a_frame_that_is_not_a_match_is_refused(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    with pytest.raises(InvalidInput, match="columns input, status and candidates"):
        MatchReview(pd.DataFrame({"input": ["x"]}), make_client(sandbox))


def test_long_addresses_are_listed_whole_and_labelled_short(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    matches = uncertain_matches(sandbox)
    long = "Flat 12, Alexandra Mansions, 145 Westfield Close, Central Milton Keynes, MK9 2BB"
    matches.at[11, "candidate_addresses"] = [long, "Flat 2, 12 Mill Lane"]
    review = MatchReview(matches, make_client(sandbox))
    labels = [name for name, _value in review.choice.options]
    assert all(len(name) <= 56 for name in labels), labels
    assert labels[0].endswith(f"… ({sandbox.location_ids[1]})")
    assert long not in seen(review)
    review.choice.value = sandbox.location_ids[1]  # picked: its whole address under the list
    assert text_of(review.whole.value) == f"Picked: {long} ({sandbox.location_ids[1]})"


def test_a_row_without_candidates_is_not_told_to_pick_from_a_list(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    matches = uncertain_matches(sandbox)
    matches.at[12, "candidates"] = []
    matches.at[12, "candidate_addresses"] = []
    review = MatchReview(matches, make_client(sandbox))
    review.show(1)
    assert [value for _name, value in review.choice.options] == [NOT_HELD, LATER]
    assert "No candidates are listed for this row" in text_of(review.choice_hint.value)


def test_nothing_to_review_says_so(sandbox: Sandbox, make_client: Callable[..., Client]) -> None:
    matches = uncertain_matches(sandbox).iloc[[0]]
    review = MatchReview(matches, make_client(sandbox))
    assert review.rows == []
    assert text_of(review.heading.value) == "Every address was matched: nothing to review."
    assert review.body.layout.display == "none"


@pytest.mark.slow
def test_a_decision_reaches_another_process(
    sandbox: Sandbox, make_client: Callable[..., Client], tmp_path: Path, new_process: object
) -> None:
    cache = tmp_path / "shared" / "cache.sqlite"
    client = make_client(sandbox, cache=cache)
    client.address_decisions.pick("9 Far Lane", sandbox.location_ids[4], "9 Far Lane, Bedford")
    script = textwrap.dedent(
        f"""
        import json, propertykit as pk
        with pk.Client(base_url={sandbox.url!r}, cache={str(cache)!r}, progress=False) as client:
            df = client.match_addresses(["9 far lane"])
            print(json.dumps([df["locationId"].iloc[0], df.attrs["requests_sent"]]))
        """
    )
    env = {**os.environ, "PROPERTYKIT_API_KEY": sandbox.api_key}  # never in the arguments
    done = new_process.run("-c", script, env=env)  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [sandbox.location_ids[4], 0]


def test_a_review_beside_another_form_of_the_client(
    sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    """Another form of the same client redraws every form's status line: the review too."""
    client = make_client(sandbox)
    review = MatchReview(uncertain_matches(sandbox), client)
    lookup = LookupForm(client)  # draws the status line of every form of the client
    lookup.ids.value = "L00000001"
    lookup.fetch_button.click()
    assert "Fetched 1 property" in text_of(lookup.message.value)
    assert text_of(review.reason.value) == "Ambiguous: names the building but not which"
