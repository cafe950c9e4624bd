"""Intervals over seeds: one definition, used by every report, figure and notebook.

A result over seeds is reported as its mean and a Student-t confidence interval,
``mean ± t_{0.975, n-1} · s / sqrt(n)`` (s the sample standard deviation; the quantile exact at every n and
confidence, :func:`t_quantile`). With one seed
there is no interval, and the helpers say so instead of printing a zero-width one.
Introduced in notebook 04; used by ``grpo-lab compare`` and notebooks 05 and 07.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified Lentz), using
    I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny, eps = 1e-300, 1e-15
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))) / a
    f, c, d = tiny, tiny, 0.0  # f = 0 + 1/(1 + d1/(1 + d2/(1 + ...)))
    for k in range(0, 400):
        if k == 0:
            num = 1.0
        elif k % 2:  # k = 2m + 1
            m = (k - 1) // 2
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:  # k = 2m
            m = k // 2
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return front * f


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@lru_cache(maxsize=4096)
def t_quantile(df: int, confidence: float = 0.95) -> float:
    """The two-sided Student-t quantile: the t with P(|T| <= t) = ``confidence`` for ``df`` degrees of freedom.

    Exact (the t CDF's inverse, by bisection to 1e-12) at every ``df`` and confidence: the one quantile of every
    interval grpo-lab reports. ``confidence`` must lie strictly between 0 and 1, ``df`` be at least 1.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    if isinstance(df, bool) or not float(df).is_integer() or df < 1:
        raise ValueError(f"degrees of freedom must be a whole number >= 1, got {df!r}")
    target = 0.5 + confidence / 2
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < target:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < target else (lo, mid)
    return (lo + hi) / 2


def mean_ci(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and t-interval over seeds: ``(mean, lo, hi)``. One value gives ``lo == hi == mean``
    (callers that print it should use :func:`fmt_ci`, which says "no interval")."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise ValueError("mean_ci needs at least one value, got none")
    t = t_quantile(max(v.size - 1, 1), confidence)  # a bad confidence is refused even for one value
    m = float(v.mean())
    if v.size < 2:
        return m, m, m
    half = t * float(v.std(ddof=1)) / np.sqrt(v.size)
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


def diff_ci(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), lo, hi)``: the difference of two means over seeds and its t-interval (Welch's standard
    error ``sqrt(s_a^2 / n_a + s_b^2 / n_b)``, t quantile at ``min(n_a, n_b) - 1`` degrees of freedom, the
    conservative choice). Introduced in notebook 10."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a difference interval needs at least 2 values on each side, got {a.size} and {b.size}")
    half = t_quantile(min(a.size, b.size) - 1, confidence) * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    d = float(a.mean() - b.mean())
    return d, d - half, d + half


def seeds_needed(a, b, most: int = 1000) -> int | None:
    """Seeds per method for a two-sided test at 5% with 80% power to detect a difference the size of
    ``mean(a) - mean(b)``, from the pooled seed-to-seed variance: the smallest n with
    ``(t_{0.975, 2n-2} + t_{0.80, 2n-2}) * sd * sqrt(2 / n) <= |difference|`` (t quantiles: with few seeds the
    normal ones of notebook 09 promise too few). ``None`` when more than ``most`` would be needed (or the
    difference is 0). Introduced in notebook 10; the README's study lines use it too."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a seed count needs at least 2 values on each side to measure the spread, got {a.size} "
                         f"and {b.size}")
    sd = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    diff = abs(float(a.mean() - b.mean()))
    if diff == 0:
        return None
    return next((n for n in range(2, most + 1)
                 if (t_quantile(2 * n - 2) + t_quantile(2 * n - 2, 0.6)) * sd * math.sqrt(2 / n) <= diff), None)
