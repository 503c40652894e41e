"""Building a client: key and address from arguments or the environment; bad settings refused."""

from __future__ import annotations

import pytest

from propertykit.client import Client
from propertykit.errors import ConfigError


def test_key_and_address_come_from_the_environment(fresh_sandbox, monkeypatch, tmp_path):
    sb = fresh_sandbox
    monkeypatch.setenv("PROPERTYKIT_API_KEY", sb.api_key)
    monkeypatch.setenv("PROPERTYKIT_BASE_URL", sb.url + "/")
    with Client(cache=tmp_path / "c.sqlite", progress=False) as client:
        assert client.base_url == sb.url
        assert client.health()["success"] is True


def test_missing_address_is_a_config_error(monkeypatch):
    monkeypatch.delenv("PROPERTYKIT_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="PROPERTYKIT_BASE_URL"):
        Client("pk_live_x", cache=False)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_url": "127.0.0.1:8000"},
        {"max_retries": -1},
        {"max_wait": -5},
        {"timeout": 0},
        {"cache": 3.5},
    ],
)
def test_settings_that_cannot_work_are_refused(kwargs):
    arguments = {"api_key": "pk_live_x", "base_url": "http://127.0.0.1:9", "cache": False}
    arguments.update(kwargs)
    with pytest.raises(ConfigError):
        Client(**arguments)


def test_progress_bars_show_for_multi_request_work_only_when_asked(
    fresh_sandbox, make_client, capsys
):
    sb = fresh_sandbox
    make_client(sb, progress=True).property_records(sb.location_ids[:120])
    assert "properties" in capsys.readouterr().err
    make_client(sb, progress=False, cache=False).property_records(sb.location_ids[:120])
    assert capsys.readouterr().err == ""
    make_client(sb, progress=None, cache=False).property_records(sb.location_ids[:120])
    assert capsys.readouterr().err == ""  # not a notebook, not a terminal


def test_a_process_that_imported_ipykernel_is_not_taken_for_a_notebook(
    fresh_sandbox, make_client, capsys
):
    import ipykernel.kernelspec  # noqa: F401  (jupyter_client imports it to find the kernel)

    sb = fresh_sandbox
    make_client(sb, progress=None, cache=False).property_records(sb.location_ids[:120])
    assert capsys.readouterr().err == ""  # no kernel runs here, and stderr is no terminal


def test_frames_come_back_from_properties_and_sources(fresh_sandbox, make_client):
    sb = fresh_sandbox
    client = make_client(sb)
    df = client.properties(sb.location_ids[:5])
    assert list(df["locationId"]) == sb.location_ids[:5]
    assert "address.postcode" in df.columns
    assert len(client.sources(sb.source_ids[:4])) == 4
