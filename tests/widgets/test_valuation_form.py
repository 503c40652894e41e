"""ValuationForm driven from Python against the sandbox: a property picked, Value pressed, what
the user sees (the range, the comparables, the map, messages in plain words)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import pandas as pd
import pytest

import propertykit as pk
from propertykit.client import Client, Clock
from propertykit.frames import frame
from propertykit.sandbox import Sandbox, serve
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


@dataclass
class Valued:
    """The valuable home valued by a form on a sandbox of its own (radius 3,000 m, as of AS_OF)."""

    sandbox: Sandbox
    form: ValuationForm


@pytest.fixture(scope="module")
def valued_on(
    valuable_home: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], Valued]]:
    """``valued_on(profile)``: the subject valued once per module and profile (a neighbourhood
    fetched, valued and mapped: about half a second), for the tests that only read the form."""
    made: dict[str, Valued] = {}
    with ExitStack() as stack:

        def valued_on(profile: str) -> Valued:
            if profile not in made:
                sb = stack.enter_context(serve(profile=profile))
                cache = tmp_path_factory.mktemp(f"valued-{profile}") / "cache.sqlite"
                client = stack.enter_context(
                    Client(
                        sb.api_key,
                        sb.url,
                        cache=cache,
                        progress=False,
                        profile=profile,
                        clock=Clock(sleep=[].append, random=random.Random(0)),
                    )
                )
                form = ValuationForm(client, radius_m=3000)
                form.subject.value, form.as_of.value = valuable_home[0], AS_OF
                form.value_button.click()
                made[profile] = Valued(sb, form)
            return made[profile]

        yield valued_on


@pytest.fixture(scope="module")
def homes() -> pd.DataFrame:
    """3,000 generated homes as a frame, for the forms given a frame (they never change it)."""
    return frame(generate_records(3000))


def assert_plain(form: ValuationForm) -> None:
    shown = form.message.value + form.status.value + form.table.value + form.range.value
    assert "Traceback" not in shown and "attrs[" not in shown and "InvalidInput" not in shown


def test_an_id_is_fetched_with_its_neighbourhood_and_valued(
    sandbox, make_client, subject, valued_on
):
    assert ValuationForm(make_client(sandbox)).results.layout.display == "none"  # until valued
    valued = valued_on("spec")
    form = valued.form
    assert form.evidence is not None and form.results.layout.display is None
    value = form.evidence.value
    assert not value["thin"] and value["lower"] < value["estimate"] < value["upper"]
    assert f"£{value['estimate']:,.0f}" in text_of(form.range.value)
    assert text_of(form.table.value).count("Sold") == 1  # the heading, once
    assert form.table.value.count("<tr>") == 1 + int(value["comparables"])
    (output,) = form.map_output.outputs
    assert PLOTLY_MIME in output["data"]
    assert len(requests_to(valued.sandbox, "/v1/property/query")) >= 1
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


def test_a_property_picked_from_a_frame_costs_nothing(sandbox, make_client, homes):
    client = make_client(sandbox)
    df = homes
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


def test_too_little_evidence_gives_no_value_in_words(sandbox, make_client, homes):
    form = ValuationForm(make_client(sandbox), frame=homes)
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


def test_the_range_is_in_pounds_on_both_profiles(profile, valued_on, subject):
    form = valued_on(profile).form
    assert form.evidence is not None and form.value is not None
    assert form.value.attrs["money_unit"] == ("minor" if profile == "vepler" else "major")
    pounds = form.value.pk.in_pounds().pk.valuation([subject[1]], as_of=AS_OF)
    estimate = form.evidence.value["estimate"]
    assert estimate == pytest.approx(pounds["estimate"].iloc[0])
    assert f"£{estimate:,.0f}" in text_of(form.range.value)
