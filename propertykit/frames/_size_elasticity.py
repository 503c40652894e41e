"""How price per m² falls as homes get larger: the size elasticity per property type, net of
location and time (two-way fixed effects by alternating projections; ``docs/valuation.md``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from propertykit.errors import InvalidInput

#: The fewest sales (of a type, in groups and periods with others) a slope of its own rests on.
MIN_SALES = 30
#: The slopes believed: steeper ones are clipped to the lower edge; above 0 is the wrong sign.
PLAUSIBLE = (-0.6, 0.0)
_MAX_SWEEPS = 200  # alternating projections: sweeps at most (they converge in a handful)
_TOLERANCE = 1e-9  # ... until no period mean is further than this from 0


@dataclass(frozen=True, eq=False)
class SizeElasticity:
    """A fitted size elasticity per property type (kind code ``0 .. n_kinds - 1``).

    Attributes
    ----------
    slope
        Per kind, the elasticity to use: its own fit, or the pooled one, clipped (read-only).
    fitted, count
        Per kind, the slope its own sales gave before any check (``nan`` with none), and the
        sales it rests on (those sharing a group and a period with others).
    pooled, pooled_note
        One slope across kinds, checked the same way (what a kind with too few sales takes).
    notes
        Per kind, in plain words: what was fitted and what was taken, and why.
    """

    slope: np.ndarray
    fitted: np.ndarray
    count: np.ndarray
    pooled: float
    notes: tuple[str, ...]
    pooled_note: str

    def adjustment(self, kind: np.ndarray, area: np.ndarray, to_area: np.ndarray) -> np.ndarray:
        """The factor that brings a £/m² of a home of ``area`` to one of ``to_area`` (same
        kind): ``(to_area / area) ** slope[kind]``.

        Examples
        --------
        >>> fit = SizeElasticity(np.array([-0.2]), np.array([-0.2]), np.array([500]), -0.2,
        ...                      ("fitted on 500 sales: -0.20",), "fitted on 500 sales: -0.20")
        >>> fit.adjustment(np.array([0]), np.array([120.0]), np.array([80.0])).round(3).tolist()
        [1.084]
        """
        ratio = np.asarray(to_area, dtype=float) / np.asarray(area, dtype=float)
        factor: np.ndarray = ratio ** self.slope[np.asarray(kind)]
        return factor


def fit_size_elasticity(
    log_area: np.ndarray,
    log_price_per_sqm: np.ndarray,
    kind: np.ndarray,
    n_kinds: int,
    *,
    group: np.ndarray | None = None,
    period: np.ndarray | None = None,
) -> SizeElasticity:
    """Fit ``b`` in ``log(£/m²) = a + b·log(area)`` per kind, net of location and time.

    Parameters
    ----------
    log_area, log_price_per_sqm
        One value per sale: the log of the floor area and of the price per m². Sales where
        either is not finite are not used.
    kind
        Integer code of each sale's property type, ``0 .. n_kinds - 1`` (below 0: unknown, not
        used), as :func:`pandas.factorize` gives.
    n_kinds
        How many kinds there are (kinds without a sale get the pooled slope).
    group, period
        Optional integer codes (below 0: unknown, not used) of each sale's place (outcode,
        spatial cell) and time (quarter, year): their fixed effects are absorbed, within each
        kind, before the slope is fitted.

    Returns
    -------
    SizeElasticity
        ``slope`` per kind (what to use), ``fitted``, ``count``, ``pooled`` and ``notes``.

    Examples
    --------
    >>> draws = np.random.default_rng(1)
    >>> log_area = np.log(draws.uniform(40, 200, 400))
    >>> log_price = 8.0 - 0.25 * log_area + draws.normal(0, 0.05, 400)
    >>> fit = fit_size_elasticity(log_area, log_price, np.zeros(400, dtype=int), 1)
    >>> round(float(fit.slope[0]), 2), fit.notes[0]
    (-0.26, 'fitted on 400 sales: -0.26')
    """
    x, y, codes = _checked(log_area, log_price_per_sqm, kind, n_kinds, group, period)
    cells = [code * n_kinds + codes[0] for code in codes[1:]] or [codes[0]]
    effects = [np.unique(cell, return_inverse=True)[1] for cell in cells]  # each kind its own
    keep = _not_alone(effects)
    x, y, kinds = x[keep], y[keep], codes[0][keep]
    effects = [effect[keep] for effect in effects]
    x_within, y_within = _demeaned(x, effects), _demeaned(y, effects)
    across = np.bincount(kinds, x_within * y_within, n_kinds)
    spread = np.bincount(kinds, x_within * x_within, n_kinds)
    count = np.bincount(kinds, minlength=n_kinds)
    fitted = np.divide(across, spread, out=np.full(n_kinds, np.nan), where=spread > 0)
    total = int(count.sum())
    pooled_fit = float(across.sum() / spread.sum()) if spread.sum() > 0 else np.nan
    pooled, pooled_note = _checked_slope(
        pooled_fit, total, fallback=0.0, fallback_name="taken as 0 (no size adjustment)"
    )
    name = (
        f"the pooled slope {pooled:+.2f}"
        if pooled != 0
        else "floor areas not adjusted (no slope across types either)"
    )
    checked = [
        _checked_slope(float(fitted[code]), int(count[code]), fallback=pooled, fallback_name=name)
        for code in range(n_kinds)
    ]
    slope = np.array([item[0] for item in checked], dtype=float)
    for array in (slope, fitted, count):
        array.flags.writeable = False
    return SizeElasticity(slope, fitted, count, pooled, tuple(n for _, n in checked), pooled_note)


def _checked(
    log_area: np.ndarray,
    log_price_per_sqm: np.ndarray,
    kind: np.ndarray,
    n_kinds: int,
    group: np.ndarray | None,
    period: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The usable sales' logs and codes (kind first), or :class:`InvalidInput`."""
    if isinstance(n_kinds, bool) or not isinstance(n_kinds, int | np.integer) or n_kinds < 1:
        raise InvalidInput(f"n_kinds must be a whole number of at least 1, got {n_kinds!r}")
    x = np.asarray(log_area, dtype=float)
    y = np.asarray(log_price_per_sqm, dtype=float)
    named = {"kind": kind, "group": group, "period": period}
    codes = {name: np.asarray(value) for name, value in named.items() if value is not None}
    lengths = {"log_area": x.shape, "log_price_per_sqm": y.shape}
    lengths.update({name: value.shape for name, value in codes.items()})
    if len(set(lengths.values())) != 1 or x.ndim != 1:
        shown = ", ".join(f"{name} {shape}" for name, shape in lengths.items())
        raise InvalidInput(f"a size elasticity needs 1-D arrays of one length; got {shown}")
    for name, value in codes.items():
        if len(value) and not np.issubdtype(value.dtype, np.integer):
            raise InvalidInput(f"{name} must be integer codes, got dtype {value.dtype}")
    if len(codes["kind"]) and int(codes["kind"].max()) >= n_kinds:
        raise InvalidInput(
            f"kind codes must be below n_kinds={n_kinds}, got {int(codes['kind'].max())}"
        )
    usable = np.isfinite(x) & np.isfinite(y)
    for value in codes.values():
        usable &= value >= 0
    return x[usable], y[usable], [value[usable].astype(np.int64) for value in codes.values()]


def _not_alone(effects: list[np.ndarray]) -> np.ndarray:
    """Sales that share each of their cells with another (a few passes)."""
    keep = np.ones(len(effects[0]), dtype=bool)
    for _ in range(3):
        before = int(keep.sum())
        for effect in effects:
            keep &= np.bincount(effect, keep)[effect] > 1
        if int(keep.sum()) == before:
            break
    return keep


def _demeaned(values: np.ndarray, effects: list[np.ndarray]) -> np.ndarray:
    """``values`` less the fixed effects of every code array in ``effects``."""
    result = values.copy()
    sizes = [np.maximum(np.bincount(effect), 1) for effect in effects]
    for _ in range(_MAX_SWEEPS):
        largest = 0.0
        for effect, size in zip(effects, sizes, strict=True):
            means = np.bincount(effect, result, len(size)) / size
            result -= means[effect]
            largest = max(largest, float(np.abs(means).max(initial=0.0)))
        if len(effects) == 1 or largest < _TOLERANCE:
            break
    return result


def _checked_slope(
    fitted: float, count: int, *, fallback: float, fallback_name: str
) -> tuple[float, str]:
    """The slope to use, and why, in plain words."""
    lowest, highest = PLAUSIBLE
    if count < MIN_SALES or not np.isfinite(fitted):
        return fallback, f"too few sales ({count:,}): {fallback_name}"
    if fitted > highest:
        return fallback, f"fitted slope {fitted:+.2f} has the wrong sign: {fallback_name}"
    if fitted < lowest:
        return lowest, (
            f"fitted slope {fitted:+.2f} on {count:,} sales is steeper than plausible: "
            f"clipped to {lowest:+.2f}"
        )
    return fitted, f"fitted on {count:,} sales: {fitted:+.2f}"
