"""Bodies read within bounds: a cap on the decoded size, and a clock checked between chunks.

``requests`` reads a body whole, decompressing as it goes, with a timeout per socket read only:
a gzip bomb of under 1 MB grows to gigabytes in memory, and a server trickling one byte every
half second never trips a per-read timeout. :class:`BoundedAdapter` reads every body itself, in
chunks of decoded bytes (``read1``, so a slow server returns what it has), and stops when

- the decoded body passes ``max_body_bytes``: :class:`~propertykit.errors.ResponseTooLarge`;
- the deadline of the logical request passes: :class:`DeadlinePassed` (a ``ReadTimeout``).

Before each read the socket's timeout is lowered to the time left, so no read waits past the
deadline either. The limits of the request in progress are in :data:`LIMITS` (a context
variable, so each thread of a bulk lookup has its own), set by the transport for each call (the
tiles use :func:`call_limits`). The session's adapter calls :func:`within_deadline` and
:func:`read_body` itself, counting the answer between them
(:class:`~propertykit.wire._metered.MeteredAdapter`).
"""

from __future__ import annotations

import contextvars
import io
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPHeaderDict, HTTPResponse
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError, SSLError

from propertykit.errors import ResponseTooLarge

#: Largest decoded piece read at once.
CHUNK_BYTES = 64 * 1024
#: Default cap on a decoded body: far above any page of records, far below a machine's memory.
DEFAULT_MAX_BODY_BYTES = 256 * 2**20


@dataclass(frozen=True)
class CallLimits:
    """Bounds of the logical request in progress: ``deadline`` on ``monotonic`` (the client's
    :class:`~propertykit.wire._clock.Clock`, so a test clock governs deadlines as it does
    retries)."""

    deadline: float | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    monotonic: Callable[[], float] = time.monotonic

    def remaining(self) -> float | None:
        """Seconds left before the deadline (``None``: no deadline), on this limit's clock."""
        return None if self.deadline is None else self.deadline - self.monotonic()


#: The limits of the logical request in progress in this thread (and context).
LIMITS: contextvars.ContextVar[CallLimits | None] = contextvars.ContextVar(
    "propertykit_call_limits", default=None
)


@contextmanager
def call_limits(limits: CallLimits) -> Iterator[None]:
    """Apply ``limits`` to every body read in this thread (and context) meanwhile."""
    token = LIMITS.set(limits)
    try:
        yield
    finally:
        LIMITS.reset(token)


class DeadlinePassed(requests.exceptions.ReadTimeout):
    """The deadline of the logical request passed; ``sent`` says whether the request went out."""

    def __init__(self, *args: Any, sent: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent = sent


class BoundedAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` that reads each body itself, within :class:`CallLimits`.

    Parameters
    ----------
    max_body_bytes
        Cap on the decoded body when no :func:`call_limits` are in force.
    **kwargs
        Passed to ``HTTPAdapter`` (``pool_maxsize``...).
    """

    def __init__(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, **kwargs: Any) -> None:
        self.max_body_bytes = max_body_bytes
        super().__init__(**kwargs)

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        limits = LIMITS.get() or CallLimits(max_body_bytes=self.max_body_bytes)
        kwargs["timeout"] = within_deadline(kwargs.get("timeout"), limits)
        response = super().send(request, stream=True, **kwargs)
        if not stream:
            read_body(response, limits)
        return response


def within_deadline(timeout: Any, limits: CallLimits) -> Any:
    """The ``timeout`` argument with the read part cut to the time left before the deadline."""
    left = limits.remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise DeadlinePassed("it passed before the request was sent", sent=False)
    connect, read = timeout if isinstance(timeout, tuple) else (timeout, timeout)
    connect = left if connect is None else min(connect, left)
    read = left if read is None else min(read, left)
    return (connect, read)


def read_body(response: requests.Response, limits: CallLimits) -> None:
    """Read and decode ``response``'s body, within ``limits``, into its ``content``."""
    raw = response.raw
    sock = _socket_of(raw)
    read_timeout = sock.gettimeout() if sock is not None else None
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            left = limits.remaining()
            if left is not None:
                if left <= 0:
                    raise DeadlinePassed(f"it passed after {size:,} bytes of the body")
                if sock is not None:
                    sock.settimeout(left if read_timeout is None else min(read_timeout, left))
            chunk = raw.read1(CHUNK_BYTES, decode_content=True)
            if not chunk:
                break
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise ResponseTooLarge(
                    f"The answer from {response.url} passed max_body_bytes="
                    f"{limits.max_body_bytes:,} once decoded; reading stopped "
                    "(raise max_body_bytes= if it is expected)",
                    url=response.url,
                    limit=limits.max_body_bytes,
                )
            parts.append(chunk)
    except ProtocolError as exc:
        response.close()
        raise requests.exceptions.ChunkedEncodingError(exc) from exc
    except DecodeError as exc:
        response.close()
        raise requests.exceptions.ContentDecodingError(exc) from exc
    except (ReadTimeoutError, TimeoutError) as exc:
        response.close()
        timeout = DeadlinePassed if _expired(limits) else requests.exceptions.ReadTimeout
        raise timeout(exc) from exc
    except SSLError as exc:
        response.close()
        raise requests.exceptions.SSLError(exc) from exc
    except BaseException:
        response.close()
        raise
    finally:
        if sock is not None and read_timeout is not None:
            with suppress(OSError):
                sock.settimeout(read_timeout)
    raw.release_conn()
    body = b"".join(parts)
    headers = HTTPHeaderDict(raw.headers)
    headers.discard("content-encoding")  # decoded already
    headers["content-length"] = str(len(body))
    response.raw = HTTPResponse(  # the body, read: requests takes it from here as from any
        body=io.BytesIO(body),
        headers=headers,
        status=raw.status,
        version=raw.version,
        reason=raw.reason,
        preload_content=False,
        decode_content=False,
        request_method=response.request.method,
        request_url=raw.url,
    )


def _expired(limits: CallLimits) -> bool:
    left = limits.remaining()
    return left is not None and left <= 0.05


def _socket_of(raw: Any) -> socket.socket | None:
    sock = getattr(raw.connection, "sock", None)
    return sock if isinstance(sock, socket.socket) else None
