"""Where the merged mechanisms meet: hostile servers against copies, health, locks and budgets.

Each test is a bug found reading the merge of issues 14 (bounded bodies, deadlines), 16 (Vepler
profile, per-service health, the POST area query) and 18 (pickled clients, team-wide single
flight, shared budget) together.
"""

from __future__ import annotations

import json
import pickle
import threading
from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from tests.hostile._servers import KEY, Seen, envelope, hostile, records, records_for, send, trickle

IDS = ["L0", "L1"]  # as records(0, 2) serves them


@pytest.mark.timeout(30)
def test_a_pickled_copy_keeps_max_body_bytes(client_of, monkeypatch) -> None:
    body = json.dumps(envelope(records(0, 2), padding="x" * 4000)).encode()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, body)

    monkeypatch.setenv("PROPERTYKIT_API_KEY", KEY)
    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=1000)
        copy = pickle.loads(pickle.dumps(client))
        with copy, pytest.raises(pk.ResponseTooLarge):  # before: the copy read it whole
            copy.properties(IDS)
    assert copy.usage.requests_sent == 1


@pytest.mark.timeout(20)
def test_a_pickled_copy_keeps_its_deadline(client_of, monkeypatch) -> None:
    body = json.dumps(envelope(records(0, 2))).encode()  # ~100 bytes: 10 s at 10 bytes a second

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        trickle(handler, body, every=0.1)

    monkeypatch.setenv("PROPERTYKIT_API_KEY", KEY)
    with hostile(behaviour) as server:
        client = client_of(server, timeout=1, deadline=0.5)
        copy = pickle.loads(pickle.dumps(client))
        with copy, pytest.raises(pk.NetworkError, match="deadline"):  # before: 300 s, the default
            copy.properties(IDS)


@pytest.mark.timeout(20)
def test_the_health_of_another_service_is_asked_every_time(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        status = "healthy" if len(seen) == 1 else "unhealthy"
        send(handler, 200, {"status": status, "service": "planning"})

    with hostile(behaviour) as server:
        client = client_of(server)
        assert client.health("planning")["status"] == "healthy"
        with pytest.raises(pk.ServiceUnhealthy):  # before: the cached "healthy" for 7 days
            client.health("planning")
    assert server.paths() == ["/v1/planning/health"] * 2
    assert client.cache_info()["entries"] == 0


@pytest.mark.timeout(30)
def test_waiting_for_another_kernels_fetch_ends_by_the_deadline_and_costs_nothing(
    client_of,
) -> None:
    arrived, release = threading.Event(), threading.Event()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:  # the first kernel's fetch hangs until the test lets it go
            arrived.set()
            release.wait(15)
        send(handler, 200, envelope(records_for(handler.path)))

    with hostile(behaviour) as server:
        shared = {"budget": 2, "budget_name": "team"}
        first = client_of(server, timeout=60, deadline=60, **shared)
        fetching = threading.Thread(target=first.properties, args=(IDS,))
        fetching.start()
        try:
            assert arrived.wait(10)
            second = client_of(server, deadline=0.5, **shared)
            with pytest.raises(pk.NetworkError, match="deadline") as caught:
                second.properties(IDS)  # before: waited 120 s for the first kernel's lock
            assert caught.value.kind == "connect"  # nothing was sent
        finally:
            release.set()
            fetching.join(15)
        third = client_of(server, **shared)
        # Before: the second kernel's place in the shared budget was never given back.
        assert len(third.properties(["L3", "L4"])) == 2
    assert len(server.requests) == 2


@pytest.mark.timeout(30)
def test_two_kernels_asking_the_same_area_query_together_pay_once(client_of) -> None:
    first_in, second_in = threading.Event(), threading.Event()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:
            first_in.set()
            second_in.wait(1)  # answered once the second kernel asks too, or after 1 s
        else:
            second_in.set()
        send(handler, 200, envelope(records(0, 2)))

    area = {"type": "outcode", "value": "SE11"}
    with hostile(behaviour) as server:
        kernels = [client_of(server), client_of(server)]
        answers: list[int] = []
        asking = [
            threading.Thread(target=lambda c=c: answers.append(len(c.query(area)))) for c in kernels
        ]
        asking[0].start()
        assert first_in.wait(10)
        asking[1].start()
        for thread in asking:
            thread.join(20)
    assert answers == [2, 2]
    assert server.paths("POST") == ["/v1/property/query"]  # before: both kernels paid
    assert sum(c.usage.cache_hits for c in kernels) == 1


@pytest.mark.timeout(20)
def test_a_redirected_lookup_takes_one_place_in_a_shared_budget(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if "moved" not in handler.path:
            send(handler, 302, b"", headers={"Location": handler.path + "?moved=1"})
        else:
            send(handler, 200, envelope(records(0, 2)))

    with hostile(behaviour) as server:
        alone = client_of(server, budget=1, cache=False)
        assert len(alone.properties(IDS)) == 2
        shared = client_of(server, budget=1, budget_name="team")
        assert len(shared.properties(IDS)) == 2  # before: BudgetExceeded on the second hop
