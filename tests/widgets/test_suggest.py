"""Search-suggest as you type: debounced, within the per-minute limit, picks add ids."""

from __future__ import annotations

from propertykit import Endpoints
from propertykit.widgets import LookupForm

from .conftest import requests_to, text_of


def type_into(form: LookupForm, text: str) -> None:
    """Type ``text`` one character at a time, as a user does."""
    for end in range(1, len(text) + 1):
        form.search.value = text[:end]


def test_typing_asks_once_after_the_pause_and_lists_matches(fresh_sandbox, make_client, scheduler):
    sb = fresh_sandbox
    postcode = sb.record(0)["address"]["postcode"]
    form = LookupForm(make_client(sb), scheduler=scheduler, suggest_delay=0.4)
    type_into(form, postcode)

    assert requests_to(sb, "/suggest") == []  # nothing until typing pauses
    assert len(scheduler.pending) == 1
    assert scheduler.pending[0].delay == 0.4
    assert scheduler.run_pending() == 1

    (request,) = requests_to(sb, "/suggest")
    assert "q=" in request.query
    labels = [label for label, _ in form.suggestions.options]
    assert labels and all(label.endswith(")") for label in labels)
    assert "L00000000" in [value for _, value in form.suggestions.options]
    count = len(labels)
    assert text_of(form.suggest_note.value) == (
        "1 match: pick it to add its id to the ids box."
        if count == 1
        else f"{count} matches: pick one to add its id to the ids box."
    )


def test_picking_a_match_adds_its_location_id_once(sandbox, make_client, scheduler):
    postcode = sandbox.record(5)["address"]["postcode"]
    form = LookupForm(make_client(sandbox), scheduler=scheduler)
    form.ids.value = "L00000001"
    type_into(form, postcode)
    scheduler.run_pending()

    form.suggestions.value = "L00000005"
    assert form.ids.value == "L00000001\nL00000005"
    assert form.suggestions.value is None  # ready for the next pick
    form.suggestions.value = "L00000005"
    assert form.ids.value == "L00000001\nL00000005"


def test_short_text_sends_nothing(fresh_sandbox, make_client, scheduler):
    form = LookupForm(make_client(fresh_sandbox), scheduler=scheduler, min_suggest_chars=3)
    type_into(form, "Mi")
    scheduler.run_pending()
    assert requests_to(fresh_sandbox, "/suggest") == []
    assert form.suggestions.options == ()


def test_suggest_stays_within_the_per_minute_limit_without_waiting(
    fresh_sandbox, make_client, scheduler, clock, sleeps
):
    sb = fresh_sandbox
    # The form's own window (on the test's clock) does the limiting here, not the client's.
    client = make_client(sb, endpoints=Endpoints(suggest_per_minute=None))
    form = LookupForm(client, scheduler=scheduler, clock=clock, suggest_per_minute=2)
    for query in ("Flat 1", "Flat 2", "Flat 3"):
        form.search.value = query
        scheduler.run_pending()
        clock.advance(5)

    assert [r.query for r in requests_to(sb, "/suggest")] == ["q=Flat+1", "q=Flat+2"]
    note = text_of(form.suggest_note.value)
    assert "Suggestions paused: the limit of 2 searches per minute is reached" in note
    assert "they resume in 50 s" in note
    assert sleeps == []

    clock.advance(50)
    form.search.value = "Flat 4"
    scheduler.run_pending()
    assert len(requests_to(sb, "/suggest")) == 3


def test_form_follows_the_clients_suggest_limit_by_default(sandbox, make_client):
    client = make_client(sandbox, endpoints=Endpoints(suggest_per_minute=7))
    assert LookupForm(client)._rate.per_minute == 7


def test_service_rate_limit_is_a_readable_note(fresh_sandbox, make_client, scheduler):
    sb = fresh_sandbox
    sb.set_suggest_limit(1)
    client = make_client(sb, endpoints=Endpoints(suggest_per_minute=None), max_retries=0)
    form = LookupForm(client, scheduler=scheduler)
    for query in ("Flat 1", "Flat 2"):
        form.search.value = query
        scheduler.run_pending()
    note = text_of(form.suggest_note.value)
    assert note.startswith("Too many requests for now: wait")
    assert "limited to 1 requests per minute" in note
