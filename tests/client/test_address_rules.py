"""Reading addresses as people type them, and the rules that decide a match without guessing.

Plain values, no server: the spellings issue 46 lists (postcode anywhere, with or without its
space; abbreviations both ways; a shop in front; a transposed letter; case and punctuation) and
the rules (numbers by role, ranges, postcode, a building without its flat).
"""

from __future__ import annotations

import pytest

from propertykit.client._address_match import Candidate, compare, decide
from propertykit.client._address_queries import plan_queries
from propertykit.client._addresses import find_postcode, normalise, read_address


def suggestion(location_id: str, display: str, **fields: str) -> Candidate:
    return Candidate.of({"locationId": location_id, "displayAddress": display, **fields})


WORLD = [
    suggestion("L1", "Flat 6, 72 High Street, Kempston, Bedford, MK40 1NN", county="Bedfordshire"),
    suggestion("L2", "Flat 7, 72 High Street, Kempston, Bedford, MK40 1NN"),
    suggestion("L3", "4 High Street, Kempston, Bedford, MK40 1NN"),
    suggestion("L4", "90 Mill Lane, Kempston, Bedford, MK40 2AB"),
    suggestion("L5", "13-14 Mill Lane, Kempston, Bedford, MK40 2AB"),
    suggestion("L6", "13 Mill Lane, Kempston, Bedford, MK40 2AB"),
    suggestion("L7", "Rose Cottage, Mill Lane, Kempston, Bedford, MK40 2AB"),
    suggestion("L8", "Ivy Cottage, Mill Lane, Kempston, Bedford, MK40 2AB"),
    suggestion("L9", "Unit 2, 8 Station Road, Bedford, MK40 3CD"),
    suggestion("L10", "Flat 72, 6 High Street, Kempston, Bedford, MK40 1NN"),
]


def match(text: str) -> tuple[str, str | None]:
    decision = decide(read_address(text), WORLD)
    return decision.status, decision.location_id


@pytest.mark.parametrize(
    "typed",
    [
        "Flat 6, 72 High St, MK40 1NN",
        "72 high street flat 6 mk401nn",
        "FLAT 6 72 HIGH STREET KEMPSTON BEDFORD MK40 1NN",
        "Flat 6, 72 High St., Bedford, Bedfordshire, MK40 1NN",
        "flat 6, 72 hgih street, mk40 1nn",  # a transposed letter
        "Apartment 6, 72 High Street, Kempston",  # no postcode: the place agrees
        "6, 72 High St, Kempston, Bedford",  # the flat's number without its word
    ],
)
def test_spellings_of_one_flat_all_match_it(typed: str) -> None:
    assert match(typed) == ("matched", "L1")


def test_a_shop_name_in_front_is_ignored() -> None:
    assert match("THE CORNER CAFE 4 HIGH STREET MK40 1NN") == ("matched", "L3")
    assert match("The Corner Cafe, 4 High St, Kempston") == ("matched", "L3")


def test_a_different_house_number_on_the_same_street_is_not_a_match() -> None:
    decision = decide(read_address("92 Mill Lane, MK40 2AB"), WORLD)
    assert decision.status == "unmatched"
    assert decision.location_id is None
    assert decision.reason == "no 92 among the 5 suggested on Mill Lane, MK40 2AB: 13, 13-14, 90"


def test_a_range_matches_only_the_same_range() -> None:
    assert match("13-14 Mill Lane, MK40 2AB") == ("matched", "L5")
    assert match("13 Mill Lane, MK40 2AB") == ("matched", "L6")
    assert match("14 Mill Lane, MK40 2AB")[0] == "unmatched"


def test_flat_and_building_numbers_keep_their_roles() -> None:
    assert match("Flat 72, 6 High Street, MK40 1NN") == ("matched", "L10")
    assert match("Flat 6, 72 High Street, MK40 1NN") == ("matched", "L1")
    assert match("Flat 9, 72 High Street, MK40 1NN")[0] == "unmatched"


def test_a_building_without_its_flat_is_ambiguous_with_the_flats_as_candidates() -> None:
    decision = decide(read_address("72 High Street, MK40 1NN"), WORLD)
    assert decision.status == "ambiguous"
    assert set(decision.candidates) == {"L1", "L2"}
    assert "not its flat or unit (2 flats or units in it)" in (decision.reason or "")


def test_the_postcode_must_agree_when_given() -> None:
    assert match("Flat 6, 72 High Street, MK40 9ZZ")[0] == "unmatched"


def test_another_town_is_not_a_match() -> None:
    assert match("Flat 6, 72 High Street, Luton")[0] == "unmatched"


def test_houses_known_by_name_match_by_name() -> None:
    assert match("Rose Cottage, Mill Lane, MK40 2AB") == ("matched", "L7")
    assert match("Ivy Cottage, Mill Ln, Kempston") == ("matched", "L8")
    assert match("Oak Cottage, Mill Lane, MK40 2AB")[0] == "unmatched"


def test_units_match_like_flats() -> None:
    assert match("Unit 2, 8 Station Rd, Bedford MK403CD") == ("matched", "L9")
    assert match("Unit 3, 8 Station Rd, Bedford MK403CD")[0] == "unmatched"


def test_no_suggestions_is_unmatched_with_a_reason() -> None:
    decision = decide(read_address("1 Nowhere Road"), [])
    assert decision.status == "unmatched"
    assert decision.reason == "the service suggested nothing for this text"
    at_postcode = decide(read_address("34 Park Lane, HU1 3PU"), [])
    assert at_postcode.reason == "the service has no address at HU1 3PU with the number 34"


def test_two_equally_good_addresses_are_ambiguous_never_picked() -> None:
    twins = [
        suggestion("A", "12 Mill Lane, Bedford, MK40 1AA"),
        suggestion("B", "12 Mill Lane, Bedford, MK41 9ZZ"),
    ]
    decision = decide(read_address("12 Mill Lane, Bedford"), twins)
    assert decision.status == "ambiguous"
    assert set(decision.candidates) == {"A", "B"}


def test_postcode_found_anywhere_with_or_without_space() -> None:
    assert find_postcode("mk401nn 72 High St")[0] == "MK40 1NN"
    assert find_postcode("72 High St, MK40 1NN, UK")[0] == "MK40 1NN"
    assert find_postcode("Flat 1, 2 The Street, sw1a1aa")[0] == "SW1A 1AA"
    assert find_postcode("72 High St")[0] is None


def test_abbreviations_are_written_out_both_ways() -> None:
    assert normalise("Rose Gdns") == normalise("rose gardens")
    assert normalise("Park Ave") == normalise("Park Avenue")
    assert normalise("Mill Rd") == normalise("mill road")
    assert normalise("High St") == "high street"
    assert normalise("St Johns Rd") == "saint johns road"


def test_queries_are_at_most_three_and_depend_on_the_text_only() -> None:
    texts = ["Flat 6, 72 High St, MK40 1NN", "72 High St, Kempston", "Rose Cottage, Mill Lane",
             "Rose Cottage MK40 2AB", "The Corner Cafe, 4 High St"]  # fmt: skip
    for text in texts:
        queries = plan_queries(read_address(text))
        assert 1 <= len(queries) <= 3
        assert len(set(queries)) == len(queries)
        assert queries == plan_queries(read_address(text))
    assert plan_queries(read_address("Flat 6, 72 High St, MK40 1NN")) == [
        "6 72 mk401nn",
        "6 72 high street",
        "high street mk401nn",
    ]


def test_comparison_says_what_differs() -> None:
    typed = read_address("Flat 6, 72 High St, MK40 1NN")
    assert compare(typed, WORLD[1]).why == "flat 7, not 6"
    assert compare(typed, WORLD[2]).why == "number 4, not 72"


def test_another_street_of_the_same_kind_is_not_the_street() -> None:
    york = [suggestion("Y", "15 York Gardens, Widcombe, Bath, BA2 6XD")]
    assert decide(read_address("15 Manor Gardens, Widcombe, Bath"), york).status == "unmatched"
    hill = [suggestion("H", "12 Hill Lane, Bedford, MK40 1AA")]
    assert decide(read_address("12 Mill Lane, Bedford"), hill).status == "unmatched"
    mill = [suggestion("M", "12 Mill Lane, Bedford, MK40 1AA")]
    assert decide(read_address("12 Mlil Lane, Bedford"), mill).status == "matched"


def test_st_after_a_street_name_is_street_and_before_a_place_is_saint() -> None:
    assert read_address("57 park st headington oxford ox30ga").street == "park street"
    assert normalise("Mill Rd St Albans") == "mill road saint albans"


def test_the_suggestion_holding_more_of_the_places_typed_wins() -> None:
    two = [
        suggestion("D", "57 Westfield Close, Dalston, London, E8 0LD"),
        suggestion("M", "57 Westfield Close, Mayfair, London, W1J 6UF"),
    ]
    assert match_in("57 Westfield Cl Dalston London", two) == ("matched", "D")
    assert match_in("57 Westfield Close, London", two)[0] == "ambiguous"


def test_a_house_elsewhere_does_not_hide_the_building_typed_without_its_flat() -> None:
    world = [
        suggestion("H", "45 Westfield Close, Bletchley, Milton Keynes, MK3 1AA"),
        suggestion("F1", "Flat 1, Mill House, 45 Westfield Close, Central Milton Keynes, "
                         "Milton Keynes, MK9 2BB"),
        suggestion("F2", "Flat 2, Mill House, 45 Westfield Close, Central Milton Keynes, "
                         "Milton Keynes, MK9 2BB"),
    ]  # fmt: skip
    decision = decide(read_address("mill house, 45 westfield close, central milton keynes"), world)
    assert (decision.status, set(decision.candidates)) == ("ambiguous", {"F1", "F2"})


def match_in(text: str, world: list[Candidate]) -> tuple[str, str | None]:
    decision = decide(read_address(text), world)
    return decision.status, decision.location_id


def test_text_that_places_nothing_or_is_too_long_asks_nothing() -> None:
    assert plan_queries(read_address("Flat")) == []
    assert plan_queries(read_address("The Corner Cafe")) == []
    assert decide(read_address("Flat"), []).reason == (
        "no postcode and no street to find it by: nothing was asked"
    )
    sprawling = " ".join(str(n) for n in range(5000)) + " High Street, Bedford"
    assert plan_queries(read_address(sprawling)) == []
    assert plan_queries(read_address(sprawling + ", MK40 1NN")) == []


# -- issue 52: never match on what the answer cannot show; names as names; full pages --------


def test_a_name_with_a_word_left_out_is_not_the_house() -> None:
    old_barn = suggestion("L1", "The Old Barn, Mill Lane, Kempston, Bedford, MK40 2AB")
    decision = decide(read_address("The Barn, Mill Lane, Bedford"), [old_barn])
    assert decision.status == "unmatched"
    assert "named the old barn" in (decision.reason or "")
    assert decide(read_address("The Old Barn, Mill Lane, Bedford"), [old_barn]).status == "matched"
    assert decide(read_address("Teh Old Barn, Mill Ln, Bedford"), [old_barn]).status == "matched"


def test_a_postcode_the_answer_cannot_show_is_confirmed_only_by_a_town_it_shows() -> None:
    shown = Candidate.of(
        {"locationId": "L1", "displayAddress": "72 High Street, Kempston, Bedford"}
    )
    elsewhere = decide(read_address("72 High Street, Luton, LU1 1AA"), [shown])
    assert elsewhere.status == "unmatched"
    assert elsewhere.reason is not None
    assert "postcode LU1 1AA could not be confirmed" in elsewhere.reason
    assert "luton is not among its places (kempston, bedford)" in elsewhere.reason
    bare = decide(read_address("72 High St, MK40 1NN"), [shown])
    assert bare.status == "unmatched" and "no town was typed" in (bare.reason or "")
    assert decide(read_address("72 High St, Bedford, MK40 1NN"), [shown]).status == "matched"


def test_a_town_the_answer_cannot_show_is_not_a_match() -> None:
    bare = Candidate.of({"locationId": "L1", "displayAddress": "72 High Street"})
    decision = decide(read_address("72 High Street, Bedford"), [bare])
    assert decision.status == "unmatched"
    assert "town bedford could not be confirmed" in (decision.reason or "")


def _page(query: str, displays: list[str]) -> list[Candidate]:
    from propertykit.client._address_match import candidates_of

    answer = [{"locationId": f"L{n}", "displayAddress": d} for n, d in enumerate(displays)]
    return candidates_of(answer, query)


def test_a_full_page_that_reached_weaker_answers_lists_every_address_as_good() -> None:
    weaker = [f"{n} Mill Lane, Kempston, Bedford, MK40 2AB" for n in range(1, 10)]
    page = _page("72 mk402ab", ["72 Mill Lane, Kempston, Bedford, MK40 2AB", *weaker])
    decision = decide(read_address("72 Mill Lane, MK40 2AB"), page)
    assert decision.status == "matched" and decision.location_id == "L0"
    as_good = [f"Flat {n}, 72 Mill Lane, Kempston, Bedford, MK40 2AB" for n in range(1, 10)]
    full = _page("72 mk402ab", ["72 Mill Lane, Kempston, Bedford, MK40 2AB", *as_good])
    undecided = decide(read_address("72 Mill Lane, MK40 2AB"), full[:1])
    assert undecided.status == "ambiguous" and "first 10 answers" in (undecided.reason or "")


def test_a_number_the_street_lacks_lists_the_numbers_it_has() -> None:
    close = [suggestion(f"L{n}", f"{n} Green Close, Moseley, Birmingham, B13 2RS")
             for n in (*range(1, 10), 11)]  # fmt: skip
    decision = decide(read_address("14 Green Close, B13 2RS"), close)
    numbers = "1\N{EN DASH}9, 11"
    assert decision.reason == f"no 14 among the 10 suggested on Green Close, B13 2RS: {numbers}"
