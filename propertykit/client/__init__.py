"""client — the service's endpoints: ``pk.Client`` and what it needs to ask well.

Health, property lookups by location or source id (checked, percent-encoded, batched, paged),
search-suggest, address lists matched to properties (never a guess; reviewed decisions kept),
books of homes valued from the evidence around each (``client.appraise``, priced beforehand),
bulk runs with bounded requests in flight and dry runs, and title-deed purchases handed to
:mod:`propertykit.deeds`.

May import: ``wire`` (every byte goes through its one session), ``frames`` (answers become
typed DataFrames), ``deeds``, and core. Never ``views``, ``widgets`` or ``cli``.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.client._appraisal_plan import AppraisalPlan
from propertykit.client._appraise import BookAppraisal, check_book_ids
from propertykit.client._bulk import DryRun
from propertykit.client._client import Client
from propertykit.client._ids import ParsedIds, parse_ids, validate_ids
from propertykit.client._match_decisions import MatchDecisions, Reviewed, check_book, text_key
from propertykit.client._matching import MatchDryRun
from propertykit.client._neighbourhood import check_subject_id, held_in
from propertykit.client._partial import PartialResult
from propertykit.client._portable import ClientRecipe
from propertykit.client._query_input import check_area
from propertykit.wire import Clock

__all__ = [
    "AppraisalPlan",
    "BookAppraisal",
    "Client",
    "ClientRecipe",
    "Clock",
    "DryRun",
    "MatchDecisions",
    "MatchDryRun",
    "ParsedIds",
    "PartialResult",
    "Reviewed",
    "check_area",
    "check_book",
    "check_book_ids",
    "check_subject_id",
    "held_in",
    "parse_ids",
    "text_key",
    "validate_ids",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
