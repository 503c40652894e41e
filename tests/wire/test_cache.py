"""The on-disk cache: only complete 200 GETs of property data; hits are free; info and clear."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from requests_cache.backends.sqlite import SQLiteCache

from propertykit.cli import _dispatch as cli
from propertykit.errors import NetworkError, ServerError


def property_requests(sb):
    return [r for r in sb.requests if r.path.startswith("/v1/property/L")]


def test_a_repeated_lookup_is_served_from_the_cache_and_costs_nothing(
    profiled_sandbox, make_client
):
    sb = profiled_sandbox
    client = make_client(sb)
    first = client.property_records(sb.location_ids[:5])
    charged = sb.credits_charged
    again = client.property_records(sb.location_ids[:5])
    assert again == first
    assert len(property_requests(sb)) == 1
    assert sb.credits_charged == charged == 5
    assert (client.usage.requests_sent, client.usage.cache_hits) == (1, 1)


def test_a_new_client_on_the_same_cache_file_pays_nothing(profiled_sandbox, make_client):
    sb = profiled_sandbox
    with make_client(sb) as first:
        records = first.source_records(sb.source_ids[:12], page_size=5)
    sb.reset_log()
    charged = sb.credits_charged
    second = make_client(sb)
    assert second.source_records(sb.source_ids[:12], page_size=5) == records
    assert sb.requests == []
    assert sb.credits_charged == charged
    assert second.usage.cache_hits == 3


def test_health_is_never_cached(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    client.health()
    client.health()
    assert len([r for r in sb.requests if r.path == "/v1/property/health"]) == 2
    assert client.cache_info()["entries"] == 0


def test_an_error_answer_is_never_cached(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, max_retries=0)
    sb.inject_fault("error", status=503, count=1)
    with pytest.raises(ServerError):
        client.property_records(sb.location_ids[:2])
    assert client.cache_info()["entries"] == 0
    assert len(client.property_records(sb.location_ids[:2])) == 2
    assert len(property_requests(sb)) == 2


def test_a_truncated_body_is_never_cached(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, max_retries=0)
    sb.inject_fault("truncate", count=1)
    with pytest.raises(NetworkError) as caught:
        client.property_records(sb.location_ids[:3])
    assert caught.value.kind == "truncated"
    assert client.cache_info()["entries"] == 0
    complete = client.property_records(sb.location_ids[:3])
    assert [r["locationId"] for r in complete] == sb.location_ids[:3]
    assert client.property_records(sb.location_ids[:3]) == complete  # now from the cache
    assert len(property_requests(sb)) == 2


def test_a_truncated_body_is_retried_and_the_complete_one_cached(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    sb.inject_fault("truncate", count=1)
    records = client.property_records(sb.location_ids[:3])
    assert len(records) == 3
    assert client.usage.retries == 1
    assert client.cache_info()["entries"] == 1


def test_property_data_expires_after_seven_days_by_default(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    before = datetime.now(UTC)
    client.property_records(sb.location_ids[:1])
    (entry,) = client._transport.session.cache.responses.values()
    assert before + timedelta(days=7) <= entry.expires <= datetime.now(UTC) + timedelta(days=7)


def test_expire_after_zero_keeps_nothing(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, expire_after=0)
    client.property_records(sb.location_ids[:1])
    client.property_records(sb.location_ids[:1])
    assert len(property_requests(sb)) == 2


def test_cache_false_sends_every_time(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, cache=False)
    client.property_records(sb.location_ids[:1])
    client.property_records(sb.location_ids[:1])
    assert len(property_requests(sb)) == 2
    assert client.cache_info()["entries"] == 0
    assert "cache='off'" in repr(client)


def test_a_cache_backend_object_is_used_and_left_open(profiled_sandbox, make_client, tmp_path):
    sb = profiled_sandbox
    backend = SQLiteCache(tmp_path / "team.sqlite")
    with make_client(sb, cache=backend) as client:
        client.property_records(sb.location_ids[:2])
    assert len(backend.responses) == 1  # still usable after the client closed
    backend.close()


def test_a_folder_path_holds_http_cache_sqlite(profiled_sandbox, make_client, tmp_path):
    sb = profiled_sandbox
    folder = tmp_path / "folder"
    folder.mkdir()
    client = make_client(sb, cache=str(folder))
    client.property_records(sb.location_ids[:1])
    assert client.cache_info()["path"] == str(folder / "http_cache.sqlite")


def test_cache_info_and_clear_cache(profiled_sandbox, make_client, cache_file):
    sb = profiled_sandbox
    client = make_client(sb)
    client.property_records(sb.location_ids[:1])
    client.property_records(sb.location_ids[1:2])
    info = client.cache_info()
    assert info["entries"] == 2
    assert info["path"] == str(cache_file)
    assert info["size_bytes"] > 0
    assert info["oldest"] <= info["newest"]
    client.clear_cache()
    assert client.cache_info()["entries"] == 0
    client.property_records(sb.location_ids[:1])
    assert len(property_requests(sb)) == 3


def test_cli_cache_info_and_clear_read_the_cache_dir(
    profiled_sandbox, make_client, tmp_path, monkeypatch, capsys
):
    sb = profiled_sandbox
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cli-cache"))
    with make_client(sb, cache=True) as client:
        client.property_records(sb.location_ids[:3])
        assert client.cache_info()["path"] == str(tmp_path / "cli-cache" / "http_cache.sqlite")
    assert cli.main(["cache", "info"]) == 0
    shown = capsys.readouterr().out
    assert "entries: 1" in shown
    assert str(tmp_path / "cli-cache") in shown
    assert cli.main(["cache", "clear"]) == 0
    assert "Removed 1 cached answer" in capsys.readouterr().out
    assert cli.main(["cache", "info"]) == 0
    assert "entries: 0" in capsys.readouterr().out


def test_cli_cache_info_and_clear_say_where_the_street_tiles_are_kept(
    tmp_path, monkeypatch, capsys
):
    from propertykit.wire import fetch_tile
    from tests.views.tile_server import TileServer

    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PROPERTYKIT_OFFLINE", raising=False)
    assert cli.main(["cache", "info"]) == 0
    assert "street tiles" not in capsys.readouterr().out  # none fetched: nothing to say
    with TileServer() as server:
        for x in (0, 1):
            fetch_tile(server.template.format(z=1, x=x, y=0))
    assert cli.main(["cache", "info"]) == 0
    shown = capsys.readouterr().out
    assert "street tiles: 2 tiles" in shown and str(tmp_path / "tiles.sqlite") in shown
    assert cli.main(["cache", "clear"]) == 0
    assert "street tiles: 2 tiles" in capsys.readouterr().out  # kept, and said to be
