"""Another kernel: look ids up through propertykit and say what it sent.

The team tests start it (``tests.team.conftest.start_worker``) as a process forked by a
forkserver, a Python process started new that has imported propertykit once: :func:`serve`, with
the environment and folder it is given (the key comes from ``PROPERTYKIT_API_KEY``), answers on
a pipe. ``python _worker.py '<json spec>'`` runs the same lookup and prints it as JSON. With
``ready_file``/``go_file`` it signals it is ready and waits for the go, so two workers start
their lookups together.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import propertykit as pk


def look_up(spec: dict[str, Any]) -> dict[str, Any]:
    """Look ``spec["ids"]`` up (after the go, if it has one); the rows and what was sent."""
    if spec.get("go_file"):
        Path(spec["ready_file"]).touch()
        while not Path(spec["go_file"]).exists():
            time.sleep(0.005)
    with pk.Client(
        base_url=spec["base_url"],
        cache=spec["cache"],
        progress=False,
        max_in_flight=spec.get("max_in_flight", 4),
    ) as client:
        if spec.get("kind", "properties") == "properties":
            frame = client.properties(spec["ids"])
        else:
            frame = client.sources(spec["ids"], page_size=spec.get("page_size"))
        usage = client.usage
        return {
            "rows": len(frame),
            "location_ids": frame["locationId"].tolist(),
            "sent": usage.requests_sent,
            "cache_hits": usage.cache_hits,
        }


def serve(spec: dict[str, Any], environment: dict[str, str], folder: str, answer: Any) -> None:
    """In a forked process: :func:`look_up` under ``environment`` in ``folder``; its answer,
    or the traceback of what went wrong, sent on the pipe ``answer``."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(folder)
    try:
        answer.send(("ok", look_up(spec)))
    except BaseException:
        answer.send(("failed", traceback.format_exc()))
        raise


def main() -> None:
    print(json.dumps(look_up(json.loads(sys.argv[1]))))


if __name__ == "__main__":
    main()
