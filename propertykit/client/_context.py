"""What a lookup needs of its client, and nothing more: a small context, not the client itself.

``client.properties(ids)`` and ``client.sources(ids)`` go ids -> batches -> answers read from the
cache in bulk, or fetched -> frames (:mod:`propertykit.client._replay`). That route takes a
:class:`LookupContext`, so it never reaches back into the client, and the modules do not import
each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from propertykit.client._lookups import Lookups
from propertykit.config import Endpoints
from propertykit.wire import Transport


@dataclass(frozen=True)
class LookupContext:
    """The parts of a client one lookup uses.

    Attributes
    ----------
    transport
        Sends, counts usage, answers cache questions.
    lookups
        Batches, pages and fetches of one batch.
    endpoints
        Paths, parameter names and the money unit of the frames.
    max_in_flight
        Most batches on their way at once.
    progress
        Progress bars: ``True``, ``False`` or ``None`` (in notebooks and terminals).

    Examples
    --------
    >>> context = client.lookup_context()
    >>> context.max_in_flight, context.endpoints.batch_size
    (4, 50)
    """

    transport: Transport
    lookups: Lookups
    endpoints: Endpoints
    max_in_flight: int
    progress: bool | None
