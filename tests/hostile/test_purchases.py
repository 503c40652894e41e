"""Purchases against a service that drops connections and answers about other purchases."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

import propertykit as pk
from propertykit.deeds import Journal
from tests.hostile._servers import Seen, hostile, reset, send, trickle

TITLE = "NGL123456"
EARLIER_KEY = "11111111-2222-3333-4444-555555555555"


def status_body(keys: list[str]) -> dict[str, Any]:
    money_state = "charged" if keys else "not_charged"
    purchases = [{"idempotencyKey": key, "status": "delivered"} for key in keys]
    return {
        "success": True,
        "result": {
            "titleNumber": TITLE,
            "money_state": money_state,
            "status": "delivered" if keys else None,
            "purchases": purchases,
        },
    }


def deed_server(on_post, listed):  # type: ignore[no-untyped-def]
    """POSTs answered by ``on_post``; purchase-status lists ``listed(seen)`` keys as charged."""

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if handler.command == "POST":
            on_post(handler, seen)
        else:
            send(handler, 200, status_body(listed(seen)))

    return hostile(behaviour)


def post_keys(seen: list[Seen]) -> list[str]:
    return [r.headers["Idempotency-Key"] for r in seen if r.method == "POST"]


def journal_states(path) -> list[tuple[str, str | None]]:  # type: ignore[no-untyped-def]
    return [(e.event, e.money_state) for e in Journal(path).events()]


@pytest.mark.timeout(30)
def test_buy_again_with_a_dropped_post_is_uncertain_not_the_earlier_purchase(
    client_of, tmp_path
) -> None:
    with deed_server(lambda handler, seen: reset(handler), lambda seen: [EARLIER_KEY]) as server:
        client = client_of(server)
        with pytest.raises(pk.PurchaseUncertain):  # before: "delivered", "charged"
            client.buy_title_deed(TITLE, buy_again=True)
    assert len(server.paths("POST")) == 1  # the dropped POST is never sent blindly again
    (key,) = post_keys(server.requests)
    asked = [r for r in server.requests if r.method == "GET"]
    assert asked and all(r.headers.get("Idempotency-Key") == key for r in asked)
    assert journal_states(tmp_path / "deeds.jsonl") == [("intent", None), ("uncertain", "unknown")]


@pytest.mark.timeout(30)
def test_a_dropped_post_that_status_lists_by_its_key_is_charged(client_of, tmp_path) -> None:
    with deed_server(lambda handler, seen: reset(handler), post_keys) as server:
        client = client_of(server)
        purchase = client.buy_title_deed(TITLE, buy_again=True)
    assert (purchase.status, purchase.money_state) == ("delivered", "charged")
    assert purchase.idempotency_key == post_keys(server.requests)[0]
    assert journal_states(tmp_path / "deeds.jsonl")[-1] == ("outcome", "charged")


@pytest.mark.timeout(30)
def test_a_status_body_naming_no_keys_cannot_vouch_for_a_repeat_purchase(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if handler.command == "POST":
            reset(handler)
        else:
            send(handler, 200, {"result": {"money_state": "charged", "status": "delivered"}})

    with hostile(behaviour) as server:
        client = client_of(server)
        with pytest.raises(pk.PurchaseUncertain):
            client.buy_title_deed(TITLE, buy_again=True)
    assert len(server.paths("POST")) == 1


@pytest.mark.parametrize(
    "title", ["..", ".", "", " ", "NGL/1", "NGL?1", "NGL#1", "NGL\x001", "A\n"]
)
@pytest.mark.timeout(30)
def test_a_title_number_that_is_not_one_sends_nothing(client_of, tmp_path, title) -> None:
    with deed_server(lambda handler, seen: reset(handler), lambda seen: []) as server:
        client = client_of(server)
        with pytest.raises(pk.InvalidInput):  # before: ".." POSTed to /v1/purchase
            client.buy_title_deed(title)
        with pytest.raises(pk.InvalidInput):
            client.purchase_status(title)
    assert server.requests == []
    assert not (tmp_path / "deeds.jsonl").exists()


UNSENDABLE = {
    "NaN": {"price": float("nan")},
    "infinity": {"price": float("inf")},
    "an object": {"when": object()},
    "bytes": {"note": b"raw"},
    "a set": {"tags": {"a"}},
}


@pytest.mark.parametrize("payload", UNSENDABLE.values(), ids=UNSENDABLE.keys())
@pytest.mark.timeout(30)
def test_a_payload_that_is_not_json_sends_nothing_and_writes_no_intent(
    client_of, tmp_path, payload
) -> None:
    with deed_server(lambda handler, seen: reset(handler), lambda seen: []) as server:
        client = client_of(server)
        with pytest.raises(pk.InvalidInput, match="JSON"):  # before: TypeError, open intent
            client.buy_title_deed(TITLE, **payload)
    assert server.requests == []
    assert not (tmp_path / "deeds.jsonl").exists()


@pytest.mark.timeout(30)
def test_a_plain_payload_is_sent_as_json(client_of) -> None:
    def on_post(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, {"success": True, "result": {"status": "delivered"}})

    with deed_server(on_post, lambda seen: []) as server:
        client = client_of(server)
        purchase = client.buy_title_deed(TITLE, reference="job 7", price=1.5)
    assert purchase.status == "delivered"
    (post,) = [r for r in server.requests if r.method == "POST"]
    assert json.loads(post.body) == {"reference": "job 7", "price": 1.5}


@pytest.mark.timeout(30)
def test_a_purchase_answer_that_trickles_ends_uncertain_by_the_deadline(client_of, tmp_path):
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        # The purchase and purchase-status both trickle: nobody can tell what happened.
        trickle(handler, b'{"success": true, "result": {"status": "delivered"}}', every=0.1)

    with hostile(behaviour) as server:
        client = client_of(server, timeout=1, deadline=0.5)
        with pytest.raises(pk.PurchaseUncertain):
            client.buy_title_deed(TITLE, buy_again=True)
    assert len(server.paths("POST")) == 1
    assert journal_states(tmp_path / "deeds.jsonl") == [("intent", None), ("uncertain", "unknown")]


@pytest.mark.timeout(30)
def test_an_open_repeat_purchase_is_not_settled_by_an_earlier_purchases_charge(
    client_of, tmp_path
) -> None:
    # The title was bought (EARLIER_KEY, charged); a repeat purchase's kernel died before its
    # outcome was known. Purchase-status says "charged" but names no key: that charge may be the
    # earlier purchase's, so the repeat stays unknown rather than recorded as charged.
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if handler.command == "POST":
            reset(handler)
        else:
            send(handler, 200, {"result": {"money_state": "charged", "status": "delivered"}})

    with hostile(behaviour) as server:
        journal = Journal(tmp_path / "deeds.jsonl")
        journal.record_intent(TITLE, EARLIER_KEY, service=server.url)
        journal.record_outcome(
            TITLE, EARLIER_KEY, service=server.url, money_state="charged", status="delivered"
        )
        journal.record_intent(TITLE, "repeat-key", service=server.url)
        client = client_of(server)
        with pytest.raises(pk.PurchaseUncertain):  # before: the repeat recorded as charged
            client.buy_title_deed(TITLE)
    assert server.paths("POST") == []
    # The status question names the open purchase's own key, as a new purchase's does.
    (status,) = [r for r in server.requests if r.method == "GET"]
    assert {k.lower(): v for k, v in status.headers.items()}["idempotency-key"] == "repeat-key"
    assert journal_states(tmp_path / "deeds.jsonl")[-1] == ("uncertain", "unknown")
    (still_open,) = Journal(tmp_path / "deeds.jsonl").open_intents(title_number=TITLE)
    assert still_open.idempotency_key == "repeat-key"
