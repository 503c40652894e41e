"""The ledger counts what the service charges: 2xx answers of billable endpoints, no 4xx/5xx.

A budget's place is taken before a billable request is sent and given back when its answer is
not charged, so ``budget=1`` survives a 503 followed by a 200 (a shared budget too). Requests
sent, retried and failed stay counted as what they are. Each test checks the sandbox's own
ledger of charges.
"""

from __future__ import annotations

import pytest

from propertykit.errors import (
    AuthenticationError,
    BudgetExceeded,
    NotFound,
    ServerError,
)

pytestmark = pytest.mark.timeout(120)


def test_a_401_is_sent_but_not_billable(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb, api_key="pk_live_" + "0" * 32)
    with pytest.raises(AuthenticationError):
        client.property_records(sb.location_ids[:3])
    assert (client.usage.requests_sent, client.usage.billable_requests) == (1, 0)
    assert client.usage.errors == 1
    assert "0 billable" in str(client.usage)
    assert sb.credits_charged == 0


def test_a_404_of_a_billable_endpoint_is_not_billable(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb)
    with pytest.raises(NotFound):
        client.buy_title_deed("ZZ999999")  # no such title: nothing bought
    assert client.usage.requests_sent >= 1
    assert client.usage.billable_requests == 0
    assert client.usage.by_endpoint.loc["purchase", "billable_requests"] == 0
    assert sb.credits_charged == 0


def test_500s_are_sent_and_retried_but_not_billable(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb, max_retries=2)
    sb.inject_fault("error", status=500, count=3)
    with pytest.raises(ServerError):
        client.property_records(sb.location_ids[:3])
    usage = client.usage
    assert (usage.requests_sent, usage.retries, usage.errors) == (3, 2, 1)
    assert usage.billable_requests == 0
    assert usage.by_endpoint.loc["properties", "billable_requests"] == 0
    assert sb.credits_charged == 0


@pytest.mark.parametrize("shared", [False, True], ids=["own budget", "shared budget"])
def test_a_budget_of_one_survives_a_503_then_a_200(fresh_sandbox, make_client, shared):
    sb = fresh_sandbox
    named = {"budget_name": "ledger-test"} if shared else {}
    client = make_client(sb, budget=1, max_retries=1, **named)
    sb.inject_fault("error", status=503, count=1)
    records = client.property_records(sb.location_ids[:3])
    assert [r["locationId"] for r in records] == sb.location_ids[:3]
    usage = client.usage
    assert (usage.requests_sent, usage.retries, usage.billable_requests) == (2, 1, 1)
    assert usage.budget_left == 0
    charged = [charge for charge in sb.ledger if charge.endpoint != "health"]
    assert len(charged) == 1  # what the account was charged, the ledger says too
    sent = len(sb.requests)
    with pytest.raises(BudgetExceeded, match="nothing was sent"):
        client.property_records(sb.location_ids[3:6])  # the one place is really spent
    assert len(sb.requests) == sent
    assert client.property_records(sb.location_ids[:3]) == records  # cached: free
