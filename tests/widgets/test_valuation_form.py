"""ValuationForm driven from Python against the sandbox: a property picked, Value pressed, what
the user sees (the range, the comparables, the map, messages in plain words)."""

from __future__ import annotations

import pytest

import propertykit as pk
from propertykit.frames import frame
from propertykit.sandbox.data import generate_records
from propertykit.widgets import ValuationForm

from .conftest import requests_to, text_of

#: Every test here talks to a local sandbox: none may hang.
pytestmark = pytest.mark.timeout(120)

PLOTLY_MIME = "application/vnd.plotly.v1+json"
AS_OF = "2025-06-01"


@pytest.fixture
def subject(valuable_home: tuple[str, str]) -> tuple[str, str]:
    """A home of the default sandbox with enough comparables within 2 km: (location id,
    propertyId)."""
    return valuable_home


def assert_plain(form: ValuationForm) -> None:
    shown = form.message.value + form.status.value + form.table.value + form.range.value
    assert "Traceback" not in shown and "attrs[" not in shown and "InvalidInput" not in shown


def test_an_id_is_fetched_with_its_neighbourhood_and_valued(sandbox, make_client, subject):
    client = make_client(sandbox)
    form = ValuationForm(client, radius_m=3000)
    assert form.results.layout.display == "none"
    form.subject.value, form.as_of.value = subject[0], AS_OF
    form.value_button.click()
    assert form.evidence is not None and form.results.layout.display is None
    value = form.evidence.value
    assert not value["thin"] and value["lower"] < value["estimate"] < value["upper"]
    assert f"£{value['estimate']:,.0f}" in text_of(form.range.value)
    assert text_of(form.table.value).count("Sold") == 1  # the heading, once
    assert form.table.value.count("<tr>") == 1 + int(value["comparables"])
    (output,) = form.map_output.outputs
    assert PLOTLY_MIME in output["data"]
    assert len(requests_to(sandbox, "/v1/property/query")) >= 1
    own = form.value.set_index("propertyId").loc[subject[1]]
    assert set(form.value["propertyType"]) == {own["propertyType"]}  # only homes like it paid for
    assert (
        form.value["floorAreaSqM"]
        .between(own["floorAreaSqM"] / 1.5, own["floorAreaSqM"] * 1.5)
        .all()
    )
    assert f"Valued from {int(value['comparables'])} comparable sales" in text_of(
        form.message.value
    )
    assert_plain(form)


def test_a_property_picked_from_a_frame_costs_nothing(sandbox, make_client):
    client = make_client(sandbox)
    df = frame(generate_records(3000))
    before = len(sandbox.requests)
    form = ValuationForm(client, frame=df)
    assert len(form.picker.options) == 1 + 2000  # a long list is cut, and says so
    assert "first 2,000 of 3,000 properties" in text_of(form.picker_note.value)
    form.picker.value = "PK00000505"
    form.as_of.value = "2025-01-01"
    form.value_button.click()
    assert form.evidence is not None and form.value is df
    assert form.evidence.value["estimate"] == pytest.approx(
        df.pk.valuation(["PK00000505"], as_of="2025-01-01")["estimate"].iloc[0]
    )
    assert client.usage.requests_sent == 0 and len(sandbox.requests) == before
    assert "0 requests sent" in text_of(form.message.value)


@pytest.mark.parametrize(
    ("typed", "as_of", "said"),
    [
        ("", "", "type an id or pick a property"),
        ("L1, L2", "", "type one id"),
        ("not an id!", "", "type one id"),
        ("L00000001", "next tuesday", "must be a date such as 2025-01-01"),
    ],
)
def test_bad_input_is_said_and_nothing_is_sent(sandbox, make_client, typed, as_of, said):
    before = len(sandbox.requests)
    form = ValuationForm(make_client(sandbox))
    form.subject.value, form.as_of.value = typed, as_of
    form.value_button.click()
    assert said in text_of(form.message.value)
    assert len(sandbox.requests) == before and form.evidence is None
    assert_plain(form)


def test_an_id_with_no_record_is_said(sandbox, make_client):
    form = ValuationForm(make_client(sandbox))
    form.subject.value = "L09999999"
    form.value_button.click()
    assert "No property was found for L09999999" in text_of(form.message.value)
    assert form.evidence is None


def test_too_little_evidence_gives_no_value_in_words(sandbox, make_client):
    df = frame(generate_records(3000))
    form = ValuationForm(make_client(sandbox), frame=df)
    form.picker.value = "PK00000007"
    form.as_of.value = "2025-01-01"
    form.value_button.click()
    assert "No estimate" in text_of(form.range.value)
    assert "Too few comparable sales" in text_of(form.message.value)
    assert "£" not in text_of(form.range.value)


def test_a_service_error_is_plain_words(fresh_sandbox, make_client, subject):
    client = make_client(fresh_sandbox, budget=1)
    form = ValuationForm(client)
    form.subject.value = subject[0]
    form.value_button.click()  # the subject costs the budget's one request; the query is refused
    assert "budget" in text_of(form.message.value)
    assert form.evidence is None and not form.value_button.disabled
    assert_plain(form)


def test_it_is_exported_and_shows_as_a_widget(sandbox, make_client):
    form = pk.widgets.ValuationForm(make_client(sandbox))
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "ValuationForm" in pk.widgets.__all__


def test_the_range_is_in_pounds_on_both_profiles(profiled_sandbox, make_client, subject):
    client = make_client(profiled_sandbox, profile=profiled_sandbox.profile)
    form = ValuationForm(client, radius_m=3000)
    form.subject.value, form.as_of.value = subject[0], AS_OF
    form.value_button.click()
    assert form.evidence is not None and form.value is not None
    assert form.value.attrs["money_unit"] == (
        "minor" if profiled_sandbox.profile == "vepler" else "major"
    )
    pounds = form.value.pk.in_pounds().pk.valuation([subject[1]], as_of=AS_OF)
    estimate = form.evidence.value["estimate"]
    assert estimate == pytest.approx(pounds["estimate"].iloc[0])
    assert f"£{estimate:,.0f}" in text_of(form.range.value)
