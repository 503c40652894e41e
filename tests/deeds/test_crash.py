"""A kernel killed after sending a purchase and before recording its outcome: the next client
resolves the open intent through purchase-status and does not charge again."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest

from propertykit.sandbox import Sandbox

from ._dying_buyer import buy
from .conftest import BuyerFactory, charges, purchase_posts

# Each test starts a buying kernel, a process of its own (and the first, the forkserver that
# imports propertykit): slow, as every test that starts a Python process.
pytestmark = pytest.mark.slow

#: Seconds a child may take to buy or die (a failure past them, never a measured figure).
CHILD_LIMIT = 60.0


@dataclass
class Child:
    """A buying kernel (:func:`tests.deeds._dying_buyer.buy`): its process, and the pipe on
    which it says ``"survived"`` (or its traceback)."""

    process: BaseProcess
    answer: Connection

    def said(self) -> str:
        """What it sent before it ended ("" if nothing: it was killed first)."""
        try:
            return str(self.answer.recv()) if self.answer.poll() else ""
        except EOFError:  # its end of the pipe closed with nothing sent
            return ""


def start_child(sb: Sandbox, journal: Path, title: str, die_in: str) -> Child:
    """A kernel of its own, forked by a forkserver that has imported propertykit once, buying
    ``title`` on ``sb``; it SIGKILLs itself on entering ``die_in`` (none if empty). Its key is
    in its environment, never among its arguments."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.deeds._dying_buyer"])  # before its first process
    environment = {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}
    answer, sending = context.Pipe(duplex=False)
    process = context.Process(
        target=buy, args=(sb.url, str(journal), title, die_in, environment, sending)
    )
    process.start()
    sending.close()
    return Child(process, answer)


def run_child(
    sb: Sandbox,
    journal: Path,
    title: str,
    *,
    die_in: str = "propertykit.deeds._journal.Journal.record_outcome",
) -> Child:
    """Run a buying kernel that SIGKILLs itself on entering ``die_in``, to its end."""
    child = start_child(sb, journal, title, die_in)
    child.process.join(CHILD_LIMIT)
    if child.process.is_alive():
        child.process.kill()
        child.process.join()
        pytest.fail(f"the buying kernel did not end within {CHILD_LIMIT:.0f} s")
    return child


@pytest.mark.parametrize("delivery_delay", [0.0, 3600.0], ids=["delivered", "delivering"])
def test_killed_after_sending_then_new_client_does_not_charge_again(
    fresh_sandbox: Sandbox,
    make_buyer: BuyerFactory,
    tmp_path: Path,
    delivery_delay: float,
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[40]
    sb.set_delivery_delay(delivery_delay)
    journal = tmp_path / "title-deeds.jsonl"

    child = run_child(sb, journal, title)

    said = child.said()
    assert child.process.exitcode == -signal.SIGKILL, said
    assert "survived" not in said
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
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, tmp_path: Path
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[41]
    journal = tmp_path / "title-deeds.jsonl"
    child = run_child(
        sb,
        journal,
        title,
        die_in="propertykit.deeds._transport.HttpPurchaseTransport.send_purchase",
    )
    assert child.process.exitcode == -signal.SIGKILL, child.said()
    assert purchase_posts(sb, title) == 0
    buyer = make_buyer(sb, journal=journal)
    [open_intent] = buyer.journal.open_intents()

    purchase = buyer.buy(title)

    assert not purchase.previously_bought
    assert purchase.idempotency_key == open_intent.idempotency_key
    assert [c.idempotency_key for c in charges(sb, title)] == [open_intent.idempotency_key]
    assert purchase_posts(sb, title) == 1


def test_killed_by_another_process_while_waiting_for_the_answer(
    fresh_sandbox: Sandbox, make_buyer: BuyerFactory, tmp_path: Path
) -> None:
    sb, title = fresh_sandbox, fresh_sandbox.title_numbers[42]
    # The sandbox charges, then holds the answer back: the child is waiting when it is killed.
    sb.inject_fault("slow_after_charge", delay=20, path_contains=f"/{title}/purchase")
    journal = tmp_path / "title-deeds.jsonl"
    child = start_child(sb, journal, title, die_in="")
    try:
        for _ in range(1200):  # wait (at most ~60 s) for the charge, not for a set time
            if charges(sb, title) or not child.process.is_alive():
                break
            time.sleep(0.05)
        assert child.process.is_alive(), child.said()
        assert len(charges(sb, title)) == 1
    finally:
        child.process.kill()  # SIGKILL
        child.process.join(CHILD_LIMIT)
    assert child.process.exitcode == -signal.SIGKILL

    buyer = make_buyer(sb, journal=journal)
    [open_intent] = buyer.journal.open_intents()
    purchase = buyer.buy(title)

    assert purchase.previously_bought
    assert purchase.idempotency_key == open_intent.idempotency_key
    assert purchase_posts(sb, title) == 1
    assert len(charges(sb, title)) == 1
