"""Settings of propertykit: where the service's endpoints are, and what the defaults are.

The service interface leaves several things unspecified (the names of the paging query
parameters, the path of search-suggest and of the title-deed purchase, the per-minute limit of
search-suggest). Every one of them is a field of :class:`Endpoints`, so a user can follow the real
service without waiting for a release.

Environment variables
---------------------
``PROPERTYKIT_API_KEY``
    The API key, used when ``pk.Client(api_key=None)``. Never written anywhere by propertykit.
``PROPERTYKIT_BASE_URL``
    The service's root address, used when ``pk.Client(base_url=None)``.
``PROPERTYKIT_CACHE_DIR``
    Where the HTTP cache and the title-deed journal live (default: the user cache directory).
``PROPERTYKIT_OFFLINE``
    ``1`` makes every new client offline (serve from the cache only) unless told otherwise.
``PROPERTYKIT_PROFILE``
    ``vepler`` makes ``pk.Client()`` follow Vepler's public documentation (see
    :meth:`Endpoints.vepler`); unset or ``spec``: the neutral defaults of the service interface.
``PROPERTYKIT_LOCK_LEASE``
    Seconds a batch's team lock (Redis) outlives a holder that stopped renewing it, e.g. a
    killed kernel: the longest the others then wait before one of them fetches the batch
    (default 30; at most 60 is advised). The holder renews it while it fetches. With the SQLite
    cache the operating system frees a dead process's file lock at once.
``VEPLER_API_KEY``
    Under the ``vepler`` profile, the key when neither ``api_key`` nor ``PROPERTYKIT_API_KEY``
    is given (the name Vepler's own examples use).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal, get_args

import platformdirs

__all__ = [
    "DEADLINE_PER_TIMEOUT",
    "DEFAULT_EXPIRE_AFTER",
    "DEFAULT_LOCK_LEASE",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_CACHE_DIR",
    "ENV_LOCK_LEASE",
    "ENV_OFFLINE",
    "ENV_PROFILE",
    "MAX_TILE_BYTES",
    "MAX_TILE_SIDE",
    "MAX_URL_LENGTH",
    "MONEY_STATES",
    "PILLOW_FOR_TILES",
    "PROFILES",
    "TILE_SECONDS",
    "VEPLER_AUTOCOMPLETE_PATH",
    "VEPLER_BASE_URL",
    "VERSION",
    "Endpoints",
    "MoneyState",
    "MoneyUnit",
    "cache_dir",
    "env_flag",
    "lock_lease",
]

#: ``pk.Client(deadline=None)``: a request may take this many times ``timeout`` in all (retries,
#: waits and body reads included): 300 s with the default ``timeout=30``, 10 s with ``timeout=1``.
DEADLINE_PER_TIMEOUT = 10

try:
    #: propertykit's version, from the installed package's metadata.
    VERSION = version("propertykit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    VERSION = "0.0.0"

MoneyState = Literal["charged", "not_charged", "unknown"]
"""What a title-deed purchase did to the account, in the service's own words (``money_state``)."""
#: The values of :data:`MoneyState`, for checking what a body says.
MONEY_STATES: tuple[str, ...] = get_args(MoneyState)

MoneyUnit = Literal["major", "minor"]
"""The unit prices are served in: ``major`` (pounds) or ``minor`` (pence)."""

ENV_API_KEY = "PROPERTYKIT_API_KEY"
ENV_BASE_URL = "PROPERTYKIT_BASE_URL"
ENV_CACHE_DIR = "PROPERTYKIT_CACHE_DIR"
ENV_OFFLINE = "PROPERTYKIT_OFFLINE"
ENV_PROFILE = "PROPERTYKIT_PROFILE"
ENV_LOCK_LEASE = "PROPERTYKIT_LOCK_LEASE"

#: Seconds a batch's team lock lives past its holder's last renewal (see ``lock_lease``).
DEFAULT_LOCK_LEASE = 30.0

#: The profiles ``pk.Client(profile=...)`` knows: the spec's neutral defaults, and Vepler's.
PROFILES = ("spec", "vepler")
#: The real service's root address (its paths start with ``/v1``).
VEPLER_BASE_URL = "https://api.vepler.com"
#: Vepler's address autocomplete: the SDK's ``location.autocompleteAddress`` sends
#: ``GET /address/autocomplete`` to its locator API, which sits beside ``/v1/property``.
VEPLER_AUTOCOMPLETE_PATH = "/v1/locator/address/autocomplete"

#: How long property data stays fresh in the cache unless ``expire_after`` says otherwise.
DEFAULT_EXPIRE_AFTER = timedelta(days=7)

#: URLs are kept under this many characters when ids are batched into one request.
MAX_URL_LENGTH = 2000

# Street tiles (fetched and checked in ``wire._tiles``, drawn in ``views._street``): one constant
# per limit, shared by both layers.
#: Largest tile body read (a busy 512-pixel street tile is about 100 KB).
MAX_TILE_BYTES = 2 * 2**20
#: Largest side of a tile, in pixels (256 is usual, 512 for "@2x" tiles); a tile is square.
MAX_TILE_SIDE = 1024
#: Longest time one tile may take, whatever its map has left (a map's own deadline).
TILE_SECONDS = 30.0
#: Why no street tile can be had without Pillow (the ``export`` extra): they are decoded to draw.
PILLOW_FOR_TILES = "Street tiles in a map need Pillow: pip install 'propertykit[export]'"


@dataclass(frozen=True, kw_only=True)
class Endpoints:
    """Paths and query-parameter names of the service, with the defaults propertykit assumes.

    The service interface names the property, sources, health and purchase-status paths, and
    leaves the rest open; each open point is a field here.

    Parameters
    ----------
    limit_param, offset_param, attributes_param
        Names of the sources endpoint's query parameters: maximum results, results to skip,
        comma-separated attributes to include.
    suggest_path, suggest_query_param
        Path of search-suggest and the name of its query-text parameter.
    purchase_path, status_path
        Title-deed purchase (``POST``) and purchase-status (``GET``) paths; ``{titleNumber}`` is
        replaced by the percent-encoded title number.
    batch_size
        Ids per request when looking up many; URLs are also kept under 2,000 characters.
    suggest_per_minute
        Search-suggest requests allowed per minute per account (not given by the service:
        set it to your account's limit). ``None`` disables client-side limiting.
    billable_endpoints
        Which of ``properties``, ``sources``, ``suggest``, ``health``, ``purchase`` and
        ``purchase_status`` cost credit (the service does not say): these count against a
        client's ``budget`` and in ``usage.billable_requests``.
    health_path, properties_path, sources_path
        The paths the service interface names; ``{locationIds}``/``{sourceIds}`` are replaced by
        comma-separated, percent-encoded ids.
    query_path
        ``POST`` path of the area query (:meth:`propertykit.Client.query`).
    money_unit
        ``"major"`` (pounds) or ``"minor"`` (pence): the unit the service's prices are in,
        recorded as ``df.attrs["money_unit"]`` (values are never rescaled). ``None`` (the
        service interface does not say): pounds assumed, with a warning when they look like
        pence.
    profile
        The name of this set of choices (``"spec"`` or ``"vepler"``), for reprs and reports.
    base_url
        The service's address for this profile, used when neither ``base_url`` nor
        ``PROPERTYKIT_BASE_URL`` is given (``None``: one of them is required).
    key_env
        Further environment variables to read the key from, after ``PROPERTYKIT_API_KEY``.
    autocomplete_path
        ``GET`` path of the profile's address autocomplete (``None``: the service has none, as
        the service interface names none; Vepler's: ``/v1/locator/address/autocomplete``).
        Each suggestion's ``locationId`` is a property's, for :meth:`propertykit.Client.properties`.
    autocomplete_query_param, autocomplete_limit_param, autocomplete_offset_param
        Names of its query-text, page-size and offset parameters (Vepler's SDK: ``q``,
        ``limit``, ``offset``; it also takes ``postcodePriority`` and ``streetPriority``).
    credits_per_record, least_credits_per_request
        What a billable lookup or area query costs, for the plans of ``dry_run=True``
        (:meth:`propertykit.Client.appraise`): credits per record returned, and the fewest
        credits one request costs. The service interface does not say: the defaults are the
        sandbox's rule (1 and 1); ``None`` (the ``vepler`` profile's, whose prices are not
        public) leaves a plan's credits unknown. Set them to your account's prices.

    Examples
    --------
    >>> import propertykit as pk
    >>> pk.Endpoints(limit_param="pageSize").limit_param
    'pageSize'
    """

    limit_param: str = "limit"
    offset_param: str = "offset"
    attributes_param: str = "attributes"
    suggest_path: str = "/v1/property/suggest"
    suggest_query_param: str = "q"
    purchase_path: str = "/v1/title-deeds/{titleNumber}/purchase"
    status_path: str = "/v1/title-deeds/{titleNumber}/purchase-status"
    batch_size: int = 50
    suggest_per_minute: float | None = 30.0
    health_path: str = "/v1/property/health"
    properties_path: str = "/v1/property/{locationIds}"
    sources_path: str = "/v1/property/sources/{sourceIds}"
    billable_endpoints: frozenset[str] = frozenset({"properties", "sources", "purchase", "query"})
    query_path: str = "/v1/property/query"
    money_unit: MoneyUnit | None = None
    profile: str = "spec"
    base_url: str | None = None
    key_env: tuple[str, ...] = ()
    autocomplete_path: str | None = None
    autocomplete_query_param: str = "q"
    autocomplete_limit_param: str = "limit"
    autocomplete_offset_param: str = "offset"
    credits_per_record: float | None = 1
    least_credits_per_request: float | None = 1

    def __post_init__(self) -> None:
        from propertykit.errors import InvalidInput

        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise InvalidInput(
                f"Endpoints.batch_size must be a positive integer, got {self.batch_size!r}"
            )
        if self.money_unit is not None and self.money_unit not in get_args(MoneyUnit):
            raise InvalidInput(
                f"Endpoints.money_unit must be 'major', 'minor' or None, got {self.money_unit!r}"
            )
        object.__setattr__(self, "billable_endpoints", frozenset(self.billable_endpoints))
        object.__setattr__(self, "key_env", tuple(self.key_env))

    @classmethod
    def vepler(cls, **changes: object) -> Endpoints:
        """Vepler's public property API, as its documentation and open-source clients show it.

        Base ``https://api.vepler.com`` with ``/v1/...`` paths, ``limit``/``offset``/
        ``attributes`` paging, ``POST /v1/property/query``, per-service health, prices in pence
        (``money_unit="minor"``; ``pricePerSqFt`` is served in pounds and left as it is), and the
        key also read from ``VEPLER_API_KEY``, and the address autocomplete of its SDK
        (``autocomplete_path``). What the public material does not show (title-deed
        purchase and purchase-status, credits, which endpoints are billable, the suggest path and
        limit) keeps the service interface's defaults; pass ``changes`` to set them.

        Examples
        --------
        >>> import propertykit as pk
        >>> names = pk.Endpoints.vepler()
        >>> names.money_unit, names.query_path, names.base_url
        ('minor', '/v1/property/query', 'https://api.vepler.com')
        """
        fields: dict[str, object] = {
            "profile": "vepler",
            "base_url": VEPLER_BASE_URL,
            "limit_param": "limit",
            "offset_param": "offset",
            "attributes_param": "attributes",
            "health_path": "/v1/property/health",
            "properties_path": "/v1/property/{locationIds}",
            "sources_path": "/v1/property/sources/{sourceIds}",
            "query_path": "/v1/property/query",
            "money_unit": "minor",
            "key_env": ("VEPLER_API_KEY",),
            "autocomplete_path": VEPLER_AUTOCOMPLETE_PATH,
            "credits_per_record": None,  # not public: set them to your account's prices
            "least_credits_per_request": None,
        }
        fields.update(changes)
        return cls(**fields)  # type: ignore[arg-type]

    @classmethod
    def for_profile(cls, profile: str | None) -> Endpoints:
        """The endpoints of a named profile (``None``: ``PROPERTYKIT_PROFILE``, else ``spec``)."""
        from propertykit.errors import ConfigError

        name = profile if profile is not None else os.environ.get(ENV_PROFILE, "")
        name = (name or "spec").strip().lower()
        if name == "spec":
            return cls()
        if name == "vepler":
            return cls.vepler()
        raise ConfigError(f"Unknown profile {name!r}; choose one of {', '.join(PROFILES)}")

    def replace(self, **changes: object) -> Endpoints:
        """Return a copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def cache_dir() -> Path:
    """The folder for the HTTP cache and the purchase journal (``PROPERTYKIT_CACHE_DIR`` first)."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_cache_dir("propertykit", appauthor=False))


def env_flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment variable ``name`` is switched on (``1``, ``true`` or ``yes``).

    The one reading of on/off settings such as ``PROPERTYKIT_OFFLINE``: any case, spaces ignored;
    unset, empty or anything else is off. ``environ``: where to look (default ``os.environ``).

    Examples
    --------
    >>> env_flag("PROPERTYKIT_OFFLINE", {"PROPERTYKIT_OFFLINE": " Yes "})
    True
    >>> env_flag("PROPERTYKIT_OFFLINE", {"PROPERTYKIT_OFFLINE": "0"}), env_flag("X", {})
    (False, False)
    """
    value = (os.environ if environ is None else environ).get(name, "")
    return value.strip().lower() in {"1", "true", "yes"}


def lock_lease() -> float:
    """Seconds a batch's team lock outlives a holder that stopped renewing it.

    ``PROPERTYKIT_LOCK_LEASE`` if set (a positive number of seconds), else 30.

    Examples
    --------
    >>> lock_lease()
    30.0
    """
    configured = os.environ.get(ENV_LOCK_LEASE, "").strip()
    if not configured:
        return DEFAULT_LOCK_LEASE
    try:
        lease = float(configured)
    except ValueError:
        lease = 0.0
    if not 0 < lease < float("inf"):
        from propertykit.errors import ConfigError

        raise ConfigError(f"{ENV_LOCK_LEASE} must be a positive number of seconds")
    return lease
