"""An answer paid for that the cache cannot store is still returned, counted and said once.

A real write failure: a child process whose file size limit (``RLIMIT_FSIZE``, ``SIGXFSZ``
ignored) stops the SQLite cache from growing looks up batches it has not fetched before. Its
records come back, one :class:`~propertykit.CacheWriteWarning` counts the answers not stored,
``usage.answers_not_stored`` counts them too, and a later run (no limit) pays for exactly those
again: the sandbox counts every request.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

import propertykit as pk

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX"),
]

CHILD = textwrap.dedent(
    """
    import json, os, resource, signal, sys, warnings
    import propertykit as pk

    url, cache, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, no signal
    with pk.Client(None, url, cache=cache, progress=False) as client:
        client.properties(ids[:1])  # the cache file exists, and has room for nothing more
        files = [cache + suffix for suffix in ("", "-wal", "-shm")]
        biggest = max(os.path.getsize(f) for f in files if os.path.exists(f))
        resource.setrlimit(resource.RLIMIT_FSIZE, (biggest + 4096, resource.RLIM_INFINITY))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            df = client.properties(ids[1:])
        print(json.dumps({
            "rows": len(df),
            "ids": df["locationId"].tolist(),
            "warnings": [(type(w.message).__name__, str(w.message)) for w in said],
            "not_stored": client.usage.answers_not_stored,
            "sent": client.usage.requests_sent,
            "billable": client.usage.billable_requests,
        }))
    """
)


def test_answers_that_cannot_be_written_are_returned_counted_and_said_once(tmp_path, new_process):
    cache = tmp_path / "cache.sqlite"
    with pk.sandbox.serve() as sb:
        ids = sb.location_ids[:1] + sb.location_ids[50:200]  # then 3 batches of 50
        env = dict(os.environ, PROPERTYKIT_API_KEY=sb.api_key)
        done = new_process.run(
            "-c", CHILD, sb.url, str(cache), json.dumps(ids), env=env, timeout=150
        )
        assert done.returncode == 0, done.stderr[-2000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        assert seen["ids"] == ids[1:]  # every record paid for came back
        assert (seen["sent"], seen["billable"], seen["not_stored"]) == (4, 4, 3)
        [(kind, message)] = seen["warnings"]  # one warning for the call
        assert kind == "CacheWriteWarning"
        assert message.startswith("3 answers paid for could not be stored in the cache")
        assert str(cache) in message
        assert sb.api_key not in done.stdout + done.stderr

        sb.reset_log()
        with pk.Client(sb.api_key, sb.url, cache=cache, progress=False) as again:
            again.properties(ids[:1])
            assert again.usage.cache_hits == 1  # stored before the limit
            again.properties(ids[1:])
            assert again.usage.requests_sent == 3  # the three not stored, paid again
        assert len(sb.requests) == 3


def test_a_warning_outside_a_call_still_says_so(tmp_path):
    from propertykit.wire._write_failures import answer_not_stored

    with pytest.warns(pk.CacheWriteWarning, match=r"^1 answer paid for could not be stored"):
        answer_not_stored(str(tmp_path / "c.sqlite"), OSError(27, "File too large"))


def test_the_warning_is_a_propertykit_warning():
    assert issubclass(pk.CacheWriteWarning, pk.PropertyKitWarning)
    assert issubclass(pk.CacheWriteWarning, UserWarning)
    assert "CacheWriteWarning" in pk.errors.__all__
    assert Path(pk.__file__).exists()
