"""Title-deed purchases: 200/202, Idempotency-Key, money_state, purchase-status."""

from __future__ import annotations

from .conftest import NOON, Api


def test_instant_purchase_is_200_delivered_and_charged(api: Api) -> None:
    title = api.sb.title_numbers[3]
    answer = api.buy(title, "once")
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert (result["titleNumber"], result["status"], result["money_state"]) == (
        title,
        "delivered",
        "charged",
    )
    assert result["creditsCharged"] == 25
    assert result["document"]["titleNumber"] == title
    assert [(c.title_number, c.idempotency_key) for c in api.sb.ledger] == [(title, "once")]


def test_purchase_with_delivery_delay_is_202_then_delivered_on_the_sandbox_clock(api: Api) -> None:
    api.sb.set_now(NOON)
    api.sb.set_delivery_delay(30)
    title = api.sb.title_numbers[0]
    answer = api.buy(title, "slow")
    assert answer.status_code == 202
    assert answer.json()["result"]["status"] == "delivering"
    assert answer.json()["result"]["document"] is None
    assert api.status(title).json()["result"]["status"] == "delivering"
    api.sb.advance(29)
    assert api.status(title).json()["result"]["status"] == "delivering"
    api.sb.advance(1)
    assert api.status(title).json()["result"]["status"] == "delivered"
    assert api.sb.credits_charged == 25


def test_purchase_same_idempotency_key_charges_once(api: Api) -> None:
    title = api.sb.title_numbers[1]
    first = api.buy(title, "same")
    again = api.buy(title, "same")
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["result"]["document"] == first.json()["result"]["document"]
    assert api.sb.credits_charged == 25


def test_replay_reports_the_current_delivery_status(api: Api) -> None:
    api.sb.set_now(NOON)
    api.sb.set_delivery_delay(10)
    title = api.sb.title_numbers[1]
    assert api.buy(title, "k").status_code == 202
    api.sb.advance(10)
    replay = api.buy(title, "k")
    assert replay.status_code == 200
    assert replay.json()["result"]["status"] == "delivered"
    assert api.sb.credits_charged == 25


def test_purchase_with_a_new_key_charges_again(api: Api) -> None:
    title = api.sb.title_numbers[2]
    assert api.buy(title, "first").status_code == 200
    assert api.buy(title, "second").status_code == 200
    assert api.buy(title).status_code == 200  # no key at all
    assert api.sb.credits_charged == 75
    status = api.status(title).json()["result"]
    assert status["creditsCharged"] == 75
    assert [p["idempotencyKey"] for p in status["purchases"]] == ["first", "second", None]


def test_idempotency_key_reused_for_another_title_is_409_not_charged(api: Api) -> None:
    assert api.buy(api.sb.title_numbers[0], "shared").status_code == 200
    answer = api.buy(api.sb.title_numbers[1], "shared")
    assert answer.status_code == 409
    assert answer.json()["money_state"] == "not_charged"
    assert api.sb.credits_charged == 25


def test_unknown_title_is_404_not_charged(api: Api) -> None:
    answer = api.buy("ZZ123456", "k")
    assert answer.status_code == 404
    assert answer.json()["money_state"] == "not_charged"
    assert api.status("ZZ123456").status_code == 404
    assert api.sb.ledger == []


def test_purchase_402_carries_money_state_not_charged(api: Api) -> None:
    api.sb.set_balance(24)
    answer = api.buy(api.sb.title_numbers[0], "poor")
    assert answer.status_code == 402
    assert answer.json()["money_state"] == "not_charged"
    api.sb.add_credit(1)
    assert api.buy(api.sb.title_numbers[0], "poor").status_code == 200


def test_purchase_accepts_a_json_body_and_rejects_invalid_json(api: Api) -> None:
    title = api.sb.title_numbers[0]
    assert api.buy(title, "a", json={"reference": "case 12"}).status_code == 200
    bad = api.buy(title, "b", data=b"{not json", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    assert bad.json()["money_state"] == "not_charged"
    assert api.sb.credits_charged == 25


def test_purchase_status_before_any_purchase_is_not_charged(api: Api) -> None:
    result = api.status(api.sb.title_numbers[5]).json()["result"]
    assert result == {
        "titleNumber": api.sb.title_numbers[5],
        "money_state": "not_charged",
        "status": None,
        "creditsCharged": 0,
        "purchases": [],
    }


def test_purchase_status_never_charges(api: Api) -> None:
    title = api.sb.title_numbers[0]
    api.buy(title, "k")
    for _ in range(3):
        assert api.status(title).json()["result"]["money_state"] == "charged"
    assert api.sb.credits_charged == 25
