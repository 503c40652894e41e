"""LookupForm driven from Python against the sandbox: ids in, Fetch pressed, what the user sees.

Every error path ends as a readable sentence in ``form.message`` and never as a traceback.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest

from propertykit import Endpoints
from propertykit.sandbox import RequestRecord, Sandbox
from propertykit.widgets import LookupForm
from propertykit.widgets.lookup_form import PREVIEW_ROWS

from .conftest import text_of

#: A fixed moment far from midnight UTC, for tests that reach the daily cap.
AFTERNOON = datetime(2025, 6, 2, 15, 0, tzinfo=UTC)

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def lookups(sb: Sandbox) -> list[RequestRecord]:
    return [
        r for r in sb.requests if r.path.startswith("/v1/property/") and "suggest" not in r.path
    ]


def body_rows(table_html: str) -> int:
    return table_html.split("<tbody>", 1)[1].count("<tr")


def assert_no_traceback(form: LookupForm) -> None:
    shown = form.message.value + form.ids_feedback.value + form.status.value
    assert "Traceback" not in shown
    assert 'File "' not in shown


def test_fetch_mixed_ids_shows_table_charts_map_and_status(sandbox, make_client):
    client = make_client(sandbox)
    form = LookupForm(client)
    source_id = sandbox.source_ids[3]
    form.ids.value = f"L00000001, L00000002\n{source_id}"
    assert "3 ids (2 location, 1 source)" in text_of(form.ids_feedback.value)

    form.fetch_button.click()

    assert isinstance(form.value, pd.DataFrame)
    assert sorted(form.value["locationId"]) == ["L00000001", "L00000002", "L00000003"]
    assert body_rows(form.table.value) == 3
    assert "L00000003" in form.table.value
    assert set(form.figures) == {"price_trend", "epc", "map"}
    for name in ("price_trend", "epc", "map"):
        (output,) = form.outputs[name].outputs
        assert PLOTLY_MIME in output["data"]
    assert form.tabs.titles == ("Table", "Price trend", "EPC", "Map")
    assert "Fetched 3 properties (2 request(s) sent, 0 from cache)" in text_of(form.message.value)
    assert "Requests sent: 2 · cache hits: 0" in text_of(form.status.value)
    assert "credit: no problem reported" in text_of(form.status.value)


def test_second_fetch_is_served_from_the_cache_and_says_so(sandbox, make_client):
    client = make_client(sandbox)
    form = LookupForm(client)
    form.ids.value = "L00000010\nL00000011"
    form.fetch_button.click()
    form.fetch_button.click()
    assert "Fetched 2 properties (0 request(s) sent, 1 from cache)" in text_of(form.message.value)
    assert "Requests sent: 1 · cache hits: 1" in text_of(form.status.value)


def test_invalid_ids_are_shown_before_any_request_and_nothing_is_sent(fresh_sandbox, make_client):
    sb = fresh_sandbox
    form = LookupForm(make_client(sb))
    form.ids.value = "L00000001, L 2\nzoopla::\nrightmove:12"
    feedback = text_of(form.ids_feedback.value)
    assert feedback.startswith("3 id(s) cannot be sent")
    assert "'L 2'" in feedback and "'zoopla::'" in feedback and "'rightmove:12'" in feedback

    form.fetch_button.click()

    assert lookups(sb) == []
    assert form.value is None
    assert "Nothing was sent" in text_of(form.message.value)
    assert_no_traceback(form)


def test_empty_box_asks_for_ids(fresh_sandbox, make_client):
    form = LookupForm(make_client(fresh_sandbox))
    form.fetch_button.click()
    assert "at least one id" in text_of(form.message.value)
    assert lookups(fresh_sandbox) == []


def test_picked_attributes_are_requested_and_only_they_are_tabled(fresh_sandbox, make_client):
    sb = fresh_sandbox
    form = LookupForm(make_client(sb))
    form.ids.value = "L00000004"
    form.attributes.value = ("epc", "address")
    form.fetch_button.click()
    (request,) = lookups(sb)
    assert "attributes=epc%2Caddress" in request.query or "attributes=epc,address" in request.query
    header = form.table.value.split("<tbody>", 1)[0]
    assert "epc.currentEnergyRating" in header and "address.postcode" in header
    assert "pricing." not in header and "tenure." not in header


def test_unknown_location_ids_are_named(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000001, L09999999"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "Fetched 1 properties" in message
    assert "No property for 1 location id(s): L09999999" in message


def test_401_wrong_key(sandbox, make_client):
    form = LookupForm(make_client(sandbox, api_key="pk_live_" + "0" * 32))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "The API key was refused (HTTP 401)" in message
    assert "Settings → API Keys" in message
    assert form.value is None
    assert_no_traceback(form)


def test_402_too_little_credit(fresh_sandbox, make_client):
    fresh_sandbox.set_balance(0)
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    assert "too little credit (HTTP 402)" in text_of(form.message.value)
    assert "Add credit" in text_of(form.message.value)
    assert "credit: too little credit (402)" in text_of(form.status.value)
    assert_no_traceback(form)

    fresh_sandbox.add_credit(10)  # the same request succeeds once credit is added
    form.fetch_button.click()
    assert len(form.value) == 1
    assert "credit: no problem reported" in text_of(form.status.value)


def test_403_endpoint_not_available(sandbox, make_client):
    endpoints = Endpoints(properties_path="/v1/property/records/{locationIds}")
    form = LookupForm(make_client(sandbox, endpoints=endpoints))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "This key may not use this endpoint (HTTP 403)" in message
    assert "This endpoint is not available" in message
    assert_no_traceback(form)


def test_daily_cap_message_names_the_reset_time(fresh_sandbox, make_client, sleeps):
    fresh_sandbox.set_now(AFTERNOON)  # far from midnight, when a short wait would clear the cap
    fresh_sandbox.set_daily_cap(0)
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "daily credit cap is reached" in message
    # The wait is the service's own countdown (Retry-After), whatever this machine's clock says.
    assert "resets at 00:00 UTC on Tue 3 Jun 2025 (in 9 h 0 min)" in message
    assert "credit: daily cap reached" in text_of(form.status.value)
    assert sleeps == []
    assert_no_traceback(form)


def test_network_failure_after_retries(fresh_sandbox, make_client, sleeps):
    fresh_sandbox.inject_fault("reset", count=20)
    form = LookupForm(make_client(fresh_sandbox, max_retries=2))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    assert "Could not reach the service, even after retrying" in text_of(form.message.value)
    assert len(sleeps) == 2
    assert_no_traceback(form)


def test_long_fetch_shows_progress_per_request(sandbox, make_client):
    endpoints = Endpoints(batch_size=10)
    form = LookupForm(make_client(sandbox, endpoints=endpoints))
    seen: list[int] = []
    form.progress.observe(lambda change: seen.append(change["new"]), names="value")
    form.ids.value = ",".join(sandbox.location_ids[:25]) + "\n" + sandbox.source_ids[30]
    form.fetch_button.click()
    assert form.progress.max == 4  # three batches of location ids, one of source ids
    assert seen == [1, 2, 3, 4]
    assert form.progress.layout.display == "none"  # hidden again when done
    assert len(form.value) == 26


def test_failure_part_way_keeps_what_was_fetched(fresh_sandbox, make_client):
    sb = fresh_sandbox
    sb.set_now(AFTERNOON)
    sb.set_daily_cap(15)  # the first batch of 10 is paid for, the second would pass the cap
    form = LookupForm(make_client(sb, endpoints=Endpoints(batch_size=10)))
    form.ids.value = ",".join(sb.location_ids[:20])
    form.fetch_button.click()
    assert len(form.value) == 10
    message = text_of(form.message.value)
    assert "daily credit cap is reached" in message
    assert "Showing the 10 properties fetched before the error" in message


def test_table_preview_is_capped_but_value_holds_everything(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "\n".join(sandbox.location_ids[: PREVIEW_ROWS + 20])
    form.fetch_button.click()
    assert len(form.value) == PREVIEW_ROWS + 20
    assert body_rows(form.table.value) == PREVIEW_ROWS
    assert f"the first {PREVIEW_ROWS} shown" in text_of(form.table.value)


@pytest.mark.parametrize("attributes", [("address",), ()])
def test_charts_without_their_data_do_not_break_the_form(sandbox, make_client, attributes):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000001"
    form.attributes.value = attributes
    form.fetch_button.click()
    assert len(form.value) == 1
    assert "Fetched 1 properties" in text_of(form.message.value)
    for name in ("price_trend", "epc", "map"):
        assert len(form.outputs[name].outputs) == 1


def test_form_displays_as_its_widget(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    bundle = form._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == form.widget.model_id
