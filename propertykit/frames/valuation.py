"""What a property is worth on a date, from its comparable sales, with an 80 % range.

For every subject at once (:func:`~propertykit.frames.comparables.find_comparables`): the
estimate is the subject's floor area times its comparables' price per m², each brought to
``as_of`` by the index, averaged in logs by their weights, each first clipped to within
:data:`_CLIP` of their weighted median (so an outlier sale pulls no further; on the sandbox's
real-shaped world this beats the weighted median by a point of median error). With fewer than
``min_comparables`` comparables the subject is *thin*: no estimate, never a guess.

The range is calibrated on the frame's own sales, as split conformal prediction does: up to
:data:`CALIBRATION_SALES` sales of the frame (spread over the five years before the latest
``as_of``) are valued on the sales before each, and the spread of each subject's comparables
(their weighted interquartile range of log £/m², widened for how few they are) is scaled so that
eight in ten of those real prices fall inside. So the band says how well the method does on
data like yours, not how well it would do if its assumptions held. ``attrs["band"]`` gives the
scale and how many sales set it; with fewer than 30 it falls back to the normal quantile and
says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from propertykit.frames.comparables import check_search, criteria_text, find_comparables
from propertykit.frames.evidence import Evidence, Subjects, gather_evidence, read_subjects

__all__ = ["CALIBRATION_SALES", "VALUATION_COLUMNS", "valuation"]

#: Columns of :func:`valuation`, in order.
VALUATION_COLUMNS = (
    "propertyId", "as_of", "estimate", "lower", "upper", "price_per_sqm", "comparables",
    "radius_m", "thin", "method",
)  # fmt: skip
#: The most sales of the frame valued to calibrate the range.
CALIBRATION_SALES = 600
_COVERAGE = 0.8
_Z80 = 1.2815515655446004  # the normal quantile of a two-sided 80 % interval
_CLIP = 0.35  # log £/m²: how far from the weighted median one comparable may pull
_LEAST_SPREAD = 0.03  # log £/m²: comparables that agree exactly still leave this uncertainty
METHOD = "comparables"
THIN = "too few comparables"
NO_PLACE = "no coordinates or floor area"


def valuation(
    df: pd.DataFrame,
    subjects: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]] | None = None,
    *,
    as_of: Any = None,
    min_comparables: int = 5,
    radius_m: float | None = None,
    months: int = 24,
    limit: int = 20,
    index: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """An estimate and an 80 % range for each subject, from its comparable sales.

    Parameters
    ----------
    df
        The property frame (:func:`propertykit.frame`).
    subjects
        A ``propertyId`` of ``df``, a mapping (``lat``, ``lng``, ``floorAreaSqM``,
        ``propertyType``, optionally ``beds`` and ``propertyId``), or a sequence of them; ``None``:
        every property of ``df`` with coordinates and a floor area.
    as_of
        One date for all, or one per subject; ``None``: the day after the frame's latest sale.
    min_comparables
        The fewest comparables an estimate may rest on; below, the subject is ``thin``.
    radius_m, months, limit, index
        As for :func:`~propertykit.frames.comparables.comparables`.

    Returns
    -------
    pandas.DataFrame
        One row per subject, in the order asked: columns :data:`VALUATION_COLUMNS`. ``estimate``
        is missing and ``thin`` True where the evidence is too little; ``method`` says how each
        was valued (or why not). ``attrs``: ``criteria``, ``index``, ``band`` (``coverage``,
        ``scale``, ``calibrated_on``, ``how``), ``left_out`` (sales that could not be compared;
        with ``subjects=None``, properties without coordinates or floor area too).

    Raises
    ------
    InvalidInput
        A subject not in the frame or missing a field, ``as_of`` of the wrong length, a radius,
        months, limit or ``min_comparables`` not positive.

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.sandbox.data import generate_records
    >>> df = pk.frame(generate_records(2000))
    >>> values = valuation(df, ["PK00000042", "PK00000007"], as_of="2025-01-01")
    >>> list(values.columns[:5]), list(values["propertyId"])
    (['propertyId', 'as_of', 'estimate', 'lower', 'upper'], ['PK00000042', 'PK00000007'])
    """
    check_search(radius_m, months, limit, min_comparables)
    evidence = gather_evidence(df, index=index)
    left_out = dict(evidence.left_out)
    if subjects is None:
        every = df["propertyId"].dropna().drop_duplicates().tolist()
        probe = read_subjects(df, every, evidence, as_of=None)
        if int((~probe.usable).sum()):
            left_out["properties without coordinates or floor area"] = int((~probe.usable).sum())
        asked: list[str | Mapping[str, Any]] = [
            name for name, fine in zip(every, probe.usable, strict=True) if fine
        ]
    elif isinstance(subjects, (str, Mapping)):
        asked = [subjects]
    else:
        asked = list(subjects)
    read = read_subjects(df, asked, evidence, as_of)
    search = (radius_m, months, min_comparables, limit)
    estimate, spread, count, radius = _estimate(evidence, read, *search)
    scale, band = _calibrate(evidence, read.as_of, search)
    thin = ~(count >= min_comparables) | ~read.usable
    estimate = np.where(thin, np.nan, estimate)
    method = np.where(~read.usable, NO_PLACE, np.where(thin, THIN, METHOD))
    table = pd.DataFrame(
        {
            "propertyId": pd.array(read.property_id, dtype="string"),
            "as_of": read.as_of.astype("datetime64[D]").astype("datetime64[us]"),
            "estimate": estimate,
            "lower": estimate * np.exp(-scale * spread),
            "upper": estimate * np.exp(scale * spread),
            "price_per_sqm": estimate / read.area,
            "comparables": count.astype(np.int64),
            "radius_m": radius,
            "thin": thin,
            "method": method,
        },
        columns=list(VALUATION_COLUMNS),
    )
    table.attrs = {
        "criteria": criteria_text(radius_m, months, min_comparables, limit),
        "index": evidence.index_name,
        "band": band,
        "left_out": left_out,
    }
    return table


def _estimate(
    evidence: Evidence,
    subjects: Subjects,
    radius_m: float | None,
    months: int,
    min_comparables: int,
    limit: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per subject: the estimate (area x clipped weighted mean adjusted £/m²), the range's unscaled
    half-width in logs, how many comparables, and the radius searched."""
    matches = find_comparables(evidence, subjects, radius_m, months, min_comparables, limit)
    size = len(subjects.as_of)
    who, sale, weight = matches.subject, matches.sale, matches.weight
    moved = evidence.log_level(subjects.as_of[who]) - evidence.log_level(evidence.day[sale])
    log_rate = np.log(evidence.price[sale] / evidence.area[sale]) + moved
    count = np.bincount(who, minlength=size)
    lower, middle, upper = _weighted_quantiles(who, log_rate, weight, (0.25, 0.5, 0.75), size)
    total = np.bincount(who, weight, size)
    squares = np.bincount(who, weight**2, size)
    effective = np.where(squares > 0, total**2 / np.where(squares > 0, squares, 1), 0)
    middle = _clipped_mean(who, log_rate, weight, middle, size)
    spread = np.maximum((upper - lower) / 1.349, _LEAST_SPREAD)
    spread = spread * np.sqrt(1 + 1 / np.maximum(effective, 1))
    estimate = np.where(count > 0, subjects.area * np.exp(middle), np.nan)
    return estimate, spread, count, matches.radius


def _weighted_quantiles(
    group: np.ndarray, values: np.ndarray, weights: np.ndarray, levels: tuple[float, ...], size: int
) -> list[np.ndarray]:
    """Per group, the first value whose cumulative weight share reaches each level (NaN for a
    group without values)."""
    order = np.lexsort((values, group))
    group, values, weights = group[order], values[order], weights[order]
    total = np.bincount(group, weights, size)
    running = np.cumsum(weights)
    before = np.concatenate([[0.0], running])[np.searchsorted(group, np.arange(size))]
    share = (running - before[group]) / np.where(total[group] > 0, total[group], 1)
    key = group + np.minimum(share, 1.0) * 0.999_999
    found = []
    for level in levels:
        at = np.searchsorted(key, np.arange(size) + level * 0.999_999 - 1e-12)
        at = np.minimum(at, max(len(values) - 1, 0))
        fine = (np.bincount(group, minlength=size) > 0) & (len(values) > 0)
        found.append(np.where(fine, values[at] if len(values) else np.nan, np.nan))
    return found


def _calibrate(
    evidence: Evidence, as_of: np.ndarray, search: tuple[float | None, int, int, int]
) -> tuple[float, dict[str, Any]]:
    """The factor that makes the range hold 80 % of the frame's own sales, valued blind."""
    latest = int(as_of.max()) if len(as_of) else 0
    eligible = np.flatnonzero((evidence.day < latest) & (evidence.day >= latest - 5 * 365))
    spaced = np.linspace(0, len(eligible) - 1, min(len(eligible), CALIBRATION_SALES))
    chosen = eligible[spaced.astype(np.int64)]
    sales = Subjects(
        property_id=evidence.property_id[chosen],
        as_of=evidence.day[chosen],
        lat=evidence.lat[chosen],
        lng=evidence.lng[chosen],
        area=evidence.area[chosen],
        beds=evidence.beds[chosen],
        kind=evidence.kind[chosen],
        usable=np.ones(len(chosen), dtype=bool),
    )
    estimate, spread, count, _ = _estimate(evidence, sales, *search)
    valued = count >= search[2]
    ratios = np.abs(np.log(evidence.price[chosen][valued] / estimate[valued])) / spread[valued]
    if len(ratios) >= 30:
        scale = float(np.quantile(ratios, _COVERAGE))
        how = (
            f"scaled so that 8 in 10 of {len(ratios):,} of the frame's own sales, each valued "
            "on the sales before it, fall inside"
        )
    else:
        scale = _Z80
        how = (
            f"only {len(ratios)} of the frame's own sales could be valued to calibrate it (30 "
            "needed): the normal 80 % quantile of the comparables' spread, not checked on data"
        )
    return scale, {"coverage": _COVERAGE, "scale": scale, "calibrated_on": len(ratios), "how": how}


def _clipped_mean(
    who: np.ndarray, log_rate: np.ndarray, weight: np.ndarray, middle: np.ndarray, size: int
) -> np.ndarray:
    """Per subject, the weighted mean of its comparables' log £/m², each first clipped to
    :data:`_CLIP` of the weighted median (an outlier sale pulls no further)."""
    centre = middle[who]
    clipped = centre + np.clip(log_rate - centre, -_CLIP, _CLIP)
    total = np.bincount(who, weight, size)
    mean = np.bincount(who, weight * clipped, size) / np.where(total > 0, total, 1)
    return np.where(total > 0, mean, middle)
