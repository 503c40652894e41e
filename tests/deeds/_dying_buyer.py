"""A kernel that buys a title deed and may die on the way (``tests/deeds/test_crash.py``).

:func:`buy` runs in a process of its own, forked by a forkserver that has imported propertykit
once (not a copy of the test's process): with the environment it is given (the key in it, never
in the arguments), it replaces ``die_in`` (``module.Class.method``), if given, by a SIGKILL of
itself, and buys ``title``. Had it lived, it says ``"survived"`` on its pipe; it sends the
traceback if something else went wrong.
"""

from __future__ import annotations

import importlib
import os
import signal
import traceback
from typing import Any

from propertykit.client import Client


def die(*args: Any, **kwargs: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def buy(
    url: str, journal: str, title: str, die_in: str, environment: dict[str, str], answer: Any
) -> None:
    os.environ.clear()
    os.environ.update(environment)
    try:
        if die_in:
            module, owner, method = die_in.rsplit(".", 2)
            setattr(getattr(importlib.import_module(module), owner), method, die)
        client = Client(base_url=url, cache=False, journal=journal)
        client.buy_title_deed(title)
    except BaseException:
        answer.send(traceback.format_exc())
        raise
    answer.send("survived")
