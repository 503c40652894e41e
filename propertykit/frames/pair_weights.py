"""How a repeat-sales index weights its pairs: the test that decides between interval and equal
weights, Huber weights for outlier pairs, and the plain words that say which were used.

Used by :mod:`~propertykit.frames.price_index`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["OUTLIER_CUTOFF", "SIGNIFICANT_T", "huber_weights", "line_with_t", "weights_said"]

#: A stage-2 slope this many standard errors above 0 means dispersion grows with the time held.
SIGNIFICANT_T = 1.959963984540054
#: Residuals beyond this many robust standard deviations get a Huber weight below 1.
OUTLIER_CUTOFF = 2.5


def huber_weights(residuals: np.ndarray) -> np.ndarray:
    """Huber weights: 1 within :data:`OUTLIER_CUTOFF` robust standard deviations, falling as
    cutoff / distance beyond.

    Examples
    --------
    >>> huber_weights(np.array([0.01, -0.02, 0.0, 0.015, 1.0])).round(2).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.04]
    """
    spread = 1.4826 * float(np.median(np.abs(residuals - np.median(residuals))))
    if spread <= 0:
        return np.ones(len(residuals))
    distance = np.abs(residuals) / (OUTLIER_CUTOFF * spread)
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


def weights_said(asked: str, robust: bool, groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``attrs["weights"]``: the choice, machine-readable, and the reason in plain words.

    Examples
    --------
    >>> group = {"used": "equal", "slope": -0.01, "t": -3.0, "pairs": 900, "outlier_pairs": 0}
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
        reason = "interval weights: the pairs' dispersion grows with the time between the two sales"
    elif used == "equal":
        reason = (
            "equal weights: the pairs' dispersion does not grow significantly with the time "
            "between the two sales (quick resales vary as much or more), so interval weights "
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
        "robust": robust,
        "outlier_pairs": outliers,
        "groups": groups,
    }
