"""client.match_addresses against the sandbox's real address geography, over real HTTP: one row
per input in order, never a guess, cheap (at most three requests an address, a second call sends
nothing, a dry run exact for a cold list), resumable after an interruption, and accurate on the
sandbox's addresses typed as clients type them (``propertykit.sandbox._address_book``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.client import Client
from propertykit.errors import InvalidInput, RateLimited
from propertykit.sandbox import Sandbox, TypedAddress, serve, typed_addresses

pytestmark = pytest.mark.timeout(300)

#: Homes of the sandbox's world (the default), and rows of the client's list drawn from it.
HOMES = 5000
ROWS = 400
#: A per-minute limit high enough that no test waits on it (the sandbox's is raised to match).
FAST = 100_000


@pytest.fixture(scope="module")
def typed() -> list[TypedAddress]:
    return typed_addresses(ROWS, n_properties=HOMES)


@pytest.fixture(params=["spec", "vepler"])
def real_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox of the real address geography, per profile, its suggest limit raised."""
    with serve(profile=request.param, realism="real", n_properties=HOMES) as sb:
        sb.set_suggest_limit(FAST)
        yield sb


def fast_client(make_client: Callable[..., Client], sb: Sandbox, **kwargs: Any) -> Client:
    """A client whose own per-minute pacing does not slow the test (the sandbox's is raised)."""
    profile = getattr(sb, "profile", "spec")
    endpoints = (pk.Endpoints.vepler if profile == "vepler" else pk.Endpoints)(
        suggest_per_minute=FAST
    )
    return make_client(sb, endpoints=endpoints, **kwargs)


def address_requests(sb: Sandbox) -> int:
    return sum(1 for r in sb.requests if "suggest" in r.path or "autocomplete" in r.path)


@pytest.mark.parametrize(
    "bad", ["4 Mill Lane", b"4 Mill Lane", 42, {"a": "4 Mill Lane"}, pd.DataFrame({"a": [1]})]
)
def test_anything_but_a_list_or_series_is_refused_before_sending(
    sandbox: Sandbox, make_client: Callable[..., Client], bad: object
) -> None:
    client = make_client(sandbox)
    with pytest.raises(InvalidInput, match="list or pandas Series"):
        client.match_addresses(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="list or pandas Series"):
        client.match_addresses(bad, dry_run=True)  # type: ignore[call-overload]
    assert client.usage.requests_sent == 0


def test_one_row_per_input_in_order_and_odd_rows_answered(
    real_sandbox: Sandbox, make_client: Callable[..., Client], typed: list[TypedAddress]
) -> None:
    client = fast_client(make_client, real_sandbox)
    texts = [typed[0].text, "", None, 17, float("nan"), typed[1].text, typed[0].text]
    df = client.match_addresses(pd.Series(texts, index=list("abcdefg"), dtype=object))
    assert df.index.tolist() == list("abcdefg")
    assert list(df.columns[:7]) == ["input", "status", "locationId", "matched_address", "score",
                                   "candidates", "candidate_addresses"]  # fmt: skip
    assert df.loc[["b", "c", "d", "e"], "status"].tolist() == ["unmatched"] * 4
    assert df.loc["b", "reason"] == "blank: no address given"
    assert df.loc["d", "reason"] == "not text (int): no address to read"
    assert df.loc["a"].tolist()[1:] == df.loc["g"].tolist()[1:]  # the same text, the same answer
    assert df.attrs["charged"] == 0
    assert df.attrs["requests_sent"] <= 3 * 2  # two distinct addresses, at most three each


def test_a_second_call_sends_nothing_and_a_dry_run_counts_the_first_round(
    real_sandbox: Sandbox, make_client: Callable[..., Client], typed: list[TypedAddress]
) -> None:
    client = fast_client(make_client, real_sandbox)
    texts = [row.text for row in typed[:120]]
    planned = client.match_addresses(texts, dry_run=True)
    assert address_requests(real_sandbox) == 0
    assert planned.credits == 0 and planned.cached == 0
    assert planned.per_minute == FAST
    first = client.match_addresses(texts)
    sent = first.attrs["requests_sent"]
    assert sent == address_requests(real_sandbox)
    assert planned.requests <= sent <= planned.requests + planned.later
    assert sent <= 3 * planned.distinct and planned.requests + planned.later <= 3 * planned.distinct
    assert first.attrs["charged"] == 0
    again = client.match_addresses(texts)
    assert again.attrs["requests_sent"] == 0
    assert again.attrs["from_cache"] == sent
    assert address_requests(real_sandbox) == sent
    pd.testing.assert_frame_equal(first, again, check_like=False)
    assert client.match_addresses(texts, dry_run=True).requests == 0


def test_an_interrupted_list_resumes_from_the_cache(
    real_sandbox: Sandbox, make_client: Callable[..., Client], typed: list[TypedAddress],
    tmp_path: Any,
) -> None:  # fmt: skip
    client = fast_client(make_client, real_sandbox, max_wait=1.0)
    texts = [row.text for row in typed[:60]]
    cold = client.match_addresses(texts, dry_run=True).requests
    real_sandbox.set_now(datetime(2025, 6, 2, 12, 0, tzinfo=UTC))  # a minute's first second
    real_sandbox.set_suggest_limit(10)  # the service refuses the 11th request this minute
    with pytest.raises(RateLimited):
        client.match_addresses(texts)
    assert client.usage.requests_sent == 11  # ten answered and cached, one refused
    real_sandbox.set_suggest_limit(FAST)
    # The client now waits out the minute the service asked for; a restarted kernel resumes.
    resumed = fast_client(make_client, real_sandbox)
    assert resumed.match_addresses(texts, dry_run=True).requests == cold - 10
    done = resumed.match_addresses(texts)
    uninterrupted = fast_client(make_client, real_sandbox, cache=tmp_path / "fresh")
    whole = uninterrupted.match_addresses(texts).attrs["requests_sent"]
    assert done.attrs["requests_sent"] == whole - 10
    assert done.attrs["from_cache"] == 10


def test_a_progress_bar_counts_the_queries(
    real_sandbox: Sandbox, make_client: Callable[..., Client], typed: list[TypedAddress],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    client = fast_client(make_client, real_sandbox, progress=True)
    client.match_addresses([row.text for row in typed[:5]])
    assert "address queries" in capsys.readouterr().err


@pytest.mark.slow
def test_accuracy_on_addresses_typed_as_clients_type_them(
    real_sandbox: Sandbox, make_client: Callable[..., Client], typed: list[TypedAddress]
) -> None:
    client = fast_client(make_client, real_sandbox)
    df = client.match_addresses([row.text for row in typed])
    answers = zip(typed, df.itertuples(), strict=True)
    outcomes = Counter(outcome(row, answer) for row, answer in answers)
    present = sum(1 for row in typed if row.expected.startswith("L"))
    assert outcomes["right"] >= 0.95 * present, outcomes
    assert outcomes["wrong"] + outcomes["ambiguous guessed"] <= 0.005 * present, outcomes
    assert outcomes["absent matched"] == 0, outcomes
    assert outcomes["ambiguous not said"] == 0, outcomes
    assert df.attrs["requests_sent"] <= 3 * len(set(df["input"].str.casefold()))


def outcome(row: TypedAddress, answer: Any) -> str:
    """What a careful matcher should have said of ``row``, against what it said."""
    if row.expected == "absent":
        return "absent matched" if answer.status == "matched" else "absent kept"
    if row.expected == "ambiguous":
        if row.kind == "no_flat":
            return "ambiguous said" if answer.status == "ambiguous" else "ambiguous not said"
        return "ambiguous guessed" if answer.status == "matched" else "ambiguous kept"
    if answer.status != "matched":
        return "missed"
    return "right" if answer.locationId == row.expected else "wrong"


def test_the_autocomplete_and_suggest_share_the_clients_per_minute_limit(
    make_client: Callable[..., Client], typed: list[TypedAddress]
) -> None:
    with serve(profile="vepler", realism="real", n_properties=HOMES) as sb:
        sb.set_suggest_limit(FAST)
        client = make_client(sb, endpoints=pk.Endpoints.vepler(suggest_per_minute=3), max_wait=0)
        client.suggest("Mill")
        with pytest.raises(RateLimited, match="limit of 3 per minute reached on this client"):
            client.match_addresses([row.text for row in typed[:10]])
        assert [r.path.rsplit("/", 1)[-1] for r in sb.requests] == ["suggest"] + [
            "autocomplete"
        ] * 2
