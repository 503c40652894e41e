"""``client.appraise(ids)`` against the real-shaped sandbox over real HTTP: each home's row is its
row valued alone, a book is no dearer than its homes one by one, the plan bounds what is paid, the
same book again sends nothing, an interrupted book resumes paying only for the rest, and bad
input is refused with nothing sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pandas as pd
import pytest

import propertykit as pk
from propertykit.client import Client
from propertykit.errors import ApiError, InvalidInput
from propertykit.frames import VALUATION_COLUMNS
from propertykit.sandbox import Sandbox

#: Valuing a home fits an index per quarter: a few seconds each, bounded.
pytestmark = pytest.mark.timeout(240)

#: Homes of the real-shaped world (seed 0): thin ones that borrow their outcode (L00000001 and
#: L00000004 share EH6), one without a floor area, and an id with no record.
HOMES = ["L00000001", "L00000005", "L00000004"]
NO_FLOOR_AREA = "L00000023"
NO_RECORD = "L09999999"
DATES = ["2025-06-01", "2024-03-15", "2025-01-01", "2025-06-01", "2025-06-01"]


@pytest.fixture
def real_world() -> Iterator[Sandbox]:
    """A new real-shaped sandbox (5,000 homes, seed 0) for one test."""
    with pk.sandbox.serve(realism="real") as sb:
        yield sb


def _billable(sb: Sandbox) -> int:
    return sum(1 for r in sb.requests if r.status == 200 and "/suggest" not in r.path)


def test_each_row_equals_the_home_valued_alone_and_the_book_is_no_dearer(
    real_world: Sandbox, make_client: Callable[..., Client]
) -> None:
    ids = [*HOMES, NO_FLOOR_AREA, NO_RECORD]
    book = make_client(real_world).appraise(ids, as_of=DATES)
    book_credits, book_requests = real_world.credits_charged, _billable(real_world)
    values = book.values
    assert list(values["id"]) == ids and list(values.columns[1:-2]) == list(VALUATION_COLUMNS)
    assert values["wider"].iloc[0].startswith("outcode EH6 (")  # thin: it borrowed its outcode
    assert list(values["why"].iloc[3:]) == ["no floor area", "no record"]
    assert values["thin"].iloc[3:].all() and values["estimate"].iloc[3:].isna().all()

    alone = make_client(real_world, cache=False)  # one by one, nothing shared
    for position, (given, day) in enumerate(zip(ids, DATES, strict=True)):
        df = alone.neighbourhood(given, radius_m=2000.0)
        said = df.attrs["neighbourhood"]
        assert said["wider"] == (None if pd.isna(w := values["wider"].iloc[position]) else w)
        if said["stopped"] is not None:
            assert said["stopped"] == values["why"].iloc[position]
            continue
        # a neighbourhood's comparables are searched within the radius it was fetched from
        expected = df.pk.valuation([said["propertyId"]], as_of=day)
        row = values.iloc[[position]][list(VALUATION_COLUMNS)].reset_index(drop=True)
        pd.testing.assert_frame_equal(row, expected, check_dtype=False)
        schedule = book.schedule(position)
        assert schedule.equals(df.pk.comparables(said["propertyId"], as_of=day))
    one_by_one = real_world.credits_charged - book_credits
    assert book_credits <= one_by_one and book_requests <= _billable(real_world) - book_requests
    with pytest.raises(InvalidInput, match="L09999999 was not valued: no record"):
        book.schedule(4)


def test_the_plan_bounds_the_cost_and_the_same_book_again_sends_nothing(
    real_world: Sandbox, make_client: Callable[..., Client]
) -> None:
    client = make_client(real_world)
    ids = [HOMES[0], NO_RECORD]
    plan = client.appraise(ids, dry_run=True)
    assert real_world.requests == []  # a plan sends nothing
    assert plan.billable >= 1 and plan.credits is not None and not plan.exact
    book = client.appraise(ids, as_of="2025-06-01")
    assert real_world.credits_charged <= plan.credits and _billable(real_world) <= plan.billable
    sent = len(real_world.requests)

    again = client.appraise(ids, dry_run=True)
    assert (again.billable, again.credits, again.exact) == (0, 0, True)
    second = client.appraise(ids, as_of="2025-06-01")
    assert len(real_world.requests) == sent  # every answer from the cache
    pd.testing.assert_frame_equal(second.values, book.values)


def test_an_interrupted_book_resumes_paying_only_for_the_rest(
    make_client: Callable[..., Client],
) -> None:
    ids = HOMES[:2]
    with pk.sandbox.serve(realism="real") as reference:
        whole = make_client(reference, cache=False).appraise(ids, as_of="2025-06-01")
        uninterrupted = reference.credits_charged
    with pk.sandbox.serve(realism="real") as sb:
        # the homes' records arrive; then a burst of 503s outlasts the retries of a query
        sb.inject_fault("error", count=4, status=503, path_contains="/query")
        with pytest.raises(ApiError):
            make_client(sb, max_retries=3).appraise(ids, as_of="2025-06-01")
        paid_before = sb.credits_charged
        assert 0 < paid_before < uninterrupted
        resumed = make_client(sb).appraise(ids, as_of="2025-06-01")  # the same cache
        assert sb.credits_charged == uninterrupted  # the rest, and nothing twice
    pd.testing.assert_frame_equal(resumed.values, whole.values)


@pytest.mark.parametrize(
    ("ids", "options", "said"),
    [
        (["L00000001", "a,b"], {}, "id 2 of the book, 'a,b', is not one id"),
        (["L00000001", 3], {}, "id 2 of the book is int"),
        ([], {}, "ids is empty"),
        (["L00000001"], {"as_of": "2999-01-01"}, "after today"),
        (["L00000001"], {"as_of": ["2025-01-01", "2025-02-01"]}, "2 dates for 1 ids"),
        (["L00000001"], {"radius_m": 0}, "above 0 and at most 8,000"),
        (["L00000001"], {"radius_m": "far"}, "radius_m must be a number"),
        (["L00000001"], {"search": "near"}, "search must be a ValuationSearch"),
    ],
)
def test_bad_input_is_one_line_and_sends_nothing(
    fresh_sandbox: Sandbox,
    make_client: Callable[..., Client],
    ids: list[object],
    options: dict[str, object],
    said: str,
) -> None:
    client = make_client(fresh_sandbox)
    for dry_run in (False, True):
        with pytest.raises(InvalidInput, match=said) as raised:
            client.appraise(ids, dry_run=dry_run, **options)  # type: ignore[call-overload]
        assert "\n" not in str(raised.value)
    assert fresh_sandbox.requests == []


def test_a_plan_without_a_cost_rule_says_credits_are_unknown(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    unknown = pk.Endpoints(credits_per_record=None, least_credits_per_request=None)
    plan = make_client(fresh_sandbox, endpoints=unknown).appraise(["L00000001"], dry_run=True)
    assert plan.credits is None and plan.billable >= 2
    assert "credits unknown" in repr(plan) and fresh_sandbox.requests == []


def test_a_neighbourhood_borrows_only_when_too_few_to_fit() -> None:
    from propertykit.client._neighbourhood import too_few_to_fit
    from propertykit.sandbox import generate_records

    many = pk.frame(generate_records(3000, realism="real"))
    assert too_few_to_fit(many, "flat") is None  # enough pairs and flats: nothing borrowed
    few = many.head(3)
    assert too_few_to_fit(few, "flat").endswith("repeat-sale pairs (an index needs 30)")
    assert too_few_to_fit(many, "castle") == "0 sales of its type (a size elasticity needs 30)"
