"""The control API: clock, id lists, settings validation, start/stop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests

from propertykit import sandbox
from propertykit.sandbox import _data as data
from propertykit.sandbox import _ids as sandbox_ids

from .conftest import NOON, Api


def test_clock_can_be_set_advanced_and_read(api: Api) -> None:
    api.sb.set_now(NOON)
    api.sb.advance(90)
    assert api.sb.now() == NOON + timedelta(seconds=90)
    assert api.get("/v1/property/health").json()["time"] == "2025-06-02T12:01:30Z"


def test_clock_follows_a_callable() -> None:
    moments = iter([NOON, NOON + timedelta(hours=1)])
    with sandbox.serve(n_properties=10, now=lambda: next(moments)) as sb:
        assert sb.now() == NOON
        assert sb.now() == NOON + timedelta(hours=1)


def test_clock_refuses_naive_datetimes(api: Api) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        api.sb.set_now(datetime(2025, 1, 1))


def test_wall_clock_is_the_default(api: Api) -> None:
    assert abs(api.sb.now() - datetime.now(UTC)) < timedelta(minutes=5)


def test_id_lists_are_in_index_order(shared_api: Api) -> None:
    sb = shared_api.sb
    assert len(sb.location_ids) == len(sb.source_ids) == len(sb.title_numbers) == 5000
    assert sb.location_ids[9] == sandbox_ids.location_id(9)
    assert sandbox_ids.index_from_source_id(sb.source_ids[9]) == 9
    assert sandbox_ids.index_from_title_number(sb.title_numbers[9], sb.seed) == 9
    assert sb.source_ids[9] in sb.source_ids_for(9)


def test_only_the_first_n_properties_exist() -> None:
    with sandbox.serve(n_properties=10) as sb:
        body = requests.get(
            f"{sb.url}/v1/property/L00000009,L00000010",
            headers={"x-api-key": sb.api_key},
            timeout=10,
        ).json()
        assert [r["locationId"] for r in body["result"]] == ["L00000009"]
        title_11 = sandbox_ids.title_number(11, sb.seed)
        answer = requests.post(
            f"{sb.url}/v1/title-deeds/{title_11}/purchase",
            headers={"x-api-key": sb.api_key},
            timeout=10,
        )
        assert answer.status_code == 404


def test_seed_selects_another_world() -> None:
    with sandbox.serve(n_properties=5, seed=9) as sb:
        body = requests.get(
            f"{sb.url}/v1/property/L00000001", headers={"x-api-key": sb.api_key}, timeout=10
        ).json()
    assert body["result"] == [data.generate_record(1, seed=9)]


@pytest.mark.parametrize(
    "setting", ["set_latency", "set_delivery_delay", "set_daily_cap", "set_suggest_limit"]
)
def test_negative_settings_are_refused(api: Api, setting: str) -> None:
    with pytest.raises(ValueError):
        getattr(api.sb, setting)(-1)


def test_stopped_sandbox_refuses_connections() -> None:
    with sandbox.serve(n_properties=5) as sb:
        url = sb.url
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/v1/property/health", timeout=5)
    with pytest.raises(RuntimeError):
        _ = sb.url
