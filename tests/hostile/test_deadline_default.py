"""The deadline a client gets without asking: ten times its ``timeout`` (300 s by default).

A user who sets ``timeout=1`` means "do not wait long"; a server trickling its body one byte at
a time never lets a single read time out, so only the deadline ends the call.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from propertykit.config import ENV_API_KEY
from tests.hostile._servers import Seen, envelope, hostile, records, send, trickle

IDS = ["L0", "L1"]  # as records(0, 2) serves them


@pytest.mark.slow  # about 5 s by design
@pytest.mark.timeout(60)  # before: the default deadline of 300 s held the call for minutes
def test_a_trickling_body_with_timeout_half_a_second_ends_by_the_default_deadline_of_5_s(
    client_of,
) -> None:
    # As docs/client.md's timeout=1 (deadline 10 s), at half the time: no read waits 0.5 s.
    body = json.dumps(envelope(records(0, 2))).encode()  # ~100 bytes at 0.1 s each: 10 s

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        trickle(handler, body, every=0.1)

    with hostile(behaviour) as server:
        client = client_of(server, timeout=0.5)  # no deadline given
        with pytest.raises(pk.NetworkError, match="deadline of 5 s") as caught:
            client.properties(IDS)
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 1  # a body that never ended is not asked for again
    assert client.cache_info()["entries"] == 0


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("settings", "deadline"), [({}, 300.0), ({"timeout": 1}, 10.0), ({"timeout": 2}, 20.0)]
)
def test_the_default_deadline_is_ten_times_the_timeout(client_of, settings, deadline) -> None:
    with hostile(lambda handler, seen: send(handler, 200, envelope([]))) as server:
        client = client_of(server, **settings)
        assert client._transport.retry.deadline == deadline


@pytest.mark.timeout(30)
def test_a_deadline_given_is_kept_and_travels_to_copies(client_of) -> None:
    import pickle

    with hostile(lambda handler, seen: send(handler, 200, envelope([]))) as server:
        client = client_of(server, timeout=1, deadline=45)
        assert client._transport.retry.deadline == 45.0
        defaulted = client_of(server, timeout=3)
        assert defaulted.recipe().settings["deadline"] is None  # a copy works it out again
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(ENV_API_KEY, "pk_live_copy")
            copy = pickle.loads(pickle.dumps(defaulted))
        try:
            assert copy._transport.retry.deadline == 30.0
        finally:
            copy.close()
