"""Every sentence the lookup form can show is in plain words: no word of code.

The form is driven through every path a user can take (bad ids of each kind, each error the
service answers with, search-suggest, each malformed area of the Find tab) and everything it
then shows is read as a user reads it: messages, the status line, notes, hints, captions, labels
and placeholders. None may hold ``'value'``, ``got ''``, ``(s)`` or a quoted Python value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import ipywidgets as widgets
import pytest

from propertykit import Endpoints, errors
from propertykit.sandbox import Sandbox
from propertykit.widgets import LookupForm
from propertykit.widgets import _messages as words

from .conftest import text_of

pytestmark = pytest.mark.timeout(300)

#: Words of code a person should never read in a form.
CODE_WORDS = (
    re.compile(r"'value'"),
    re.compile(r"got ''"),
    re.compile(r"\(s\)"),
    re.compile(r"(?<!\w)'[^'\n]*'(?!\w)"),  # a repr-style 'quoted' value
    re.compile(r"(?<![\w“])\"[^\"\n]*\"(?!\w)"),  # or a "double-quoted" one
    re.compile(r"\b(None|True|False|NaN|nan)\b"),
    re.compile(r"\w+=\w"),  # keyword=argument
    re.compile(r"<provider>"),
    re.compile(r"\bHTTP\b|\(\d{3}\)"),  # a status code
    re.compile(r"\b[a-z]+_[a-z_]+\b"),  # a code name, such as rate_limit_exceeded
    # and the words of a program rather than of a form:
    re.compile(r"run the same request again|no problem reported|\bid\(s\)"),
)
#: Style sheets and tables of data, left out of what is read as sentences.
DATA = re.compile(r"<style>.*?</style>|<table.*?</table>", re.S)
AFTERNOON = datetime(2025, 6, 2, 15, 0, tzinfo=UTC)


def code_words_in(text: str) -> list[str]:
    return [match.group(0) for pattern in CODE_WORDS for match in pattern.finditer(text)]


def test_the_code_word_check_catches_what_the_issue_saw():
    """The check itself: each sentence the issue quoted is caught; plain ones pass."""
    for seen in (
        "Location id 'L 2' contains ' '",
        "outcode area needs a UK outcode as 'value', got ''",
        "1 id(s) cannot be sent",
        "Go online (offline=False) to fetch it.",
        "Add credit, then run the same request again.",
        "credit: no problem reported",
    ):
        assert code_words_in(seen), seen
    assert code_words_in("The account's budget; the client's cache: “L 2” has a space in it.") == []
    for seen in ("Not found (HTTP 404).", "The service said: rate_limit_exceeded"):
        assert code_words_in(seen), seen


def shown(widget: widgets.Widget) -> Iterator[str]:
    """Every text a widget tree puts on screen (values of HTML, labels, placeholders...)."""
    if isinstance(widget, widgets.HTML | widgets.Label):
        yield text_of(DATA.sub("", widget.value))  # the words around a table, not its data
    for name in ("description", "placeholder", "tooltip"):
        value = getattr(widget, name, None)
        if isinstance(value, str) and value:
            yield value
    yield from getattr(widget, "titles", ()) or ()
    if isinstance(widget, widgets.Output):
        for output in widget.outputs:
            yield output.get("data", {}).get("text/plain", "")
    for child in getattr(widget, "children", ()):
        yield from shown(child)


class Screen:
    """Collects what a form shows after each step."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def assert_plain(self, *expected: str) -> None:
        """No code words in anything seen; and each ``expected`` was seen (its path was taken)."""
        assert {text: code_words_in(text) for text in self.seen if code_words_in(text)} == {}
        said = " ".join(self.seen)
        assert [words for words in expected if words not in said] == []

    def read(self, form: LookupForm, step: str) -> None:
        for text in shown(form.widget):
            if text.strip():
                self.seen.setdefault(text, step)


@pytest.fixture
def screen() -> Screen:
    return Screen()


def test_every_message_of_the_ids_tab_is_plain_words(
    fresh_sandbox: Sandbox, make_client, screen: Screen
):
    sb = fresh_sandbox
    form = LookupForm(make_client(sb, max_retries=0))
    screen.read(form, "empty form")
    for text in (
        "L 1",
        "a/b",
        "L\t1",
        "L\x071",
        ".",
        "..",
        "zoopla::",
        "::12",
        "rightmove:12",
        "rightmove-123",
        "rightmove-1, zoopla_2, epc.3",
        "a b, c/d, e?f, g#h, i j, k l, m n",
        "L00000001, rightmove::100000003",
    ):
        form.ids.value = text
        screen.read(form, f"ids {text!r}")
        form.fetch_button.click()
        screen.read(form, f"fetch {text!r}")
    form.ids.value = ""
    form.fetch_button.click()
    screen.read(form, "fetch nothing")

    form.ids.value = "L00000001, L09999999"
    form.fetch_button.click()
    form.all_columns.value = True
    screen.read(form, "an unknown id")
    form.ids.value = "L09999999"
    form.fetch_button.click()
    screen.read(form, "only an unknown id")
    form.ids.value = ", ".join(sb.location_ids[:120])
    form.fetch_button.click()
    screen.read(form, "a long table")

    failures = {
        "401": lambda: make_client(sb, api_key="pk_live_" + "0" * 32),
        "403": lambda: make_client(
            sb, endpoints=Endpoints(properties_path="/v1/property/records/{locationIds}")
        ),
        "offline": lambda: make_client(sb, offline=True, cache=False),
        "budget": lambda: make_client(sb, budget=0),
    }
    for step, make in failures.items():
        other = LookupForm(make())
        other.ids.value = "L00000042"
        other.fetch_button.click()
        screen.read(other, step)

    form.ids.value = "L00000050"
    for step, fault in (("500", "error"), ("reset", "reset")):
        sb.inject_fault(fault, status=500, count=1)
        form.fetch_button.click()
        screen.read(form, step)
    sb.set_balance(0)
    form.fetch_button.click()
    screen.read(form, "402")
    sb.add_credit(1000)
    sb.set_now(AFTERNOON)
    sb.set_daily_cap(0)
    form.fetch_button.click()
    screen.read(form, "daily cap")

    screen.assert_plain(
        "API key was refused",
        "too little credit",
        "may not use this part of the service",
        "The service failed",
        "daily credit cap",
        "Offline mode",
        "budget",
        "Could not reach",
        "Earlier results",
        "No property was found for 1 id: L09999999",
        "Show the main columns",
    )


def test_every_message_of_search_and_the_find_tab_is_plain_words(
    fresh_sandbox: Sandbox, make_client, scheduler, clock, screen: Screen
):
    sb = fresh_sandbox
    client = make_client(sb, endpoints=Endpoints(suggest_per_minute=None), max_retries=0)
    form = LookupForm(client, scheduler=scheduler, clock=clock, suggest_per_minute=2)
    for query in (sb.record(0)["address"]["postcode"], "Zzzzqqq", "Flat 3"):
        form.search.value = query
        scheduler.run_pending()
        screen.read(form, f"search {query!r}")
    finder = form.finder
    for kind, value in (
        ("postcode", ""),
        ("postcode", "SW1A"),
        ("postcode", "not a postcode"),
        ("outcode", ""),
        ("outcode", "SW1A 1AA"),
    ):
        finder.area_type.value, finder.area_value.value = kind, value
        finder.find_button.click()
        screen.read(form, f"{kind} {value!r}")
    finder.area_type.value = "point"
    finder.latitude.value = 100
    finder.find_button.click()
    screen.read(form, "point out of range")
    finder.latitude.value = 51.5
    finder.radius.value = 0
    finder.find_button.click()
    screen.read(form, "radius 0")
    finder.area_type.value, finder.area_value.value = "outcode", "DH1"
    finder.price_min.value = -5
    finder.find_button.click()
    screen.read(form, "negative price")
    finder.price_min.value, finder.price_max.value = 300_000, 200_000
    finder.find_button.click()
    screen.read(form, "crossed prices")
    finder.price_min.value = finder.price_max.value = 0
    finder.find_button.click()
    screen.read(form, "found")
    sb.set_balance(0)
    finder.beds.value = (2,)  # a query not in the cache
    finder.find_button.click()
    screen.read(form, "402 on find")
    sb.set_suggest_limit(1)
    form.search.value = "Flat 9"
    clock.advance(120)
    scheduler.run_pending()
    form.search.value = "Flat 8"
    scheduler.run_pending()
    screen.read(form, "429 on suggest")

    screen.assert_plain(
        "is not a full UK postcode",
        "type an outcode",
        "longitude",
        "below £0",
        "Min £ is above Max £",
        "Found",
        "in DH1",
        "too little credit",
        "Too many requests",
        "match",
    )


def test_a_find_error_is_said_once(fresh_sandbox: Sandbox, make_client):
    form = LookupForm(make_client(fresh_sandbox))
    form.finder.area_type.value = "outcode"
    form.finder.find_button.click()
    shown_texts = [text for text in shown(form.widget) if "outcode" in text and "Nothing" in text]
    assert shown_texts == ["Nothing was sent: type an outcode (district) in Code, such as SW1A."]


@pytest.mark.parametrize(
    "error",
    [
        errors.AuthenticationError(401),
        errors.InsufficientCredit(402),
        errors.PermissionDenied(403, message="This endpoint is not available"),
        errors.NotFound(404, body="Not Found"),
        errors.DailyCapReached(429, retry_after=3600),
        errors.RateLimited(429, retry_after=30, message="limited to 1 requests per minute"),
        errors.ServerError(503),
        errors.ApiError(418, code="teapot"),
        errors.NetworkError("reset", kind="reset"),
        errors.NotCached("miss"),
        errors.BudgetExceeded("spent"),
        errors.PurchaseUncertain("?", title_number="T1"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_each_error_the_service_can_cause_reads_without_code(error):
    assert code_words_in(words.describe_error(error)) == []


def test_the_sentences_of_the_messages_module_read_without_code():
    constants = [
        value for name, value in vars(words).items() if name.isupper() and isinstance(value, str)
    ]
    assert len(constants) > 10
    assert {text: code_words_in(text) for text in constants if code_words_in(text)} == {}
