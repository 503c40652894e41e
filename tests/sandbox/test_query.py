"""``POST /v1/property/query`` of the sandbox, spoken to in raw HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.conftest import Api

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)

PATH = "/v1/property/query"
WHOLE_UK = {
    "type": "polygon",
    "coordinates": [[[-8.5, 49.5], [2.0, 49.5], [2.0, 61.0], [-8.5, 61.0], [-8.5, 49.5]]],
}


def outcode_ids(api: Api, outcode: str) -> list[str]:
    sb = api.sb
    return [
        f"L{i:08d}" for i in range(sb.n_properties) if sb.record(i)["address"]["outcode"] == outcode
    ]


def test_an_outcode_query_pages_through_every_home_and_charges_per_record(api: Api):
    expected = outcode_ids(api, "SA2")
    seen: list[str] = []
    offset = 0
    while True:
        answer = api.post(PATH, json={"area": [{"type": "outcode", "value": "SA2"}],
                                      "limit": 30, "offset": offset})  # fmt: skip
        assert answer.status_code == 200
        body = answer.json()
        assert body["totalSize"] == len(expected) and body["size"] == len(body["result"])
        seen += [r["locationId"] for r in body["result"]]
        if not body["hasMore"]:
            break
        offset = body["nextOffset"]
    assert seen == expected
    assert api.sb.credits_charged == len(expected)


def test_the_default_page_is_20_and_at_most_100(api: Api):
    default = api.post(PATH, json={"area": [WHOLE_UK]}).json()
    big = api.post(PATH, json={"area": [WHOLE_UK], "limit": 1000}).json()
    assert (len(default["result"]), len(big["result"])) == (20, 100)
    assert default["hasMore"] is True


def test_a_point_area_accepts_a_single_area_object(api: Api):
    centre = api.sb.record(5)["spatial"]
    area = {"type": "point", "coordinates": [centre["lng"], centre["lat"]], "radius": 300}
    body = api.post(PATH, json={"area": area}).json()
    assert "L00000005" in [r["locationId"] for r in body["result"]]


def test_filters_and_attributes(api: Api):
    body = api.post(
        PATH,
        json={
            "area": [WHOLE_UK],
            "query": {"beds": [4], "propertyType": ["Detached"], "tags": {"auction": False}},
            "attributes": ["roomDetails", "tags"],
            "sortBy": "beds",
            "sortOrder": "desc",
            "limit": 50,
        },
    ).json()
    assert body["result"]
    for record in body["result"]:
        assert set(record) == {"propertyId", "locationId", "roomDetails", "tags"}
        assert record["roomDetails"]["beds"] == 4 and record["tags"]["auction"] is False


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("not JSON", b"{nope", "invalid_body"),
    ("not an object", [1, 2], "invalid_body"),
    ("no area", {"query": {}}, "invalid_area"),
    ("unknown area type", {"area": [{"type": "city", "value": "Bath"}]}, "invalid_area"),
    ("point without position", {"area": [{"type": "point", "radius": 5}]}, "invalid_area"),
    ("short ring", {"area": [{"type": "polygon", "coordinates": [[[0, 0], [0, 0]]]}]},
     "invalid_area"),
    ("unknown filter", {"area": [WHOLE_UK], "query": {"bedrooms": [2]}}, "invalid_parameter"),
    ("list filter as text", {"area": [WHOLE_UK], "query": {"beds": "2"}}, "invalid_parameter"),
    ("price as text", {"area": [WHOLE_UK], "query": {"priceMin": "1"}}, "invalid_parameter"),
    ("limit zero", {"area": [WHOLE_UK], "limit": 0}, "invalid_parameter"),
    ("negative offset", {"area": [WHOLE_UK], "offset": -1}, "invalid_parameter"),
    ("bad sort", {"area": [WHOLE_UK], "sortBy": "colour"}, "invalid_parameter"),
    ("bad order", {"area": [WHOLE_UK], "sortOrder": "up"}, "invalid_parameter"),
    ("bad attribute", {"area": [WHOLE_UK], "attributes": ["colour"]}, "invalid_attribute"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "code"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES]
)
def test_bad_queries_are_400_and_free(api: Api, body: Any, code: str):
    kwargs = {"data": body} if isinstance(body, bytes) else {"json": body}
    answer = api.post(PATH, **kwargs)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == code
    assert api.sb.credits_charged == 0


def test_query_needs_the_key_and_post(api: Api):
    assert api.post(PATH, key=None, json={"area": [WHOLE_UK]}).status_code == 401
    assert api.get(PATH).status_code == 403


# -- condition groups (the grammar of Vepler's SDK), on both profiles ---------------------------


def conditions(*items: dict[str, Any], operator: str = "AND") -> list[dict[str, Any]]:
    return [{"operator": operator, "groups": [{"conditions": list(items)}]}]


@pytest.fixture
def profiled_api(profiled_sandbox: Any) -> Any:
    client = Api(profiled_sandbox)
    yield client
    client.session.close()


def test_condition_groups_are_served_on_both_profiles(profiled_api: Api):
    factor = 100 if profiled_api.sb.profile == "vepler" else 1
    query = conditions(
        {"field": "roomDetails.beds", "comparator": "gte", "value": 4},
        {"field": "pricing.estimatedSaleValue", "comparator": "lt", "value": 500_000 * factor},
        {"field": "propertyType", "comparator": "in", "value": ["Detached", "semi-detached"]},
    )
    answer = profiled_api.post(PATH, json={"area": [WHOLE_UK], "query": query, "limit": 100})
    assert answer.status_code == 200
    found = answer.json()["result"]
    assert found
    for record in found:
        assert record["roomDetails"]["beds"] >= 4
        assert record["pricing"]["estimatedSaleValue"] < 500_000 * factor
        assert record["propertyType"] in ("detached", "semi-detached")
    expected = [
        f"L{i:08d}"
        for i in range(profiled_api.sb.n_properties)
        if (r := profiled_api.sb.record(i))["roomDetails"]["beds"] >= 4
        and r["pricing"]["estimatedSaleValue"] < 500_000 * factor
        and r["propertyType"] in ("detached", "semi-detached")
    ]
    assert [r["locationId"] for r in found] == expected[:100]


def test_a_record_without_the_field_matches_no_condition_on_it(shared_api: Api):
    missing = [i for i in range(shared_api.sb.n_properties)
               if shared_api.sb.record(i).get("floorAreaSqM") is None]  # fmt: skip
    assert missing, "the sandbox leaves some floor areas out"
    for comparator in ("ne", "nin"):
        value = [1.0] if comparator == "nin" else 1.0
        query = conditions({"field": "floorAreaSqM", "comparator": comparator, "value": value})
        answer = shared_api.post(PATH, json={"area": [WHOLE_UK], "query": query, "limit": 1})
        assert answer.json()["totalSize"] == shared_api.sb.n_properties - len(missing)


BAD_CONDITIONS: list[tuple[str, Any, str]] = [
    ("unknown field", conditions({"field": "bedrooms", "comparator": "eq", "value": 2}),
     "query[0].groups[0].conditions[0].field: unknown field 'bedrooms'"),
    ("unknown comparator",
     conditions({"field": "roomDetails.beds", "comparator": "between", "value": [2, 3]}),
     "unknown comparator 'between'"),
    ("unknown operator", [{"operator": "XOR", "groups": [{"conditions": [
        {"field": "roomDetails.beds", "comparator": "eq", "value": 2}]}]}],
     "unknown operator 'XOR'"),
    ("unknown key", [{"operator": "AND", "groups": [], "limit": 2}], "unknown key 'limit'"),
    ("text for a number",
     conditions({"field": "roomDetails.beds", "comparator": "eq", "value": "two"}),
     "must be a number"),
    ("gt on text", conditions({"field": "address.town", "comparator": "gt", "value": "B"}),
     "'gt' does not apply to address.town"),
    ("empty groups", [{"operator": "AND", "groups": []}], "query[0].groups: must be a non-empty"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "said"), [c[1:] for c in BAD_CONDITIONS], ids=[c[0] for c in BAD_CONDITIONS]
)
def test_bad_conditions_are_400_naming_what_is_not_known(profiled_api: Api, query: Any, said: str):
    answer = profiled_api.post(PATH, json={"area": [WHOLE_UK], "query": query})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"].lower() == "invalid_parameter"
    assert said in error["message"]
    assert profiled_api.sb.credits_charged == 0
