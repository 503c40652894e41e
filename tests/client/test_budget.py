"""budget=N refuses, before sending, the billable request that would pass N; cache hits are free."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from propertykit.errors import BudgetExceeded, ConfigError

if TYPE_CHECKING:
    from propertykit.sandbox import Sandbox


@pytest.fixture
def profiled_sandbox(profile: str) -> Iterator[Sandbox]:
    """A new sandbox of 200 homes for one test, once per profile (enough for three batches;
    ``suggest`` reads every home's address, and 5,000 of them cost a second to draw)."""
    from propertykit.sandbox import serve

    with serve(profile=profile, n_properties=200) as sb:
        yield sb


def lookups(sb):
    return [r for r in sb.requests if r.path.startswith("/v1/property/L")]


def test_the_request_past_the_budget_is_refused_before_sending(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, budget=2)
    with pytest.raises(BudgetExceeded, match="Budget of 2") as caught:
        client.property_records(sb.location_ids[:130])  # three batches
    assert len(lookups(sb)) == 2
    assert len(caught.value.partial.records) == 100
    assert caught.value.partial.remaining_ids == sb.location_ids[100:130]
    assert client.usage.billable_requests == 2
    assert client.usage.budget_left == 0


def test_cache_hits_never_count_against_the_budget(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, budget=1)
    first = client.property_records(sb.location_ids[:2])
    for _ in range(3):
        assert client.property_records(sb.location_ids[:2]) == first
    with pytest.raises(BudgetExceeded):
        client.property_records(sb.location_ids[2:4])
    assert len(lookups(sb)) == 1
    assert client.usage.cache_hits == 3


def test_budget_zero_answers_only_from_the_cache(profiled_sandbox, make_client):
    sb = profiled_sandbox
    with make_client(sb) as warm:
        records = warm.property_records(sb.location_ids[:2])
    sb.reset_log()
    client = make_client(sb, budget=0)
    assert client.property_records(sb.location_ids[:2]) == records
    with pytest.raises(BudgetExceeded):
        client.property_records(sb.location_ids[5:6])
    assert sb.requests == []


def test_free_endpoints_do_not_use_the_budget(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, budget=0)
    client.health()
    client.suggest("Mill")
    assert client.usage.billable_requests == 0
    assert client.usage.requests_sent == 2


def test_which_endpoints_are_billable_is_configurable(profiled_sandbox, make_client):
    import propertykit as pk

    sb = profiled_sandbox
    client = make_client(sb, budget=0, endpoints=pk.Endpoints(billable_endpoints={"suggest"}))
    client.property_records(sb.location_ids[:1])
    with pytest.raises(BudgetExceeded):
        client.suggest("Mill")


@pytest.mark.parametrize("budget", [-1, 1.5, "10", True])
def test_a_nonsense_budget_is_a_config_error(profiled_sandbox, make_client, budget):
    with pytest.raises(ConfigError, match="budget"):
        make_client(profiled_sandbox, budget=budget)
