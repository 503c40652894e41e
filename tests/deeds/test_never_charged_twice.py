"""Property: whatever the service and the network do, a title is charged at most once, and the
client's final word on the money matches the sandbox's ledger (or is "unknown", raised)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from propertykit import sandbox as sandbox_module
from propertykit.deeds import Purchase
from propertykit.errors import ApiError, PropertyKitError, PurchaseUncertain
from propertykit.sandbox import Sandbox
from tests._hypothesis import examples

from .conftest import Buyer, BuyerFactory, charges


@dataclass(frozen=True)
class Forced:
    money_state: str
    status: int
    charged: bool | None

    def apply(self, sb: Sandbox) -> None:
        sb.force_purchase_outcome(self.money_state, status=self.status, charged=self.charged)


@dataclass(frozen=True)
class Fault:
    kind: str
    count: int
    where: str  # "/purchase" meets purchases and purchase-status alike; "/purchase-status" only it

    def apply(self, sb: Sandbox) -> None:
        sb.inject_fault(self.kind, count=self.count, status=503, path_contains=self.where)


statuses = st.sampled_from([400, 409, 500, 502, 503])
# The service tells the truth about charged/not_charged; only "unknown" hides what happened.
forced = st.builds(
    Forced,
    money_state=st.sampled_from(["charged", "not_charged"]),
    status=statuses,
    charged=st.none(),
) | st.builds(Forced, money_state=st.just("unknown"), status=statuses, charged=st.booleans())
faults = st.builds(
    Fault,
    kind=st.sampled_from(["error", "reset", "reset_after_charge", "truncate"]),
    count=st.integers(1, 4),
    where=st.sampled_from(["/purchase", "/purchase-status"]),
)
scenarios = st.lists(forced | faults, max_size=5)


@pytest.fixture(scope="module")
def module_sandbox() -> Iterator[Sandbox]:
    with sandbox_module.serve() as sb:
        yield sb


@pytest.fixture(scope="module")
def titles(module_sandbox: Sandbox) -> Iterator[str]:
    return iter(module_sandbox.title_numbers)


@pytest.fixture
def buyer(module_sandbox: Sandbox, make_buyer: BuyerFactory, tmp_path: Path) -> Buyer:
    return make_buyer(module_sandbox, journal=tmp_path / "journal.jsonl", max_retries=2)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(scenario=scenarios, delivery_delay=st.sampled_from([0.0, 3600.0]))
def test_every_purchase_is_charged_at_most_once_and_its_money_state_matches_the_ledger(
    module_sandbox: Sandbox,
    titles: Iterator[str],
    buyer: Buyer,
    scenario: list[Forced | Fault],
    delivery_delay: float,
) -> None:
    sb, title = module_sandbox, next(titles)
    sb.clear_faults()
    sb.set_delivery_delay(delivery_delay)
    for step in scenario:
        step.apply(sb)

    outcome: Purchase | PropertyKitError
    try:
        outcome = buyer.buy(title)
    except PropertyKitError as exc:
        outcome = exc
    finally:
        sb.clear_faults()

    charged = len(charges(sb, title))
    records = buyer.journal.purchases(title_number=title)
    assert charged <= 1
    if isinstance(outcome, Purchase):
        assert (outcome.money_state, charged) == ("charged", 1)
        assert records[-1].money_state == "charged"
    elif isinstance(outcome, PurchaseUncertain):
        assert outcome.money_state == "unknown"
        assert records[-1].is_open
    elif isinstance(outcome, ApiError) and outcome.money_state == "charged":
        assert charged == 1
        assert records[-1].money_state == "charged"
    else:  # not charged: an error the service or the network gave before any charge
        assert charged == 0, outcome
        assert all(record.money_state == "not_charged" for record in records)

    # Afterwards, with the service healthy, the title is owned exactly once.
    again = buyer.buy(title)
    assert again.money_state == "charged"
    assert len(charges(sb, title)) == 1
    assert buyer.journal.open_intents(title_number=title) == []
