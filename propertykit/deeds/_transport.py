"""The seam between the title-deed purchase flow and HTTP.

:class:`PurchaseTransport` is what :mod:`propertykit.deeds._purchase` needs: send one purchase
attempt, fetch purchase-status. :class:`HttpPurchaseTransport` provides it over propertykit's one
session (:mod:`propertykit.wire._transport`), which parses every error answer once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from propertykit.config import Endpoints
from propertykit.errors import ApiError, NetworkError, PropertyKitError

if TYPE_CHECKING:
    from propertykit.wire import Transport


# -- the transport seam ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """The service answered a purchase request.

    Attributes
    ----------
    status_code
        The HTTP status.
    body
        The parsed JSON body, or the text when it was not JSON.
    error
        The typed error for a 4xx/5xx answer (parsed once, by the HTTP layer), else ``None``.
    """

    status_code: int
    body: Any
    error: ApiError | None = None


@dataclass(frozen=True)
class NotAnswered:
    """No complete answer: ``kind`` says whether the request could have reached the service.

    ``retried`` is true when the HTTP layer already retried a failure to connect.
    """

    kind: str
    error: PropertyKitError
    retried: bool = False


class PurchaseTransport(Protocol):
    """What the purchase flow needs from the HTTP layer (the client provides it)."""

    @property
    def service(self) -> str:
        """The service's base URL (recorded in the journal without user information)."""
        ...

    def send_purchase(
        self, title_number: str, idempotency_key: str, payload: Mapping[str, Any]
    ) -> Sent | NotAnswered:
        """POST one purchase attempt: never cached, never retried, ``Idempotency-Key`` set.

        Raises a :class:`~propertykit.errors.PropertyKitError` only when nothing was sent
        (offline, budget, invalid input).
        """
        ...

    def fetch_status(self, title_number: str, idempotency_key: str | None = None) -> Any:
        """GET purchase-status (never cached); the parsed body, or raise a typed error.

        ``idempotency_key``: the purchase asked about, sent as its ``Idempotency-Key``.
        """
        ...


class HttpPurchaseTransport:
    """:class:`PurchaseTransport` over propertykit's one HTTP session
    (:mod:`propertykit.wire._transport`).

    A purchase is one ``POST`` with an ``Idempotency-Key`` header, sent with
    ``idempotent=False``: never cached, an error answer comes back as is (with its
    ``money_state``, parsed once by the HTTP layer), and only a connection that never opened is
    retried there. Purchase-status is a ``GET`` that is never cached.

    Examples
    --------
    >>> transport = HttpPurchaseTransport(client._transport, client.endpoints)
    >>> transport.fetch_status(sb.title_numbers[8])["result"]["money_state"]
    'not_charged'
    """

    def __init__(self, http: Transport, endpoints: Endpoints) -> None:
        self.http = http
        self.endpoints = endpoints

    @property
    def service(self) -> str:
        return self.http.base_url

    def send_purchase(
        self, title_number: str, idempotency_key: str, payload: Mapping[str, Any]
    ) -> Sent | NotAnswered:
        path = _title_path(self.endpoints.purchase_path, title_number)
        try:
            response = self.http.fetch(
                "POST",
                path,
                endpoint="purchase",
                json_body=dict(payload) if payload else None,
                headers={"Idempotency-Key": idempotency_key},
                billable="purchase" in self.endpoints.billable_endpoints,
                idempotent=False,
            )
        except ApiError as exc:
            return Sent(exc.status_code, _parse(exc.body), exc)
        except NetworkError as exc:
            # _http retries a failure to connect (nothing sent) itself, within max_retries.
            return NotAnswered(_failure_kind(exc), exc, retried=True)
        return Sent(response.status_code, _parse(response.text))

    def fetch_status(self, title_number: str, idempotency_key: str | None = None) -> Any:
        path = _title_path(self.endpoints.status_path, title_number)
        return self.http.fetch_json(
            path,
            endpoint="purchase_status",
            billable="purchase_status" in self.endpoints.billable_endpoints,
            headers={"Idempotency-Key": idempotency_key} if idempotency_key else None,
        )


def _title_path(template: str, title_number: str) -> str:
    return template.replace("{titleNumber}", quote(title_number, safe=""))


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _failure_kind(error: NetworkError) -> str:
    """How the request failed; anything not known to be ``connect`` may have been sent."""
    return error.kind or "no_answer"
