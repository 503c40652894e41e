"""Servers that break their own paging: the client stops and says so, instead of paying on."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from tests.hostile._servers import Seen, envelope, hostile, offset_of, records, send

SOURCES = ["zoopla::1", "zoopla::2", "zoopla::3"]


def page_server(make_page):  # type: ignore[no-untyped-def]
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, make_page(offset_of(handler.path), len(seen)))

    return hostile(behaviour)


@pytest.mark.timeout(30)
def test_has_more_for_ever_past_total_size_stops_at_once(client_of) -> None:
    # Each page says hasMore with a growing nextOffset, far past its own totalSize.
    def page(offset: int, n: int) -> dict:
        return envelope(records(offset, 2), totalSize=3, hasMore=True, nextOffset=offset + 2)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="totalSize") as caught:
            client.sources(SOURCES, page_size=2)
    assert len(server.requests) <= 3  # before: 61 paid pages
    assert caught.value.partial is not None
    assert [r["propertyId"] for r in caught.value.partial.records][:2] == ["P0", "P1"]


@pytest.mark.timeout(30)
def test_an_offset_that_repeats_is_an_error_not_a_silent_end(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        return envelope(records(offset, 1), totalSize=10, hasMore=True, nextOffset=offset)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="same offset"):
            client.source_records(SOURCES, page_size=1)
    assert len(server.requests) == 1


@pytest.mark.timeout(30)
def test_an_offset_that_goes_backwards_is_an_error(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        following = 1 if offset == 0 else 0
        return envelope(records(offset, 1), totalSize=10, hasMore=True, nextOffset=following)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="earlier offset") as caught:
            client.source_records(SOURCES, page_size=1)
    assert len(server.requests) == 2
    assert caught.value.partial is not None
    assert caught.value.partial.resume_offset == 1
    assert len(caught.value.partial.records) == 2  # both pages paid for are kept


@pytest.mark.timeout(30)
def test_an_empty_page_while_has_more_stays_true_is_an_error(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        return envelope([], hasMore=True, nextOffset=offset + 5)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="empty while hasMore"):
            client.sources(SOURCES)
    assert len(server.requests) == 1


@pytest.mark.timeout(30)
def test_a_dry_run_over_broken_cached_pages_sends_nothing(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        return envelope(records(offset, 1), totalSize=10, hasMore=True, nextOffset=offset)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse):
            client.sources(SOURCES, page_size=1)
        plan = client.sources(SOURCES, page_size=1, dry_run=True)
        assert len(server.requests) == 1
    assert plan.requests >= 1  # the broken page is counted as one to send, not followed


@pytest.mark.timeout(30)
def test_well_behaved_paging_still_reads_every_page(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        count = min(2, 5 - offset)
        more = offset + count < 5
        return envelope(
            records(offset, count), totalSize=5, hasMore=more, nextOffset=offset + count
        )

    with page_server(page) as server:
        client = client_of(server)
        df = client.sources([*SOURCES, "zoopla::4", "zoopla::5"], page_size=2)
    assert df["propertyId"].tolist() == ["P0", "P1", "P2", "P3", "P4"]
    assert len(server.requests) == 3


@pytest.mark.timeout(30)
def test_has_more_for_ever_without_a_total_stops_past_the_ids_asked(client_of) -> None:
    def page(offset: int, n: int) -> dict:
        return envelope(records(offset, 1), hasMore=True, nextOffset=offset + 1)

    with page_server(page) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="ids were asked"):
            client.sources(SOURCES, page_size=1)
    assert len(server.requests) == len(SOURCES)


@pytest.mark.timeout(30)
def test_items_that_are_not_records_are_counted_and_still_move_the_offset(client_of) -> None:
    # Six items in pages of two, without nextOffset: the offset moves by the items served.
    served = [*records(0, 1), "junk", *records(2, 1), None, *records(4, 1), 7]

    def page(offset: int, n: int) -> dict:
        return envelope(served[offset : offset + 2], hasMore=offset + 2 < len(served))

    with page_server(page) as server:
        client = client_of(server)
        with pytest.warns(pk.NotRecordsWarning, match="not a record") as caught:
            found = client.source_records([f"zoopla::{i}" for i in range(6)], page_size=2)
    assert [r["propertyId"] for r in found] == ["P0", "P2", "P4"]
    assert [offset_of(r.path) for r in server.requests] == [0, 2, 4]  # before: 0, 1, 2, 3, 4
    assert len([w for w in caught if w.category is pk.NotRecordsWarning]) == 3
