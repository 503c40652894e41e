"""Faults: 5xx bursts in every body shape, dropped connections, slow and truncated answers, forced
purchase outcomes."""

from __future__ import annotations

import pytest
import requests

from .conftest import Api


@pytest.mark.parametrize(
    ("shape", "check"),
    [
        ("object", lambda r: r.json()["error"]["code"] == "service_unavailable"),
        ("string", lambda r: isinstance(r.json()["error"], str)),
        ("text", lambda r: r.text == "Service Unavailable"),
        (
            "html",
            lambda r: r.text.startswith("<html>") and "text/html" in r.headers["Content-Type"],
        ),
        ("empty", lambda r: r.content == b""),
    ],
)
def test_error_fault_answers_5xx_in_the_chosen_body_shape(
    api: Api, shape: str, check: object
) -> None:
    api.sb.inject_fault("error", body=shape)
    answer = api.get("/v1/property/health")
    assert answer.status_code == 503
    assert check(answer)  # type: ignore[operator]


def test_error_fault_lasts_count_requests_then_service_recovers(api: Api) -> None:
    api.sb.inject_fault("error", count=3, status=502)
    statuses = [api.get("/v1/property/health").status_code for _ in range(4)]
    assert statuses == [502, 502, 502, 200]


def test_fault_only_hits_paths_containing_the_text(api: Api) -> None:
    api.sb.inject_fault("error", path_contains="/sources/")
    assert api.get("/v1/property/health").status_code == 200
    assert api.get("/v1/property/sources/" + api.sb.source_ids[0]).status_code == 503
    assert api.get("/v1/property/sources/" + api.sb.source_ids[0]).status_code == 200


def test_reset_fault_drops_the_connection_without_answering(api: Api) -> None:
    api.sb.inject_fault("reset")
    with pytest.raises(requests.ConnectionError):
        api.get("/v1/property/" + api.sb.location_ids[0])
    assert api.sb.requests[-1].status == 0
    assert api.sb.ledger == []
    assert api.get("/v1/property/health").status_code == 200


def test_slow_fault_answers_after_the_delay(api: Api) -> None:
    api.sb.inject_fault("slow", delay=3.0)
    with pytest.raises(requests.Timeout):
        api.get("/v1/property/health", timeout=0.3)
    assert api.get("/v1/property/health").status_code == 200


def test_truncate_fault_sends_less_than_content_length(api: Api) -> None:
    api.sb.inject_fault("truncate")
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        api.get("/v1/property/" + api.sb.location_ids[0])
    assert api.get("/v1/property/" + api.sb.location_ids[0]).json()["success"] is True


def test_reset_after_charge_charges_then_drops_and_the_same_key_replays(api: Api) -> None:
    title = api.sb.title_numbers[0]
    api.sb.inject_fault("reset_after_charge")
    assert api.get("/v1/property/health").status_code == 200  # not a purchase: fault waits
    with pytest.raises(requests.ConnectionError):
        api.buy(title, "lost-answer")
    assert api.sb.credits_charged == 25
    assert api.status(title).json()["result"]["money_state"] == "charged"
    replay = api.buy(title, "lost-answer")
    assert replay.status_code == 200
    assert api.sb.credits_charged == 25


@pytest.mark.parametrize(
    ("money_state", "charged", "credits"),
    [("charged", None, 25), ("not_charged", None, 0), ("unknown", True, 25), ("unknown", False, 0)],
)
def test_forced_purchase_outcome_reports_money_state_and_charges_only_when_charged(
    api: Api, money_state: str, charged: bool | None, credits: int
) -> None:
    title = api.sb.title_numbers[0]
    api.sb.force_purchase_outcome(money_state, status=500, charged=charged)
    answer = api.buy(title, "k")
    assert answer.status_code == 500
    assert answer.json()["money_state"] == money_state
    assert api.sb.credits_charged == credits
    status = api.status(title).json()["result"]
    assert status["money_state"] == ("charged" if credits else "not_charged")
    retry = api.buy(title, "k")  # the same logical purchase
    assert retry.status_code == 200
    assert api.sb.credits_charged == 25


def test_forced_outcome_count_and_status(api: Api) -> None:
    api.sb.force_purchase_outcome("not_charged", status=503, count=2)
    title = api.sb.title_numbers[0]
    assert [api.buy(title, "k").status_code for _ in range(3)] == [503, 503, 200]


def test_clear_faults_drops_pending_faults_and_outcomes(api: Api) -> None:
    api.sb.inject_fault("error", count=5)
    api.sb.force_purchase_outcome("unknown")
    api.sb.clear_faults()
    assert api.get("/v1/property/health").status_code == 200
    assert api.buy(api.sb.title_numbers[0], "k").status_code == 200


@pytest.mark.parametrize(
    "kwargs",
    [{"kind": "explode"}, {"kind": "error", "status": 404}, {"kind": "error", "body": "xml"},
     {"kind": "reset", "count": 0}],
)  # fmt: skip
def test_invalid_fault_is_refused(api: Api, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        api.sb.inject_fault(**kwargs)  # type: ignore[arg-type]


def test_latency_setting_delays_every_answer(api: Api) -> None:
    api.sb.set_latency(3.0)
    with pytest.raises(requests.Timeout):
        api.get("/v1/property/health", timeout=0.3)
    api.sb.set_latency(0.0)
    assert api.get("/v1/property/health").status_code == 200
