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
    assert "Found 30 properties" in text_of(form.message.value)
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
    assert "Nothing was sent" in text_of(form.message.value)
    assert "Traceback" not in form.message.value
    assert form.value is None


def test_a_service_error_is_a_sentence(profiled, make_client):
    client = make_client(profiled, profile=profiled.profile, max_retries=0)
    profiled.set_balance(0)
    form = LookupForm(client)
    form.finder.area_type.value = "outcode"
    form.finder.area_value.value = "DH1"
    assert form.finder.find() == 0
    message = text_of(form.message.value)
    assert "credit" in message.lower() and "Traceback" not in message
