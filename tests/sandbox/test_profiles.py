"""The sandbox's ``vepler`` profile: Vepler's documented shapes over the same synthetic world."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from propertykit import sandbox
from propertykit.sandbox import Sandbox
from tests.sandbox.conftest import Api

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def vepler() -> Iterator[Api]:
    with sandbox.serve(profile="vepler") as sb:
        api = Api(sb)
        yield api
        api.session.close()


def test_prices_are_served_in_pence_and_price_per_sq_ft_in_pounds(vepler: Api, sandbox: Sandbox):
    ids = ",".join(vepler.sb.location_ids[:30])
    pence = vepler.get(f"/v1/property/{ids}").json()["result"]
    pounds = [sandbox.record(i) for i in range(30)]
    for served, plain in zip(pence, pounds, strict=True):
        for name in ("estimatedSaleValue", "estimatedRentValue"):
            assert served["pricing"][name] == plain["pricing"][name] * 100
        assert served["pricing"]["pricePerSqFt"] == plain["pricing"]["pricePerSqFt"]
        assert served["councilTax"] == plain["councilTax"]
        for sale, plain_sale in zip(
            served.get("saleHistory") or [], plain.get("saleHistory") or [], strict=True
        ):
            assert sale["price"] == plain_sale["price"] * 100


def test_the_spec_profile_is_unchanged(sandbox: Sandbox):
    assert sandbox.profile == "spec"
    assert sandbox.record(0) == sandbox_record_in_pounds(0)


def sandbox_record_in_pounds(index: int) -> dict[str, object]:
    return sandbox.generate_record(index)


def test_health_has_vepler_shape_and_follows_set_health(vepler: Api):
    body = vepler.get("/v1/property/health").json()
    assert set(body) == {"status", "service", "timestamp", "version"}
    assert body["status"] == "healthy" and body["timestamp"].endswith("Z")
    vepler.sb.set_health("degraded")
    assert vepler.get("/v1/property/health").json()["status"] == "degraded"
    with pytest.raises(ValueError):
        vepler.sb.set_health("poorly")


def test_errors_are_upper_case_with_request_id_details_and_timestamp(vepler: Api):
    first = vepler.get("/v1/property/L00000001", key="vpr_live_nope").json()
    second = vepler.get("/v1/property/sources/nope").json()
    assert "success" not in first
    assert first["error"]["code"] == "UNAUTHORIZED"
    assert second["error"]["code"] == "INVALID_SOURCE_ID"
    assert first["error"]["request_id"] != second["error"]["request_id"]
    assert first["error"]["details"] == {"status": 401}
    assert first["error"]["timestamp"].endswith("Z")


def test_a_429_carries_x_ratelimit_headers_instead_of_retry_after(vepler: Api):
    vepler.sb.set_suggest_limit(1)
    assert vepler.get("/v1/property/suggest", params={"q": "Mill"}).status_code == 200
    limited = vepler.get("/v1/property/suggest", params={"q": "Mill"})
    assert limited.status_code == 429
    assert "Retry-After" not in limited.headers
    reset = int(limited.headers["X-RateLimit-Reset"])
    now = vepler.sb.now().timestamp()
    assert now < reset <= now + 61
    assert limited.headers["X-RateLimit-Remaining"] == "0"


def test_the_query_answers_the_total_limit_offset_envelope_25_by_default(vepler: Api):
    body = vepler.post(
        "/v1/property/query", json={"area": [{"type": "outcode", "value": "DH1"}]}
    ).json()
    assert set(body) == {"success", "result", "total", "limit", "offset"}
    assert (len(body["result"]), body["limit"], body["offset"]) == (25, 25, 0)
    assert body["total"] > 100


def test_sale_status_uses_vepler_words(vepler: Api):
    ids = ",".join(vepler.sb.location_ids[:100])
    statuses = {
        r["marketStatus"]["forSale"] for r in vepler.get(f"/v1/property/{ids}").json()["result"]
    }
    assert statuses <= {"live", "sstc", "unavailable"} and "sstc" in statuses


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="vepler"):
        sandbox.Sandbox(profile="zoopla")


def test_the_cli_serves_the_vepler_profile(new_process):
    process = new_process.start(
        "-m", "propertykit", "sandbox", "--port", "0", "--profile", "vepler"
    )
    try:
        assert process.stdout is not None
        url = key = profile = ""
        for line in process.stdout:
            if line.startswith("Sandbox of the property-data service at "):
                url = line.rsplit(" ", 1)[1].strip()
            if line.startswith("Profile: "):
                profile = line.split(": ", 1)[1].strip()
            if line.startswith("API key: "):
                key = line.split(": ", 1)[1].strip()
                break
        assert profile == "vepler"
        body = requests.get(f"{url}/v1/property/health", headers={"x-api-key": key}, timeout=10)
        assert body.json()["status"] == "healthy"
    finally:
        process.terminate()
        process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
