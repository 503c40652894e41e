"""A repeat-sales price index (Case-Shiller): what the same homes sold again say about prices.

A median price per year moves when the *mix* of homes sold changes (more detached houses one
year), not only when prices do. The repeat-sales method compares each home only with itself:
every two consecutive sales of one property make a *pair*, and the log of their price ratio is
regressed on period dummies (-1 at the first sale's period, +1 at the second's; the first period
fixed at 0). Three stages, as Case and Shiller weight them:

1. ordinary least squares;
2. the squared residuals regressed on the time between the two sales (a home's own drift adds
   dispersion the longer it is held);
3. weighted least squares, each pair weighted by one over that fitted dispersion.

Stage 3 rests on an assumption the data can refute: on real sales the squared residuals often
*fall* with the holding time (quick resales, renovated or flipped, vary most), and a line
sloping down, floored at :data:`_DISPERSION_FLOOR`, gives long holds some fifty times the weight
of short ones and bends the index. ``weights="auto"`` (the default) therefore tests the first
stage's residuals as they are, unweighted and before any outlier is damped (damping first would
shrink exactly the quick resales that vary most): interval weights only when their squares grow
with the years held both significantly (a t statistic of at least 1.96 with a
heteroskedasticity-robust standard error) and markedly (by at least half their fitted level at
the quickest tenth of resales, by the longest tenth of holds), equal weights otherwise;
``"interval"`` and ``"equal"`` force one. ``attrs["weights"]`` says which was used, per group,
why, and the rule (:data:`~propertykit.frames._pair_weights.AUTO_RULE`).

Outlier pairs (a transfer between relatives, a share sold, a typo) pull a least-squares index
however it is weighted. After stage 1, pairs whose residual lies further from the median
residual than 2.5 robust standard deviations (1.4826 x the median absolute deviation from that
median) get a Huber weight (cutoff / distance) rather than a full one
(:mod:`~propertykit.frames._pair_weights`); ``attrs["weights"]`` counts them.

It stays fast on a million sales: pairs come from one sort by (group, property, day), and the
dummies are never built: the normal equations, a P x P matrix for P periods, are summed
straight from each pair's two periods with :func:`numpy.bincount`.

Periods touched by fewer than ``min_pairs`` pairs are merged with the periods after them (the
last with those before), and groups with too few pairs are left out. Both are said, at every
``freq``: one :class:`FewPairsWarning` names them, and ``attrs`` of the result list them
(``attrs["merged"]``: each run of periods that share one level, so prices between two of them
are not moved by the index).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from propertykit.errors import FewPairsWarning, InvalidInput, outside_stacklevel
from propertykit.frames._pair_weights import (
    dispersion_growth,
    huber_weights,
    line_with_t,
    weights_said,
)

#: ``freq`` -> the pandas period frequency of the ``period`` column.
FREQUENCIES = {"year": "Y", "quarter": "Q", "month": "M"}
_Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval
_DAYS_PER_YEAR = 365.25
# Dispersion fitted below this share of the mean squared residual is raised to it (stage 2 can
# fit a line through zero for the shortest holds); keeps every weight finite.
_DISPERSION_FLOOR = 0.05
#: The ``weights`` a price index accepts.
WEIGHTS = ("auto", "interval", "equal")


@dataclass
class _Pairs:
    """Consecutive sales of one property, as arrays (one item per pair)."""

    group: np.ndarray  # group code
    first: np.ndarray  # period ordinal of the earlier sale
    second: np.ndarray  # period ordinal of the later sale
    log_ratio: np.ndarray  # log(later price / earlier price)
    years: np.ndarray  # years between the two sales


@dataclass
class _Account:
    """What was left out or merged, for the warning and ``attrs``."""

    left_out: dict[str, int] = field(default_factory=dict)
    merged: list[dict[str, Any]] = field(default_factory=list)
    groups_left_out: dict[str, int] = field(default_factory=dict)
    weights: dict[str, dict[str, Any]] = field(default_factory=dict)  # group -> choice

    def count(self, reason: str, number: int) -> None:
        if number:
            self.left_out[reason] = self.left_out.get(reason, 0) + int(number)


def price_index(
    sales: pd.DataFrame,
    *,
    freq: Literal["year", "quarter", "month"] = "year",
    by: str | None = None,
    min_pairs: int = 30,
    weights: Literal["auto", "interval", "equal"] = "auto",
    robust: bool = True,
) -> pd.DataFrame:
    """The weighted repeat-sales price index per period (100 at the first), with a 95 % band.

    Parameters
    ----------
    sales
        The property frame, or a sales table (:func:`propertykit.frames._tables.explode_sales`):
        ``propertyId``, ``date``, ``price``, and the ``by`` column when given.
    freq
        ``"year"``, ``"quarter"`` or ``"month"``.
    by
        A column of the sales table to make one index per value of (``"address.outcode"``,
        ``"address.town"``, ...), or ``None`` for one index. A pair belongs to a group when both
        its sales do.
    min_pairs
        The fewest pairs a period's level may rest on (pairs with a sale in it). A period with
        fewer is merged with the next (the last with the one before) until each holds enough;
        a group with fewer in all is left out.
    weights
        ``"auto"``: interval weights (Case-Shiller) where the pairs' dispersion grows
        significantly with the time held, else equal; ``"interval"`` or ``"equal"`` to force
        one.
    robust
        Give outlier pairs a Huber weight (see the module docstring); ``False`` keeps every
        pair at full weight (the textbook regression).

    Returns
    -------
    pandas.DataFrame
        One row per period (per group): the ``by`` column first when given, then ``period``
        (``pandas.Period``; a merged period is named by its first), ``index`` (100 at the group's
        first period), ``lower`` and ``upper`` (95 % confidence), ``pairs`` (pairs with a sale
        in the period). ``attrs``: ``freq``, ``by``, ``min_pairs``, ``sales`` and ``pairs``
        used, ``left_out`` (reason -> count of sales or pairs), ``merged`` (each run of periods
        merged into one level, at every ``freq``: ``group`` and ``periods``) and
        ``groups_left_out`` (group -> pairs), ``weights``: ``asked``, ``used`` (``"interval"``,
        ``"equal"`` or ``"mixed"`` across groups), ``reason`` in plain words, ``rule`` (how
        ``"auto"`` decides), ``outlier_pairs`` (pairs given less than full weight) and
        ``groups`` (per group: ``used``, ``slope`` of the raw squared residuals per year held,
        its ``t`` statistic, ``growth`` of their fitted level over the holds, as a share of
        the level at the quickest resales, ``pairs``).

    Warns
    -----
    FewPairsWarning
        When periods were merged or groups left out; it names them.

    Examples
    --------
    >>> sales = pd.DataFrame({
    ...     "propertyId": ["A", "A", "B", "B", "C", "C"],
    ...     "date": pd.to_datetime(["2019-03-01", "2021-05-01", "2019-07-01", "2020-02-01",
    ...                             "2020-06-01", "2021-01-01"]),
    ...     "price": [100_000, 121_000, 200_000, 220_000, 150_000, 165_000]})
    >>> price_index(sales, min_pairs=1).round({"index": 1})[["period", "index", "pairs"]]
      period  index  pairs
    0   2019  100.0      2
    1   2020  110.0      2
    2   2021  121.0      2
    """
    if freq not in FREQUENCIES:
        raise InvalidInput(f"freq must be one of {', '.join(FREQUENCIES)}, got {freq!r}")
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 1:
        raise InvalidInput(f"min_pairs must be a whole number of at least 1, got {min_pairs!r}")
    if weights not in WEIGHTS:
        raise InvalidInput(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    if "saleHistory" in sales.columns:  # the property frame
        from propertykit.frames._tables import explode_sales

        sales = explode_sales(sales)
    needed = ["propertyId", "date", "price"] + ([by] if by is not None else [])
    missing = [name for name in needed if name not in sales.columns]
    if missing:
        raise InvalidInput(
            f"a price index needs the column(s) {', '.join(map(repr, missing))}; "
            f"this table has {', '.join(map(str, sales.columns))}"
        )
    account = _Account()
    pairs, groups, used = _find_pairs(sales, freq, by, account)
    pieces: list[dict[str, np.ndarray]] = []
    owners: list[np.ndarray] = []
    for code in range(len(groups)):
        start, stop = np.searchsorted(pairs.group, [code, code + 1])
        name = str(groups[code]) if by is not None else "all sales"
        piece = _one_index(pairs, slice(start, stop), min_pairs, name, account, (weights, robust))
        if piece is not None:
            pieces.append(piece)
            owners.append(np.full(len(piece["period"]), code))
    columns = ["period", "index", "lower", "upper", "pairs"]
    table = pd.DataFrame(
        {
            name: np.concatenate([piece[name] for piece in pieces]) if pieces else []
            for name in columns
        }
    )
    table["period"] = pd.PeriodIndex.from_ordinals(
        table["period"].to_numpy(dtype=np.int64), freq=FREQUENCIES[freq]
    )
    table["pairs"] = table["pairs"].astype(np.int64)
    if by is not None:
        taken = np.concatenate(owners) if owners else np.array([], dtype=np.int64)
        table.insert(0, by, groups.take(taken))
    table.attrs = {
        "freq": freq,
        "by": by,
        "min_pairs": min_pairs,
        "sales": used,
        "pairs": int(table["pairs"].sum() // 2),
        "left_out": account.left_out,
        "merged": [_named(item, freq) for item in account.merged],
        "groups_left_out": account.groups_left_out,
        "weights": weights_said(weights, robust, account.weights),
    }
    _warn(table.attrs, min_pairs)
    return table


def _find_pairs(
    sales: pd.DataFrame, freq: str, by: str | None, account: _Account
) -> tuple[_Pairs, pd.Index, int]:
    """Consecutive sales of each property (within its group), by one sort."""
    dates = pd.to_datetime(sales["date"])
    if isinstance(dates.dtype, pd.DatetimeTZDtype):
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    prices = pd.to_numeric(sales["price"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ids = sales["propertyId"]
    keep = dates.notna().to_numpy() & (prices > 0) & ids.notna().to_numpy()
    account.count("sales without a date, a price above 0 or a propertyId", int((~keep).sum()))
    groups: pd.Index
    if by is not None:
        named = sales[by].notna().to_numpy()
        account.count(f"sales without {by}", int((keep & ~named).sum()))
        keep &= named
        group_codes, groups = pd.factorize(sales[by][keep], sort=True)
    else:
        group_codes, groups = np.zeros(int(keep.sum()), dtype=np.int64), pd.Index(["all sales"])
    moments = dates.to_numpy()[keep]
    days = moments.astype("datetime64[D]").astype(np.int64)
    if freq == "year":  # period ordinals: years, quarters or months since 1970
        periods = moments.astype("datetime64[Y]").astype(np.int64)
    else:
        months = moments.astype("datetime64[M]").astype(np.int64)
        periods = months // 3 if freq == "quarter" else months
    property_codes, uniques = pd.factorize(ids[keep])
    key = group_codes.astype(np.int64) * max(len(uniques), 1) + property_codes
    lowest = int(days.min()) if len(days) else 0
    span = int(days.max()) - lowest + 1 if len(days) else 1
    if len(uniques) * max(len(groups), 1) < np.iinfo(np.int64).max // (2 * span):
        order = np.argsort(key * span + (days - lowest), kind="stable")
    else:  # too many to pack into one integer: two keys
        order = np.lexsort((days, key))
    key, days, periods = key[order], days[order], periods[order]
    log_prices = np.log(prices[keep][order])
    earlier = np.flatnonzero(key[1:] == key[:-1])
    later = earlier + 1
    pairs = _Pairs(
        group=group_codes[order][earlier],
        first=periods[earlier],
        second=periods[later],
        log_ratio=log_prices[later] - log_prices[earlier],
        years=(days[later] - days[earlier]) / _DAYS_PER_YEAR,
    )
    return pairs, groups, int(keep.sum())


def _one_index(
    pairs: _Pairs,
    rows: slice,
    min_pairs: int,
    name: str,
    account: _Account,
    weighting: tuple[str, bool],
) -> dict[str, np.ndarray] | None:
    """The index of one group (columns as arrays), or ``None`` when its pairs are too few."""
    first, second = pairs.first[rows], pairs.second[rows]
    informative = first != second
    account.count("pairs with both sales in one period", int((~informative).sum()))
    if not informative.any():
        account.groups_left_out[name] = 0
        return None
    first, second = first[informative], second[informative]
    log_ratio, years = pairs.log_ratio[rows][informative], pairs.years[rows][informative]
    start = int(min(first.min(), second.min()))
    first, second = first - start, second - start
    # which bucket (merged run of periods) each period falls in
    bucket = _buckets(first, second, int(max(first.max(), second.max())) + 1, min_pairs)
    one, two = bucket[first], bucket[second]
    linked = one != two
    if int(bucket.max()) == 0 or int(linked.sum()) < min_pairs:
        account.groups_left_out[name] = int(linked.sum())
        account.count("pairs of groups with too few pairs", len(first))
        return None
    account.count("pairs with both sales in one merged period", int((~linked).sum()))
    one, two, log_ratio, years = one[linked], two[linked], log_ratio[linked], years[linked]
    size = int(bucket.max()) + 1
    starts = np.flatnonzero(np.diff(bucket, prepend=-1))  # each bucket's first period
    for position in np.flatnonzero(np.diff(starts, append=len(bucket)) > 1):
        periods = np.flatnonzero(bucket == position)
        account.merged.append({"group": name, "periods": [start + int(p) for p in periods]})
    levels, errors, choice = _three_stages(one, two, log_ratio, years, size, *weighting)
    account.weights[name] = choice
    return {
        "period": start + starts,
        "index": 100 * np.exp(levels),
        "lower": 100 * np.exp(levels - _Z95 * errors),
        "upper": 100 * np.exp(levels + _Z95 * errors),
        "pairs": np.bincount(one, minlength=size) + np.bincount(two, minlength=size),
    }


def _buckets(first: np.ndarray, second: np.ndarray, size: int, min_pairs: int) -> np.ndarray:
    """Period -> bucket: runs of consecutive periods, each touched by at least ``min_pairs``
    pairs linking it to another bucket (merging can make pairs fall inside one bucket, so the
    runs are drawn again until they hold)."""
    bucket = np.arange(size)
    while True:
        one, two = bucket[first], bucket[second]
        linked = one != two
        count = bucket.max() + 1
        touching = np.bincount(one[linked], minlength=count) + np.bincount(
            two[linked], minlength=count
        )
        if count == 1 or touching.min() >= min_pairs:
            return bucket
        merged = np.empty(count, dtype=np.int64)
        current = held = 0
        for position in range(count):
            merged[position] = current
            held += int(touching[position])
            if held >= min_pairs:
                current, held = current + 1, 0
        if held < min_pairs and current > 0 and merged[-1] == current:
            merged[merged == current] = current - 1  # a short tail joins the run before it
        bucket = merged[bucket]


def _three_stages(
    one: np.ndarray,
    two: np.ndarray,
    log_ratio: np.ndarray,
    years: np.ndarray,
    size: int,
    asked: str = "interval",
    robust: bool = False,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Log levels per bucket (0 for the first), their standard errors, and the weights chosen:
    ``"auto"`` decides on the first stage's raw residuals, before outliers are damped."""
    ones = np.ones(len(one))
    levels, _ = _solve(one, two, log_ratio, ones, size)
    residuals = log_ratio - (levels[two] - levels[one])
    growth = dispersion_growth(years, residuals)
    used = "interval" if asked == "interval" or (asked == "auto" and growth["grows"]) else "equal"
    damping = ones
    if robust:
        damping = huber_weights(residuals)
        if (damping < 1).any():
            levels, _ = _solve(one, two, log_ratio, damping, size)
            residuals = log_ratio - (levels[two] - levels[one])
    weights = damping
    squared = damping * residuals**2  # an outlier's square would tilt the line of the weights
    if used == "interval" and squared.mean() > 0:  # else the pairs agree exactly: equal
        slope, intercept, _ = line_with_t(years, squared)
        fitted = intercept + slope * years
        weights = damping / np.maximum(fitted, _DISPERSION_FLOOR * squared.mean())
    levels, inverse = _solve(one, two, log_ratio, weights, size)
    residuals = log_ratio - (levels[two] - levels[one])
    freedom = max(len(one) - (size - 1), 1)
    scale = float(np.sum(weights * residuals**2)) / freedom
    errors = np.zeros(size)
    errors[1:] = np.sqrt(np.clip(np.diag(inverse) * scale, 0, None))
    choice = {
        "used": used,
        "slope": growth["slope"],
        "t": growth["t"],
        "growth": growth["growth"],
        "pairs": len(one),
        "outlier_pairs": int((damping < 1).sum()),
    }
    return levels, errors, choice


def _solve(
    one: np.ndarray, two: np.ndarray, log_ratio: np.ndarray, weights: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares on the period dummies, from their normal equations alone."""
    across = np.bincount(one * size + two, weights, size * size).reshape(size, size)
    normal = np.diag(np.bincount(one, weights, size) + np.bincount(two, weights, size))
    normal -= across + across.T
    weighted = weights * log_ratio
    right = np.bincount(two, weighted, size) - np.bincount(one, weighted, size)
    inner = normal[1:, 1:]
    try:
        inverse = np.linalg.inv(inner)
    except np.linalg.LinAlgError:  # periods that no chain of pairs links: least-norm levels
        inverse = np.linalg.pinv(inner)
    levels = np.zeros(size)
    levels[1:] = inverse @ right[1:]
    return levels, inverse


def _named(item: dict[str, Any], freq: str) -> dict[str, Any]:
    labels = [str(p) for p in pd.PeriodIndex.from_ordinals(item["periods"], freq=FREQUENCIES[freq])]
    return {"group": item["group"], "periods": labels}


def _warn(attrs: dict[str, Any], min_pairs: int) -> None:
    said = []
    if attrs["merged"]:
        runs = [
            ("" if item["group"] == "all sales" else f"{item['group']}: ")
            + f"{item['periods'][0]} to {item['periods'][-1]}"
            for item in attrs["merged"]
        ]
        shown = "; ".join(runs[:8]) + (f"; and {len(runs) - 8} more" if len(runs) > 8 else "")
        said.append(f"periods merged ({len(runs)}): {shown}")
    if attrs["groups_left_out"]:
        names = list(attrs["groups_left_out"])
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        said.append(f"left out ({len(names)}, too few pairs in all): {shown}")
    if said:
        warnings.warn(
            FewPairsWarning(
                f"price index: fewer than {min_pairs} repeat-sales pairs; " + "; ".join(said),
                see='attrs["merged"] and attrs["groups_left_out"]',
            ),
            stacklevel=outside_stacklevel(),
        )
