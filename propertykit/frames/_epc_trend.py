"""How EPC ratings move over time: band shares per lodgement year or quarter, by group.

:func:`epc_trend` counts each property's certificate in the period of its ``validFrom`` (the day
it was lodged), per group when asked, and gives per period the number of certificates, the count
and the share of each band A-G, the share rated A to C, and the mean current and potential
efficiency. It is a picture of certificates: each home's latest one, by when it was lodged, not
of the whole housing stock.

Nothing is dropped without a count. Certificates without a lodgement date or a current rating
(absent, or unreadable as served: ``df.pk.unparsed()``) are left out, counted in
``attrs["left_out"]`` and warned about once (:class:`EpcTrendWarning`). A period with fewer
than ``min_count`` certificates is pooled with the periods after it (the last with the ones
before) into one row whose ``pooled`` is true and whose ``label`` names the span, or left out
with ``pool=False``; a group with fewer in all is left out; both are listed in ``attrs`` and
warned about.

The counting is one ``numpy.bincount`` over (group, period, band) codes, and a day's period comes
from a table of the days spanned, so on a million properties it is about 1.3 times as fast as
``groupby`` + ``value_counts(normalize=True)`` + ``unstack``, in as much memory, while giving more
(``benchmarks/epc_trend.py``; both start from :func:`~propertykit.frames._tables.epc_table`).
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd

from propertykit.errors import EpcTrendWarning, InvalidInput, outside_stacklevel
from propertykit.frames._schema import EPC_RATINGS
from propertykit.frames._tables import epc_table
from propertykit.text import listed

#: The fewest certificates a period stands for unless ``min_count`` says otherwise.
EPC_TREND_MIN_COUNT = 50
#: What a group with no value in the ``by`` column is called.
NOT_GIVEN = "not given"
_MONTHS_PER_PERIOD = {"year": 12, "quarter": 3}
_PERIOD_CODES = {"year": "Y", "quarter": "Q"}
_GOOD = 3  # A, B and C are the first three bands
_MICROSECONDS_PER_DAY = 86_400_000_000
_LOOKUP_DAYS = 200_000  # about 550 years
#: The EPC table's columns that show a property has a certificate.
EPC_VALUES = (
    "currentEnergyRating", "potentialEnergyRating", "currentEnergyEfficiency",
    "potentialEnergyEfficiency", "validFrom", "validTo",
)  # fmt: skip
# why a certificate is not counted (the keys of attrs["left_out"])
_NO_DATE = "without a lodgement date (validFrom)"
_BAD_DATE = "with a lodgement date that could not be read"
_NO_RATING = "without a current rating"
_BAD_RATING = "with a current rating that could not be read"
_THIN = "in periods or groups with too few certificates"
_MEANS = ("mean_efficiency", "mean_potential")
_UNUSABLE = (_NO_DATE, _BAD_DATE, _NO_RATING, _BAD_RATING)


def trend_columns(by: str | None = None) -> list[str]:
    """The columns of :func:`epc_trend`, in order.

    Examples
    --------
    >>> trend_columns("propertyType")[:3]
    ['period', 'propertyType', 'n']
    """
    return [
        "period",
        *([by] if by else []),
        "n",
        *(f"count_{band}" for band in EPC_RATINGS),
        *(f"share_{band}" for band in EPC_RATINGS),
        "share_A_to_C",
        "mean_efficiency",
        "mean_potential",
        "period_end",
        "pooled",
        "label",
    ]


def epc_trend(
    df: pd.DataFrame,
    *,
    freq: Literal["year", "quarter"] = "year",
    by: str | None = None,
    min_count: int = EPC_TREND_MIN_COUNT,
    pool: bool = True,
) -> pd.DataFrame:
    """Band shares of EPC certificates per period of lodgement (``validFrom``), per group.

    Parameters
    ----------
    df
        The property frame (``pk.frame(records)``), or an EPC table from
        :func:`propertykit.frames._tables.epc_table` with any ``by`` column added.
    freq
        ``"year"`` or ``"quarter"`` of ``validFrom``.
    by
        A column of ``df`` to split by (``"propertyType"``, ``"address.town"``, ...), or
        ``None``. Rows without a value form the group ``"not given"``.
    min_count
        The fewest certificates a row may stand for (see ``pool``).
    pool
        Periods with fewer than ``min_count`` certificates are pooled with the following
        periods of their group (a short last stretch with the row before it); ``False`` leaves
        them out instead. Either way they are counted in ``attrs`` and warned about.

    Returns
    -------
    pandas.DataFrame
        One row per period (or pooled span) and group, ordered by group then period, columns
        :func:`trend_columns`: ``period`` (``pandas.Period``; the first of a pooled span),
        the ``by`` group, ``n`` (certificates with a date and a current rating),
        ``count_A`` ... ``count_G``, ``share_A`` ... ``share_G`` (summing to 1),
        ``share_A_to_C``, ``mean_efficiency`` and ``mean_potential`` (SAP points, over the
        certificates that give one), ``period_end`` (the last period of the span), ``pooled``
        and ``label`` (``"2019"``, ``"2019 Q3"``, ``"2009 to 2011"``). ``attrs`` holds
        ``certificates`` (rows with any EPC value), ``without_certificate``, ``counted``,
        ``left_out`` (reason -> count), ``pooled`` and ``left_out_periods`` (labels), ``freq``,
        ``by`` and ``min_count``.

    Examples
    --------
    >>> import propertykit as pk
    >>> records = [{"propertyId": f"P{i}", "epc": {"currentEnergyRating": "DC"[i % 2],
    ...             "validFrom": f"{2020 + i % 3}-03-01"}} for i in range(60)]
    >>> trend = epc_trend(pk.frame(records), min_count=10)
    >>> trend[["label", "n", "share_C", "share_D"]].to_dict("records")[0]
    {'label': '2020', 'n': 20, 'share_C': 0.5, 'share_D': 0.5}
    """
    if freq not in _MONTHS_PER_PERIOD:
        raise InvalidInput(f"freq must be one of {', '.join(_MONTHS_PER_PERIOD)}, got {freq!r}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise InvalidInput(f"min_count must be a whole number of at least 1, got {min_count!r}")
    if by is not None and by not in df.columns:
        raise InvalidInput(f"cannot split certificates by {by!r}: it is not a column of the frame")
    table = df if "currentEnergyRating" in df.columns else epc_table(df, today="2000-01-01")
    if "validFrom" not in table.columns:
        raise InvalidInput("an EPC table needs a validFrom column (the day each was lodged)")
    ratings = _rating_codes(table["currentEnergyRating"])
    periods, odd_dates = _period_codes(table["validFrom"], freq)
    has_date, has_rating = periods >= 0, ratings >= 0
    counted = has_date & has_rating
    certificates, left_out = _left_out(df, table, has_date, has_rating, odd_dates)
    names: list[Any] | None = None
    groups = np.zeros(len(table), dtype=np.intp)
    if by is not None:
        names, groups = _group_codes(df[by], counted)
    efficiencies = [
        _numbers(table[name]) if name in table.columns else np.full(len(table), np.nan)
        for name in ("currentEnergyEfficiency", "potentialEnergyEfficiency")
    ]
    cells = _Cells(groups, periods, ratings, counted, efficiencies)
    buckets, pooled, (dropped, dropped_labels) = _buckets(cells, names, freq, min_count, pool)
    left_out[_THIN] = dropped
    result = _table(cells, buckets, names, by, freq)
    result.attrs = {
        "certificates": certificates,
        "without_certificate": len(table) - certificates,
        "counted": int(result["n"].sum()),
        "left_out": left_out,
        "pooled": pooled,
        "left_out_periods": dropped_labels,
        "freq": freq,
        "by": by,
        "min_count": min_count,
    }
    _warn(result.attrs)
    return result


def _rating_codes(ratings: pd.Series) -> np.ndarray:
    """0 for A ... 6 for G, -1 where missing or not a band."""
    if isinstance(ratings.dtype, pd.CategoricalDtype):
        if list(ratings.cat.categories) != list(EPC_RATINGS):
            ratings = ratings.cat.set_categories(list(EPC_RATINGS))
        return np.asarray(ratings.cat.codes, dtype=np.int64)
    position = {band: code for code, band in enumerate(EPC_RATINGS)}
    codes = ratings.map(lambda v: position.get(v.strip().upper(), -1) if isinstance(v, str) else -1)
    return np.asarray(codes, dtype=np.int64)


def _period_codes(served: pd.Series, freq: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's Period ordinal (-1 where there is no date), and where a date was given as
    text that is no date (only in a table not made by propertykit, whose dates are typed)."""
    values = served
    if not pd.api.types.is_datetime64_any_dtype(served):
        values = pd.to_datetime(served, errors="coerce", format="ISO8601", utc=True)
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = values.to_numpy(dtype="datetime64[us]")
    missing = np.isnat(stamps)
    days = stamps.view(np.int64) // _MICROSECONDS_PER_DAY
    low = int(np.min(days, where=~missing, initial=2**62))
    high = int(np.max(days, where=~missing, initial=-(2**62)))
    if low > high:  # no date at all
        ordinals = np.full(len(days), -1, dtype=np.int64)
    elif high - low < _LOOKUP_DAYS:  # each day's period from a table of the days spanned
        spanned = np.arange(low, high + 1).astype("datetime64[D]")
        table = spanned.astype("datetime64[M]").astype(np.int64) // _MONTHS_PER_PERIOD[freq]
        ordinals = table[np.clip(days - low, 0, high - low)]
    else:  # dates centuries apart: numpy's calendar for each
        months = stamps.astype("datetime64[M]").astype(np.int64)
        ordinals = months // _MONTHS_PER_PERIOD[freq]
    missing |= ordinals < 0  # a period before 1970 is no EPC lodgement
    ordinals[missing] = -1
    return ordinals, missing & served.notna().to_numpy()


def _group_codes(values: pd.Series, counted: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Names of the groups the counted rows fall in, and each row's position among them: in
    category order for a categorical, else sorted; ``"not given"`` last."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = np.asarray(values.cat.codes, dtype=np.intp), values.cat.categories
    else:
        found, uniques = values.factorize(sort=True)  # Arrow's dictionary encoding for text
        codes = np.asarray(found, dtype=np.intp)
    seen = np.flatnonzero(np.bincount(codes[counted] + 1, minlength=len(uniques) + 1)[1:])
    renumber = np.full(len(uniques) + 1, len(seen), dtype=np.intp)  # missing -> after the rest
    renumber[seen] = np.arange(len(seen))
    codes = renumber[codes]  # -1 (missing) takes the last slot
    names = list(uniques[seen])
    if (codes[counted] == len(seen)).any():
        names.append(NOT_GIVEN)
    return names, codes


def _numbers(values: pd.Series) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(values):
        values = pd.to_numeric(values, errors="coerce")
    return np.asarray(values.to_numpy(dtype=float, na_value=np.nan, copy=True))  # zeroed later


class _Cells:
    """Certificates per (group, period, band) cell, and efficiency sums per cell.

    A cell is group x span + period - first. Rows not counted go to one cell past the end, so
    no column is copied to leave them out. A ``by`` column with more values than there are rows
    numbers only the cells in use (``ids``, sorted), so it costs no more than its rows.
    """

    def __init__(
        self,
        groups: np.ndarray,
        periods: np.ndarray,
        bands: np.ndarray,
        counted: np.ndarray,
        efficiencies: list[np.ndarray],
    ) -> None:
        some = bool(counted.any())
        self.first = int(np.min(periods, where=counted, initial=2**62)) if some else 0
        self.span = int(periods.max()) - self.first + 1 if some else 1
        size = (int(np.max(groups, where=counted, initial=0)) + 1) * self.span if some else 0
        keys = periods * 7  # (group x span + period - first) x 7 + band, in place
        if size > self.span:  # more than one group
            keys += groups * (self.span * 7)
        keys += bands
        keys -= self.first * 7
        np.putmask(keys, ~counted, size * 7)
        self.ids = np.arange(size)
        if size > 2 * len(keys) + 100_000:  # sparse: number only the cells in use
            cell = keys // 7
            self.ids, cell = np.unique(cell, return_inverse=True)
            if len(self.ids) and self.ids[-1] == size:  # the cell of the rows not counted
                self.ids = self.ids[:-1]
            size = len(self.ids)
            keys = cell * 7 + np.where(counted, bands, 0)
        slots = (size + 1) * 7
        self.counts = np.bincount(keys, minlength=slots).reshape(size + 1, 7)[:size]
        self.held = self.counts.sum(axis=1)
        self.sums: list[tuple[np.ndarray, np.ndarray]] = []
        for values in efficiencies:
            absent = np.isnan(values)
            number = self.held.astype(float)
            if absent.any():
                np.putmask(values, absent, 0.0)
                given = np.bincount(keys, weights=~absent, minlength=slots).reshape(-1, 7)
                number = given.sum(axis=1)[:size]
            total = np.bincount(keys, weights=values, minlength=slots).reshape(-1, 7)
            self.sums.append((total.sum(axis=1)[:size], number))


class _Buckets:
    """Rows of the result: which cells each one adds up (``of``: a row per cell, -1 for none),
    and its group and first and last period."""

    def __init__(self, cells: np.ndarray) -> None:
        self.cells = cells
        self.of = np.full(len(cells), -1, dtype=np.intp)
        self.spans: list[tuple[int, int, int]] = []


def _stretches(held: np.ndarray, min_count: int, pool: bool) -> tuple[list[list[int]], list[int]]:
    """Positions (into ``held``, certificates per non-empty period) grouped into rows of at
    least ``min_count``, and the positions left out."""
    if not pool:
        solid = held >= min_count
        return [[int(p)] for p in np.flatnonzero(solid)], np.flatnonzero(~solid).tolist()
    stretches: list[list[int]] = []
    current: list[int] = []
    total = 0
    for position, count in enumerate(held.tolist()):
        current.append(position)
        total += count
        if total >= min_count:
            stretches.append(current)
            current, total = [], 0
    if current and stretches:  # a short last stretch joins the row before it
        stretches[-1].extend(current)
        current = []
    return stretches, current


def _label(ordinal: int, freq: str) -> str:
    if freq == "year":
        return str(1970 + ordinal)
    return f"{1970 + ordinal // 4} Q{ordinal % 4 + 1}"


def _span_label(first: int, last: int, freq: str) -> str:
    return _label(first, freq) + ("" if first == last else f" to {_label(last, freq)}")


def _buckets(
    cells: _Cells, names: list[Any] | None, freq: str, min_count: int, pool: bool
) -> tuple[_Buckets, list[str], tuple[int, list[str]]]:
    """The result's rows, the labels of pooled rows, and what was left out (count, labels)."""
    rows = np.flatnonzero(cells.held)
    groups = cells.ids[rows] // cells.span
    periods = cells.ids[rows] % cells.span + cells.first
    held = cells.held[rows]
    buckets = _Buckets(rows)
    pooled: list[str] = []
    dropped, dropped_labels = 0, []
    for part in np.split(np.arange(len(rows)), np.flatnonzero(np.diff(groups)) + 1):
        if not len(part):
            continue
        group = int(groups[part[0]])
        prefix = "" if names is None else f"{names[group]}: "
        stretches, rest = _stretches(held[part], min_count, pool)
        for stretch in stretches:
            members = part[stretch]
            first, last = int(periods[members[0]]), int(periods[members[-1]])
            buckets.of[members] = len(buckets.spans)
            buckets.spans.append((group, first, last))
            if first != last:
                pooled.append(prefix + _span_label(first, last, freq))
        dropped += int(held[part[rest]].sum())
        dropped_labels += [prefix + _label(int(periods[part[p]]), freq) for p in rest]
    return buckets, pooled, (dropped, dropped_labels)


def _table(
    cells: _Cells, buckets: _Buckets, names: list[Any] | None, by: str | None, freq: str
) -> pd.DataFrame:
    """The rows added up per bucket, as the result frame."""
    rows = len(buckets.spans)
    kept = buckets.of >= 0
    into, cell_rows = buckets.of[kept], buckets.cells[kept]
    counts = np.zeros((rows, 7), dtype=np.int64)
    np.add.at(counts, into, cells.counts[cell_rows])
    n = counts.sum(axis=1)
    spans = np.array(buckets.spans, dtype=np.int64).reshape(rows, 3)
    columns: dict[str, Any] = {
        "period": pd.PeriodIndex.from_ordinals(spans[:, 1], freq=_PERIOD_CODES[freq]),
        "n": n,
    }
    if by is not None and names is not None:
        columns[by] = pd.Series(np.asarray(names, dtype=object)[spans[:, 0]])
    with np.errstate(invalid="ignore", divide="ignore"):
        for position, band in enumerate(EPC_RATINGS):
            columns[f"count_{band}"] = counts[:, position]
            columns[f"share_{band}"] = counts[:, position] / n
        columns["share_A_to_C"] = counts[:, :_GOOD].sum(axis=1) / n
        for name, (total, number) in zip(_MEANS, cells.sums, strict=True):
            sums = np.bincount(into, weights=total[cell_rows], minlength=rows)
            given = np.bincount(into, weights=number[cell_rows], minlength=rows)
            columns[name] = np.where(given > 0, sums / given, np.nan)
    columns["period_end"] = pd.PeriodIndex.from_ordinals(spans[:, 2], freq=_PERIOD_CODES[freq])
    columns["pooled"] = spans[:, 1] != spans[:, 2]
    columns["label"] = pd.Series(
        [_span_label(first, last, freq) for _, first, last in buckets.spans], dtype="str"
    )
    return pd.DataFrame(columns, columns=trend_columns(by))


def _left_out(
    df: pd.DataFrame,
    table: pd.DataFrame,
    has_date: np.ndarray,
    has_rating: np.ndarray,
    odd_dates: np.ndarray,
) -> tuple[int, dict[str, int]]:
    """How many rows hold a certificate (any EPC value), and why some cannot be counted."""
    any_value = np.zeros(len(table), dtype=bool)
    for name in EPC_VALUES:
        if name in table.columns:
            any_value |= table[name].notna().to_numpy()
    unreadable = _unreadable(df, table)
    unreadable["validFrom"] |= odd_dates
    for rows in unreadable.values():
        any_value |= rows
    no_date = any_value & ~has_date
    no_rating = any_value & has_date & ~has_rating
    bad_date = no_date & unreadable["validFrom"]
    bad_rating = no_rating & unreadable["currentEnergyRating"]
    return int(any_value.sum()), {
        _NO_DATE: int((no_date & ~bad_date).sum()),
        _BAD_DATE: int(bad_date.sum()),
        _NO_RATING: int((no_rating & ~bad_rating).sum()),
        _BAD_RATING: int(bad_rating.sum()),
    }


def _unreadable(df: pd.DataFrame, table: pd.DataFrame) -> dict[str, np.ndarray]:
    """Rows whose date or rating was served but could not be read (``attrs["unparsed"]``)."""
    found = {
        name: np.zeros(len(table), dtype=bool) for name in ("validFrom", "currentEnergyRating")
    }
    entries = df.attrs.get("unparsed") or ()
    ids_by_name: dict[str, set[Any]] = {name: set() for name in found}
    for property_id, column, _ in entries:
        name = str(column).removeprefix("epc.")
        if name in ids_by_name and str(column).startswith("epc."):
            ids_by_name[name].add(property_id)
    for name, ids in ids_by_name.items():
        if ids and "propertyId" in table.columns:
            found[name] = table["propertyId"].isin(ids).to_numpy() & table[name].isna().to_numpy()
    return found


def _warn(attrs: dict[str, Any]) -> None:
    left = attrs["left_out"]
    unusable = {reason: left[reason] for reason in _UNUSABLE if left[reason]}
    if unusable:
        reasons = ", ".join(f"{count:,} {reason}" for reason, count in unusable.items())
        warnings.warn(
            EpcTrendWarning(
                f"EPC trend: {sum(unusable.values()):,} of {attrs['certificates']:,} "
                f"certificates left out: {reasons}.",
                see="attrs['left_out'] and df.pk.unparsed()",
            ),
            stacklevel=outside_stacklevel(),
        )
    pooled, dropped = attrs["pooled"], attrs["left_out_periods"]
    if pooled or dropped:
        parts = []
        if pooled:
            parts.append(f"pooled with their neighbours into {listed(pooled, most=6)}")
        if dropped:
            parts.append(f"left out ({listed(dropped, most=6)}: {left[_THIN]:,} certificates)")
        warnings.warn(
            EpcTrendWarning(
                f"EPC trend: periods with fewer than {attrs['min_count']:,} certificates were "
                f"{' and '.join(parts)}.",
                see="attrs['pooled'] and attrs['left_out_periods']",
            ),
            stacklevel=outside_stacklevel(),
        )
