"""Inputs that would send a request somewhere the user never named, or crash: refused first."""

from __future__ import annotations

import pytest

import propertykit as pk
from tests.hostile._servers import envelope, hostile, records, send

NOT_IDS = ["..", ".", "", "L1/L2", "L1?x=1", "L1#top", "L1\x07", "L1\r\n", "L 1"]


@pytest.mark.parametrize("bad", NOT_IDS)
@pytest.mark.timeout(30)
def test_a_location_id_that_is_not_one_sends_nothing(client_of, bad) -> None:
    with hostile(lambda handler, seen: send(handler, 200, envelope(records(0, 1)))) as server:
        client = client_of(server)
        with pytest.raises(pk.InvalidInput):
            client.properties(["L0", bad])
        with pytest.raises(pk.InvalidInput):
            client.properties(bad, dry_run=True)
    assert server.requests == []


@pytest.mark.timeout(30)
def test_source_ids_keep_question_marks_and_hashes_percent_encoded(client_of) -> None:
    with hostile(lambda handler, seen: send(handler, 200, envelope(records(0, 1)))) as server:
        client = client_of(server)
        client.sources(["epc::a?b#c"])
    assert server.requests[0].path.startswith("/v1/property/sources/epc::a%3Fb%23c?")


NOT_FRAMES = {
    "a string that is not json": ("not a list", "Body 0"),
    "a list of a non-json string": (["Z"], "Body 0"),
    "bytes that are not utf-8": ([b"{}", b"\xff"], "Body 1"),
    "a number": (5, "int"),
    "one record, not a list": ({"propertyId": "P1"}, "one record"),
    "a body holding a number": (b"42", "Body 0"),
    "json nested too deep": (b"[" * 100_000 + b"]" * 100_000, "Body 0"),
}


@pytest.mark.parametrize(("given", "named"), NOT_FRAMES.values(), ids=NOT_FRAMES.keys())
@pytest.mark.timeout(30)
def test_frame_refuses_what_is_neither_records_nor_bodies(given, named) -> None:
    with pytest.raises(pk.InvalidInput, match=named):  # before: JSONDecodeError, TypeError...
        pk.frame(given)


@pytest.mark.timeout(30)
def test_frame_takes_what_the_client_returns() -> None:
    body = b'{"success": true, "result": [{"propertyId": "P1"}]}'
    assert pk.frame([body, memoryview(body)])["propertyId"].tolist() == ["P1", "P1"]
    assert pk.frame([{"propertyId": "P2"}])["propertyId"].tolist() == ["P2"]
