"""A kernel killed after sending a purchase and before recording its outcome: the next client
resolves the open intent through purchase-status and does not charge again."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from propertykit.sandbox import Sandbox
from tests._system import NewProcess

from .conftest import BuyerFactory, charges, purchase_posts

# The child buys a title and SIGKILLs itself on entering ``die_in``: by default the moment the
# outcome would be written, so the request was sent and answered (and charged) and nothing after
# the intent reached the journal.
CHILD = textwrap.dedent(
    """
    import importlib, os, signal, sys
    from propertykit.client import Client

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    if sys.argv[4]:
        module, owner, method = sys.argv[4].rsplit(".", 2)
        setattr(getattr(importlib.import_module(module), owner), method, die)
    client = Client(base_url=sys.argv[1], cache=False, journal=sys.argv[2])
    client.buy_title_deed(sys.argv[3])
    print("survived", flush=True)
    """
)


def child_command(sb: Sandbox, journal: Path, title: str, die_in: str) -> list[str]:
    return ["-c", CHILD, sb.url, str(journal), title, die_in]


def child_env(sb: Sandbox) -> dict[str, str]:
    return {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}  # never on the command line


def run_child(
    new_process: NewProcess,
    sb: Sandbox,
    journal: Path,
    title: str,
    *,
    die_in: str = "propertykit.deeds.journal.Journal.record_outcome",
) -> subprocess.CompletedProcess[str]:
    """Run a buying kernel that SIGKILLs itself on entering ``die_in``."""
    return new_process.run(
        *child_command(sb, journal, title, die_in), env=child_env(sb), timeout=60
    )


@pytest.mark.parametrize("delivery_delay", [0.0, 3600.0], ids=["delivered", "delivering"])
def test_killed_after_sending_then_new_client_does_not_charge_again(
    fresh_sandbox: Sandbox,
    make_buyer: BuyerFactory,
    new_process: NewProcess,
    tmp_path: Path,
    delivery_delay: float,
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[40]
    sb.set_delivery_delay(delivery_delay)
    journal = tmp_path / "title-deeds.jsonl"

    child = run_child(new_process, sb, journal, title)

    assert child.returncode == -signal.SIGKILL, child.stderr
    assert "survived" not in child.stdout
    assert purchase_posts(sb, title) == 1
    [charge] = charges(sb, title)
    buyer = make_buyer(sb, journal=journal)
    [open_intent] = buyer.journal.open_intents()
    assert open_intent.idempotency_key == charge.idempotency_key

    purchase = buyer.buy(title)

    assert purchase.previously_bought
    assert purchase.money_state == "charged"
    assert purchase.status == ("delivered" if delivery_delay == 0 else "delivering")
    assert purchase.idempotency_key == charge.idempotency_key
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
    assert buyer.journal.open_intents() == []
    assert sb.api_key not in journal.read_text()


def test_killed_before_sending_then_new_client_buys_once_with_the_same_key(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, new_process: NewProcess, tmp_path: Path
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[41]
    journal = tmp_path / "title-deeds.jsonl"
    child = run_child(
        new_process,
        sb,
        journal,
        title,
        die_in="propertykit.deeds.transport.HttpPurchaseTransport.send_purchase",
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert purchase_posts(sb, title) == 0
    buyer = make_buyer(sb, journal=journal)
    [open_intent] = buyer.journal.open_intents()

    purchase = buyer.buy(title)

    assert not purchase.previously_bought
    assert purchase.idempotency_key == open_intent.idempotency_key
    assert [c.idempotency_key for c in charges(sb, title)] == [open_intent.idempotency_key]
    assert purchase_posts(sb, title) == 1


def test_killed_by_another_process_while_waiting_for_the_answer(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, new_process: NewProcess, tmp_path: Path
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[42]
    # The sandbox charges, then holds the answer back: the child is waiting when it is killed.
    sb.inject_fault("slow_after_charge", delay=20, path_contains=f"/{title}/purchase")
    journal = tmp_path / "title-deeds.jsonl"
    child = new_process.start(*child_command(sb, journal, title, die_in=""), env=child_env(sb))
    try:
        for _ in range(1200):  # wait (at most ~60 s) for the charge, not for a set time
            if charges(sb, title) or child.poll() is not None:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()
        assert len(charges(sb, title)) == 1
    finally:
        child.kill()  # SIGKILL
        child.communicate()
    assert child.returncode == -signal.SIGKILL

    buyer = make_buyer(sb, journal=journal)
    [open_intent] = buyer.journal.open_intents()
    purchase = buyer.buy(title)

    assert purchase.previously_bought
    assert purchase.idempotency_key == open_intent.idempotency_key
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
