"""Lookups and paging: location ids, source ids, limit/offset/attributes, the paged envelope."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from propertykit.sandbox import _data as data
from propertykit.sandbox import _ids as sandbox_ids

from .conftest import Api


def _sources(api: Api, ids: list[str], **params: object) -> dict[str, object]:
    answer = api.get("/v1/property/sources/" + ",".join(ids), params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


def test_location_lookup_returns_known_ids_and_skips_unknown(shared_api: Api) -> None:
    ids = shared_api.sb.location_ids
    answer = shared_api.get(f"/v1/property/{ids[3]},L99999999,nonsense,{ids[7]}")
    body = answer.json()
    assert body["success"] is True
    assert [r["locationId"] for r in body["result"]] == [ids[3], ids[7]]


def test_location_lookup_accepts_attributes(shared_api: Api) -> None:
    ids = shared_api.sb.location_ids
    body = shared_api.get(f"/v1/property/{ids[0]}", params={"attributes": "epc,tags"}).json()
    assert set(body["result"][0]) == {"propertyId", "locationId", "epc", "tags"}


def test_percent_encoded_ids_are_decoded(shared_api: Api) -> None:
    ids = shared_api.sb.source_ids[:2]
    body = shared_api.get("/v1/property/sources/" + quote(",".join(ids), safe="")).json()
    assert body["totalSize"] == 2


def test_sources_default_page_size_is_20(shared_api: Api) -> None:
    body = _sources(shared_api, shared_api.sb.source_ids[:30])
    assert (body["size"], body["totalSize"], body["hasMore"], body["nextOffset"]) == (
        20,
        30,
        True,
        20,
    )


def test_limit_above_100_is_clamped_to_100(shared_api: Api) -> None:
    body = _sources(shared_api, shared_api.sb.source_ids[:100], limit=500)
    assert body["size"] == 100
    assert body["hasMore"] is False


def test_next_offset_walks_every_page_once(shared_api: Api) -> None:
    ids = shared_api.sb.source_ids[:95]
    seen: list[str] = []
    offset, pages = 0, 0
    while True:
        body = _sources(shared_api, ids, limit=30, offset=offset)
        seen += [r["locationId"] for r in body["result"]]  # type: ignore[attr-defined]
        pages += 1
        if not body["hasMore"]:
            break
        offset = body["nextOffset"]  # type: ignore[assignment]
    assert pages == 4
    assert seen == shared_api.sb.location_ids[:95]


def test_offset_past_the_end_gives_an_empty_last_page(shared_api: Api) -> None:
    body = _sources(shared_api, shared_api.sb.source_ids[:5], offset=10)
    assert (body["result"], body["size"], body["hasMore"], body["totalSize"]) == ([], 0, False, 5)


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": "ten"}, {"offset": -1}, {"offset": "1.5"}]
)
def test_invalid_limit_or_offset_is_400(shared_api: Api, params: dict[str, object]) -> None:
    answer = shared_api.get("/v1/property/sources/" + shared_api.sb.source_ids[0], params=params)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_parameter"


def test_two_source_ids_of_one_property_give_one_record(shared_api: Api) -> None:
    ids = shared_api.sb.source_ids_for(0) + shared_api.sb.source_ids_for(1)
    body = _sources(shared_api, ids)
    assert len(ids) >= 4
    assert [r["locationId"] for r in body["result"]] == shared_api.sb.location_ids[:2]  # type: ignore[attr-defined]
    assert body["totalSize"] == 2


def test_attributes_restrict_keys_but_keep_the_ids(shared_api: Api) -> None:
    body = _sources(shared_api, shared_api.sb.source_ids[:3], attributes="address,pricing")
    for record in body["result"]:  # type: ignore[attr-defined]
        assert set(record) == {"propertyId", "locationId", "address", "pricing"}


def test_unknown_attribute_is_400(shared_api: Api) -> None:
    answer = shared_api.get(
        "/v1/property/sources/" + shared_api.sb.source_ids[0],
        params={"attributes": "address,colour"},
    )
    assert answer.status_code == 400
    assert "colour" in answer.json()["error"]["message"]


@pytest.mark.parametrize("bad", ["rightmove", "rightmove::", "::123", "right move::1", "a::b::c"])
def test_malformed_source_id_is_400_json(shared_api: Api, bad: str) -> None:
    answer = shared_api.get("/v1/property/sources/" + quote(bad, safe=""))
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_source_id"


def test_well_formed_unknown_source_ids_are_absent(shared_api: Api) -> None:
    unknown = ["rightmove::100000001", "foo::bar", sandbox_ids.source_id(10_000, "zoopla")]
    body = _sources(shared_api, [*unknown, shared_api.sb.source_ids[4]])
    assert [r["locationId"] for r in body["result"]] == [shared_api.sb.location_ids[4]]  # type: ignore[attr-defined]


def test_more_than_100_ids_is_400(shared_api: Api) -> None:
    answer = shared_api.get("/v1/property/" + ",".join(shared_api.sb.location_ids[:101]))
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "too_many_ids"


def test_records_match_the_generator(shared_api: Api) -> None:
    body = shared_api.get("/v1/property/" + shared_api.sb.location_ids[42]).json()
    assert body["result"] == [data.generate_record(42, shared_api.sb.seed)]
