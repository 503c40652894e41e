"""The plain logic under the forms: reading pasted ids, debouncing, the suggest rate window."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from propertykit.client import parse_ids, validate_ids
from propertykit.errors import InvalidInput
from propertykit.widgets._timing import Debouncer, RateWindow, start_timer
from tests._hypothesis import examples

from .conftest import FakeClock, ManualScheduler


def test_ids_one_per_line_or_comma_separated_mixed_kinds_in_order():
    parsed = parse_ids(" L2 ,L1\r\n\nrightmove::9; zoopla::1,L2 ,, ")
    assert parsed.location_ids == ["L2", "L1"]
    assert parsed.source_ids == ["rightmove::9", "zoopla::1"]
    assert parsed.invalid == []
    assert parsed.count == 4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("L 1", "has a space in it"),
        ("a/b", "has “/” in it"),
        ("a\tb/c", "has a tab and “/” in it"),
        ("::12", "is not a source id (written provider::id, such as rightmove::123)"),
        ("zoopla::", "is not a source id"),
        ("rightmove:12", "has a single “:”"),
    ],
)
def test_invalid_ids_come_with_a_reason(text, reason):
    parsed = parse_ids(text)
    assert parsed.count == 0
    [(item, said)] = parsed.invalid
    assert item == text and reason in said


def client_refuses(item: str, *, source: bool) -> bool:
    try:
        validate_ids([item], source=source)
    except InvalidInput:
        return True
    return False


#: Text as people paste it: letters, digits and every character the id rules name.
PASTED = st.text(alphabet=st.sampled_from("aZ09:/,?#.-_ \t\u00a0\x07é"), min_size=1, max_size=12)


@settings(max_examples=examples(100))
@given(PASTED)
def test_the_form_refuses_what_the_client_refuses_and_sends_it_as_the_client_would(text):
    """One check: an id the form lets through is one the client sends, as that kind."""
    item = text.strip()
    parsed = parse_ids(item)
    if item in parsed.location_ids:
        assert not client_refuses(item, source=False)
    elif item in parsed.source_ids:
        assert not client_refuses(item, source=True)
    elif item and not any(sep in item for sep in ",;\n\r"):
        [(refused, _reason)] = parsed.invalid
        assert refused == item
        single_colon = "::" not in item and ":" in item  # the form's one stricter rule
        assert client_refuses(item, source="::" in item) or single_colon


@settings(max_examples=examples(100))
@given(st.lists(st.from_regex(r"[A-Za-z0-9]{1,8}(::[A-Za-z0-9]{1,8})?", fullmatch=True)))
def test_any_well_formed_ids_round_trip(ids):
    parsed = parse_ids("\n".join(ids))
    unique = list(dict.fromkeys(ids))
    assert parsed.invalid == []
    assert parsed.location_ids == [i for i in unique if "::" not in i]
    assert parsed.source_ids == [i for i in unique if "::" in i]


def test_debouncer_runs_only_the_last_value_once_typing_pauses():
    scheduler = ManualScheduler()
    seen: list[str] = []
    debounce = Debouncer(0.3, seen.append, scheduler=scheduler)
    for text in ("M", "Mi", "Mil"):
        debounce(text)
    assert scheduler.run_pending() == 1
    assert seen == ["Mil"]
    debounce("Mill")
    debounce.cancel()
    assert scheduler.run_pending() == 0


def test_default_scheduler_is_a_timer_thread_that_fires_in_the_background():
    fired = threading.Event()
    seen: list[str] = []

    def record(value: str) -> None:
        seen.append(value)
        fired.set()

    debounce = Debouncer(0.05, record, scheduler=start_timer)
    debounce("first")
    debounce("second")
    assert fired.wait(timeout=10)
    debounce.cancel()
    assert seen == ["second"]


def test_rate_window_refuses_beyond_the_limit_and_reopens_after_a_minute():
    clock = FakeClock()
    window = RateWindow(3, clock=clock)
    assert [window.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock.advance(20)
    assert window.acquire() == 40.0
    clock.advance(40)  # the three calls of second 0 have left the window
    assert [window.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock.advance(1)
    assert window.acquire() == 59.0


def test_rate_window_without_limit_never_refuses():
    window = RateWindow(None, clock=FakeClock())
    assert all(window.acquire() == 0.0 for _ in range(1000))
