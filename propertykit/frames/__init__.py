"""frames — records and raw response bodies into typed DataFrames, and the tables derived from them.

:func:`frame` builds the property table (Arrow does the reading and typing:
:mod:`~propertykit.frames.records` for decoded records, :mod:`~propertykit.frames.bodies` for
raw bodies, :mod:`~propertykit.frames.leafwise` and :mod:`~propertykit.frames.raw_leaves` for
the leaves of raw bodies Arrow refuses; :mod:`~propertykit.frames.narrowing` keeps an odd value
to its own column and :mod:`~propertykit.frames.coercion` coerces it or counts it, warns and
keeps it raw for :func:`unparsed_table`, ``df.pk.unparsed()``); :func:`explode_sales` and
:func:`epc_table` derive the sales and EPC tables, and :func:`epc_trend` the EPC band shares per
year or quarter of lodgement; :func:`in_major_units` rescales a frame served
in pence to pounds (a copy). :mod:`~propertykit.frames.stored_form` keeps bodies as read into
Arrow, so a warm re-run need not parse them again. While a frame is built, Arrow allocates
from the system allocator (:mod:`~propertykit.frames.memory`: pyarrow's default is slow to
take fresh memory).

May import: core only. Knows record shapes, never HTTP, plots or maps.
"""

from __future__ import annotations

from propertykit.frames.bodies import ENVELOPE_FIELDS
from propertykit.frames.coercion import UnparsedValuesWarning, unparsed_table
from propertykit.frames.epc_over_time import EPC_TREND_MIN_COUNT, EpcTrendWarning, epc_trend
from propertykit.frames.money import MINOR_PER_MAJOR, in_major_units, is_minor
from propertykit.frames.repeat_sales import FewPairsWarning, price_index
from propertykit.frames.stored_form import (
    BodiesRead,
    decode_bodies,
    encode_per_body,
    form,
    frame_of,
    read_bodies_form,
)
from propertykit.frames.tables import (
    COLUMNS,
    EPC_COLUMNS,
    EPC_RATINGS,
    PENCE_MEDIAN_THRESHOLD,
    SALES_COLUMNS,
    TAX_BANDS,
    MinorUnitsWarning,
    epc_table,
    explode_sales,
    frame,
)

__all__ = [
    "COLUMNS",
    "ENVELOPE_FIELDS",
    "EPC_COLUMNS",
    "EPC_RATINGS",
    "EPC_TREND_MIN_COUNT",
    "MINOR_PER_MAJOR",
    "PENCE_MEDIAN_THRESHOLD",
    "SALES_COLUMNS",
    "TAX_BANDS",
    "BodiesRead",
    "EpcTrendWarning",
    "FewPairsWarning",
    "MinorUnitsWarning",
    "UnparsedValuesWarning",
    "decode_bodies",
    "encode_per_body",
    "epc_table",
    "epc_trend",
    "explode_sales",
    "form",
    "frame",
    "frame_of",
    "in_major_units",
    "is_minor",
    "price_index",
    "read_bodies_form",
    "unparsed_table",
]
