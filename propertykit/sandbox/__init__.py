"""A local, faithful implementation of the property-data service: a real HTTP server on 127.0.0.1.

>>> import requests
>>> from propertykit import sandbox
>>> with sandbox.serve() as sb:
...     answer = requests.get(f"{sb.url}/v1/property/health", headers={"x-api-key": sb.api_key})
>>> answer.json()["status"]
'ok'

Where the service leaves a gap, the sandbox picks the value below. propertykit never relies on
these choices: each one is a setting of ``pk.Endpoints`` or ``pk.Client``.

How the sandbox differs from the real service
---------------------------------------------
Keys
    Two live keys (``pk_live_<32 hex>``) are made per run, on one account: ``api_key`` may do
    everything; ``restricted_key`` gets 403 (``error`` as a plain string) on title-deed purchase
    and purchase-status. Any other key, or none, gets 401.
Credits (one account; both keys share balance, daily cap and suggest limit)
    ======================================================  ================================
    ``GET /v1/property/{locationIds}``                       1 credit per record returned
                                                             (minimum 1 per request)
    ``GET /v1/property/sources/{sourceIds}``                 1 credit per record on the page
                                                             (minimum 1 per request)
    ``POST /v1/property/query``                              1 credit per record on the page
                                                             (minimum 1 per request)
    ``POST /v1/title-deeds/{titleNumber}/purchase``          25 credits
    health, search-suggest, autocomplete, purchase-status    free
    ======================================================  ================================

    Only 200 and 202 answers are charged; 4xx/5xx never are, except a purchase whose error body
    says ``"money_state": "charged"`` (forced outcomes and ``reset_after_charge`` faults). A
    billable request the balance cannot cover gets 402 ``insufficient_credit`` (no Retry-After);
    the same request succeeds after ``add_credit``. One that would take the day's spending past
    the daily cap gets 429 ``rate_limit_exceeded`` with Retry-After = whole seconds to the next
    midnight UTC; the balance is checked first. Days are UTC days of the sandbox clock.
Search-suggest
    ``GET /v1/property/suggest?q=<text>`` (free; optional ``limit``, at most 10): a plain
    full-text search, as PostgreSQL's ``plainto_tsquery`` (:mod:`propertykit.sandbox._search`).
    ``q`` and each address are split into case-folded runs of letters and digits (punctuation
    and spaces only separate them); an address's tokens are those of its display address and
    county plus its postcode without the space (``mk401nn``). An address matches when it holds
    every token of ``q`` whole; only the last token may also be the start of one. No
    abbreviations (``rd`` is not ``road``), no spelling tolerance. Ranked by the share of the
    address's tokens ``q`` covers, then addresses holding the last token whole, then location
    id; at most 10 results, ``{locationId, displayAddress, postcode, town}`` plus
    ``streetNumber``, ``streetName``, ``subBuilding`` and ``buildingName`` where the address
    has them. Limited per account to 30 requests per calendar minute of the sandbox clock by
    default (``set_suggest_limit``); beyond that 429 ``rate_limit_exceeded`` with Retry-After =
    seconds to the end of the minute.
Address autocomplete (``vepler`` profile only)
    ``GET /v1/locator/address/autocomplete?q=<text>`` (free), as ``Vepler/http-sdk``'s
    ``location.autocompleteAddress`` sends it: ``q`` (required), ``limit`` (default 10, at
    most 10), ``offset``, ``postcodePriority`` and ``streetPriority`` (``true``/``false``:
    addresses whose whole postcode, or whose street name, ``q`` holds come first). The same
    matching and suggestions as search-suggest, in the envelope ``{success, result, total,
    limit, offset}``; a suggestion's ``locationId`` is the property's. It shares
    search-suggest's per-minute limit (one count per account for both).
Paging (sources)
    ``limit`` defaults to 20; above 100 it is clamped to 100 (no error); ``limit`` < 1, negative
    ``offset`` or non-integers give 400. ``nextOffset`` is always ``offset + size``; ``hasMore``
    is false on the last page. ``totalSize`` counts distinct properties: several source ids of
    one property give one record.
Area query
    ``POST /v1/property/query`` with Vepler's documented body (``area``, ``query`` filters,
    ``limit``, ``offset``, ``sortBy``, ``sortOrder``, ``attributes``) over the synthetic data;
    see :mod:`propertykit.sandbox._query`. Default page 20 (25 under ``vepler``), at most 100.
Profiles
    ``serve(profile="vepler")`` (``propertykit sandbox --profile vepler``) answers as Vepler's
    public documentation shows: prices in pence (``pricePerSqFt`` in pounds), ``sstc``, health
    ``{status, service, timestamp, version}`` (``set_health``), upper-case error codes with
    ``request_id``/``details``/``timestamp`` and ``X-RateLimit-*`` headers instead of
    ``Retry-After``, and the ``total``/``limit``/``offset`` envelope on the area query; see
    :mod:`propertykit.sandbox._profiles`.
Ids
    At most 100 ids per request (400 ``too_many_ids`` beyond). Unknown ids are left out of the
    result. Source ids must match ``<provider>::<id>`` (400 ``invalid_source_id`` otherwise).
    ``attributes`` names top-level record fields (400 ``invalid_attribute`` for others);
    ``propertyId`` and ``locationId`` are always kept.
Title deeds
    ``POST /v1/title-deeds/{titleNumber}/purchase`` (optional JSON body) answers 200
    ``delivered``, or 202 ``delivering`` when a delivery delay is set; the deed is delivered when
    the sandbox clock passes it. A repeat with the same ``Idempotency-Key`` replays the purchase
    (header ``Idempotent-Replayed: true``, current delivery status) and never charges; the same
    key for another title gets 409. A new key buys again and charges again. Unknown title: 404
    with ``"money_state": "not_charged"``. ``GET .../purchase-status`` (free) reports
    ``money_state``, ``status``, ``creditsCharged`` and every purchase of that title.
403 versus 404
    Any path under ``/v1/`` that is not one of the endpoints above - or one of them with
    another method (e.g. ``POST /v1/property/health``), or with an empty id segment - answers
    403 ``{"message": "This endpoint is not available"}``, before the key is checked. Paths
    outside ``/v1/`` answer 404 with the plain-text body ``Not Found``.
Data
    Synthetic and deterministic per ``seed`` (see :mod:`propertykit.sandbox._data`): money in
    whole pounds (pence under ``vepler``), boundaries as GeoJSON Polygons for about half the
    records. ``serve(realism="real")`` shapes sale prices like real ones: a known price-per-m²
    surface (:mod:`propertykit.sandbox._valuation`), dispersion falling with the time held,
    outlier sales, homes out in the country (:mod:`propertykit.sandbox._price_index`); and gives
    addresses real geography (:mod:`propertykit.sandbox._geography`): postcode units of 10 to
    40 homes on one to three streets, their homes within about 150 m of the unit's centre,
    numbered houses, ranges (``13-14``), house names, flats inside numbered and sometimes
    named buildings (``Flat 3, Oak House, 12 Mill Lane``, address fields ``subBuilding`` and
    ``buildingName``). The default world's addresses are drawn one by one, as before.
Faults
    ``inject_fault`` makes the next matching requests answer a 5xx (body as a JSON object, a JSON
    string ``error``, plain text, HTML or empty), drop the connection, answer late, or send a body
    shorter than its Content-Length (still charged: the server answered 200). Those faults act
    before the key is checked. ``reset_after_charge`` charges a purchase and then drops the
    connection; ``slow_after_charge`` charges it, logs it, and holds the answer for ``delay``
    seconds (a client can be killed in between). ``force_purchase_outcome`` makes purchases
    fail with a chosen ``money_state``.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.sandbox._address_book import TypedAddress, typed_addresses, world_addresses
from propertykit.sandbox._control import Sandbox, serve
from propertykit.sandbox._data import generate_record, generate_records
from propertykit.sandbox._price_index import true_price_index
from propertykit.sandbox._state import Charge, RequestRecord
from propertykit.sandbox._valuation import true_value

__all__ = [
    "Charge",
    "RequestRecord",
    "Sandbox",
    "TypedAddress",
    "generate_record",
    "generate_records",
    "serve",
    "true_price_index",
    "true_value",
    "typed_addresses",
    "world_addresses",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
