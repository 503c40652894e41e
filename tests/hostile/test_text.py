"""Text from outside is data: shown, never run, never obeyed by a terminal.

One hostile service on 127.0.0.1 puts script-laden and control-laden text everywhere outside text
can come in: the fields of records, suggestions, the area query, the health answer, error codes
and messages, purchase answers. Every surface is then read back: ``str()`` and ``repr()`` of
errors, warnings, the ``propertykit`` logger, the command line (in process, and once as the
real command whose warnings reach a real stderr), the HTML report and its PDF, and the forms.

On a terminal or in a log, no control character from outside may appear: ``ESC`` is shown as the
four characters ``\\x1b``. In HTML, ``<script>`` is shown as text (``&lt;script&gt;``), never as a
tag, and a browser opening the report runs none of it.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import pandas as pd
import pytest

import propertykit as pk
import propertykit.frames  # its warnings too, for the family below
from propertykit.cli import main
from propertykit.client import Client
from propertykit.config import ENV_API_KEY, ENV_BASE_URL, ENV_CACHE_DIR
from propertykit.errors import (
    PermissionDenied,
    PropertyKitError,
    PropertyKitWarning,
    ServiceUnhealthy,
)
from propertykit.sandbox import generate_records
from propertykit.text import visible
from propertykit.views import write_report
from propertykit.widgets import LookupForm, PurchaseForm
from tests.hostile._servers import KEY, Hostile, Seen, envelope, hostile, send

pytestmark = pytest.mark.timeout(120)

SCRIPT = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"
#: The issue's 403 message: clear the screen, retitle the window, turn the text red.
TERMINAL = "\x1b[2J\x1b]0;owned\x07\x1b[31mpay now"
#: A fake line, a bidi override, the clipboard (OSC 52), a C1 CSI and a bell.
FAKES = "\r\npropertykit: all good\u202eevil\x1b]52;c;b3duZWQ=\x07\x9b6n\x07"
CONTROLS = TERMINAL + FAKES
#: Text a person wrote: kept as it is everywhere.
ORDINARY = "Café £5 北京 👨\u200d👩\u200d👧 Łódź"
FORBIDDEN_ID = "L00000666"
TITLE = "NGL123456"

#: Control characters a terminal or log line may never receive from outside. Newlines are left
#: out (propertykit writes its own between lines): one from outside shows as a faked line.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_no_control_from_outside(text: str) -> None:
    assert not _CONTROL.search(text), repr(_CONTROL.findall(text))
    assert "propertykit: all good" not in text.splitlines()  # no line faked by a value


def assert_escaped(page: str) -> None:
    """``page`` (HTML) shows the script-laden values as text and never holds them as tags."""
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# -- the hostile service ---------------------------------------------------------------------------


def poisoned(ids: list[str]) -> list[dict[str, Any]]:
    """Sandbox-like records for ``ids`` whose texts carry script and control characters."""
    records = generate_records(max(len(ids), 1) + 40)[-len(ids) :] if ids else []
    for number, (record, location_id) in enumerate(zip(records, ids, strict=True)):
        record["locationId"] = location_id
        record["propertyId"] = f"P-{location_id}"
        address = record["address"]
        address["displayAddress"] = f"{SCRIPT} {address['displayAddress']} {CONTROLS}"
        address["town"] = f"{IMAGE}{TERMINAL}" if number % 2 else ORDINARY
        record["propertyType"] = SCRIPT if number % 2 else "flat"
        for sale in record.get("saleHistory") or ():
            sale["propertyType"] = record["propertyType"]
    if records:
        records[0]["roomDetails"]["beds"] = f"{SCRIPT}{TERMINAL}"  # a value with no clear meaning
    return records


def _path_ids(path: str) -> list[str]:
    return unquote(urlsplit(path).path.rsplit("/", 1)[-1]).split(",")


def behave(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
    path = urlsplit(handler.path).path
    error = {"error": {"code": "forbidden\x1b[5m", "message": CONTROLS + SCRIPT}}
    if path == "/v1/property/health":
        send(handler, 200, {"status": "degraded", "service": f"property{TERMINAL}"})
    elif path == "/v1/property/suggest":
        query = parse_qs(urlsplit(handler.path).query).get("q", [""])[0]
        if "forbidden" in query:
            send(handler, 403, error)
            return
        label = f"{SCRIPT} 1 Mill Lane{CONTROLS}"
        send(handler, 200, envelope([{"locationId": "L00000001", "displayAddress": label}]))
    elif path == "/v1/property/query":
        body = json.loads(seen[-1].body or b"{}")
        if "E14" in json.dumps(body):
            send(handler, 403, error)
            return
        ids = [f"L{number:08d}" for number in range(1, 6)]
        send(handler, 200, envelope(poisoned(ids), totalSize=5, hasMore=False))
    elif path.endswith("/purchase-status"):  # not bought before; a status no one knows
        status = {"money_state": "not_charged", "status": f"{SCRIPT}{TERMINAL}"}
        send(handler, 200, {"success": True, "result": status})
    elif path.startswith("/v1/title-deeds/"):
        send(handler, 403, {"error": {**error["error"], "money_state": "not_charged"}})
    elif path.startswith("/v1/property/"):
        ids = _path_ids(handler.path)
        if FORBIDDEN_ID in ids:
            send(handler, 403, error)
        else:
            send(handler, 200, envelope(poisoned(ids)))
    else:
        send(handler, 404, f"no such path {TERMINAL}", content_type="text/plain")


@pytest.fixture(scope="module")
def service() -> Iterator[Hostile]:
    with hostile(behave) as server:
        yield server


@pytest.fixture
def client(service: Hostile, tmp_path: Path) -> Iterator[Client]:
    with Client(
        KEY,
        service.url,
        cache=False,
        journal=tmp_path / "deeds.jsonl",
        progress=False,
        max_retries=0,
    ) as made:
        yield made


IDS = [f"L{number:08d}" for number in range(1, 41)]


@pytest.fixture(scope="module")
def frame(service: Hostile) -> pd.DataFrame:
    """The poisoned properties as a frame, fetched once over HTTP."""
    with (
        Client(KEY, service.url, cache=False, progress=False) as client,
        pytest.warns(pk.UnparsedValuesWarning) as caught,
    ):
        df = client.properties(IDS)
    for warning in caught:
        assert_no_control_from_outside(str(warning.message))
    return df


# -- the one function --------------------------------------------------------------------------


def test_visible_spells_out_every_control_and_invisible_format_character() -> None:
    shown = visible(CONTROLS)
    assert shown == (
        r"\x1b[2J\x1b]0;owned\x07\x1b[31mpay now\r\npropertykit: all good\u202eevil"
        r"\x1b]52;c;b3duZWQ=\x07\x9b6n\x07"
    )
    assert visible(shown) == shown  # a second pass changes nothing
    assert visible(ORDINARY) == ORDINARY
    assert visible("line\nline", keep_newlines=True) == "line\nline"
    assert visible("\udc80") == r"\udc80"  # a lone surrogate could not even be printed


def test_visible_covers_unicode_controls_and_format_characters_but_joiners_and_tags() -> None:
    """Every code point: each hidden one is spelled out, and all the others, read in one text,
    are kept as they are (categories looked up by ``map`` over one text, not call by call)."""
    kept = {0x200C, 0x200D, *range(0xE0020, 0xE0080)}  # joined scripts, emoji, subdivision flags
    # Code point n at index n, decoded in one piece (not a million one-character strings).
    every = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    categories = list(map(unicodedata.category, every))
    hiding = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    hidden = [
        code
        for code in itertools.compress(range(len(every)), map(hiding.__contains__, categories))
        if code not in kept
    ]
    assert len(hidden) > 2048  # the surrogates alone are 2,048
    for code in hidden:
        assert visible(every[code]) != every[code], (hex(code), categories[code])
    between = itertools.pairwise([-1, *hidden, len(every)])
    shown = "".join(every[after + 1 : before] for after, before in between)
    assert visible(shown) == shown, [
        (hex(ord(char)), unicodedata.category(char)) for char in shown if visible(char) != char
    ]


# -- errors, warnings, logs --------------------------------------------------------------------


def test_an_api_error_shows_the_service_words_spelled_out_and_keeps_them_raw(client) -> None:
    with pytest.raises(PermissionDenied) as caught:
        client.properties([FORBIDDEN_ID])
    error = caught.value
    for text in (str(error), repr(error)):
        assert_no_control_from_outside(text)
    assert r"forbidden\x1b[5m" in str(error) and r"\x1b]0;owned\x07" in str(error)
    assert SCRIPT in str(error)  # shown as text: a terminal does not run HTML
    assert error.message == CONTROLS + SCRIPT  # the data itself is kept as sent
    assert json.loads(error.body)["error"]["message"] == CONTROLS + SCRIPT


def test_health_warnings_and_errors_spell_out_the_service_name(client, service) -> None:
    with pytest.warns(PropertyKitWarning) as caught:
        client.health()
    (warning,) = caught
    assert_no_control_from_outside(str(warning.message))
    assert r"property\x1b[2J" in str(warning.message)
    unhealthy = ServiceUnhealthy(f"Health: property{TERMINAL} says it is unhealthy")
    assert_no_control_from_outside(str(unhealthy))
    assert_no_control_from_outside(repr(unhealthy))


def _family(root: type) -> Iterator[type]:
    yield root
    for child in root.__subclasses__():
        yield from _family(child)


def test_every_propertykit_error_and_warning_spells_out_its_message() -> None:
    kinds = {*_family(PropertyKitError), *_family(PropertyKitWarning)}
    assert len(kinds) > 25
    for kind in kinds:
        try:
            made = kind(CONTROLS)
        except TypeError:
            try:
                made = kind(403, message=CONTROLS)  # ApiError and its family
            except TypeError:
                made = kind(CONTROLS, title_number=TITLE)  # PurchaseUncertain
        assert_no_control_from_outside(str(made))
        assert_no_control_from_outside(repr(made))


def test_the_propertykit_logger_spells_out_messages_and_tracebacks(client, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="propertykit")
    with pytest.raises(PermissionDenied):
        client.properties([FORBIDDEN_ID])  # the transport logs the failure, quoting the error
    try:
        raise ValueError(f"a third party quoted {CONTROLS}")
    except ValueError:
        logging.getLogger("propertykit").debug("failed on %s", TERMINAL, exc_info=True)
    formatted = logging.Formatter("%(name)s %(message)s").format
    lines = [formatted(record) for record in caplog.records]
    assert any(r"\x1b]0;owned" in line for line in lines)
    assert any("ValueError: a third party quoted" in line for line in lines)
    for line in lines:
        assert_no_control_from_outside(line)


def test_every_module_logs_through_the_one_filtered_logger() -> None:
    package = Path(__file__).parents[2] / "propertykit"
    names = set()
    for module in package.rglob("*.py"):
        names.update(re.findall(r"getLogger\(([^)]*)\)", module.read_text(encoding="utf-8")))
    assert names == {'"propertykit"'}


# -- the command line --------------------------------------------------------------------------


@pytest.fixture
def command_env(service: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ENV_BASE_URL, service.url)
    monkeypatch.setenv(ENV_API_KEY, KEY)
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_report_command_prints_the_issue_403_spelled_out(command_env, capsys) -> None:
    assert main(["report", "--ids", FORBIDDEN_ID, "--out", "r.html"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert_no_control_from_outside(err)
    (line,) = err.splitlines()
    assert line.startswith("propertykit: error: report: HTTP 403 forbidden\\x1b[5m: ")
    assert r"\x1b[2J\x1b]0;owned\x07\x1b[31mpay now\r\npropertykit: all good\u202eevil" in line
    assert not (command_env / "r.html").exists()


def test_an_unexpected_failure_prints_its_traceback_spelled_out(
    command_env, capsys, monkeypatch
) -> None:
    def broken(args: Any) -> int:
        raise KeyError(f"field {TERMINAL}")  # a bug, quoting a field the service sent

    monkeypatch.setattr("propertykit.cli._cache.run", broken)
    assert main(["cache", "info"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and r"field \x1b[2J" in err
    assert_no_control_from_outside(err)


def test_the_deeds_list_shows_a_journal_holding_outside_text_spelled_out(tmp_path, capsys) -> None:
    line = {
        "event": "outcome",
        "at": "2026-03-04T09:05:00+00:00",
        "title_number": TITLE,
        "idempotency_key": "k1",
        "service": f"http://127.0.0.1/{TERMINAL}",
        "money_state": "charged",
        "status": CONTROLS,  # a journal copied from elsewhere, or written by a hostile hand
    }
    journal = tmp_path / "deeds.jsonl"
    journal.write_text(json.dumps({**line, "event": "intent"}) + "\n" + json.dumps(line) + "\n")
    assert main(["deeds", "list", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert r"\x1b]0;owned" in out and len(out.splitlines()) == 2  # a heading and one purchase
    assert_no_control_from_outside(out)


@pytest.mark.timeout(180)
def test_the_real_command_shows_warnings_and_output_spelled_out(
    service, tmp_path, new_process
) -> None:
    """As a user runs it: the poisoned records make a report, and Python's own warning display
    (a real stderr) prints what had no clear meaning, spelled out."""
    env = dict(os.environ)
    env.update(
        {
            ENV_BASE_URL: service.url,
            ENV_API_KEY: KEY,
            ENV_CACHE_DIR: str(tmp_path / "cache"),
            "PYTHONWARNINGS": "default",
        }
    )
    done = new_process.run(
        "-m",
        "propertykit",
        "report",
        "--ids",
        *IDS[:12],
        "--out",
        "r.html",
        timeout=150,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "UnparsedValuesWarning" in done.stderr and r"\x1b[2J" in done.stderr
    assert_no_control_from_outside(done.stdout + done.stderr)
    assert_escaped((tmp_path / "r.html").read_text(encoding="utf-8"))


@dataclass
class Written:
    """The poisoned properties' report, street tiles asked of a hostile tile server."""

    path: Path
    #: the warnings its writing gave
    warned: list[str]
    #: how many tiles were asked for
    tiles_asked: int


@pytest.fixture(scope="module")
def report(frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Written:
    """The poisoned properties' report, its street tiles asked of a tile server that answers
    with script and control characters: written once, for the tests that read it or open it
    (never change it)."""

    def tile(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, SCRIPT + CONTROLS, content_type=f"text/html{TERMINAL}")

    folder = tmp_path_factory.mktemp("hostile-report")
    with (
        pytest.MonkeyPatch.context() as patch,
        hostile(tile) as tiles,
        pytest.warns(PropertyKitWarning) as caught,
    ):
        patch.setenv(ENV_CACHE_DIR, str(folder / "cache"))
        template = tiles.url + "/{z}/{x}/{y}.png"
        path = write_report(frame, folder / "r.html", tiles=template, attribution="")
        asked = len(tiles.requests)
    return Written(path, [str(warning.message) for warning in caught], asked)


def test_a_tile_servers_words_reach_neither_the_warning_nor_the_page(report: Written) -> None:
    assert report.tiles_asked  # asked, and refused
    for message in report.warned:
        assert_no_control_from_outside(message)
    said = " ".join(report.warned)
    assert "tile" in said.lower() and "not an image" in said  # the cause, in our own words
    assert "text/html" not in said and "alert" not in said  # nothing the server sent
    page = report.path.read_text(encoding="utf-8")
    assert "<script>alert" not in page and "\x1b" not in page


# -- HTML: the report, its PDF, the forms ------------------------------------------------------


def test_the_report_shows_outside_text_escaped(report: Written) -> None:
    page = report.path.read_text(encoding="utf-8")
    assert_escaped(page)
    assert ORDINARY in page  # a person's text, kept as it is


def test_a_browser_opening_the_report_runs_none_of_it(report: Written, browser) -> None:
    from tests._browser import wait_for_plotly

    dialogs: list[str] = []
    with browser.new_context() as context:
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        # the report needs nothing from a network
        page.goto(report.path.as_uri(), wait_until="load")
        wait_for_plotly(page)
        injected = page.evaluate(
            "() => [document.querySelectorAll('img[onerror]').length,"
            " Array.from(document.scripts).filter(s => s.text.trim() === 'alert(1)').length,"
            " document.body.innerText.includes('<script>alert(1)</script>')]"
        )
    assert dialogs == []  # alert(1) and the image's onerror would each have opened one
    assert injected == [0, 0, True]  # no live tag; the text itself is on the page


@pytest.mark.timeout(300)
def test_the_pdf_report_prints_outside_text_as_text(frame, tmp_path, system_chromium) -> None:
    import subprocess

    from tests._system import require

    require(shutil.which("pdftotext") is not None, "poppler-utils not installed (pdftotext)")
    pdf = write_report(frame.head(12), tmp_path / "r.pdf")
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    assert SCRIPT in text  # printed as the characters it is made of


def test_the_lookup_form_shows_suggestions_records_and_errors_as_text(client) -> None:
    form = LookupForm(client)
    form.suggest("Mill Lane")
    ((label, value),) = form.suggestions.options  # a dropdown's labels are text, not HTML
    assert value == "L00000001" and SCRIPT in label
    form.ids.value = ", ".join(IDS[:6])
    form.fetch()  # the value with no clear meaning is told in the message, not warned
    assert form.value is not None and len(form.value) == 6
    assert_escaped(form.table.value)
    told = form.message.value
    assert "no clear meaning" in told and "&lt;script&gt;" in told and r"\x1b[2J" in told
    assert_no_control_from_outside(told)
    form.suggest("forbidden place")
    form.ids.value = FORBIDDEN_ID
    form.fetch()
    for shown in (form.suggest_note.value, form.message.value):
        assert "&lt;script&gt;" in shown and "<script>" not in shown
        assert_no_control_from_outside(shown)


def test_the_find_panel_shows_found_records_and_errors_as_text(client) -> None:
    form = LookupForm(client)
    finder = form.finder
    finder.area_type.value, finder.area_value.value = "outcode", "SE11"
    assert finder.find() == 5
    assert_escaped(form.table.value)
    finder.area_value.value = "E14"  # the service refuses it in hostile words
    assert finder.find() == 0
    assert "&lt;script&gt;" in finder.message.value and "<script>" not in finder.message.value
    assert_no_control_from_outside(finder.message.value)


def test_the_purchase_form_shows_the_service_words_as_text(client) -> None:
    form = PurchaseForm(client, cost=25)
    form.title.value = TITLE
    form.buy_button.click()
    form.confirm_button.click()
    shown = form.message.value + form.confirmation.value
    assert form.money_state == "not_charged"
    assert "&lt;script&gt;" in shown and "<script>" not in shown
    assert_no_control_from_outside(shown)
