"""Ids are checked before anything is sent, deduplicated, percent-encoded and batched."""

from __future__ import annotations

import pytest

import propertykit as pk
from propertykit.errors import InvalidInput


def lookups(sb):
    return [r for r in sb.requests if r.path.startswith("/v1/property/")]


def test_ids_are_batched_by_batch_size(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    records = client.property_records(sb.location_ids[:120])
    assert len(records) == 120
    # Batches go out several at a time, so they may arrive in any order.
    sizes = [len(r.path.rsplit("/", 1)[1].split(",")) for r in lookups(sb)]
    assert sorted(sizes, reverse=True) == [50, 50, 20]
    assert [r["locationId"] for r in records] == sb.location_ids[:120]


def test_batch_size_comes_from_endpoints(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(batch_size=7))
    client.property_records(sb.location_ids[:15])
    assert len(lookups(sb)) == 3


def test_urls_are_kept_under_2000_characters(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(batch_size=100))
    long_ids = [f"rightmove::{'9' * 80}{i:04d}" for i in range(60)]  # unknown: no records
    assert client.source_records(long_ids, page_size=100) == []
    paths = [r.path + "?" + r.query for r in lookups(sb)]
    assert len(paths) > 1
    assert all(len(sb.url) + len(p) < 2000 for p in paths)
    batches = [p.split("?")[0].rsplit("/", 1)[1].split(",") for p in paths]
    # Each batch is a run of consecutive ids; together they are every id, once.
    batches.sort(key=lambda batch: long_ids.index(batch[0]))
    assert [i for batch in batches for i in batch] == long_ids


def test_repeated_ids_are_sent_once_in_first_order(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    a, b, c = sb.location_ids[:3]
    records = client.property_records([b, a, b, c, a])
    assert lookups(sb)[0].path == f"/v1/property/{b},{a},{c}"
    assert [r["locationId"] for r in records] == [b, a, c]


def test_a_single_id_string_is_accepted(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    assert len(client.property_records(sb.location_ids[0])) == 1


def test_ids_are_percent_encoded_and_provider_separator_stays_readable(
    profiled_sandbox, make_client
):
    sb = profiled_sandbox
    client = make_client(sb)
    client.source_records(["zoopla::a?b#c%d", "zoopla::é"])
    assert lookups(sb)[0].path == "/v1/property/sources/zoopla::a%3Fb%23c%25d,zoopla::%C3%A9"


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [""],
        ["L1,L2"],
        ["L1/x"],
        ["L 1"],
        ["L1\n"],
        [42],
        None,
    ],
)
def test_bad_location_ids_raise_before_anything_is_sent(profiled_sandbox, make_client, bad):
    sb = profiled_sandbox
    client = make_client(sb)
    with pytest.raises(InvalidInput):
        client.property_records(bad)
    with pytest.raises(ValueError):  # InvalidInput is also a ValueError
        client.properties(bad)
    assert sb.requests == []


@pytest.mark.parametrize("bad", ["zoopla", "::123", "zoopla::", "zoopla:123", "a::b,c::d"])
def test_bad_source_ids_raise_before_anything_is_sent(profiled_sandbox, make_client, bad):
    sb = profiled_sandbox
    client = make_client(sb)
    with pytest.raises(InvalidInput, match=r"Source id|contains"):
        client.source_records([sb.source_ids[0], bad])
    assert sb.requests == []


def test_bad_paging_arguments_raise_before_anything_is_sent(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    for kwargs in ({"page_size": 0}, {"page_size": 2.5}, {"max_results": -1}):
        with pytest.raises(InvalidInput):
            client.source_records(sb.source_ids[:2], **kwargs)
    with pytest.raises(InvalidInput):
        client.source_records(sb.source_ids[:2], attributes=["a,b"])
    assert sb.requests == []
