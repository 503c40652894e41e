"""Each purchase rule, against the sandbox, counting purchase POSTs and ledger charges."""

from __future__ import annotations

import random
import socket
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from propertykit.client import Client, Clock
from propertykit.errors import (
    ApiError,
    BudgetExceeded,
    DailyCapReached,
    InsufficientCredit,
    InvalidInput,
    NetworkError,
    NotCached,
    PermissionDenied,
    PurchaseUncertain,
    ServerError,
)
from propertykit.sandbox import Sandbox

from .conftest import BuyerFactory, charges, purchase_posts, status_gets

#: A fixed moment far from midnight UTC, for tests that reach the daily cap.
AFTERNOON = datetime(2025, 6, 2, 15, 0, tzinfo=UTC)


def test_200_is_delivered_and_charged_once(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[0]
    purchase = make_buyer(sb).buy(title)
    assert (purchase.title_number, purchase.status, purchase.money_state) == (
        title,
        "delivered",
        "charged",
    )
    assert purchase.data["result"]["document"]["titleNumber"] == title
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
    assert not purchase.previously_bought


def test_one_purchase_carries_one_idempotency_key_on_every_attempt(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[1]
    # The first attempt is charged but its answer is lost; the status check is down, so the
    # purchase is uncertain. The next call resends under the same key: the sandbox replays it.
    sb.force_purchase_outcome("not_charged", status=503, count=2)
    buyer = make_buyer(sb)
    purchase = buyer.buy(title)
    [intent] = buyer.journal.purchases(title_number=title)
    [charge] = charges(sb, title)
    assert purchase_posts(sb, title) == 3
    assert charge.idempotency_key == intent.idempotency_key == purchase.idempotency_key
    assert len(buyer.sleeps) == 2  # backed off twice, never slept for real


def test_separate_purchases_carry_different_keys(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb = fresh_sandbox
    first_title, second_title = sb.title_numbers[2], sb.title_numbers[3]
    buyer = make_buyer(sb)
    first = buyer.buy(first_title)
    second = buyer.buy(second_title)
    again = buyer.buy(first_title, buy_again=True)
    keys = [charge.idempotency_key for charge in sb.ledger]
    assert keys == [first.idempotency_key, second.idempotency_key, again.idempotency_key]
    assert len(set(keys)) == 3


def test_202_is_delivering_never_retried_and_wait_polls_until_delivered(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[4]
    sb.set_now(sb.now())  # freeze the sandbox clock: delivery happens when the test says
    sb.set_delivery_delay(120)
    buyer = make_buyer(sb)
    purchase = buyer.buy(title)
    assert (purchase.status, purchase.money_state) == ("delivering", "charged")
    assert purchase_posts(sb, title) == 1

    waited: list[float] = []
    clock = [0.0]

    def sleep(seconds: float) -> None:  # injected: advances both clocks instead of sleeping
        waited.append(seconds)
        clock[0] += seconds
        sb.advance(seconds)

    purchase.wait(timeout=600, interval=30, sleep=sleep, clock=lambda: clock[0])
    assert purchase.status == "delivered"
    assert waited == [30, 30, 30, 30]
    assert purchase.data["result"]["status"] == "delivered"
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
    # The journal now knows it was delivered: buying again returns it without a request.
    sb.reset_log()
    again = buyer.buy(title)
    assert (again.status, again.previously_bought) == ("delivered", True)
    assert sb.requests == []


def test_wait_gives_up_at_the_timeout_still_delivering(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[5]
    sb.set_now(sb.now())
    sb.set_delivery_delay(3600)
    purchase = make_buyer(sb).buy(title)
    before = status_gets(sb, title)
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    purchase.wait(timeout=10, interval=4, sleep=sleep, clock=lambda: clock[0])
    assert purchase.status == "delivering"
    assert clock[0] == 10
    assert status_gets(sb, title) == before + 4  # at 0, 4, 8 and 10 seconds


@pytest.mark.timeout(30)
def test_wait_polls_on_the_clock_of_the_client_that_bought(
    fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[6]
    sb.set_now(sb.now())
    sb.set_delivery_delay(3600)
    clock = [0.0]

    def sleep(seconds: float) -> None:  # the client's test clock: no real waiting
        clock[0] += seconds

    ticking = Clock(sleep=sleep, monotonic=lambda: clock[0], random=random.Random(0))
    journal = tmp_path / "title-deeds.jsonl"
    with Client(sb.api_key, sb.url, cache=False, journal=journal, clock=ticking) as client:
        purchase = client.buy_title_deed(title).wait(timeout=10, interval=4)
    assert purchase.status == "delivering"
    assert clock[0] == 10  # before: ten real seconds of time.sleep, the client's clock unread


def test_refresh_asks_purchase_status_once(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[6]
    sb.set_now(sb.now())
    sb.set_delivery_delay(60)
    purchase = make_buyer(sb).buy(title)
    before = status_gets(sb, title)
    assert purchase.refresh().status == "delivering"
    sb.advance(61)
    assert purchase.refresh().status == "delivered"
    assert status_gets(sb, title) == before + 2
    assert purchase.refresh().status == "delivered"  # delivered: nothing more to ask
    assert status_gets(sb, title) == before + 2


def test_error_with_money_state_charged_is_not_retried_and_says_so(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[7]
    sb.force_purchase_outcome("charged", status=500)
    buyer = make_buyer(sb)
    with pytest.raises(ApiError) as caught:
        buyer.buy(title)
    assert isinstance(caught.value, ServerError)
    assert caught.value.money_state == "charged"
    assert "WAS charged" in str(caught.value)
    assert f"purchase_status('{title}')" in str(caught.value)
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
    # and it is never bought again
    sb.reset_log()
    assert buyer.buy(title).previously_bought
    assert purchase_posts(sb, title) == 0


def test_not_charged_5xx_is_retried_with_the_same_key(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[8]
    sb.force_purchase_outcome("not_charged", status=503, count=1)
    purchase = make_buyer(sb).buy(title)
    assert purchase.status == "delivered"
    assert purchase_posts(sb, title) == 2
    assert [c.idempotency_key for c in charges(sb, title)] == [purchase.idempotency_key]


def test_not_charged_5xx_gives_up_after_max_retries_not_charged(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[9]
    sb.force_purchase_outcome("not_charged", status=503, count=10)
    buyer = make_buyer(sb, max_retries=2)
    with pytest.raises(ServerError) as caught:
        buyer.buy(title)
    assert caught.value.money_state == "not_charged"
    assert "NOT charged" in str(caught.value)
    assert purchase_posts(sb, title) == 3
    assert charges(sb, title) == []
    [record] = buyer.journal.purchases(title_number=title)
    assert record.money_state == "not_charged"


def test_not_charged_4xx_is_never_retried(fresh_sandbox: Sandbox, make_buyer: BuyerFactory) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[10]
    sb.force_purchase_outcome("not_charged", status=409)
    with pytest.raises(ApiError) as caught:
        make_buyer(sb).buy(title)
    assert (caught.value.status_code, caught.value.money_state) == (409, "not_charged")
    assert purchase_posts(sb, title) == 1
    assert charges(sb, title) == []


def test_unknown_that_was_charged_asks_status_and_succeeds_without_resending(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[11]
    sb.force_purchase_outcome("unknown", status=500, charged=True)
    buyer = make_buyer(sb)
    before = status_gets(sb, title)
    purchase = buyer.buy(title)
    assert (purchase.status, purchase.money_state) == ("delivered", "charged")
    assert purchase.data["result"]["money_state"] == "charged"  # the raw status body is kept
    assert purchase_posts(sb, title) == 1
    assert status_gets(sb, title) == before + 2  # the check before buying, and the one after
    assert len(charges(sb, title)) == 1


def test_unknown_that_was_not_charged_asks_status_then_retries_with_the_same_key(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[12]
    sb.force_purchase_outcome("unknown", status=500, charged=False)
    buyer = make_buyer(sb)
    purchase = buyer.buy(title)
    assert purchase.status == "delivered"
    assert purchase_posts(sb, title) == 2
    assert [c.idempotency_key for c in charges(sb, title)] == [purchase.idempotency_key]


def test_connection_dropped_after_charge_asks_status_never_resends(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[13]
    sb.inject_fault("reset_after_charge", path_contains="/purchase")
    purchase = make_buyer(sb).buy(title)
    assert (purchase.status, purchase.money_state) == ("delivered", "charged")
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1


def test_cut_off_answer_after_charge_asks_status_never_resends(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[14]
    sb.inject_fault("truncate", path_contains=f"/{title}/purchase")
    # buy_again skips the status check before buying, so the fault meets the POST itself.
    purchase = make_buyer(sb).buy(title, buy_again=True)
    assert purchase.status == "delivered"
    assert purchase_posts(sb, title) == 1
    assert status_gets(sb, title) == 1
    assert len(charges(sb, title)) == 1


def test_read_timeout_after_sending_asks_status_and_never_charges_twice(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[15]
    # The sandbox holds the request past the client's timeout, then still carries it out.
    sb.inject_fault("slow", delay=0.6, path_contains=f"/{title}/purchase")
    buyer = make_buyer(sb, timeout=0.2)
    purchase = buyer.buy(title, buy_again=True)  # no status check first: the fault meets the POST
    assert purchase.money_state == "charged"
    assert status_gets(sb, title) >= 1
    keys = {c.idempotency_key for c in charges(sb, title)}
    assert keys == {purchase.idempotency_key}
    assert len(charges(sb, title)) == 1


def test_when_status_cannot_be_established_purchase_uncertain_and_no_resend(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[16]
    buyer = make_buyer(sb, max_retries=1)
    sb.force_purchase_outcome("unknown", status=500, charged=True)
    sb.inject_fault("error", status=503, count=100, path_contains="/purchase-status")
    with pytest.raises(PurchaseUncertain) as caught:
        buyer.buy(title, buy_again=True)  # buy_again: no preflight status check to fail first
    assert caught.value.money_state == "unknown"
    assert f"purchase_status('{title}')" in str(caught.value)
    assert "Do not buy it again blindly" in str(caught.value)
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
    [record] = buyer.journal.purchases(title_number=title)
    assert record.is_open

    # Once purchase-status answers again, buying the title resolves the open intent: no charge.
    sb.clear_faults()
    sb.reset_log()
    purchase = buyer.buy(title)
    assert (purchase.status, purchase.previously_bought) == ("delivered", True)
    assert purchase.idempotency_key == record.idempotency_key
    assert purchase_posts(sb, title) == 0
    assert len(charges(sb, title)) == 1
    assert buyer.journal.open_intents() == []


def test_open_intent_with_status_down_raises_uncertain_without_sending(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[17]
    buyer = make_buyer(sb, max_retries=0)
    buyer.journal.record_intent(title, "key-from-a-dead-kernel", service=sb.url)
    sb.inject_fault("error", status=503, count=5, path_contains="/purchase-status")
    with pytest.raises(PurchaseUncertain):
        buyer.buy(title)
    assert purchase_posts(sb, title) == 0
    assert charges(sb, title) == []


def test_open_intent_not_charged_is_sent_with_its_own_key(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[18]
    buyer = make_buyer(sb)
    buyer.journal.record_intent(title, "key-from-a-dead-kernel", service=sb.url)
    purchase = buyer.buy(title)
    assert purchase.idempotency_key == "key-from-a-dead-kernel"
    assert [c.idempotency_key for c in charges(sb, title)] == ["key-from-a-dead-kernel"]
    assert purchase_posts(sb, title) == 1


def test_title_bought_per_journal_is_not_bought_again(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[19]
    buyer = make_buyer(sb)
    first = buyer.buy(title)
    sb.reset_log()
    second = buyer.buy(title)
    assert second.previously_bought and not first.previously_bought
    assert (second.status, second.idempotency_key) == ("delivered", first.idempotency_key)
    assert second.data == first.data
    assert sb.requests == []
    assert len(charges(sb, title)) == 1


def test_title_bought_per_purchase_status_is_not_bought_again(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, tmp_path: object
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[20]
    make_buyer(sb).buy(title)
    elsewhere = make_buyer(sb, journal=tmp_path / "another-machine.jsonl")  # type: ignore[operator]
    purchase = elsewhere.buy(title)
    assert (purchase.status, purchase.previously_bought) == ("delivered", True)
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1


def test_buy_again_overrides_and_charges_a_second_time(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[21]
    buyer = make_buyer(sb)
    first = buyer.buy(title)
    second = buyer.buy(title, buy_again=True)
    assert first.idempotency_key != second.idempotency_key
    assert not second.previously_bought
    assert len(charges(sb, title)) == 2


def test_key_without_deed_access_is_refused_before_anything_is_charged(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[22]
    buyer = make_buyer(sb, api_key=sb.restricted_key)
    with pytest.raises(PermissionDenied):
        buyer.buy(title)
    with pytest.raises(PermissionDenied) as caught:
        buyer.buy(title, buy_again=True)
    assert caught.value.money_state == "not_charged"
    assert purchase_posts(sb, title) == 1
    assert charges(sb, title) == []


def test_insufficient_credit_raises_not_charged_and_succeeds_after_credit(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[23]
    sb.set_balance(0)
    buyer = make_buyer(sb)
    with pytest.raises(InsufficientCredit) as caught:
        buyer.buy(title)
    assert caught.value.money_state == "not_charged"
    assert purchase_posts(sb, title) == 1
    sb.add_credit(1000)
    assert buyer.buy(title).status == "delivered"
    assert purchase_posts(sb, title) == 2
    assert len(charges(sb, title)) == 1


def test_daily_cap_raises_not_charged_without_retrying(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[24]
    sb.set_now(AFTERNOON)  # far from midnight, when a short wait would clear the cap
    sb.set_daily_cap(0)
    buyer = make_buyer(sb)
    with pytest.raises(DailyCapReached) as caught:
        buyer.buy(title)
    assert caught.value.money_state == "not_charged"
    assert purchase_posts(sb, title) == 1
    assert buyer.sleeps == []


def test_journal_never_holds_the_api_key(fresh_sandbox: Sandbox, make_buyer: BuyerFactory) -> None:
    sb = fresh_sandbox
    buyer = make_buyer(sb)
    sb.force_purchase_outcome("charged", status=500)
    with pytest.raises(ApiError):
        buyer.buy(sb.title_numbers[25])
    buyer.buy(sb.title_numbers[26], reference="my-ref")
    content = buyer.journal.path.read_bytes()
    assert sb.api_key.encode() not in content
    assert b"my-ref" in content  # the payload is recorded with the intent


@pytest.mark.parametrize("title", ["", "  ", "NGL 1/2", "A,B", None])
def test_bad_title_number_is_refused_before_any_request(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, title: object
) -> None:
    buyer = make_buyer(fresh_sandbox)
    with pytest.raises(InvalidInput):
        buyer.buy(title)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        buyer.status(title)  # type: ignore[arg-type]
    assert fresh_sandbox.requests == []


def test_purchase_status_returns_the_raw_body(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[27]
    buyer = make_buyer(sb)
    assert buyer.status(title)["result"]["money_state"] == "not_charged"
    purchase = buyer.buy(title)
    body = buyer.status(title)
    assert body["success"] is True
    assert body["result"]["money_state"] == "charged"
    assert body["result"]["purchases"][0]["idempotencyKey"] == purchase.idempotency_key


def test_offline_client_sends_no_purchase(fresh_sandbox: Sandbox, make_buyer: BuyerFactory) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[28]
    buyer = make_buyer(sb, offline=True)
    with pytest.raises(NotCached):
        buyer.buy(title)
    with pytest.raises(NotCached):
        buyer.buy(title, buy_again=True)
    assert sb.requests == []
    assert charges(sb, title) == []


def test_service_unreachable_raises_not_charged_and_records_it(make_buyer: BuyerFactory) -> None:
    with socket.socket() as probe:  # a loopback port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    buyer = make_buyer(
        SimpleNamespace(url=f"http://127.0.0.1:{port}", api_key="pk_live_unreachable"),
        max_retries=1,
    )
    with pytest.raises(NetworkError) as caught:
        buyer.buy("NGL1", buy_again=True)
    assert caught.value.kind == "connect"
    assert "NOT charged" in str(caught.value)
    [record] = buyer.journal.purchases()
    assert record.money_state == "not_charged"


def test_open_intent_never_charged_is_closed_when_status_lists_other_purchases_only(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[29]
    buyer = make_buyer(sb)
    first = buyer.buy(title)
    buyer.journal.record_intent(title, "second-copy-never-sent", service=sb.url)
    again = buyer.buy(title)
    assert again.previously_bought
    assert again.idempotency_key == first.idempotency_key
    assert purchase_posts(sb, title) == 1
    closed = {r.idempotency_key: r.money_state for r in buyer.journal.purchases()}
    assert closed == {first.idempotency_key: "charged", "second-copy-never-sent": "not_charged"}
    # and with buy_again, a second copy is bought once, under a new key
    second = buyer.buy(title, buy_again=True)
    assert second.idempotency_key not in (first.idempotency_key, "second-copy-never-sent")
    assert len(charges(sb, title)) == 2


def test_several_open_intents_not_charged_send_once_under_the_latest_key(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[30]
    buyer = make_buyer(sb)
    buyer.journal.record_intent(title, "older", service=sb.url)
    buyer.journal.record_intent(title, "latest", service=sb.url)
    purchase = buyer.buy(title)
    assert purchase.idempotency_key == "latest"
    assert [c.idempotency_key for c in charges(sb, title)] == ["latest"]
    states = {r.idempotency_key: r.money_state for r in buyer.journal.purchases()}
    assert states == {"older": "not_charged", "latest": "charged"}


def test_two_kernels_sharing_a_journal_buy_the_same_title_once(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[31]
    sb.set_latency(0.2)  # both would pass the status check before either buys, without the lock
    buyers = [make_buyer(sb), make_buyer(sb)]  # same journal file, separate clients
    with ThreadPoolExecutor(max_workers=2) as pool:
        purchases = list(pool.map(lambda buyer: buyer.buy(title), buyers))
    assert len(charges(sb, title)) == 1
    assert purchase_posts(sb, title) == 1
    assert sorted(p.previously_bought for p in purchases) == [False, True]


def test_purchases_count_as_billable_and_status_checks_do_not_by_default(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb = fresh_sandbox
    buyer = make_buyer(sb)
    buyer.buy(sb.title_numbers[32])
    usage = buyer.client.usage
    assert usage.billable_requests == 1
    assert usage.requests_sent == 2  # the status check, then the purchase


def test_budget_refuses_a_purchase_before_sending(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[33]
    buyer = make_buyer(sb, budget=0)
    with pytest.raises(BudgetExceeded):
        buyer.buy(title)
    assert purchase_posts(sb, title) == 0
    assert charges(sb, title) == []
    [record] = buyer.journal.purchases(title_number=title)
    assert record.money_state == "not_charged"
