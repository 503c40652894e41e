"""Which profile a client follows, and the key and address it implies.

``pk.Client(profile="vepler")`` (or ``PROPERTYKIT_PROFILE=vepler``) is the same as
``endpoints=pk.Endpoints.vepler()``: every name in one place (:meth:`propertykit.Endpoints.vepler`).
Under it the key may also come from ``VEPLER_API_KEY`` and the address defaults to
``https://api.vepler.com``. A base address ending in ``/v1`` (as Vepler's docs give it, so that
their examples double it to ``/v1/v1``) is accepted: the paths already start with ``/v1``.

:func:`resolve_service` is the one way propertykit finds the service: ``pk.Client()``, the
forms (which take a client) and the ``propertykit`` command all go through it. It never falls
back to the local sandbox: a key without an address (where the profile has none), or an address
without a key, is a :class:`~propertykit.errors.ConfigError` in one line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from propertykit.config import ENV_API_KEY, ENV_BASE_URL, ENV_PROFILE, Endpoints
from propertykit.errors import ConfigError


@dataclass(frozen=True)
class Service:
    """Where a client sends, and with which key: the answer of :func:`resolve_service`."""

    endpoints: Endpoints
    base_url: str
    api_key: str = field(repr=False)


def resolve_service(
    api_key: str | None = None,
    base_url: str | None = None,
    *,
    profile: str | None = None,
    endpoints: Endpoints | None = None,
) -> Service:
    """Profile, address and key, from the arguments first, then the environment.

    The profile is ``profile`` (else ``PROPERTYKIT_PROFILE``, else ``spec``), or ``endpoints``;
    the address is ``base_url``, else ``PROPERTYKIT_BASE_URL``, else the profile's own (Vepler's
    for ``vepler``, none for ``spec``); the key is ``api_key``, else ``PROPERTYKIT_API_KEY``,
    else the profile's own variable (``VEPLER_API_KEY``). Anything missing raises
    :class:`~propertykit.errors.ConfigError` naming what to set; the local sandbox is never
    chosen here.

    Examples
    --------
    >>> service = resolve_service("demo_live_x", "http://127.0.0.1:8765/", profile="spec")
    >>> service.base_url, service.endpoints.profile
    ('http://127.0.0.1:8765', 'spec')
    >>> "demo_live_x" in repr(service)  # the key is never shown
    False
    """
    chosen = resolve_endpoints(profile, endpoints)
    address = _given(base_url, ENV_BASE_URL)
    given_key = _given(api_key, ENV_API_KEY, *chosen.key_env)
    if address is None and chosen.base_url is None and given_key is not None:
        raise ConfigError(
            f"An API key is set but no service address: pass base_url= or set {ENV_BASE_URL} "
            f"(or {ENV_PROFILE}=vepler for Vepler's service)"
        )
    if given_key is None and address is not None:
        raise ConfigError(
            f"A service address is set ({address}) but no API key: pass api_key= or set "
            f"{' or '.join((ENV_API_KEY, *chosen.key_env))}"
        )
    key = resolve_key(api_key, chosen)  # nothing set at all: "No API key" first
    return Service(chosen, resolve_base_url(base_url, chosen), key)


def _given(value: str | None, *names: str) -> str | None:
    """``value``, else the first of the environment variables ``names`` that is set (stripped)."""
    if value is not None:
        return value.strip() if isinstance(value, str) and value.strip() else None
    return next((os.environ[n].strip() for n in names if os.environ.get(n, "").strip()), None)


def resolve_endpoints(profile: str | None, endpoints: Endpoints | None) -> Endpoints:
    """``endpoints`` when given (a named ``profile`` must then agree), else the profile's own.

    Examples
    --------
    >>> resolve_endpoints("vepler", None).money_unit
    'minor'
    """
    if endpoints is None:
        return Endpoints.for_profile(profile)
    if profile is not None and profile.strip().lower() != endpoints.profile:
        raise ConfigError(
            f"profile={profile!r} disagrees with endpoints (profile {endpoints.profile!r}); "
            "pass one of them"
        )
    return endpoints


def resolve_key(api_key: str | None, endpoints: Endpoints) -> str:
    """``api_key``, else ``PROPERTYKIT_API_KEY``, else the profile's own variables, stripped."""
    names = (ENV_API_KEY, *endpoints.key_env)
    value = api_key
    if value is None:
        value = next((os.environ[n] for n in names if os.environ.get(n, "").strip()), None)
    if value is None or not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"No API key: pass api_key= or set the {' or '.join(names)} environment variable"
        )
    return value.strip()


def resolve_base_url(base_url: str | None, endpoints: Endpoints) -> str:
    """``base_url``, else ``PROPERTYKIT_BASE_URL``, else the profile's address; normalised."""
    value = base_url if base_url is not None else os.environ.get(ENV_BASE_URL)
    if value is None or (isinstance(value, str) and not value.strip()):
        value = endpoints.base_url
    if value is None or not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"No service address: pass base_url= or set the {ENV_BASE_URL} environment variable"
        )
    url = value.strip()
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"base_url must start with http:// or https://, got {url!r}")
    return normalise_base_url(url, endpoints)


_VERSION_TAIL = re.compile(r"(?:/v1)+/*$")


def normalise_base_url(url: str, endpoints: Endpoints) -> str:
    """Drop a trailing ``/v1`` (or ``/v1/v1``) when every path already starts with ``/v1/``.

    Examples
    --------
    >>> normalise_base_url("https://api.vepler.com/v1", Endpoints.vepler())
    'https://api.vepler.com'
    >>> normalise_base_url("https://api.vepler.com/v1/v1/", Endpoints.vepler())
    'https://api.vepler.com'
    """
    url = url.rstrip("/")
    paths = (endpoints.properties_path, endpoints.sources_path, endpoints.health_path)
    if all(path.startswith("/v1/") for path in paths):
        url = _VERSION_TAIL.sub("", url)
    return url
