"""ValuationForm driven from Python against the sandbox: a property picked, Value pressed, what
the user sees (the range, the comparables, the map, messages in plain words)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import pandas as pd
import pytest

import propertykit as pk
from propertykit.client import Client, Clock
from propertykit.frames import frame
from propertykit.sandbox import Sandbox, generate_records, serve
from propertykit.views._valuation_page import rounded
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
    assert "NaN" not in shown and "<NA>" not in shown


def test_an_id_is_fetched_with_its_neighbourhood_and_valued(
    sandbox, make_client, subject, valued_on
):
    assert ValuationForm(make_client(sandbox)).results.layout.display == "none"  # until valued
    valued = valued_on("spec")
    form = valued.form
    assert form.appraisal is not None and form.results.layout.display is None
    value = form.appraisal.values.iloc[0]
    assert not value["thin"] and value["lower"] < value["estimate"] < value["upper"]
    assert rounded(value["lower"]) in text_of(form.range.value)
    assert f"£{value['estimate']:,.0f}" not in text_of(form.range.value)  # rounded, not to £1
    table = form.table.value
    assert table.count("<tr>") >= 1 + int(value["comparables"])  # the numbered schedule
    assert "This valuation (comparable sales)" in table  # told apart from the service's figure
    assert "£/sq ft" not in table and "GBP" not in table
    (output,) = form.map_output.outputs
    assert PLOTLY_MIME in output["data"]
    assert len(requests_to(valued.sandbox, "/v1/property/query")) >= 1
    own = form.value.set_index("propertyId").loc[subject[1]]
    said = form.value.attrs["neighbourhood"]  # then its outcode's homes, when too few to fit
    around = form.value.iloc[: said["fetched"] + 1]
    assert set(around["propertyType"]) == {own["propertyType"]}  # only homes like it around it
    assert (
        around["floorAreaSqM"].between(own["floorAreaSqM"] / 1.5, own["floorAreaSqM"] * 1.5).all()
    )
    assert form.appraisal.search.radius_m == 3000  # searched within what was fetched
    said, count = text_of(form.message.value), int(value["comparables"])
    if value["confidence"] == "low":  # a range everywhere: never a green "Valued from" over it
        assert f"A range only, low confidence, from {count} comparable sales" in said
        assert "Valued from" not in said and "pk-warn" in form.message.value
        assert rounded(value["estimate"]) not in text_of(form.range.value + form.table.value)
    else:
        assert f"Valued from {count} comparable sales" in said
    assert_plain(form)


def test_the_date_found_stays_when_the_radius_changes(sandbox, make_client, subject):
    """The default date moved with the radius (6 March -> 15 April 2025): the date found is
    written in the box and kept; another property clears it."""
    form = ValuationForm(make_client(sandbox), radius_m=3000)
    form.subject.value = subject[0]
    form.value_button.click()
    assert form.appraisal is not None
    found = form.as_of.value
    assert found == f"{form.appraisal.values['as_of'].iloc[0]:%Y-%m-%d}"
    form.radius.value = 8000
    form.value_button.click()
    assert form.as_of.value == found
    assert f"{form.appraisal.values['as_of'].iloc[0]:%Y-%m-%d}" == found
    form.subject.value = "L00000001"
    assert form.as_of.value == ""  # another property: its own date is found


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
    assert form.appraisal is not None and form.value is df
    assert form.appraisal.values["estimate"].iloc[0] == pytest.approx(
        df.pk.valuation(["PK00000505"], as_of="2025-01-01")["estimate"].iloc[0], nan_ok=True
    )
    assert client.usage.requests_sent == 0 and len(sandbox.requests) == before
    assert "0 requests sent" in text_of(form.message.value)


@pytest.mark.parametrize(
    ("typed", "as_of", "said"),
    [
        ("", "", "type an id or pick a property"),
        ("L1, L2", "", "type one id"),
        ("not an id!", "", "type one id"),
        ("L00000001", "next tuesday", "Nothing was sent"),
        ("L00000001", "2025-13-45", "2025-13-45"),
        ("L00000001", "2030-01-01", "after today"),
    ],
)
def test_bad_input_is_said_and_nothing_is_sent(sandbox, make_client, typed, as_of, said):
    before = len(sandbox.requests)
    form = ValuationForm(make_client(sandbox))
    form.subject.value, form.as_of.value = typed, as_of
    form.value_button.click()
    assert said in text_of(form.message.value)
    assert len(sandbox.requests) == before and form.appraisal is None
    assert_plain(form)


@pytest.mark.parametrize(
    ("radius", "months", "said"),
    [(0, 24, "above 0 and at most 8,000"), (9000, 24, "at most 8,000"),
     (2000, 0, "months must be a positive whole number")],
)  # fmt: skip
def test_a_search_that_cannot_be_made_is_said_and_nothing_is_sent(
    fresh_sandbox, make_client, radius, months, said
):
    form = ValuationForm(make_client(fresh_sandbox))
    form.subject.value, form.radius.value, form.months.value = "L00000001", radius, months
    form.value_button.click()
    assert said in text_of(form.message.value) and "Nothing was sent" in text_of(form.message.value)
    assert fresh_sandbox.requests == [] and fresh_sandbox.credits_charged == 0


def test_a_home_without_a_floor_area_names_the_id_typed_and_what_it_spent(
    fresh_sandbox, make_client
):
    form = ValuationForm(make_client(fresh_sandbox))
    form.subject.value = "L00000023"
    form.value_button.click()
    said = text_of(form.message.value)
    assert "L00000023 has no floor area" in said and "1 request sent" in said
    assert fresh_sandbox.credits_charged == 1 and form.appraisal is None  # main: 31


def test_an_id_with_no_record_is_said(sandbox, make_client):
    form = ValuationForm(make_client(sandbox))
    form.subject.value = "L09999999"
    form.value_button.click()
    assert "No property was found for L09999999" in text_of(form.message.value)
    assert form.appraisal is None


def test_too_little_evidence_says_how_many_of_how_many_and_what_to_change(
    sandbox, make_client, homes
):
    form = ValuationForm(make_client(sandbox), frame=homes)
    form.picker.value = "PK00000007"
    form.as_of.value = "2025-01-01"
    form.value_button.click()
    assert "Too few comparable sales for an estimate (0 requests sent" in text_of(
        form.message.value
    )
    said = text_of(form.range.value)
    assert "No estimate" in said and re.search(
        r"\b1 comparable sale found|\d+ comparable sales found", said
    )
    assert "found of the 5 needed" in said
    assert "wider radius" in said and "more months" in said and "£" not in said


def test_a_failure_clears_the_previous_subjects_results(sandbox, make_client, homes):
    form = ValuationForm(make_client(sandbox), frame=homes)
    form.picker.value, form.as_of.value = "PK00000505", "2025-01-01"
    form.value_button.click()
    assert form.results.layout.display is None
    form.as_of.value = "2025-13-45"
    form.value_button.click()
    assert form.results.layout.display == "none" and form.appraisal is None
    assert form.table.value == "" and form.range.value == ""


def test_a_service_error_is_plain_words(fresh_sandbox, make_client, subject):
    client = make_client(fresh_sandbox, budget=1)
    form = ValuationForm(client)
    form.subject.value = subject[0]
    form.value_button.click()  # the subject costs the budget's one request; the query is refused
    assert "budget" in text_of(form.message.value)
    assert form.appraisal is None and not form.value_button.disabled
    assert_plain(form)


def test_it_is_exported_and_shows_as_a_widget(sandbox, make_client):
    form = pk.widgets.ValuationForm(make_client(sandbox))
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "ValuationForm" in pk.widgets.__all__


def test_the_range_is_in_pounds_on_both_profiles(profile, valued_on, subject):
    form = valued_on(profile).form
    assert form.appraisal is not None and form.value is not None
    assert form.value.attrs["money_unit"] == ("minor" if profile == "vepler" else "major")
    pounds = form.value.pk.in_pounds().pk.valuation([subject[1]], as_of=AS_OF, radius_m=3000)
    value = form.appraisal.values.iloc[0]
    assert value["estimate"] == pytest.approx(pounds["estimate"].iloc[0])
    assert rounded(value["upper"]) in text_of(form.range.value)
