"""PurchaseForm driven from Python: confirm with the cost, then the outcome and the money.

The sandbox charges 25 credits per title deed; its ledger says what was really charged.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler

import pytest

from propertykit.client import Client
from propertykit.deeds import Journal
from propertykit.sandbox import Sandbox
from propertykit.widgets import PurchaseForm
from tests._serving import serving, url_of

from .conftest import requests_to, text_of

NOON = datetime(2025, 6, 2, 12, 0, tzinfo=UTC)


def purchase_charges(sb: Sandbox, title: str) -> int:
    return sum(1 for charge in sb.ledger if charge.title_number == title)


def posts(sb: Sandbox) -> int:
    return sum(1 for r in requests_to(sb, "/purchase") if r.method == "POST")


def buy(form: PurchaseForm, title: str) -> None:
    form.title.value = title
    form.buy_button.click()
    form.confirm_button.click()


def test_buy_asks_for_confirmation_stating_the_cost_and_sends_nothing(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[1]
    form = PurchaseForm(make_client(sb), cost=25)
    form.title.value = title
    form.buy_button.click()
    confirmation = text_of(form.confirmation.value)
    assert confirmation.startswith(f"Buy the title deed for {title}? This costs 25 credits.")
    assert form.confirm_box.layout.display is None  # shown
    assert form.buy_button.disabled
    assert posts(sb) == 0

    form.cancel_button.click()
    assert form.confirm_box.layout.display == "none"
    assert text_of(form.message.value) == (
        f"Cancelled the purchase of {title}: nothing was bought and you were not charged."
    )
    assert posts(sb) == 0 and sb.ledger == []


def test_unknown_cost_is_said_plainly():
    form = PurchaseForm.__new__(PurchaseForm)
    form.cost = None
    assert form.cost_text().startswith("The cost is unknown: the service does not state")
    form.cost = "£3.00"
    assert form.cost_text() == "This costs £3.00."


def test_unknown_cost_wording_in_the_confirmation(sandbox, make_client):
    form = PurchaseForm(make_client(sandbox))
    form.title.value = sandbox.title_numbers[2]
    form.buy_button.click()
    assert "The cost is unknown" in text_of(form.confirmation.value)


def test_empty_title_is_refused_before_confirmation(sandbox, make_client):
    form = PurchaseForm(make_client(sandbox))
    form.buy_button.click()
    assert text_of(form.message.value) == "Type a title number, such as NGL123456."
    assert form.confirm_box.layout.display == "none"


def test_delivered(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[3]
    form = PurchaseForm(make_client(sb), cost=25)
    buy(form, title)
    assert text_of(form.message.value) == (
        f"You bought the title deed for {title} (25 credits): you were charged; "
        "the deed has been delivered."
    )
    assert form.value is not None and form.value.status == "delivered"
    assert form.money_state == "charged"
    assert purchase_charges(sb, title) == 1


def test_a_title_bought_before_is_said_with_when_before_any_confirmation(
    fresh_sandbox, make_client
):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[4]
    form = PurchaseForm(make_client(sb), cost=25)
    buy(form, title)
    form.buy_button.click()
    prompt = text_of(form.confirmation.value)
    when = datetime.now(UTC)  # the journal notes the time of this machine's clock
    assert prompt == (
        f"{title} was already bought on {when:%-d %b %Y at %H:%M} UTC (your purchase journal): "
        "you were charged then. Buying it again charges again (25 credits): press “Buy again” "
        "only if you need a second copy."
    )
    assert "This costs" not in prompt
    assert form.confirm_button.layout.display == "none"
    assert form.buy_again_button.layout.display is None

    form.confirm_button.click()  # the plain Confirm never buys a title again
    assert purchase_charges(sb, title) == 1 and posts(sb) == 1

    form.buy_again_button.click()  # the explicit choice does
    assert purchase_charges(sb, title) == 2
    assert text_of(form.message.value) == (
        f"You bought the title deed for {title} (25 credits): you were charged; "
        "the deed has been delivered."
    )


def test_a_title_bought_elsewhere_is_said_from_the_services_records(
    fresh_sandbox, make_client, tmp_path
):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[13]
    sb.set_now(NOON)
    make_client(sb, journal=tmp_path / "colleague.jsonl").buy_title_deed(title)
    form = PurchaseForm(make_client(sb))
    form.title.value = title
    form.buy_button.click()
    assert text_of(form.confirmation.value).startswith(
        f"{title} was already bought on 2 Jun 2025 at 12:00 UTC (the service's records): "
        "you were charged then."
    )
    form.confirm_button.click()
    assert purchase_charges(sb, title) == 1


def test_editing_the_title_withdraws_the_confirmation(fresh_sandbox, make_client):
    sb = fresh_sandbox
    shown, typed = sb.title_numbers[14], sb.title_numbers[15]
    form = PurchaseForm(make_client(sb), cost=25)
    form.title.value = shown
    form.buy_button.click()
    assert text_of(form.confirmation.value).startswith(f"Buy the title deed for {shown}?")

    form.title.value = typed
    assert form.confirm_box.layout.display == "none"
    assert not form.buy_button.disabled
    assert text_of(form.message.value) == (
        f"The title changed, so the purchase of {shown} was not confirmed and nothing was "
        "bought. Press Buy to buy the title now in the box."
    )
    form.confirm_button.click()  # armed no longer: buys nothing, neither title
    form.buy_again_button.click()
    assert posts(sb) == 0 and sb.ledger == []

    form.buy_button.click()
    assert text_of(form.confirmation.value).startswith(f"Buy the title deed for {typed}?")
    form.confirm_button.click()
    assert [charge.title_number for charge in sb.ledger] == [typed]
    assert typed in text_of(form.message.value)


@pytest.mark.parametrize("typed", ["bad title!", "NGL/1", "ST1?x", "a" * 21])
def test_a_malformed_title_is_refused_in_plain_words_before_confirmation(
    fresh_sandbox, make_client, typed
):
    form = PurchaseForm(make_client(fresh_sandbox))
    form.title.value = typed
    form.buy_button.click()
    assert text_of(form.message.value) == (
        f"“{typed}” is not a title number: title numbers are letters and digits only, "
        "such as NGL123456."
    )
    assert form.confirm_box.layout.display == "none"
    form.confirm_button.click()
    assert fresh_sandbox.requests == []


def test_delivering_shows_progress_until_delivered(fresh_sandbox, make_client, scheduler, clock):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[5]
    sb.set_now(NOON)
    sb.set_delivery_delay(30)
    form = PurchaseForm(
        make_client(sb), scheduler=scheduler, clock=clock, poll_interval=10, timeout=300
    )
    buy(form, title)
    assert text_of(form.message.value) == (
        f"You bought the title deed for {title}: you were charged; the deed is being delivered…"
    )
    assert form.value.status == "delivering"
    assert form.buy_button.disabled  # no second purchase while this one is delivered
    assert form.progress.layout.display is None
    assert [call.delay for call in scheduler.pending] == [10]

    clock.advance(10)
    sb.advance(10)
    scheduler.run_pending()
    assert form.value.status == "delivering"
    assert form.progress.value == 1
    assert "(waited 10 s)" in text_of(form.message.value)

    clock.advance(25)
    sb.advance(25)
    scheduler.run_pending()
    assert form.value.status == "delivered"
    assert text_of(form.message.value) == (
        f"You bought the title deed for {title}: you were charged; the deed has been delivered."
    )
    assert form.progress.layout.display == "none"
    assert not form.buy_button.disabled
    assert scheduler.pending == []
    assert purchase_charges(sb, title) == 1


def test_delivery_still_running_at_timeout_says_charged_and_offers_a_check(
    fresh_sandbox, make_client, scheduler, clock
):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[6]
    sb.set_now(NOON)
    sb.set_delivery_delay(3600)
    form = PurchaseForm(
        make_client(sb), scheduler=scheduler, clock=clock, poll_interval=30, timeout=60
    )
    buy(form, title)
    for _ in range(2):
        clock.advance(30)
        scheduler.run_pending()
    message = text_of(form.message.value)
    assert message.startswith(
        f"You bought the title deed for {title}: you were charged; the deed is still on its way "
        "after 60 s."
    )
    assert "do not buy it again" in message
    assert scheduler.pending == []
    assert form.check_button.layout.display is None

    sb.advance(3600)
    form.check_button.click()
    assert text_of(form.message.value) == (
        f"Purchase status of {title}: You were charged; the deed has been delivered."
    )


def test_error_after_charging_says_charged(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[7]
    sb.force_purchase_outcome("charged", status=500)
    form = PurchaseForm(make_client(sb))
    buy(form, title)
    message = text_of(form.message.value)
    assert message.startswith(
        f"You were charged for {title}, but the service reported a problem after charging"
    )
    assert "Do not buy it again" in message
    assert form.money_state == "charged"
    assert purchase_charges(sb, title) == 1
    assert posts(sb) == 1
    assert "Traceback" not in form.message.value


def test_402_says_not_charged(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[8]
    sb.set_balance(0)
    form = PurchaseForm(make_client(sb))
    buy(form, title)
    message = text_of(form.message.value)
    assert message.startswith(
        f"You were not charged for {title}. The account has too little credit; this request was "
        "not charged."
    )
    assert form.money_state == "not_charged"
    assert sb.ledger == []
    assert form.check_button.layout.display == "none"


def test_403_key_without_title_deeds_says_not_charged(sandbox, make_client):
    form = PurchaseForm(make_client(sandbox, api_key=sandbox.restricted_key))
    buy(form, sandbox.title_numbers[9])
    message = text_of(form.message.value)
    assert message.startswith(
        f"Could not ask the service about title {sandbox.title_numbers[9]}, so it was not offered: "
        "nothing was sent and you were not charged. This API key may not use this part of the "
        "service."
    )
    assert "does not have access to title deeds" in message


def test_unknown_outcome_says_so_and_the_check_resolves_it(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[10]
    client = make_client(sb, max_retries=1)
    # A kernel died after sending a purchase: its intent is open, and purchase-status is down.
    Journal(client.journal).record_intent(title, "key-from-a-dead-kernel", service=sb.url)
    sb.inject_fault("error", status=503, count=100, path_contains="/purchase-status")
    form = PurchaseForm(client)
    buy(form, title)
    message = text_of(form.message.value)
    assert message.startswith(
        "We could not establish whether you were charged — check again before retrying"
    )
    assert form.money_state == "unknown"
    assert form.check_button.layout.display is None
    assert posts(sb) == 0  # never sent blindly

    form.check_button.click()  # the status endpoint is still failing
    assert text_of(form.message.value).startswith("We could not establish whether you were charged")

    sb.clear_faults()
    form.check_button.click()
    assert text_of(form.message.value) == (
        f"Purchase status of {title}: You were not charged: no purchase of {title} is recorded, "
        "so it is safe to buy it."
    )
    assert form.money_state == "not_charged"
    assert form.check_button.layout.display == "none"


def test_unknown_answer_resolved_by_purchase_status_as_charged(fresh_sandbox, make_client):
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[12]
    sb.force_purchase_outcome("unknown", status=500, charged=True)
    form = PurchaseForm(make_client(sb))
    buy(form, title)
    assert text_of(form.message.value) == (
        f"You bought the title deed for {title}: you were charged; the deed has been delivered."
    )
    assert form.money_state == "charged"
    assert posts(sb) == 1 and purchase_charges(sb, title) == 1


def test_check_for_a_title_never_bought_says_safe_to_buy(sandbox, make_client):
    form = PurchaseForm(make_client(sandbox))
    form.title.value = sandbox.title_numbers[11]
    form.check_button.click()
    assert text_of(form.message.value).endswith(
        "You were not charged: no purchase of "
        f"{sandbox.title_numbers[11]} is recorded, so it is safe to buy it."
    )


def test_a_title_the_service_does_not_know_is_said_at_once_and_never_offered(
    fresh_sandbox, make_client
):
    sb = fresh_sandbox
    form = PurchaseForm(make_client(sb), cost=25)
    form.title.value = "ZZ999999"
    form.buy_button.click()
    assert text_of(form.message.value) == (
        "The service does not know title ZZ999999. The service said: “Title ZZ999999 does not "
        "exist”. Nothing was offered or sent, and you were not charged: check the title number."
    )
    assert form.confirm_box.layout.display == "none" and form.confirmation.value == ""
    assert "credits" not in text_of(form.message.value)  # no price for a title that is not
    form.confirm_button.click()  # nothing pending: nothing is bought
    assert posts(sb) == 0 and sb.ledger == []
    assert not form.buy_button.disabled
    assert [r.path for r in requests_to(sb, "/title-deeds/")] == [
        "/v1/title-deeds/ZZ999999/purchase-status"
    ]


def test_a_known_title_is_offered_saying_the_service_knows_it(sandbox, make_client):
    title = sandbox.title_numbers[12]
    form = PurchaseForm(make_client(sandbox), cost=25)
    form.title.value = title
    form.buy_button.click()
    assert "The service knows this title and has no purchase of it recorded." in text_of(
        form.confirmation.value
    )


class _SaysNothingOfTitles(BaseHTTPRequestHandler):
    """A service whose purchase-status answers 200 without a word on the title or the money."""

    disable_nagle_algorithm = True  # answers written in pieces leave at once

    def do_GET(self) -> None:
        body = json.dumps({"success": True, "result": {"note": "ok"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.timeout(60)
def test_a_title_the_service_cannot_vouch_for_is_said_and_not_offered(tmp_path):
    with serving(_SaysNothingOfTitles) as server:
        client = Client(
            "pk_live_" + "0" * 32,
            url_of(server),
            cache=False,
            journal=tmp_path / "deeds.jsonl",
            progress=False,
        )
        form = PurchaseForm(client, cost=25)
        form.title.value = "NGL123456"
        form.buy_button.click()
        message = text_of(form.message.value)
        assert message.startswith(
            "The service answered about title NGL123456 without saying whether it exists or was "
            "bought before, so it was not offered: nothing was sent and you were not charged."
        )
        assert form.confirm_box.layout.display == "none"
        assert form.check_button.layout.display is None
        client.close()


def test_after_a_purchase_every_forms_usage_line_reads_the_client_now(fresh_sandbox, make_client):
    """The "This client so far" lines stayed at the counts before a 25-credit purchase."""
    from propertykit.widgets import LookupForm, ValuationForm

    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[3]
    client = make_client(sb)
    lookup, valuation = LookupForm(client), ValuationForm(client)
    form = PurchaseForm(client, cost=25)
    before = text_of(valuation.status.value)
    buy(form, title)
    usage = client.usage
    assert usage.requests_sent >= 1 and purchase_charges(sb, title) == 1
    sent = "1 request" if usage.requests_sent == 1 else f"{usage.requests_sent} requests"
    now = f"This client so far: {sent} sent ({usage.billable_requests:,} billable)"
    assert before != text_of(valuation.status.value)
    assert text_of(valuation.status.value).startswith(now)
    assert text_of(lookup.status.value) == text_of(valuation.status.value)
