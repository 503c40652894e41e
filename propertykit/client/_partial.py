"""What a multi-request call had fetched when it failed, and how to carry on.

Raised errors carry it as ``error.partial``, so that nothing a user paid for is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PartialResult:
    """What a multi-request call had fetched when it failed, and how to carry on.

    Attributes
    ----------
    records
        Records already fetched (and paid for) before the failure.
    remaining_ids
        Ids not yet fetched, in order; pass them to the same call to resume.
    resume_offset
        For a paged sources request: the offset to resume from for the request that failed
        (``None`` when the failure was not part-way through paging).
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    remaining_ids: list[str] = field(default_factory=list)
    resume_offset: int | None = None
