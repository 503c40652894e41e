"""``pk.Client(profile="vepler")``: every name from Vepler's public documentation in one place."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import propertykit as pk
from propertykit.config import ENV_API_KEY, ENV_BASE_URL, ENV_PROFILE, VEPLER_BASE_URL

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)

REAL_LOOKING_KEY = "vpr_live_" + "12ab" * 8


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in (ENV_API_KEY, ENV_BASE_URL, ENV_PROFILE, "VEPLER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_neutral_default_stays_the_specs():
    names = pk.Endpoints()
    assert (names.profile, names.money_unit, names.base_url, names.key_env) == (
        "spec",
        None,
        None,
        (),
    )


def test_vepler_endpoints_hold_every_documented_name():
    names = pk.Endpoints.vepler()
    assert names.profile == "vepler"
    assert names.base_url == "https://api.vepler.com"
    assert (names.limit_param, names.offset_param, names.attributes_param) == (
        "limit",
        "offset",
        "attributes",
    )
    assert names.properties_path == "/v1/property/{locationIds}"
    assert names.sources_path == "/v1/property/sources/{sourceIds}"
    assert names.query_path == "/v1/property/query"
    assert names.health_path == "/v1/property/health"
    assert names.money_unit == "minor"
    assert names.key_env == ("VEPLER_API_KEY",)
    # What the public material does not show keeps the spec's defaults.
    spec = pk.Endpoints()
    assert (names.purchase_path, names.status_path, names.suggest_path) == (
        spec.purchase_path,
        spec.status_path,
        spec.suggest_path,
    )


def test_vepler_endpoints_take_changes():
    names = pk.Endpoints.vepler(purchase_path="/v1/deeds/{titleNumber}/buy", batch_size=10)
    assert names.purchase_path == "/v1/deeds/{titleNumber}/buy" and names.batch_size == 10
    assert names.money_unit == "minor"


def test_a_real_key_in_vepler_api_key_is_all_a_user_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("VEPLER_API_KEY", REAL_LOOKING_KEY)
    with pk.Client(profile="vepler", cache=tmp_path / "c.sqlite") as client:
        assert client.base_url == VEPLER_BASE_URL
        assert client.endpoints == pk.Endpoints.vepler()
        assert REAL_LOOKING_KEY not in repr(client)
        assert "profile='vepler'" in repr(client)


def test_the_profile_can_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_PROFILE, "vepler")
    monkeypatch.setenv("VEPLER_API_KEY", REAL_LOOKING_KEY)
    with pk.Client(cache=False) as client:
        assert client.endpoints.profile == "vepler"
        assert client.base_url == VEPLER_BASE_URL


def test_propertykit_api_key_wins_over_vepler_api_key(monkeypatch, sandbox, tmp_path):
    monkeypatch.setenv("VEPLER_API_KEY", "vpr_live_wrong")
    monkeypatch.setenv(ENV_API_KEY, sandbox.api_key)
    with pk.Client(base_url=sandbox.url, profile="vepler", cache=False) as client:
        assert client.health()["status"] == "ok"  # the spec sandbox answered: the right key


def test_vepler_api_key_is_not_read_without_the_profile(monkeypatch):
    monkeypatch.setenv("VEPLER_API_KEY", REAL_LOOKING_KEY)
    with pytest.raises(pk.ConfigError, match="PROPERTYKIT_API_KEY"):
        pk.Client(base_url="http://127.0.0.1:9", cache=False)


def test_without_a_key_the_error_names_both_variables():
    with pytest.raises(pk.ConfigError, match="PROPERTYKIT_API_KEY or VEPLER_API_KEY"):
        pk.Client(profile="vepler", cache=False)


@pytest.mark.parametrize("profile", ["VEPLER", " vepler ", "spec"])
def test_profile_names_are_read_loosely(profile):
    with pk.Client("k", "http://127.0.0.1:9", profile=profile, cache=False) as client:
        assert client.endpoints.profile == profile.strip().lower()


def test_an_unknown_profile_is_a_config_error(monkeypatch):
    with pytest.raises(pk.ConfigError, match="vepler"):
        pk.Client("k", "http://127.0.0.1:9", profile="zoopla", cache=False)
    monkeypatch.setenv(ENV_PROFILE, "nope")
    with pytest.raises(pk.ConfigError, match="nope"):
        pk.Client("k", "http://127.0.0.1:9", cache=False)


def test_a_profile_that_disagrees_with_endpoints_is_refused():
    with pytest.raises(pk.ConfigError, match="disagrees"):
        pk.Client("k", "http://127.0.0.1:9", profile="spec", endpoints=pk.Endpoints.vepler())
    with pk.Client(
        "k", "http://127.0.0.1:9", profile="vepler", endpoints=pk.Endpoints.vepler(), cache=False
    ) as client:
        assert client.endpoints.money_unit == "minor"


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/v1/v1", "/v1/v1/"])
@pytest.mark.parametrize("profile", ["spec", "vepler"])
def test_both_spellings_of_the_documented_base_reach_the_same_paths(
    fresh_sandbox, make_client, suffix, profile
):
    sb = fresh_sandbox
    client = make_client(sb, base_url=sb.url + suffix, profile=profile, cache=False)
    assert client.base_url == sb.url
    assert len(client.property_records(sb.location_ids[:2])) == 2
    assert [r.path for r in sb.requests] == [
        f"/v1/property/{sb.location_ids[0]},{sb.location_ids[1]}"
    ]


def test_prices_are_recorded_in_pence_and_never_rescaled(make_client):
    with pk.sandbox.serve(profile="vepler") as vepler, pk.sandbox.serve() as spec:
        pence = make_client(vepler, cache=False).properties(vepler.location_ids[:40])
        pounds = make_client(spec, cache=False).properties(spec.location_ids[:40])
    assert pence.attrs["money_unit"] == "minor" and not pence.attrs["money_unit_assumed"]
    for column in ("pricing.estimatedSaleValue", "pricing.estimatedRentValue"):
        pd.testing.assert_series_equal(pence[column], pounds[column] * 100)
    pd.testing.assert_series_equal(pence["pricing.pricePerSqFt"], pounds["pricing.pricePerSqFt"])
    converted = pence.pk.in_pounds()
    for column in ("pricing.estimatedSaleValue", "pricing.currentSalePrice", "pricePerSqFt"):
        column = column if column.startswith("pricing") else "pricing." + column
        pd.testing.assert_series_equal(converted[column], pounds[column])
    pd.testing.assert_series_equal(
        converted.pk.sales()["price"], pounds.pk.sales()["price"], check_names=False
    )
    assert (
        pence.loc[0, "pricing.estimatedSaleValue"]
        == pounds.loc[0, "pricing.estimatedSaleValue"] * 100
    )


def test_no_pence_warning_under_the_vepler_profile(make_client):
    with pk.sandbox.serve(profile="vepler") as sb:
        client = make_client(sb, cache=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error", pk.MinorUnitsWarning)
            client.properties(sb.location_ids[:50])


def test_sale_status_in_vepler_words(make_client):
    with pk.sandbox.serve(profile="vepler") as sb:
        df = make_client(sb, cache=False).properties(sb.location_ids[:500])
    assert set(df["marketStatus.forSale"].dropna()) == {"live", "sstc", "unavailable"}


@pytest.mark.parametrize("status", ["healthy", "degraded", "unhealthy"])
def test_health_follows_the_services_status(make_client, status):
    with pk.sandbox.serve(profile="vepler") as sb:
        sb.set_health(status)
        client = make_client(sb)
        if status == "unhealthy":
            with pytest.raises(pk.ServiceUnhealthy, match="unhealthy"):
                client.health()
        elif status == "degraded":
            with pytest.warns(pk.errors.ServiceDegradedWarning) as caught:
                assert client.health()["status"] == "degraded"
            assert {w.filename for w in caught} == {__file__}  # the user's line
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                body = client.health()
            assert set(body) == {"status", "service", "timestamp", "version"}
