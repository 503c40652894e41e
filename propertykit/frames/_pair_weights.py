"""How a repeat-sales index weights its pairs: the test that decides between interval and equal
weights, Huber weights for outlier pairs, and the plain words that say which were used.

The test (:func:`dispersion_growth`) reads the first-stage residuals as they are: unweighted,
before any outlier is damped. Damping first would shrink exactly the quick resales that vary
most, and tilt the test towards interval weights where the data say the opposite. It asks for a
growth that is significant *and* large enough to matter (:data:`AUTO_RULE`).

Used by :mod:`~propertykit.frames._price_index`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A stage-2 slope this many standard errors above 0 means dispersion grows with the time held.
SIGNIFICANT_T = 1.959963984540054
#: ... and the fitted dispersion must grow by at least this share of its level at the quickest
#: resales (the 10th percentile of the years held) by the longest holds (the 90th percentile).
MEANINGFUL_GROWTH = 0.5
#: Residuals beyond this many robust standard deviations get a Huber weight below 1.
OUTLIER_CUTOFF = 2.5
#: How ``weights="auto"`` decides, in plain words (``attrs["weights"]["rule"]``).
AUTO_RULE = (
    "interval weights where the squared first-stage residuals (unweighted, before outlier "
    "pairs are damped) grow with the years between the two sales, significantly (t of at "
    f"least {SIGNIFICANT_T:.2f}, heteroskedasticity-robust) and by at least "
    f"{MEANINGFUL_GROWTH:.0%} of their fitted level at the quickest tenth of resales by the "
    "longest tenth of holds; equal weights otherwise"
)


def huber_weights(residuals: np.ndarray) -> np.ndarray:
    """Huber weights: 1 within :data:`OUTLIER_CUTOFF` robust standard deviations, falling as
    cutoff / distance beyond.

    Examples
    --------
    >>> huber_weights(np.array([0.01, -0.02, 0.0, 0.015, 1.0])).round(2).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.04]

    Both the spread and each distance are measured from the median:

    >>> huber_weights(np.array([0.51, 0.48, 0.5, 0.515, 1.5])).round(2).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.04]
    """
    centre = float(np.median(residuals))
    spread = 1.4826 * float(np.median(np.abs(residuals - centre)))
    if spread <= 0:
        return np.ones(len(residuals))
    distance = np.abs(residuals - centre) / (OUTLIER_CUTOFF * spread)
    damped: np.ndarray = np.minimum(1.0, 1.0 / np.maximum(distance, 1e-12))
    return damped


def line_with_t(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Slope, intercept and the slope's t statistic (heteroskedasticity-robust, HC1) of the
    least-squares line through ``(x, y)``.

    Examples
    --------
    >>> slope, intercept, t = line_with_t(np.arange(6.0), np.array([1.0, 3, 5, 7, 9, 12]))
    >>> round(slope, 2), round(intercept, 2), t > 1.96
    (2.14, 0.81, True)
    """
    centred = x - x.mean()
    spread = float(centred @ centred)
    if spread <= 0:
        return 0.0, float(y.mean()), 0.0
    slope = float(centred @ (y - y.mean())) / spread
    intercept = float(y.mean()) - slope * float(x.mean())
    residuals = y - intercept - slope * x
    correction = len(x) / max(len(x) - 2, 1)
    variance = correction * float((centred**2) @ (residuals**2)) / spread**2
    t = slope / np.sqrt(variance) if variance > 0 else (np.inf if slope > 0 else 0.0)
    return slope, intercept, float(t)


def dispersion_growth(years: np.ndarray, residuals: np.ndarray) -> dict[str, Any]:
    """Whether the pairs' dispersion grows with the years held, by :data:`AUTO_RULE`: the line
    of the squared ``residuals`` on ``years``, its ``t``, and ``growth``, the rise of the fitted
    dispersion from the 10th to the 90th percentile of ``years`` over its level at the 10th
    (``inf`` when that level is not above 0 and the line rises).

    Examples
    --------
    >>> years = np.tile(np.arange(1.0, 21.0), 50)
    >>> spread = np.sqrt(0.002 + 0.0005 * years)  # a home's own drift: grows with the years
    >>> residuals = spread * np.random.default_rng(0).choice([-1.0, 1.0], len(years))
    >>> found = dispersion_growth(years, residuals)
    >>> found["grows"], round(found["growth"], 1)
    (True, 2.2)
    """
    slope, intercept, t = line_with_t(years, residuals**2)
    if len(years):
        shortest, longest = (float(q) for q in np.quantile(years, [0.1, 0.9]))
    else:
        shortest = longest = 0.0
    level = intercept + slope * shortest
    rise = slope * (longest - shortest)
    growth = rise / level if level > 0 else (np.inf if rise > 0 else 0.0)
    grows = slope > 0 and t >= SIGNIFICANT_T and growth >= MEANINGFUL_GROWTH
    return {"grows": bool(grows), "slope": slope, "t": t, "growth": float(growth)}


def weights_said(asked: str, robust: bool, groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``attrs["weights"]``: the choice, machine-readable, and the reason in plain words.

    Examples
    --------
    >>> group = {"used": "equal", "slope": -0.01, "t": -3.0, "growth": -0.4, "pairs": 900,
    ...          "outlier_pairs": 0}
    >>> said = weights_said("auto", True, {"all sales": group})
    >>> said["used"], said["reason"].split(":")[0]
    ('equal', 'equal weights')
    """
    used_set = {choice["used"] for choice in groups.values()}
    used = used_set.pop() if len(used_set) == 1 else ("mixed" if used_set else "equal")
    outliers = sum(choice["outlier_pairs"] for choice in groups.values())
    if asked != "auto":
        reason = f"{asked} weights, as asked"
    elif used == "interval":
        reason = (
            "interval weights: the pairs' dispersion grows with the time between the two sales"
            + _by_how_much(groups)
        )
    elif used == "equal":
        reason = (
            "equal weights: the pairs' dispersion does not grow significantly and markedly with "
            "the time between the two sales" + _by_how_much(groups) + ", so interval weights "
            "would rest on a wrong assumption"
        )
    else:
        growing = [name for name, choice in groups.items() if choice["used"] == "interval"]
        reason = (
            f"interval weights in {len(growing)} of {len(groups)} groups, where the pairs' "
            "dispersion grows with the time between the two sales; equal weights elsewhere"
        )
    if robust and outliers:
        reason += f"; {outliers:,} outlying pairs given less weight"
    return {
        "asked": asked,
        "used": used,
        "reason": reason,
        "rule": AUTO_RULE,
        "robust": robust,
        "outlier_pairs": outliers,
        "groups": groups,
    }


def _by_how_much(groups: dict[str, dict[str, Any]]) -> str:
    """The growth and t of a lone group, in words (several groups: each has its own in attrs)."""
    if len(groups) != 1:
        return ""
    (choice,) = groups.values()
    growth = choice["growth"]
    if not np.isfinite(growth):
        return f" (from next to none, t = {choice['t']:.1f})"
    direction = "up" if growth >= 0 else "down"
    return f" ({direction} {abs(growth):.0%} over the holds, t = {choice['t']:.1f})"
