"""``propertykit deeds list`` shows the journal, open intents marked as unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propertykit.cli import main
from propertykit.deeds import Journal

SERVICE = "http://127.0.0.1:8000"


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    journal = Journal(tmp_path / "deeds.jsonl")
    journal.record_intent("NGL1", "key-one", service=SERVICE)
    journal.record_outcome(
        "NGL1", "key-one", service=SERVICE, money_state="charged", status="delivered"
    )
    journal.record_intent("NGL2", "key-two", service=SERVICE)
    return journal.path


def test_deeds_list_shows_every_purchase_and_flags_open_ones(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["deeds", "list", "--journal", str(journal_path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == [
        "intent_at",
        "title_number",
        "money_state",
        "status",
        "idempotency_key",
        "service",
    ]
    assert "NGL1" in lines[1] and "charged" in lines[1] and "delivered" in lines[1]
    assert "NGL2" in lines[2] and "open (unknown)" in lines[2]
    assert "1 purchase of unknown outcome" in err


def test_deeds_list_open_json_gives_only_open_intents(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["deeds", "list", "--journal", str(journal_path), "--open", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["title_number"], row["idempotency_key"]) for row in rows] == [("NGL2", "key-two")]


def test_deeds_list_reads_the_cache_dir_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path))
    assert main(["deeds", "list"]) == 0
    assert capsys.readouterr().out.strip() == f"No purchases in {tmp_path / 'title-deeds.jsonl'}"
    Journal().record_intent("NGL9", "k9", service=SERVICE)
    assert main(["deeds", "list", "--title", "NGL9"]) == 0
    assert "NGL9" in capsys.readouterr().out
