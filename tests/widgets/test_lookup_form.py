"""LookupForm driven from Python against the sandbox: ids in, Fetch pressed, what the user sees.

Every error path ends as a readable sentence in ``form.message`` and never as a traceback.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pandas as pd
import pytest

from propertykit import Endpoints
from propertykit.sandbox import RequestRecord, Sandbox
from propertykit.widgets import LookupForm
from propertykit.widgets._results_table import PREVIEW_ROWS

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


def headings_of(table_html: str) -> list[str]:
    return [text_of(cell) for cell in re.findall(r"<th\b[^>]*>(.*?)</th>", table_html, re.S)]


def assert_no_traceback(form: LookupForm) -> None:
    shown = form.message.value + form.ids_feedback.value + form.status.value
    assert "Traceback" not in shown
    assert 'File "' not in shown


def test_fetch_mixed_ids_shows_table_charts_map_and_status(sandbox, make_client):
    client = make_client(sandbox)
    form = LookupForm(client)
    source_id = sandbox.source_ids[3]
    form.ids.value = f"L00000001, L00000002\n{source_id}"
    assert "3 ids: 2 location ids and 1 source id." in text_of(form.ids_feedback.value)
    assert form.results.layout.display == "none"  # no empty result tabs before a fetch

    form.fetch_button.click()

    assert form.results.layout.display is None
    assert isinstance(form.value, pd.DataFrame)
    assert sorted(form.value["locationId"]) == ["L00000001", "L00000002", "L00000003"]
    assert body_rows(form.table.value) == 3
    assert "L00000003" in form.table.value
    assert set(form.figures) == {"price_trend", "epc", "map"}
    for name in ("price_trend", "epc", "map"):
        (output,) = form.outputs[name].outputs
        assert PLOTLY_MIME in output["data"]
    assert form.tabs.titles == ("Table", "Price trend", "EPC", "Map")
    said = text_of(form.message.value)
    assert "Fetched 3 properties: " in said  # named, as Find names its area
    assert "(2 requests sent, 0 answered from the cache)." in said
    assert "54 Springfield Terrace" in said and "Flat 6, 32 High Terrace" in said
    assert text_of(form.status.value) == (
        "This client so far: 2 requests sent (2 billable), 0 answered from the cache."
    )


def test_second_fetch_is_served_from_the_cache_and_says_so(sandbox, make_client):
    client = make_client(sandbox)
    form = LookupForm(client)
    form.ids.value = "L00000010\nL00000011"
    form.fetch_button.click()
    form.fetch_button.click()
    assert (
        "Fetched 2 properties: 128 King's Terrace, 107 Elm Lane (0 requests sent, 1 answered "
        "from the cache)." in text_of(form.message.value)
    )
    assert "1 request sent (1 billable), 1 answered from the cache" in text_of(form.status.value)


def test_invalid_ids_are_shown_before_any_request_and_nothing_is_sent(fresh_sandbox, make_client):
    sb = fresh_sandbox
    form = LookupForm(make_client(sb))
    form.ids.value = "L00000001, L 2\nzoopla::\nrightmove:12"
    feedback = text_of(form.ids_feedback.value)
    assert feedback.startswith("3 ids cannot be sent. “L 2” has a space in it. “zoopla::” is not")
    assert "“rightmove:12” has a single “:”" in feedback

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
    assert "EPC" in header and "Address" in header
    assert "Estimated value" not in header and "Beds" not in header  # not asked for
    form.all_columns.value = True
    header = form.table.value.split("<tbody>", 1)[0]
    assert "epc.currentEnergyRating" in header and "address.postcode" in header
    assert "pricing." not in header and "tenure." not in header


def test_unknown_location_ids_are_named(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000001, L09999999"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "Fetched 1 property: 54 Springfield Terrace (" in message
    assert "No property was found for 1 location id: L09999999." in message


def test_401_wrong_key(sandbox, make_client):
    form = LookupForm(make_client(sandbox, api_key="pk_live_" + "0" * 32))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert message.startswith("The API key was refused: check PROPERTYKIT_API_KEY")
    assert "Settings → API Keys" in message
    assert form.value is None
    assert_no_traceback(form)


def test_402_too_little_credit(fresh_sandbox, make_client):
    fresh_sandbox.set_balance(0)
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    assert "too little credit; this request was not charged" in text_of(form.message.value)
    assert "Add credit to the account, then try again." in text_of(form.message.value)
    assert text_of(form.status.value).endswith("The account has too little credit.")
    assert_no_traceback(form)

    fresh_sandbox.add_credit(10)  # the same request succeeds once credit is added
    form.fetch_button.click()
    assert len(form.value) == 1
    assert "credit" not in text_of(form.status.value)


def test_403_endpoint_not_available(sandbox, make_client):
    endpoints = Endpoints(properties_path="/v1/property/records/{locationIds}")
    form = LookupForm(make_client(sandbox, endpoints=endpoints))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    message = text_of(form.message.value)
    assert "This API key may not use this part of the service." in message
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
    assert text_of(form.status.value).endswith("The daily credit cap is reached.")
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
    assert "Fetched 1 property: " in text_of(form.message.value)
    for name in ("price_trend", "epc", "map"):
        assert len(form.outputs[name].outputs) == 1


def test_form_displays_as_its_widget(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    bundle = form._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == form.widget.model_id


def test_the_default_table_reads_as_a_person_would_and_every_column_is_one_click_away(
    sandbox, make_client
):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    record = sandbox.record(1)
    headings = headings_of(form.table.value)
    assert headings == ["Address", "Type", "Beds", "Estimated value", "EPC"]
    assert form.all_columns.description == "Show every column"
    assert '<div class="pk-id">L00000001</div>' in form.table.value  # under the address
    row = text_of(form.table.value.split("<tbody>", 1)[1])
    assert record["address"]["displayAddress"] in row
    assert f"£{record['pricing']['estimatedSaleValue']:,.0f}" in row
    assert "." not in row.split("£", 1)[1].split()[0]  # £168,400, never 168400.0

    form.all_columns.value = True  # the whole frame, one click away, under readable headings
    assert form.all_columns.description == "Show the main columns"  # what a press gives now
    headings = headings_of(form.table.value)
    assert "Pricing: estimated sale value" in headings and "Tenure: type" in headings
    assert "EPC: current energy rating" in headings and "Address: display address" in headings
    assert [h for h in headings if "." in h or re.search(r"[a-z][A-Z]", h)] == []  # no code
    assert '<th title="tenure.type">' in form.table.value  # the frame's own name, on hover
    form.all_columns.value = False
    assert "tenure.type" not in form.table.value
    assert form.all_columns.description == "Show every column"


def test_missing_values_show_as_a_dash(sandbox, make_client):
    assert sandbox.record(2)["epc"] is None  # L00000002 has no EPC
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000002"
    form.fetch_button.click()
    cells = re.findall(r"<td[^>]*>(.*?)</td>", form.table.value, re.S)
    assert cells[-1] == "—" and "" not in cells  # its EPC cell
    form.all_columns.value = True
    cells = re.findall(r"<td[^>]*>(.*?)</td>", form.table.value, re.S)
    assert "—" in cells and "" not in cells


def test_prices_served_in_pence_are_tabled_in_pounds(make_client):
    from propertykit import sandbox as sandbox_module

    with sandbox_module.serve(profile="vepler", n_properties=20) as sb:
        form = LookupForm(make_client(sb, profile="vepler"))
        form.ids.value = sb.location_ids[1]
        form.fetch_button.click()
        pence = sb.record(1)["pricing"]["estimatedSaleValue"]
        assert f"£{pence / 100:,.0f}" in text_of(form.table.value)


def test_results_left_from_before_an_error_are_marked_not_updated(fresh_sandbox, make_client):
    sb = fresh_sandbox
    form = LookupForm(make_client(sb, max_retries=0))
    form.ids.value = "L00000001, L00000002"
    form.fetch_button.click()
    assert form.stale_note.value == ""

    sb.set_balance(0)
    form.ids.value = "L00000003"
    form.fetch_button.click()
    assert "too little credit" in text_of(form.message.value)
    assert list(form.value["locationId"]) == ["L00000001", "L00000002"]  # still the old rows
    note = text_of(form.stale_note.value)
    assert note.startswith("Earlier results: the results below are still those of the fetch of 2")
    assert note.endswith("from before the error above.")

    sb.add_credit(10)
    form.fetch_button.click()
    assert form.stale_note.value == ""
    assert list(form.value["locationId"]) == ["L00000003"]


def test_a_fetch_that_finds_nothing_keeps_the_earlier_results_and_names_the_ids(
    fresh_sandbox, make_client
):
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001, L00000002, L00000003, L00000004"
    form.fetch_button.click()
    form.ids.value = "L09999999"
    form.fetch_button.click()
    assert text_of(form.message.value) == (
        "No property was found for 1 id: L09999999 (1 request sent, 0 answered from the cache)."
    )
    assert "pk-warn" in form.message.value
    assert len(form.value) == 4  # the earlier results stay...
    assert form.results.layout.display is None and "L00000004" in form.table.value
    note = text_of(form.stale_note.value)  # ...marked as earlier
    assert note.startswith("Earlier results: the results below are still those of the fetch of 4")
    assert note.endswith("this fetch found nothing.")


def test_ids_that_cannot_be_sent_are_quoted_with_every_bad_character_where_fetch_is(
    fresh_sandbox, make_client
):
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001, bad id!, a/b?"
    form.fetch_button.click()
    assert lookups(fresh_sandbox) == []
    assert text_of(form.message.value) == (
        "Nothing was sent: 2 ids cannot be sent. “bad id!” has a space and “!” in it. “a/b?” has "
        "“/” and “?” in it. Correct them in Ids, then press Fetch."
    )
    form.ids.value = "L00000001!"  # sent, as the client sends it, but pointed out
    assert text_of(form.ids_feedback.value).endswith(
        "“L00000001!” has “!” in it, which the service's ids seldom hold; it will be sent as typed."
    )


def test_an_id_typed_like_a_source_id_without_the_colons_is_pointed_out(fresh_sandbox, make_client):
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "rightmove-123"
    assert "pk-warn" in form.ids_feedback.value
    assert text_of(form.ids_feedback.value) == (
        "1 id: 1 location id. “rightmove-123” will be looked up as a location id; a source id "
        "is written provider::id, such as rightmove::123."
    )


def test_a_budget_shows_what_is_left(sandbox, make_client):
    form = LookupForm(make_client(sandbox, budget=5))
    form.ids.value = "L00000001"
    form.fetch_button.click()
    assert text_of(form.status.value).endswith("Budget: 4 of 5 billable requests left.")


def test_charts_are_shown_to_fit_the_output_area_with_short_title_lines(sandbox, make_client):
    form = LookupForm(make_client(sandbox))
    form.ids.value = "L00000033"  # one property: the price trend's long "no data" title
    form.fetch_button.click()
    for name in ("price_trend", "epc", "map"):
        (output,) = form.outputs[name].outputs
        shown = output["data"][PLOTLY_MIME]
        assert shown["config"]["responsive"] is True  # follows the output area's width
        layout = shown["layout"]
        assert "width" not in layout and layout["autosize"] is True
        lines = [re.sub(r"<[^>]+>", "", line) for line in layout["title"]["text"].split("<br>")]
        assert all(0 < len(line) <= 64 for line in lines), lines  # fits 590 px, never cut
        # the title starts below plotly's toolbar, and the top margin holds all its lines
        assert layout["title"]["pad"]["t"] >= 40 and layout["title"]["yanchor"] == "top"
        assert layout["margin"]["t"] >= layout["title"]["pad"]["t"] + 18 * len(lines)
    title = form.outputs["price_trend"].outputs[0]["data"][PLOTLY_MIME]["layout"]["title"]["text"]
    assert "No data (no period with 5 or more sales)" in title


def test_two_forms_of_one_client_agree_on_what_it_has_sent(sandbox, make_client):
    from propertykit.widgets import ValuationForm

    client = make_client(sandbox)
    lookup, valuation = LookupForm(client), ValuationForm(client)
    lookup.ids.value = "L00000001"
    lookup.fetch_button.click()
    said = "This client so far: 1 request sent (1 billable), 0 answered from the cache."
    assert text_of(lookup.status.value) == said == text_of(valuation.status.value)
