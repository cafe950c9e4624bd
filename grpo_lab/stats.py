"""Intervals over seeds: one definition, used by every report, figure and notebook.

A result over seeds is reported as its mean and a Student-t confidence interval,
``mean ± t_{0.975, n-1} · s / sqrt(n)`` (s the sample standard deviation). With one seed
there is no interval, and the helpers say so instead of printing a zero-width one.
Introduced in notebook 04; used by ``grpo-lab compare`` and notebooks 05 and 07.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

# Student-t 97.5% quantiles for df 1..29 (so that no scipy is needed); the normal quantile beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045)


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """The two-sided Student-t quantile for ``df`` degrees of freedom (tabulated at 95%, else normal)."""
    if confidence == 0.95 and 1 <= df <= len(_T975):
        return _T975[df - 1]
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def mean_ci(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and t-interval over seeds: ``(mean, lo, hi)``. One value gives ``lo == hi == mean``
    (callers that print it should use :func:`fmt_ci`, which says "no interval")."""
    v = np.asarray(values, dtype=np.float64)
    m = float(v.mean())
    if v.size < 2:
        return m, m, m
    half = t_quantile(v.size - 1, confidence) * float(v.std(ddof=1)) / np.sqrt(v.size)
    return m, m - half, m + half


def mean_ci_columns(values, confidence: float = 0.95):
    """:func:`mean_ci` of every column of ``values`` [seeds, K]: arrays ``(mean, lo, hi)`` of length K."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"values must be [seeds, K], got shape {v.shape}")
    m, lo, hi = zip(*(mean_ci(v[:, j], confidence) for j in range(v.shape[1])))
    return np.asarray(m), np.asarray(lo), np.asarray(hi)


def fmt_ci(values, digits: int = 3, clip=(0.0, 1.0)) -> str:
    """``"0.412 [0.388, 0.436]"``: mean [95% t-interval], the interval clipped to ``clip`` (fractions by default).

    One value prints ``"0.412 (1 seed, no interval)"``; no finite value prints ``"n/a"``.
    """
    vals = [v for v in values if v is not None and np.isfinite(v)]
    if not vals:
        return "n/a"
    if len(vals) < 2:  # a zero-width "interval" would invite comparisons that one seed cannot support
        return f"{vals[0]:.{digits}f} (1 seed, no interval)"
    m, lo, hi = mean_ci(vals)
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def change_vs_start(start: float, values, confidence: float = 0.95) -> str:
    """"up", "down" or "no detectable change": where the t-interval over seeds lies relative to ``start``.

    Used to word results from the numbers themselves (notebooks 05 and 07), never the other way round.
    """
    if len(values) < 2:
        return "no detectable change (one seed: no interval)"
    _, lo, hi = mean_ci(values, confidence)
    if lo > start:
        return "up"
    if hi < start:
        return "down"
    return "no detectable change"


def separated(a, b, confidence: float = 0.95) -> str | None:
    """Which of two samples over seeds is higher with non-overlapping t-intervals: ``"a"``, ``"b"``, or ``None``
    (intervals overlap or touch, or fewer than 2 seeds on a side: no ranking)."""
    if len(a) < 2 or len(b) < 2:
        return None
    _, alo, ahi = mean_ci(a, confidence)
    _, blo, bhi = mean_ci(b, confidence)
    if alo > bhi:
        return "a"
    if blo > ahi:
        return "b"
    return None
