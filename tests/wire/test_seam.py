"""Every real send passes one seam, the adapter mounted on the session; nothing goes around it.

requests-cache answers hits before any adapter is reached, so the adapter sees exactly the
requests that go to the network: it holds them to the budget and counts them. A send that does
not come from the client's own calls is held to the budget too, and requests-cache's
``stale_while_revalidate`` (which sends from a thread of its own, after the call returned) is
refused.
"""

from __future__ import annotations

import pytest

from propertykit.errors import BudgetExceeded, ConfigError
from propertykit.wire._metered import UNSCOPED, MeteredAdapter

pytestmark = pytest.mark.timeout(120)


def test_the_session_sends_through_one_metered_adapter(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb)
    session = client._transport.session
    adapters = {session.get_adapter("http://x"), session.get_adapter("https://x")}
    assert adapters == {session.metered}
    assert isinstance(session.metered, MeteredAdapter)


def test_cache_hits_never_reach_the_adapter(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb)
    client.property_records(sb.location_ids[:120])  # 3 batches
    client.property_records(sb.location_ids[:120])  # 3 hits
    assert client.usage.requests_sent == len(sb.requests) == 3
    assert client.usage.cache_hits == 3


def test_the_session_used_directly_is_still_held_to_the_budget(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb, budget=1)
    session = client._transport.session
    headers = {"x-api-key": sb.api_key}
    assert session.get(f"{sb.url}/v1/property/{sb.location_ids[0]}", headers=headers).ok
    with pytest.raises(BudgetExceeded, match="nothing was sent"):
        session.get(f"{sb.url}/v1/property/{sb.location_ids[1]}", headers=headers)
    assert len(sb.requests) == 1
    assert client.usage.by_endpoint.loc[UNSCOPED, "billable_requests"] == 1


def test_stale_while_revalidate_is_refused(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb)
    client._transport.session.settings.stale_while_revalidate = True
    with pytest.raises(ConfigError, match="stale_while_revalidate"):
        client.property_records(sb.location_ids[:3])
    assert sb.requests == []
