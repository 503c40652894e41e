"""Start, stop and steer a sandbox: :func:`serve` and the :class:`Sandbox` handle it yields."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property, lru_cache
from types import TracebackType

from propertykit.sandbox import _ids as sandbox_ids
from propertykit.sandbox._catalogue import Catalogue
from propertykit.sandbox._price_index import REALISMS
from propertykit.sandbox._profiles import get_profile
from propertykit.sandbox._routes import Router
from propertykit.sandbox._server import SandboxServer
from propertykit.sandbox._state import (
    Charge,
    Clock,
    Fault,
    ForcedOutcome,
    RequestRecord,
    SandboxState,
)

Now = datetime | Callable[[], datetime] | None


@lru_cache(maxsize=4)
def _title_numbers(seed: int, n_properties: int) -> tuple[str, ...]:
    return tuple(sandbox_ids.title_number(i, seed) for i in range(n_properties))


def _non_negative(name: str, value: float) -> None:
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


class Sandbox:
    """A running sandbox of the service and the handles to steer it (see the package docstring).

    Usually obtained from :func:`serve`; ``start()``/``stop()`` (or ``with``) do the same by hand.

    Examples
    --------
    >>> sb = Sandbox(n_properties=10).start()
    >>> sb.url.startswith("http://127.0.0.1:")
    True
    >>> sb.stop()
    """

    def __init__(
        self,
        *,
        port: int = 0,
        seed: int = 0,
        n_properties: int = 5000,
        latency: float = 0.0,
        balance: int = 1_000_000,
        daily_cap: int = 100_000,
        suggest_per_minute: int = 30,
        delivery_delay: float = 0.0,
        now: Now = None,
        profile: str = "spec",
        realism: str = "textbook",
        search_style: str | None = None,
    ) -> None:
        if realism not in REALISMS:
            raise ValueError(f"realism must be one of {', '.join(REALISMS)}, got {realism!r}")
        for name, value in (("latency", latency), ("daily_cap", daily_cap),
                            ("suggest_per_minute", suggest_per_minute),
                            ("delivery_delay", delivery_delay)):  # fmt: skip
            _non_negative(name, value)
        self.seed = seed
        self.n_properties = n_properties
        self.profile = profile
        self.realism = realism
        self._catalogue = Catalogue(
            seed=seed, n_properties=n_properties, profile=get_profile(profile), realism=realism,
            search_style=search_style,
        )  # fmt: skip
        self.search_style = self._catalogue.search_style
        self._state = SandboxState(
            balance=balance,
            daily_cap=daily_cap,
            suggest_per_minute=suggest_per_minute,
            latency=latency,
            delivery_delay=delivery_delay,
            clock=Clock(now),
        )
        self.api_key = self._state.new_key("demo", title_deeds=True)
        self.restricted_key = self._state.new_key("restricted", title_deeds=False)
        self._port = port
        self._server: SandboxServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:  # never shows a key
        url = self.url if self._server else None
        return (
            f"<Sandbox url={url!r} seed={self.seed} n_properties={self.n_properties} "
            f"profile={self.profile!r}>"
        )

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> Sandbox:
        """Bind 127.0.0.1 and serve in a daemon thread; returns ``self``."""
        if self._server is None:
            self._server = SandboxServer(
                self._port, self._state, Router(self._state, self._catalogue)
            )
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running; call start() or use serve()")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- data -------------------------------------------------------------------------------

    @cached_property
    def location_ids(self) -> list[str]:
        """Every locationId, in index order."""
        return [sandbox_ids.location_id(i) for i in range(self.n_properties)]

    @cached_property
    def source_ids(self) -> list[str]:
        """One source id (the rightmove one) per property, in index order."""
        return [sandbox_ids.source_id(i, "rightmove") for i in range(self.n_properties)]

    @cached_property
    def title_numbers(self) -> list[str]:
        """One title number per property, in index order."""
        return list(_title_numbers(self.seed, self.n_properties))

    def source_ids_for(self, index: int) -> list[str]:
        """All (two to four) source ids that resolve to the property at ``index``."""
        return sandbox_ids.source_ids_for(index)

    def record(self, index: int) -> dict[str, object]:
        """The full record at ``index``, as the service would return it."""
        return dict(self._catalogue.record(index))

    # -- account ----------------------------------------------------------------------------

    @property
    def balance(self) -> int:
        """Credits left on the account."""
        with self._state.lock:
            return self._state.balance

    def set_balance(self, credits: int) -> None:
        with self._state.lock:
            self._state.balance = credits

    def add_credit(self, credits: int) -> None:
        with self._state.lock:
            self._state.balance += credits

    def set_daily_cap(self, credits: int) -> None:
        _non_negative("daily cap", credits)
        with self._state.lock:
            self._state.daily_cap = credits

    def set_suggest_limit(self, per_minute: int) -> None:
        _non_negative("per_minute", per_minute)
        with self._state.lock:
            self._state.suggest_per_minute = per_minute

    def set_latency(self, seconds: float) -> None:
        _non_negative("latency", seconds)
        self._state.latency = seconds

    def set_health(self, status: str) -> None:
        """What health reports under the ``vepler`` profile: healthy, degraded or unhealthy."""
        if status not in ("healthy", "degraded", "unhealthy"):
            raise ValueError(f"health status must be healthy, degraded or unhealthy: {status!r}")
        self._state.health_status = status

    def set_delivery_delay(self, seconds: float) -> None:
        """Purchases from now on answer 202 and are delivered ``seconds`` later (sandbox clock)."""
        _non_negative("delivery delay", seconds)
        with self._state.lock:
            self._state.delivery_delay = seconds

    # -- clock ------------------------------------------------------------------------------

    def set_now(self, now: datetime | Callable[[], datetime]) -> None:
        """Fix the sandbox clock at an aware datetime (or follow a callable)."""
        self._state.clock.set(now)

    def advance(self, seconds: float) -> None:
        """Move the sandbox clock forward by ``seconds``."""
        self._state.clock.advance(seconds)

    def now(self) -> datetime:
        """The sandbox's current time (aware, UTC)."""
        return self._state.clock.now()

    # -- faults -----------------------------------------------------------------------------

    def inject_fault(
        self,
        kind: str,
        *,
        count: int = 1,
        status: int = 503,
        delay: float = 1.0,
        path_contains: str = "",
        body: str = "object",
    ) -> None:
        """Make the next ``count`` matching requests fail in the way ``kind`` names."""
        fault = Fault(kind, count, status, delay, path_contains, body)
        with self._state.lock:
            self._state.faults.append(fault)

    def force_purchase_outcome(
        self, money_state: str, *, status: int = 500, charged: bool | None = None, count: int = 1
    ) -> None:
        """Make the next ``count`` purchases fail with ``status`` and ``money_state``."""
        outcome = ForcedOutcome(money_state, status, charged, count)
        with self._state.lock:
            self._state.forced.append(outcome)

    def clear_faults(self) -> None:
        """Drop every pending fault and forced purchase outcome."""
        with self._state.lock:
            self._state.faults.clear()
            self._state.forced.clear()

    # -- logs -------------------------------------------------------------------------------

    @property
    def ledger(self) -> list[Charge]:
        """Every charge so far, oldest first."""
        with self._state.lock:
            return list(self._state.ledger)

    @property
    def credits_charged(self) -> int:
        """Total credits charged so far."""
        with self._state.lock:
            return sum(charge.credits for charge in self._state.ledger)

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request that arrived since the last :meth:`reset_log`, oldest first."""
        with self._state.lock:
            return list(self._state.requests)

    def reset_log(self) -> None:
        """Forget the request log (the ledger stays)."""
        with self._state.lock:
            self._state.requests.clear()


@contextmanager
def serve(
    *,
    port: int = 0,
    seed: int = 0,
    n_properties: int = 5000,
    latency: float = 0.0,
    balance: int = 1_000_000,
    daily_cap: int = 100_000,
    suggest_per_minute: int = 30,
    delivery_delay: float = 0.0,
    now: Now = None,
    profile: str = "spec",
    realism: str = "textbook",
    search_style: str | None = None,
) -> Iterator[Sandbox]:
    """Run a sandbox of the service on 127.0.0.1 for the duration of a ``with`` block.

    Parameters
    ----------
    port
        TCP port; 0 picks a free one.
    seed, n_properties
        Which deterministic world to serve, and how many properties it holds.
    latency
        Seconds added to every answer.
    balance, daily_cap
        Starting credit, and credits the account may spend per UTC day.
    suggest_per_minute
        Search-suggest requests allowed per minute.
    delivery_delay
        Seconds (sandbox clock) before a purchased deed is delivered; above 0, purchases answer 202.
    now
        The sandbox clock: ``None`` (wall clock), an aware datetime (frozen until moved), or a
        callable returning one.
    profile
        ``"spec"`` (the service interface's choices) or ``"vepler"`` (Vepler's documented
        shapes: pence, its health and error forms; see :mod:`propertykit.sandbox._profiles`).
    realism
        ``"textbook"`` (sale prices as the repeat-sales method assumes) or ``"real"`` (as real
        sales are: a known price-per-m² surface, quick resales that vary most, outliers, homes
        out in the country; see :func:`propertykit.sandbox._data.generate_record`).
    search_style
        How search-suggest and the autocomplete answer: ``"every-word"`` (every word of the query
        held), ``"ranked"`` (any word counts, BM25, best first, full pages), ``"fuzzy"`` (ranked,
        a letter off still matches), ``"display-only"`` (ranked; only ``locationId`` and the
        display text without postcode). ``None``: every word for search-suggest, ranked for the
        vepler profile's autocomplete (see :mod:`propertykit.sandbox._search`).

    Examples
    --------
    >>> import requests
    >>> with serve(n_properties=10) as sb:
    ...     answer = requests.get(f"{sb.url}/v1/property/health", headers={"x-api-key": sb.api_key})
    >>> answer.status_code
    200
    """
    sandbox = Sandbox(
        port=port,
        seed=seed,
        n_properties=n_properties,
        latency=latency,
        balance=balance,
        daily_cap=daily_cap,
        suggest_per_minute=suggest_per_minute,
        delivery_delay=delivery_delay,
        now=now,
        profile=profile,
        realism=realism,
        search_style=search_style,
    )
    with sandbox:
        yield sandbox
