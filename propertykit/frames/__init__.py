"""frames — records and raw response bodies into typed DataFrames, and the tables derived from them.

:func:`frame` builds the property table. Arrow reads and types it, in two tiers: at once with the
declared schema (:mod:`~propertykit.frames._schema`; :mod:`~propertykit.frames._records` for
decoded records, :mod:`~propertykit.frames._bodies` for raw bodies), and, only for what Arrow
refuses, a field or leaf at a time through the lenient rules of
:mod:`~propertykit.frames._coercion`, which coerce a value or count it, warn and keep it raw for
:func:`unparsed_table` (``df.pk.unparsed()``). Fields the interface does not name are kept, typed
by Arrow (:mod:`~propertykit.frames._extras`). :func:`explode_sales` and :func:`epc_table` derive
the sales and EPC tables, :func:`epc_trend` the EPC band shares per year or quarter of
lodgement, :func:`epc_profile` a book's EPC profile (bands, below C, expiring certificates);
:func:`price_index` the repeat-sales index; :func:`fit_size_elasticity` how price per m² falls
with floor area per property type; :func:`appraise` values subjects point in time
(:class:`ValuationSearch` what it searches for, :func:`check_as_of` and :func:`check_subject` its
refusals, pure), returning an :class:`Appraisal` whose values :func:`valuation` and whose
schedule :func:`comparables` return;
:func:`gross_yield` the gross rental yield (the rent's period named by the caller);
:func:`in_major_units` rescales a frame served in pence to pounds (a copy);
:func:`money_unit_of` reads the unit a table says (``attrs["money_unit"]``, carried to every
derived table) and :func:`in_pounds_for` reconciles the tables a writer shows side by side.
:mod:`~propertykit.frames._stored_form` keeps bodies as read into Arrow, so a warm re-run need not
parse them again (the client's replay imports it by that name).

May import: core only. Knows record shapes, never HTTP, plots or maps.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.errors import (
    EpcTrendWarning,
    FewPairsWarning,
    MinorUnitsWarning,
    UnparsedValuesWarning,
)
from propertykit.frames._appraisal import (
    COMPARABLE_COLUMNS,
    OWN_SALE_SOURCE,
    VALUATION_COLUMNS,
    Appraisal,
    appraise,
    comparables,
    valuation,
)

# The stored-form names below are the warm replay's plumbing, for the client layer only:
# imported here, since no layer imports past another's __init__, but not public names (not in
# __all__).
from propertykit.frames._coercion import unparsed_table
from propertykit.frames._comparables import ValuationSearch
from propertykit.frames._epc_profile import EpcProfile, epc_profile
from propertykit.frames._epc_trend import EPC_TREND_MIN_COUNT, epc_trend
from propertykit.frames._evidence import check_as_of, check_subject
from propertykit.frames._gross_yield import RENT_PERIODS, gross_yield
from propertykit.frames._money import (
    MINOR_PER_MAJOR,
    MINOR_UNIT_COLUMNS,
    PENCE_MEDIAN_THRESHOLD,
    UNIT_WORDS,
    VALUATION_MONEY,
    InPounds,
    in_major_units,
    in_pounds_for,
    is_minor,
    money_attrs,
    money_columns_of,
    money_unit_of,
)
from propertykit.frames._price_index import price_index
from propertykit.frames._schema import EPC_RATINGS, TAX_BANDS
from propertykit.frames._schema import KINDS as KINDS  # the record's leaves and their kinds
from propertykit.frames._size_elasticity import SizeElasticity, fit_size_elasticity
from propertykit.frames._stored_form import BodiesRead as BodiesRead
from propertykit.frames._stored_form import decode_shares as decode_shares
from propertykit.frames._stored_form import format_name as format_name
from propertykit.frames._stored_form import frame_and_shares as frame_and_shares
from propertykit.frames._stored_form import frame_from_read as frame_from_read
from propertykit.frames._stored_form import read_for_keeping as read_for_keeping
from propertykit.frames._stored_form import records_frame_and_shares as records_frame_and_shares
from propertykit.frames._tables import (
    COLUMNS,
    EPC_COLUMNS,
    SALES_COLUMNS,
    epc_table,
    explode_sales,
    frame,
)

__all__ = [
    "COLUMNS",
    "COMPARABLE_COLUMNS",
    "EPC_COLUMNS",
    "EPC_RATINGS",
    "EPC_TREND_MIN_COUNT",
    "MINOR_PER_MAJOR",
    "MINOR_UNIT_COLUMNS",
    "OWN_SALE_SOURCE",
    "PENCE_MEDIAN_THRESHOLD",
    "RENT_PERIODS",
    "SALES_COLUMNS",
    "TAX_BANDS",
    "UNIT_WORDS",
    "VALUATION_COLUMNS",
    "VALUATION_MONEY",
    "Appraisal",
    "EpcProfile",
    "EpcTrendWarning",
    "FewPairsWarning",
    "InPounds",
    "MinorUnitsWarning",
    "SizeElasticity",
    "UnparsedValuesWarning",
    "ValuationSearch",
    "appraise",
    "check_as_of",
    "check_subject",
    "comparables",
    "epc_profile",
    "epc_table",
    "epc_trend",
    "explode_sales",
    "fit_size_elasticity",
    "frame",
    "gross_yield",
    "in_major_units",
    "in_pounds_for",
    "is_minor",
    "money_attrs",
    "money_columns_of",
    "money_unit_of",
    "price_index",
    "unparsed_table",
    "valuation",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
