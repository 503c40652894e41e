"""The purchase journal: append-only JSON lines, fsynced, crash-tolerant, never holding the key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from propertykit.deeds._journal import JOURNAL_FILENAME, Journal, default_journal_path

SERVICE = "http://127.0.0.1:8000"


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "deeds" / "journal.jsonl", clock=FakeClock())


def test_intent_without_outcome_is_an_open_intent(journal: Journal) -> None:
    journal.record_intent("NGL1", "key-1", service=SERVICE, payload={"reference": "x"})
    [record] = journal.open_intents()
    assert (record.title_number, record.idempotency_key, record.payload) == (
        "NGL1",
        "key-1",
        {"reference": "x"},
    )
    assert record.is_open and record.money_state is None


def test_outcome_closes_the_intent_and_keeps_the_answer(journal: Journal) -> None:
    journal.record_intent("NGL1", "key-1", service=SERVICE)
    journal.record_outcome(
        "NGL1", "key-1", service=SERVICE, money_state="charged", status="delivered", data={"a": 1}
    )
    assert journal.open_intents() == []
    charged = journal.charged(service=SERVICE, title_number="NGL1")
    assert charged is not None
    assert (charged.money_state, charged.status, charged.data) == ("charged", "delivered", {"a": 1})


def test_uncertain_attempt_leaves_the_intent_open(journal: Journal) -> None:
    journal.record_intent("NGL1", "key-1", service=SERVICE)
    journal.record_uncertain("NGL1", "key-1", service=SERVICE, detail="no answer")
    [record] = journal.open_intents()
    assert record.detail == "no answer"


def test_outcome_must_be_an_established_money_state(journal: Journal) -> None:
    with pytest.raises(ValueError, match="established"):
        journal.record_outcome("NGL1", "k", service=SERVICE, money_state="unknown")


def test_each_event_is_one_json_line_appended_in_order(journal: Journal) -> None:
    journal.record_intent("NGL1", "key-1", service=SERVICE)
    journal.record_outcome("NGL1", "key-1", service=SERVICE, money_state="not_charged")
    journal.record_intent("NGL2", "key-2", service=SERVICE)
    lines = journal.path.read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["intent", "outcome", "intent"]
    assert journal.path.read_text().endswith("\n")


def test_a_torn_last_line_is_skipped_and_the_next_append_stays_readable(journal: Journal) -> None:
    journal.record_intent("NGL1", "key-1", service=SERVICE)
    journal.record_outcome("NGL1", "key-1", service=SERVICE, money_state="charged")
    journal.record_intent("NGL2", "key-2", service=SERVICE)
    whole = journal.path.read_bytes()
    journal.path.write_bytes(whole[:-25])  # the kernel died mid-write of the last line
    assert [record.title_number for record in journal.purchases()] == ["NGL1"]
    journal.record_intent("NGL3", "key-3", service=SERVICE)
    titles = [record.title_number for record in journal.purchases()]
    assert titles == ["NGL1", "NGL3"]


def test_foreign_lines_are_skipped(journal: Journal) -> None:
    journal.path.parent.mkdir(parents=True)
    journal.path.write_text('not json\n{"event": "other"}\n[1, 2]\n')
    journal.record_intent("NGL1", "key-1", service=SERVICE)
    assert [record.title_number for record in journal.purchases()] == ["NGL1"]


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert Journal(tmp_path / "nothing.jsonl").purchases() == []


def test_purchases_are_kept_apart_per_service_and_title(journal: Journal) -> None:
    journal.record_intent("NGL1", "a", service=SERVICE)
    journal.record_intent("NGL1", "b", service="https://api.example.com/")
    journal.record_intent("NGL2", "c", service=SERVICE)
    assert [r.idempotency_key for r in journal.open_intents(service=SERVICE)] == ["a", "c"]
    assert [
        r.idempotency_key
        for r in journal.open_intents(service="https://api.example.com", title_number="NGL1")
    ] == ["b"]


def test_service_address_drops_user_information_and_query(journal: Journal) -> None:
    journal.record_intent("NGL1", "a", service="https://user:pw@api.example.com:8443/v?key=zz")
    text = journal.path.read_text()
    assert "pw" not in text and "zz" not in text and "user" not in text
    assert journal.purchases()[0].service == "https://api.example.com:8443/v"


def test_default_journal_lives_in_the_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path))
    assert default_journal_path() == tmp_path / JOURNAL_FILENAME
    assert Journal().path == tmp_path / JOURNAL_FILENAME


def test_times_come_from_the_injected_clock(journal: Journal) -> None:
    journal.record_intent("NGL1", "a", service=SERVICE)
    assert journal.purchases()[0].intent_at == datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)


def test_journal_file_is_private_to_the_user(journal: Journal) -> None:
    journal.record_intent("NGL1", "a", service=SERVICE)
    assert journal.path.stat().st_mode & 0o077 == 0
