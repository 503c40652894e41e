"""Sale histories whose prices follow a known index, so an index method can be checked.

Every sale price is ``value today x I(region, year of sale) / I(region, year today)`` times noise,
where ``I`` is :func:`true_price_index`: one level per calendar year and region (a UK-like cycle
of boom, the 2008-2009 fall and recovery, scaled by each region's growth in
:data:`~propertykit.sandbox._tables.REGION_PRICES`). The noise has the two parts the repeat-sales
method assumes: each home's own drift, a random walk whose variance grows with time (standard
deviation 2.5 % over a year), and a 4 % error per sale.

The *mix* of homes sold shifts over the years: detached and semi-detached houses are sold later
in the period, flats and terraces earlier, so the median price per year rises faster than the
index. The same homes sold twice reveal the index; the medians do not.

Real sales do not look like that, and ``realism="real"`` draws them as they are: dispersion
that *falls* with the holding time (a resale within three years follows a renovation, a flip or
neglect: a lasting change of the home's value, of standard deviation up to 22 % at a gap of
zero, falling to none at three years; over that, a drift of 1 % a year and 3 % per sale), and
outlier sales (3 % sold well below value: transfers between relatives, shares, right-to-buy;
0.5 % recorded well above). The drift and the changes are centred, so the index stays the truth;
the outliers are not, so a method has to resist them.

The number and order of sales come from the record's own random stream, drawn exactly as before;
prices and the shift of dates come from a stream of their own (``"<seed>:<index>:sales"``), so
everything else a record holds stays as it was.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import date
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from propertykit.sandbox._tables import REGION_PRICES

if TYPE_CHECKING:
    import pandas as pd

#: The kinds of sandbox data: ``"textbook"`` (what the repeat-sales method assumes; the
#: default) and ``"real"`` (what real sales do).
REALISMS = ("textbook", "real")

#: The first and last years a sale can fall in (the index is 100 in the first).
FIRST_YEAR, LAST_YEAR = 1995, 2025

# Yearly change of the national level, in per cent, for 1996 ... 2025.
_NATIONAL_CHANGES = (
    5, 9, 9, 10, 12, 9, 18, 15, 12, 5, 6, 8, -7, -9, 3,
    -1, 0, 3, 8, 6, 7, 4, 3, 1, 3, 9, 8, -2, 2, 3,
)  # fmt: skip
_NATIONAL_LOG_LEVELS = tuple(
    accumulate((math.log1p(change / 100) for change in _NATIONAL_CHANGES), initial=0.0)
)
_NATIONAL_GROWTH = 0.04  # a region growing at this rate follows the national cycle exactly

#: How a property type's sales lean in time: a date drawn at ``u`` in [0, 1) of the span is put
#: at ``u ** lean`` (below 1: later; above 1: earlier).
_LEAN = {
    "detached": 0.5,
    "semi-detached": 0.75,
    "bungalow": 1.0,
    "terraced": 1.3,
    "flat": 1.6,
    "maisonette": 1.6,
}
_DRIFT_PER_YEAR = 0.025  # standard deviation of a home's own random walk over one year (log)
_SALE_NOISE = 0.04  # standard deviation of one sale's own error (log)
_REAL_DRIFT_PER_YEAR = 0.01
_REAL_SALE_NOISE = 0.03
_QUICK_YEARS = 3.0  # a resale sooner than this carries extra noise (renovation, flip)
_QUICK_NOISE = 0.22  # ... of this standard deviation at a gap of zero, falling to 0
_BELOW_VALUE = 0.03  # share of sales well below value, by exp(-U(0.3, 1.0))
_ABOVE_VALUE = 0.005  # share recorded well above, by exp(U(0.4, 0.9))


def log_level(region: str, year: int) -> float:
    """The log of :func:`true_price_index` / 100 for ``region`` in ``year`` (held flat outside
    1995-2025).

    Examples
    --------
    >>> log_level("London", 1995)
    0.0
    """
    return _log_level(region, year)


def _log_level(region: str, year: int) -> float:
    scale = REGION_PRICES[region][1] / _NATIONAL_GROWTH
    position = min(max(year, FIRST_YEAR), LAST_YEAR) - FIRST_YEAR
    return scale * _NATIONAL_LOG_LEVELS[position]


def true_price_index(region: str | None = None) -> pd.DataFrame:
    """The index the sandbox's sale prices follow: one level per region and year, 100 in 1995.

    Parameters
    ----------
    region
        One region of the sandbox's towns (``"London"``, ``"North East"``, ...), or ``None``
        for every region.

    Returns
    -------
    pandas.DataFrame
        Columns ``region``, ``year``, ``index``: a sale in ``year`` is priced at the home's
        value today times ``index / index in the year of today``, times noise.

    Examples
    --------
    >>> truth = true_price_index("London")
    >>> truth.iloc[[0, -1]].round(1).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'region': 'London', 'year': 1995, 'index': 100.0},
     {'region': 'London', 'year': 2025, 'index': 706.8}]
    """
    import pandas as pd

    if region is not None and region not in REGION_PRICES:
        raise ValueError(f"unknown region {region!r}; choose one of {', '.join(REGION_PRICES)}")
    regions = [region] if region is not None else list(REGION_PRICES)
    rows = [
        {"region": name, "year": year, "index": 100 * math.exp(_log_level(name, year))}
        for name in regions
        for year in range(FIRST_YEAR, LAST_YEAR + 1)
    ]
    return pd.DataFrame(rows, columns=["region", "year", "index"])


def sale_history(
    rand: Callable[[], float],
    prices: random.Random,
    *,
    value_now: float,
    region: str,
    year_built: int | None,
    kind: str,
    today: date,
    realism: str = "textbook",
) -> list[dict[str, Any]]:
    """A record's sales, oldest first: ``rand`` (the record's stream) draws how many and when,
    exactly as many times as before; ``prices`` (a stream of their own) draws the noise.

    Examples
    --------
    >>> draws = random.Random(9)
    >>> history = sale_history(draws.random, random.Random(2), value_now=300_000, region="London",
    ...                        year_built=1990, kind="flat", today=date(2025, 6, 1))
    >>> [(sale["date"], sale["price"]) for sale in history]
    [('1996-04-15', 62000), ('2001-04-15', 107700)]
    """
    first = date(max(year_built or FIRST_YEAR, FIRST_YEAR), 1, 1).toordinal()
    today_ordinal = today.toordinal()
    span = today_ordinal - first
    lean = _LEAN.get(kind, 1.0)
    days = sorted(first + int(rand() ** lean * span) for _ in range(int(rand() * 5)))
    for _ in days:
        rand()  # the draw that once made each sale's noise, kept so later fields stay the same
    if realism == "real":
        log_prices = _real_log_prices(days, prices, value_now, region, today)
    else:
        walk = 0.0  # the home's own drift, walked back from today
        later = today_ordinal
        log_prices = []
        for ordinal in reversed(days):
            walk += prices.gauss(0.0, _DRIFT_PER_YEAR * math.sqrt((later - ordinal) / 365.25))
            later = ordinal
            level = _log_level(region, date.fromordinal(ordinal).year) - _log_level(
                region, today.year
            )
            log_prices.append(math.log(value_now) + level + walk + prices.gauss(0.0, _SALE_NOISE))
        log_prices.reverse()
    history = []
    for position, (ordinal, log_price) in enumerate(zip(days, log_prices, strict=True)):
        day = date.fromordinal(ordinal)
        history.append(
            {
                "date": day.isoformat(),
                "price": max(100, int(math.exp(log_price) / 100 + 0.5) * 100),
                "propertyType": kind,
                "newBuild": position == 0 and year_built is not None and day.year - year_built <= 1,
            }
        )
    return history


def _real_log_prices(
    days: list[int], prices: random.Random, value_now: float, region: str, today: date
) -> list[float]:
    """Log prices of real-shaped sales (oldest first): quick resales vary most; some outliers."""
    walk = 0.0
    later = today.toordinal()
    log_prices = []
    for position in range(len(days) - 1, -1, -1):
        ordinal = days[position]
        walk += prices.gauss(0.0, _REAL_DRIFT_PER_YEAR * math.sqrt((later - ordinal) / 365.25))
        later = ordinal
        level = _log_level(region, date.fromordinal(ordinal).year) - _log_level(region, today.year)
        noise = prices.gauss(0.0, _REAL_SALE_NOISE)
        odd = prices.random()
        if odd < _BELOW_VALUE:
            noise -= prices.uniform(0.3, 1.0)
        elif odd < _BELOW_VALUE + _ABOVE_VALUE:
            noise += prices.uniform(0.4, 0.9)
        log_prices.append(math.log(value_now) + level + walk + noise)
        gap = (ordinal - days[position - 1]) / 365.25 if position else math.inf
        if gap < _QUICK_YEARS:  # a quick resale: the home changed between the two (for good)
            walk += prices.gauss(0.0, _QUICK_NOISE * (1 - gap / _QUICK_YEARS))
    log_prices.reverse()
    return log_prices
