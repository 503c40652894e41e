"""Search-suggest and Vepler's address autocomplete over the real world's addresses: a plain
full-text AND of whole tokens, ranked, at most 10, free, limited per minute, no magic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from propertykit.config import Endpoints
from propertykit.sandbox import Sandbox, typed_addresses, world_addresses
from propertykit.sandbox._search import STYLES, tokens

from .conftest import NOON, Api

pytestmark = pytest.mark.timeout(120)

N = 4_000
AUTOCOMPLETE = Endpoints.vepler().autocomplete_path or ""


@pytest.fixture(scope="module")
def real() -> Iterator[Api]:
    with Sandbox(n_properties=N, realism="real", suggest_per_minute=10_000, now=NOON) as sb:
        api = Api(sb)
        yield api
        api.session.close()


@pytest.fixture(scope="module")
def vepler() -> Iterator[Api]:
    with Sandbox(
        n_properties=N, realism="real", profile="vepler", suggest_per_minute=10_000, now=NOON
    ) as sb:
        api = Api(sb)
        yield api
        api.session.close()


def _suggest(api: Api, text: str) -> list[dict[str, Any]]:
    answer = api.get("/v1/property/suggest", params={"q": text})
    assert answer.status_code == 200, answer.text
    result: list[dict[str, Any]] = answer.json()["result"]
    return result


def _holds(suggestion: dict[str, Any], words: list[str], *, last_prefix: bool = True) -> bool:
    address = world_addresses(N)[int(suggestion["locationId"][1:])]
    held = set(tokens(address["displayAddress"] + " " + address["county"]))
    held.add(address["postcodeNoSpace"].lower())
    whole = all(word in held for word in words[:-1])
    last = words[-1] in held or (last_prefix and any(t.startswith(words[-1]) for t in held))
    return whole and last


def test_a_whole_address_finds_its_home_first_with_its_structured_fields(real: Api) -> None:
    addresses = world_addresses(N)
    flat = next(
        i for i, a in enumerate(addresses) if a.get("buildingName") and a.get("subBuilding")
    )
    address = addresses[flat]
    (first, *_) = _suggest(real, address["displayAddress"])
    assert first == {
        "locationId": f"L{flat:08d}",
        "displayAddress": address["displayAddress"],
        "postcode": address["postcode"],
        "town": address["town"],
        "streetNumber": address["streetNumber"],
        "streetName": address["streetName"],
        "subBuilding": address["subBuilding"],
        "buildingName": address["buildingName"],
    }


def test_every_token_must_be_held_and_answers_are_ranked_at_most_10(real: Api) -> None:
    address = world_addresses(N)[123]
    query = f"{address['streetName']} {address['postcodeNoSpace'].lower()}"
    found = _suggest(real, query)
    assert found and len(found) <= 10
    assert all(_holds(s, tokens(query)) for s in found)
    assert all(s["postcode"] == address["postcode"] for s in found)
    town = _suggest(real, address["town"])
    assert len(town) == 10  # far more match; ten come back
    fewer = real.get("/v1/property/suggest", params={"q": address["town"], "limit": 3}).json()
    assert fewer["result"] == town[:3]
    more = real.get("/v1/property/suggest", params={"q": address["town"], "limit": 50}).json()
    assert more["result"] == town
    bad = real.get("/v1/property/suggest", params={"q": address["town"], "limit": "ten"})
    assert bad.status_code == 400
    shares = []
    for s in town:
        held = set(tokens(s["displayAddress"]))
        shares.append(
            1 / len(held | set(tokens(world_addresses(N)[int(s["locationId"][1:])]["county"])))
        )
    assert shares == sorted(shares, reverse=True)  # the shortest addresses say most of it


def test_no_abbreviation_typo_or_unknown_token_magic(real: Api) -> None:
    addresses = world_addresses(N)
    index = next(i for i, a in enumerate(addresses) if a["streetName"].endswith(" Road"))
    address = addresses[index]
    number = address["streetNumber"] or ""
    spelt = f"{number} {address['streetName']} {address['postcode']}"
    assert f"L{index:08d}" in [s["locationId"] for s in _suggest(real, spelt)]
    short = spelt.replace(" Road", " Rd")
    assert _suggest(real, short + " x") == []  # "rd" is not "road"
    first = address["streetName"].split()[0]
    typo = spelt.replace(first, first[1] + first[0] + first[2:], 1)
    assert _suggest(real, typo) == []  # no spelling tolerance
    assert _suggest(real, f"THE CORNER CAFE {spelt}") == []  # a token no address holds


def test_the_last_token_may_be_the_start_of_one(real: Api) -> None:
    address = world_addresses(N)[7]
    street = address["streetName"]
    typed = f"{street[:-2]}"
    found = _suggest(real, typed)
    assert found and all(_holds(s, tokens(typed)) for s in found)
    assert not all(_holds(s, tokens(typed), last_prefix=False) for s in found)
    cut = street.split()[0][:-1]
    assert _suggest(real, f"{cut} {address['town']}") == []  # only the last token


def test_typed_rows_carry_their_truth() -> None:
    rows = typed_addresses(400, n_properties=N)
    kinds = {row.kind for row in rows}
    assert {"standard", "wrong_number", "no_flat", "business", "transposed"} <= kinds
    addresses = world_addresses(N)
    for row in rows:
        if row.kind == "wrong_number":
            assert row.expected == "absent"
        elif row.kind == "no_flat":
            assert row.expected == "ambiguous" and len(row.candidates) >= 2
            assert all("subBuilding" in addresses[int(c[1:])] for c in row.candidates)
        elif row.expected.startswith("L"):
            assert row.expected == f"L{row.index:08d}"
    assert sum(row.expected.startswith("L") for row in rows) > 0.8 * len(rows)


def test_vepler_autocomplete_pages_ranks_and_prefers_postcodes(vepler: Api) -> None:
    address = world_addresses(N)[50]
    query = f"{address['streetName']} {address['postcode']}"
    answer = vepler.get(AUTOCOMPLETE, params={"q": query, "limit": 3, "postcodePriority": "true"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["success"] is True and body["limit"] == 3 and body["offset"] == 0
    assert len(body["result"]) == min(3, body["total"])
    assert all(s["postcode"] == address["postcode"] for s in body["result"])
    assert {"locationId", "displayAddress", "postcode", "town"} <= set(body["result"][0])
    everything = vepler.get(AUTOCOMPLETE, params={"q": query, "limit": 100}).json()
    assert everything["limit"] == 10 and len(everything["result"]) <= 10
    nxt = vepler.get(AUTOCOMPLETE, params={"q": query, "limit": 3, "offset": 3}).json()
    firsts = [s["locationId"] for s in everything["result"]]
    assert [s["locationId"] for s in body["result"] + nxt["result"]] == firsts[:6]
    town = vepler.get(AUTOCOMPLETE, params={"q": f"{address['town']} {address['postcode']}",
                                            "postcodePriority": "true"}).json()  # fmt: skip
    assert town["result"][0]["postcode"] == address["postcode"]
    record = vepler.get(f"/v1/property/{body['result'][0]['locationId']}").json()["result"][0]
    assert record["address"]["displayAddress"] == body["result"][0]["displayAddress"]


@pytest.mark.parametrize(
    ("params", "status"),
    [({}, 400), ({"q": "  "}, 400), ({"q": "mill", "limit": "0"}, 400),
     ({"q": "mill", "offset": "-1"}, 400), ({"q": "mill", "streetPriority": "maybe"}, 400)],
)  # fmt: skip
def test_vepler_autocomplete_refuses_bad_parameters(
    vepler: Api, params: dict[str, str], status: int
) -> None:
    answer = vepler.get(AUTOCOMPLETE, params=params)
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == "INVALID_PARAMETER"


def test_autocomplete_is_only_under_the_vepler_profile_and_both_are_free(
    real: Api, vepler: Api
) -> None:
    assert real.get(AUTOCOMPLETE, params={"q": "mill"}).status_code == 403
    before = vepler.sb.credits_charged
    vepler.get(AUTOCOMPLETE, params={"q": "mill"})
    vepler.get("/v1/property/suggest", params={"q": "mill"})
    assert vepler.sb.credits_charged == before


def test_autocomplete_and_suggest_share_the_per_minute_limit() -> None:
    with Sandbox(n_properties=200, profile="vepler", now=NOON) as sb:
        vep = Api(sb)
        sb.set_suggest_limit(2)
        assert vep.get(AUTOCOMPLETE, params={"q": "a"}).status_code == 200
        assert vep.get("/v1/property/suggest", params={"q": "a"}).status_code == 200
        refused: requests.Response = vep.get(AUTOCOMPLETE, params={"q": "a"})
        assert refused.status_code == 429
        assert refused.headers["X-RateLimit-Limit"]
        sb.advance(60)
        assert vep.get(AUTOCOMPLETE, params={"q": "a"}).status_code == 200
        sb.set_suggest_limit(1000)  # a benchmark raises it
        assert all(vep.get(AUTOCOMPLETE, params={"q": "a"}).status_code == 200 for _ in range(50))
        vep.session.close()


# -- the styles a search answers in (chosen when served) ------------------------------------


@pytest.fixture(scope="module", params=STYLES)
def styled(request: pytest.FixtureRequest) -> Iterator[Api]:
    """A vepler-profile sandbox whose search-suggest and autocomplete answer in one style."""
    with Sandbox(n_properties=N, realism="real", profile="vepler", suggest_per_minute=10_000,
                 now=NOON, search_style=request.param) as sb:  # fmt: skip
        api = Api(sb)
        yield api
        api.session.close()


def _autocomplete(api: Api, **params: Any) -> dict[str, Any]:
    answer = api.get(AUTOCOMPLETE, params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_every_style_pages_the_autocomplete_and_finds_a_whole_address_first(styled: Api) -> None:
    address = world_addresses(N)[50]
    query = address["displayAddress"]
    whole = _autocomplete(styled, q=query, limit=10)
    assert whole["result"][0]["locationId"] == "L00000050"
    ids = [s["locationId"] for s in whole["result"]]
    first = _autocomplete(styled, q=query, limit=4)
    after = _autocomplete(styled, q=query, limit=4, offset=4)
    assert [s["locationId"] for s in first["result"] + after["result"]] == ids[:8]
    assert first["total"] == whole["total"] and after["offset"] == 4
    suggested = [s["locationId"] for s in _suggest(styled, query)]
    assert suggested == ids


def test_ranked_styles_count_any_word_and_fill_the_page(styled: Api) -> None:
    """A word no address holds does not empty a ranked answer; ten sharers fill its page."""
    body = _autocomplete(styled, q="mill zzzqqq", limit=10)
    held = sum(1 for a in world_addresses(N) if "mill" in tokens(a["displayAddress"]))
    if styled.sb.search_style == "every-word":
        assert body["result"] == [] and body["total"] == 0
    else:
        assert held >= 10 and len(body["result"]) == 10 and body["total"] >= held


def test_ranked_answers_put_the_address_holding_most_words_first() -> None:
    with Sandbox(n_properties=N, realism="real", suggest_per_minute=10_000, now=NOON,
                 search_style="ranked") as sb:  # fmt: skip
        api = Api(sb)
        address = world_addresses(N)[7]
        number, postcode = address["streetNumber"], address["postcodeNoSpace"]
        found = _suggest(api, f"{number} {postcode} zzzqqq")
        assert len(found) == 10
        assert found[0]["postcode"] == address["postcode"]
        assert found[0]["displayAddress"].split(",")[0].split()[0] == number or address.get(
            "subBuilding"
        )
        api.session.close()


def test_fuzzy_finds_a_transposed_or_dropped_letter_and_every_word_does_not() -> None:
    index = next(i for i, a in enumerate(world_addresses(N))
                 if a["streetName"].startswith("Victoria ") and a["streetNumber"])  # fmt: skip
    address = world_addresses(N)[index]
    kind = address["streetName"].split()[1]
    for style in ("fuzzy", "every-word"):
        with Sandbox(n_properties=N, realism="real", suggest_per_minute=10_000, now=NOON,
                     search_style=style) as sb:  # fmt: skip
            api = Api(sb)
            for typed in ("vitcoria", "vitoria"):
                query = f"{address['streetNumber']} {typed} {kind} {address['town']}"
                found = [s["locationId"] for s in _suggest(api, query)]
                if style == "fuzzy":
                    assert f"L{index:08d}" in found, (query, found)
                else:
                    assert found == [], (query, found)
            api.session.close()


def test_display_only_answers_carry_the_id_and_the_text_without_postcode(styled: Api) -> None:
    address = world_addresses(N)[50]
    for found in (_suggest(styled, address["displayAddress"]),
                  _autocomplete(styled, q=address["displayAddress"])["result"]):  # fmt: skip
        if styled.sb.search_style == "display-only":
            assert all(set(s) == {"locationId", "displayAddress"} for s in found)
            assert found[0]["displayAddress"] == address["displayAddress"].rsplit(", ", 1)[0]
        else:
            assert {"locationId", "displayAddress", "postcode", "town"} <= set(found[0])


def test_an_unknown_style_is_refused_when_served() -> None:
    with pytest.raises(ValueError, match="search_style must be one of every-word, ranked"):
        Sandbox(n_properties=10, search_style="magic")
