"""The lookup form's Find tab: an area and a few filters in, the same table, charts and map out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from propertykit import sandbox as sandbox_module
from propertykit.sandbox import Sandbox
from propertykit.widgets import LookupForm

from .conftest import requests_to, text_of

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["spec", "vepler"])
def profiled(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with sandbox_module.serve(profile=request.param) as sb:
        yield sb


def test_the_form_has_ids_and_find_tabs(profiled, make_client):
    form = LookupForm(make_client(profiled, profile=profiled.profile))
    assert form.inputs.titles == ("Ids", "Find")


def test_find_by_outcode_fills_the_table_and_charts(profiled, make_client):
    form = LookupForm(make_client(profiled, profile=profiled.profile))
    finder = form.finder
    finder.area_type.value = "outcode"
    finder.area_value.value = "DH1"
    finder.beds.value = (2, 3)
    finder.max_results.value = 30
    finder.find_button.click()
    df = form.value
    assert df is not None and len(df) == 30
    assert set(df["address.outcode"]) == {"DH1"}
    assert set(df["roomDetails.beds"]) <= {2, 3}
    # the Find tab's own message names the area and filters searched; the Ids tab's says nothing
    assert text_of(finder.message.value) == "Found 30 properties in DH1 (2 or 3 beds)."
    assert form.message.value == ""
    assert set(form.figures) == {"price_trend", "epc", "map"}
    assert "(GBP)" in form.figures["price_trend"].layout.yaxis.title.text  # pounds, either way
    assert df.attrs["money_unit"] == ("minor" if profiled.profile == "vepler" else "major")


def test_prices_are_typed_in_pounds_whatever_the_served_unit(profiled, make_client):
    client = make_client(profiled, profile=profiled.profile)
    form = LookupForm(client)
    finder = form.finder
    finder.area_type.value = "outcode"
    finder.area_value.value = "DH1"
    finder.price_min.value = 150_000
    finder.price_max.value = 250_000
    factor = 100 if profiled.profile == "vepler" else 1
    assert finder.filters() == {"priceMin": 150_000 * factor, "priceMax": 250_000 * factor}
    assert finder.find() > 0
    pounds = form.value.pk.in_pounds()
    price = pounds["pricing.currentSalePrice"].fillna(pounds["pricing.estimatedSaleValue"])
    assert price.between(150_000, 250_000).all()


def test_a_point_and_radius(profiled, make_client):
    form = LookupForm(make_client(profiled, profile=profiled.profile))
    centre = profiled.record(0)["spatial"]
    finder = form.finder
    finder.area_type.value = "point"
    assert finder.point_box.layout.display is None and finder.area_value.layout.display == "none"
    finder.longitude.value, finder.latitude.value = centre["lng"], centre["lat"]
    finder.radius.value = 800
    assert finder.find() > 0
    assert "L00000000" in set(form.value["locationId"])


@pytest.mark.parametrize(
    ("kind", "value"), [("postcode", "not a postcode"), ("outcode", ""), ("postcode", "SW1A")]
)
def test_a_malformed_area_is_reported_and_nothing_is_sent(profiled, make_client, kind, value):
    form = LookupForm(make_client(profiled, profile=profiled.profile))
    form.finder.area_type.value = kind
    form.finder.area_value.value = value
    form.finder.find_button.click()
    assert requests_to(profiled, "/query") == []
    assert "Nothing was sent" in text_of(form.finder.message.value)
    assert "Traceback" not in form.finder.message.value
    assert form.value is None


def test_a_service_error_is_a_sentence(profiled, make_client):
    client = make_client(profiled, profile=profiled.profile, max_retries=0)
    profiled.set_balance(0)
    form = LookupForm(client)
    form.finder.area_type.value = "outcode"
    form.finder.area_value.value = "DH1"
    assert form.finder.find() == 0
    message = text_of(form.finder.message.value)
    assert message.startswith("The search in DH1 failed. The account has too little credit")
    assert "Traceback" not in message


def test_a_search_that_finds_nothing_keeps_the_earlier_results_marked_as_earlier(
    fresh_sandbox: Sandbox, make_client
):
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "L00000001, L00000002"
    form.fetch_button.click()
    finder = form.finder
    finder.area_type.value, finder.area_value.value = "outcode", "DH1"
    finder.beds.value = (6,)
    finder.price_max.value = 1  # nothing costs £1
    assert finder.find() == 0
    assert text_of(finder.message.value) == "Found no property in DH1 (6 beds; up to £1)."
    assert sorted(form.value["locationId"]) == ["L00000001", "L00000002"]
    stale = text_of(form.stale_note.value)
    assert stale.startswith("Earlier results: the results below are still those of the fetch of")
    assert stale.endswith("this search found nothing.")
    assert "L00000001" in form.table.value


def test_each_tab_says_what_it_did_in_its_own_message(fresh_sandbox: Sandbox, make_client):
    form = LookupForm(make_client(fresh_sandbox))
    form.ids.value = "bad id!"
    form.fetch_button.click()
    form.finder.area_type.value, form.finder.area_value.value = "outcode", "SE11"
    form.finder.max_results.value = 3
    form.finder.find_button.click()
    assert "“bad id!”" in text_of(form.message.value)  # in the Ids tab
    assert text_of(form.finder.message.value) == "Found 3 properties in SE11."  # in the Find tab
    assert form.message in form.inputs.children[0].children[0].children  # under Fetch
    assert form.finder.message in form.finder.widget.children
