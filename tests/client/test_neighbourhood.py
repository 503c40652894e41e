"""``client.neighbourhood(subject)`` against the sandbox over real HTTP: the subject and the homes
like it around it, one call; bad input refused with nothing sent; a subject that cannot be
valued stops after its own record, and says what it spent."""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from propertykit.client import Client
from propertykit.errors import InvalidInput
from propertykit.sandbox import Sandbox
from tests._serving import serving, url_of

#: Every test here talks to a local sandbox: none may hang.
pytestmark = pytest.mark.timeout(60)

#: A home of the default sandbox without a floor area.
NO_FLOOR_AREA = "L00000023"


def test_the_subject_comes_first_with_homes_like_it_around_it(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client], valuable_home: tuple[str, str]
) -> None:
    client = make_client(fresh_sandbox)
    df = client.neighbourhood(valuable_home[0], radius_m=3000)
    said = df.attrs["neighbourhood"]
    assert said["propertyId"] == valuable_home[1] == df["propertyId"].iloc[0]
    assert said["stopped"] is None and said["fetched"] >= 5
    own, around = df.iloc[0], df.iloc[: said["fetched"] + 1]
    assert set(around["propertyType"]) == {own["propertyType"]}
    assert (
        around["floorAreaSqM"].between(own["floorAreaSqM"] / 1.5, own["floorAreaSqM"] * 1.5).all()
    )
    assert df["propertyId"].is_unique
    # too few sales around it to fit an index: its outcode's homes follow, said
    borrowed = df.iloc[said["fetched"] + 1 :]
    assert said["wider"].startswith(f"outcode {own['address.outcode']} (") and len(borrowed)
    assert set(borrowed["address.outcode"]) == {own["address.outcode"]}
    paths = [r.path for r in fresh_sandbox.requests]
    assert paths[0].startswith("/v1/property/L") and "/v1/property/query" in paths[1]
    again = client.neighbourhood(valuable_home[0], radius_m=3000)
    assert again.equals(df) and client.usage.cache_hits >= 2  # the second time is free


def test_a_source_id_names_the_subject_too(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client]
) -> None:
    source = fresh_sandbox.source_ids_for(67)[0]
    df = make_client(fresh_sandbox).neighbourhood(source, radius_m=1000)
    assert df.attrs["neighbourhood"]["propertyId"] == "PK00000067"


@pytest.mark.parametrize(
    ("subject", "radius", "said"),
    [
        ("L1,L2", 2000, r"<provider>::<id>\), got 2"),
        ("L1 L2", 2000, "has a space in it"),
        ("", 2000, "one id"),
        ("a/b", 2000, "Subject “a/b” "),
        ("L00000067", 0, "above 0 and at most 8,000"),
        ("L00000067", 9000, r"at most 8,000 \(the widest search\), got 9000"),
        ("L00000067", float("nan"), "got nan"),
        ("L00000067", "2000", "got '2000'"),
    ],
)
def test_bad_input_is_refused_before_anything_is_sent(
    fresh_sandbox: Sandbox,
    make_client: Callable[..., Client],
    subject: str,
    radius: float,
    said: str,
) -> None:
    with pytest.raises(InvalidInput, match=said):
        make_client(fresh_sandbox).neighbourhood(subject, radius_m=radius)
    assert fresh_sandbox.requests == [] and fresh_sandbox.credits_charged == 0


@pytest.mark.parametrize(("subject", "stopped"), [(NO_FLOOR_AREA, "no floor area"),
                                                  ("L09999999", "no record")])  # fmt: skip
def test_a_subject_that_cannot_be_valued_costs_its_own_record_only(
    fresh_sandbox: Sandbox, make_client: Callable[..., Client], subject: str, stopped: str
) -> None:
    client = make_client(fresh_sandbox)
    df = client.neighbourhood(subject)
    assert df.attrs["neighbourhood"]["stopped"] == stopped
    assert len(df) == (0 if stopped == "no record" else 1)  # what was paid for is kept
    assert client.usage.requests_sent == 1 and len(fresh_sandbox.requests) == 1
    assert fresh_sandbox.credits_charged <= 1  # main paid for its neighbourhood too (31)


def test_a_record_no_valuation_takes_stops_after_it(fresh_sandbox: Sandbox) -> None:
    """A service whose record gives a floor area in square feet (1,100 m² would be a mansion;
    11,000 is past any home): its neighbourhood is never paid for."""
    record = fresh_sandbox.record(67) | {"floorAreaSqM": 11_000.0}
    paths: list[str] = []

    class Service(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the subject's record; nothing else is ever asked for
            paths.append(self.path)
            body = json.dumps({"result": [record]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            paths.append(self.path)
            self.send_error(500)

        def log_message(self, *args: object) -> None:
            pass

    with (
        serving(Service) as server,
        pk.Client("pk_live_test", url_of(server), cache=False, progress=False) as client,
    ):
        df = client.neighbourhood("L00000067")
    stopped = df.attrs["neighbourhood"]["stopped"]
    assert stopped.startswith("a record no valuation takes") and "2,000" in stopped
    assert len(df) == 1 and len(paths) == 1 and paths[0].startswith("/v1/property/L00000067")
