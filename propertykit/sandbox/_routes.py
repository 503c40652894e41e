"""What the sandbox answers: one method per endpoint, turning a request into a :class:`Reply`.

Nothing here touches sockets; :mod:`propertykit.sandbox._server` reads requests, applies faults and
writes the replies.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from propertykit.config import Endpoints
from propertykit.sandbox._catalogue import ATTRIBUTES, MAX_SUGGESTIONS, Catalogue, select_attributes
from propertykit.sandbox._query import QueryError, run_query
from propertykit.sandbox._replies import Reply, Request, json_error, json_reply, not_available
from propertykit.sandbox._state import KeyInfo, PurchaseEntry, SandboxState

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
MAX_IDS_PER_REQUEST = 100
PURCHASE_CREDITS = 25
_SOURCE_ID = re.compile(r"^[A-Za-z0-9_.-]+::[^\s:,/]+$")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


class _Invalid(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _template(path: str) -> list[str | None]:
    return [None if part.startswith("{") else part for part in path.strip("/").split("/")]


class Router:
    """Matches ``/v1/`` requests to endpoints and answers them."""

    def __init__(self, state: SandboxState, catalogue: Catalogue) -> None:
        self.state = state
        self.catalogue = catalogue
        self.profile = catalogue.profile
        self._serial = itertools.count(1)
        names = Endpoints()
        self.limit_param = names.limit_param
        self.offset_param = names.offset_param
        self.attributes_param = names.attributes_param
        self.query_param = names.suggest_query_param
        # Fixed paths first: /v1/property/health must not be read as a location id.
        self.routes: list[tuple[str, list[str | None], Callable[[Request, list[str]], Reply]]] = [
            ("GET", _template(names.health_path), self.health),
            ("GET", _template(names.suggest_path), self.suggest),
            ("POST", _template(names.query_path), self.query),
            ("GET", _template(names.sources_path), self.sources),
            ("GET", _template(names.properties_path), self.properties),
            ("POST", _template(names.purchase_path), self.purchase),
            ("GET", _template(names.status_path), self.purchase_status),
        ]
        if self.profile.vepler_style:  # Vepler's address autocomplete (its SDK's locator API)
            vepler = Endpoints.vepler()
            assert vepler.autocomplete_path is not None
            self.autocomplete_params = (vepler.autocomplete_query_param,
                                        vepler.autocomplete_limit_param,
                                        vepler.autocomplete_offset_param)  # fmt: skip
            self.routes.insert(2, ("GET", _template(vepler.autocomplete_path), self.autocomplete))

    def dispatch(self, request: Request) -> Reply:
        """Answer a request whose path starts with ``/v1/``, in the profile's error shape."""
        reply = self._route(request)
        if reply.status >= 400 and reply.action == "send":
            reply.body, reply.headers = self.profile.adapt_error(
                reply.status, reply.body, reply.headers, self.state.clock.now(), next(self._serial)
            )
        return reply

    def _route(self, request: Request) -> Reply:
        segments = [unquote(part) for part in request.path[1:].split("/")]
        for method, template, handler in self.routes:
            if len(template) != len(segments):
                continue
            if all(t is None or t == s for t, s in zip(template, segments, strict=True)):
                params = [s for t, s in zip(template, segments, strict=True) if t is None]
                if method != request.method or not all(params):
                    return not_available()
                return handler(request, params)
        return not_available()

    # -- helpers ----------------------------------------------------------------------------

    def _key(self, request: Request) -> KeyInfo | None:
        return self.state.key_info(request.headers.get("x-api-key"))

    @staticmethod
    def _unauthorized() -> Reply:
        return json_error(
            401,
            "unauthorized",
            "Missing or invalid API key; send a valid key in the x-api-key header.",
        )

    def _attributes(self, request: Request) -> tuple[str, ...] | None:
        raw = request.param(self.attributes_param)
        if raw is None or not raw.strip():
            return None
        names = tuple(name.strip() for name in raw.split(",") if name.strip())
        unknown = [name for name in names if name not in ATTRIBUTES]
        if unknown:
            raise _Invalid(
                "invalid_attribute",
                f"Unknown attribute(s) {', '.join(unknown)}; allowed: {', '.join(ATTRIBUTES)}.",
            )
        return names

    def _int_param(self, request: Request, name: str, default: int, *, minimum: int) -> int:
        raw = request.param(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise _Invalid(
                "invalid_parameter", f"{name} must be an integer, got {raw!r}."
            ) from None
        if value < minimum:
            raise _Invalid("invalid_parameter", f"{name} must be at least {minimum}, got {value}.")
        return value

    @staticmethod
    def _ids(raw: str) -> list[str]:
        ids = [value.strip() for value in raw.split(",")]
        if not all(ids):
            raise _Invalid("invalid_id", "Empty identifier in the comma-separated list.")
        if len(ids) > MAX_IDS_PER_REQUEST:
            raise _Invalid(
                "too_many_ids", f"At most {MAX_IDS_PER_REQUEST} ids per request, got {len(ids)}."
            )
        return ids

    def _bill(self, key: KeyInfo, endpoint: str, credits: int, payload: dict[str, Any]) -> Reply:
        """Charge ``credits`` and answer 200 with ``payload``, or answer the 402/429 refusal."""
        with self.state.lock:
            refusal = self.state.refuse_billable(credits)
            if refusal is not None:
                return json_error(
                    refusal.status, refusal.code, refusal.message, retry_after=refusal.retry_after
                )
            self.state.charge(key, endpoint, credits)
        return json_reply(200, payload)

    # -- endpoints --------------------------------------------------------------------------

    def health(self, request: Request, params: list[str]) -> Reply:
        key = self._key(request)
        if key is None:
            return self._unauthorized()
        now = self.state.clock.now()
        if self.profile.vepler_style:
            return json_reply(200, self.profile.health(now, self.state.health_status))
        return json_reply(
            200,
            {
                "success": True,
                "status": "ok",
                "account": "sandbox",
                "key": key.name,
                "time": _iso(now),
            },
        )

    def properties(self, request: Request, params: list[str]) -> Reply:
        key = self._key(request)
        if key is None:
            return self._unauthorized()
        try:
            ids = self._ids(params[0])
            attributes = self._attributes(request)
        except _Invalid as exc:
            return json_error(400, exc.code, exc.message)
        records = [select_attributes(r, attributes) for r in self.catalogue.by_location_ids(ids)]
        payload = {
            "success": True,
            "result": records,
            "size": len(records),
            "totalSize": len(records),
        }
        return self._bill(key, "property", max(1, len(records)), payload)

    def sources(self, request: Request, params: list[str]) -> Reply:
        key = self._key(request)
        if key is None:
            return self._unauthorized()
        try:
            ids = self._ids(params[0])
            malformed = [value for value in ids if not _SOURCE_ID.match(value)]
            if malformed:
                raise _Invalid(
                    "invalid_source_id",
                    f"Source ids must look like <provider>::<id>; got {', '.join(malformed)}.",
                )
            attributes = self._attributes(request)
            limit = self._int_param(request, self.limit_param, DEFAULT_PAGE_SIZE, minimum=1)
            offset = self._int_param(request, self.offset_param, 0, minimum=0)
        except _Invalid as exc:
            return json_error(400, exc.code, exc.message)
        limit = min(limit, MAX_PAGE_SIZE)
        found = self.catalogue.by_source_ids(ids)
        page = [select_attributes(r, attributes) for r in found[offset : offset + limit]]
        has_more = offset + len(page) < len(found)
        payload = {
            "success": True,
            "result": page,
            "totalSize": len(found),
            "size": len(page),
            "hasMore": has_more,
            "nextOffset": offset + len(page),
        }
        return self._bill(key, "sources", max(1, len(page)), payload)

    def query(self, request: Request, params: list[str]) -> Reply:
        """``POST /v1/property/query`` (see :mod:`propertykit.sandbox._query`)."""
        key = self._key(request)
        if key is None:
            return self._unauthorized()
        try:
            body = json.loads(request.body or b"null")
        except ValueError:
            return json_error(400, "invalid_body", "The request body must be JSON.")
        try:
            page, total, offset, limit, attributes = run_query(
                self.catalogue, body, self.profile.query_page_size
            )
        except QueryError as exc:
            return json_error(400, exc.code, exc.message)
        page = [select_attributes(record, attributes) for record in page]
        payload = self.profile.query_envelope(page, total, offset, limit)
        return self._bill(key, "query", max(1, len(page)), payload)

    def _search_guard(self, request: Request, query_param: str) -> tuple[str, Reply | None]:
        """The query text, or the 401/400/429 to answer (the per-minute slot is taken here)."""
        if self._key(request) is None:
            return "", self._unauthorized()
        query = request.param(query_param) or ""
        if not query.strip():
            return "", json_error(
                400, "invalid_parameter", f"Query parameter {query_param} is required."
            )
        refusal = self.state.take_suggest_slot()
        if refusal is not None:
            return query, json_error(
                refusal.status, refusal.code, refusal.message, retry_after=refusal.retry_after
            )
        return query, None

    def suggest(self, request: Request, params: list[str]) -> Reply:
        """Search-suggest (free, limited per minute): see :mod:`propertykit.sandbox._search`."""
        query, refused = self._search_guard(request, self.query_param)
        if refused is not None:
            return refused
        try:
            limit = self._int_param(request, self.limit_param, MAX_SUGGESTIONS, minimum=1)
        except _Invalid as exc:
            return json_error(400, exc.code, exc.message)
        style = self.catalogue.style_of("suggest")
        found, _ = self.catalogue.search(query, min(limit, MAX_SUGGESTIONS), style=style)
        return json_reply(200, {"success": True, "result": found})

    def autocomplete(self, request: Request, params: list[str]) -> Reply:
        """Vepler's address autocomplete: search-suggest's matching, paged, with priorities."""
        query_param, limit_param, offset_param = self.autocomplete_params
        query, refused = self._search_guard(request, query_param)
        if refused is not None:
            return refused
        try:
            limit = self._int_param(request, limit_param, MAX_SUGGESTIONS, minimum=1)
            offset = self._int_param(request, offset_param, 0, minimum=0)
            postcode_first = self._flag_param(request, "postcodePriority")
            street_first = self._flag_param(request, "streetPriority")
        except _Invalid as exc:
            return json_error(400, exc.code, exc.message)
        limit = min(limit, MAX_SUGGESTIONS)
        found, total = self.catalogue.search(
            query, limit, offset, postcode_first=postcode_first, street_first=street_first,
            style=self.catalogue.style_of("autocomplete"),
        )  # fmt: skip
        payload = {"success": True, "result": found, "total": total, "limit": limit,
                   "offset": offset}  # fmt: skip
        return json_reply(200, payload)

    @staticmethod
    def _flag_param(request: Request, name: str) -> bool:
        raw = request.param(name)
        if raw is None or raw.strip().lower() in ("false", "0", ""):
            return False
        if raw.strip().lower() in ("true", "1"):
            return True
        raise _Invalid("invalid_parameter", f"{name} must be true or false, got {raw!r}.")

    def _deed_guard(
        self, request: Request, title: str, *, purchase: bool
    ) -> tuple[KeyInfo, Reply | None]:
        """The key, plus the 401/403/404 to answer with when the request cannot go on."""
        money = {"money_state": "not_charged"} if purchase else {}
        key = self._key(request)
        if key is None:
            return KeyInfo("", False), self._unauthorized()
        if not key.title_deeds:
            message = "This API key does not have access to title deeds."
            return key, json_reply(403, {"success": False, "error": message, **money})
        if self.catalogue.title_index(title) is None:
            money_state = "not_charged" if purchase else None
            return key, json_error(
                404, "not_found", f"Title {title} does not exist.", money_state=money_state
            )
        return key, None

    def _purchase_reply(self, entry: PurchaseEntry, *, replayed: bool) -> Reply:
        status = entry.status(self.state.clock.now())
        result = {
            "titleNumber": entry.title_number,
            "status": status,
            "money_state": "charged",
            "creditsCharged": entry.credits,
            "purchasedAt": _iso(entry.at),
            "idempotencyKey": entry.idempotency_key,
            "document": entry.document if status == "delivered" else None,
        }
        headers = {"Idempotent-Replayed": "true"} if replayed else {}
        return json_reply(
            200 if status == "delivered" else 202, {"success": True, "result": result}, headers
        )

    def _document(self, title: str) -> dict[str, Any]:
        index = self.catalogue.title_index(title)
        assert index is not None
        record = self.catalogue.record(index)
        return {
            "titleNumber": title,
            "documentId": f"TD-{title}-{len(self.state.purchases.get(title, [])) + 1}",
            "format": "pdf",
            "pages": 3 + index % 5,
            "propertyAddress": record["address"]["displayAddress"],
            "tenure": record["tenure"]["type"],
            "issuedAt": _iso(self.state.clock.now()),
        }

    def purchase(self, request: Request, params: list[str]) -> Reply:
        title = params[0]
        key, refused = self._deed_guard(request, title, purchase=True)
        if refused is not None:
            return refused
        if request.body.strip():
            try:
                json.loads(request.body)
            except ValueError:
                return json_error(
                    400, "invalid_body", "The request body must be JSON.", money_state="not_charged"
                )
        idempotency_key = request.headers.get("idempotency-key") or None
        with self.state.lock:
            if idempotency_key and idempotency_key in self.state.by_idempotency_key:
                entry = self.state.by_idempotency_key[idempotency_key]
                if entry.title_number != title:
                    return json_error(
                        409,
                        "idempotency_key_reused",
                        f"Idempotency-Key was already used for title {entry.title_number}.",
                        money_state="not_charged",
                    )
                return self._purchase_reply(entry, replayed=True)
            refusal = self.state.refuse_billable(PURCHASE_CREDITS)
            if refusal is not None:
                return json_error(
                    refusal.status,
                    refusal.code,
                    refusal.message,
                    retry_after=refusal.retry_after,
                    money_state="not_charged",
                )
            forced = self.state.take_forced_outcome()
            if forced is not None and not forced.charged:
                return json_error(
                    forced.status,
                    "purchase_failed",
                    f"The purchase of {title} failed.",
                    money_state=forced.money_state,
                )
            entry = self.state.record_purchase(
                key, title, idempotency_key, PURCHASE_CREDITS, self._document(title)
            )
            if forced is not None:
                return json_error(
                    forced.status,
                    "purchase_failed",
                    f"The purchase of {title} failed after the account was charged.",
                    money_state=forced.money_state,
                )
            reply = self._purchase_reply(entry, replayed=False)
            fault = self.state.take_fault(
                request.path, kinds=("reset_after_charge", "slow_after_charge")
            )
            if fault is not None and fault.kind == "reset_after_charge":
                reply.action = "reset"
            elif fault is not None:
                reply.delay = fault.delay
            return reply

    def purchase_status(self, request: Request, params: list[str]) -> Reply:
        title = params[0]
        _, refused = self._deed_guard(request, title, purchase=False)
        if refused is not None:
            return refused
        now = self.state.clock.now()
        with self.state.lock:
            entries = list(self.state.purchases.get(title, []))
        result = {
            "titleNumber": title,
            "money_state": "charged" if entries else "not_charged",
            "status": entries[-1].status(now) if entries else None,
            "creditsCharged": sum(entry.credits for entry in entries),
            "purchases": [
                {
                    "at": _iso(entry.at),
                    "idempotencyKey": entry.idempotency_key,
                    "credits": entry.credits,
                    "status": entry.status(now),
                }
                for entry in entries
            ],
        }
        return json_reply(200, {"success": True, "result": result})
