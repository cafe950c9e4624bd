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


def _central(t: float, df: float) -> float:
    """P(|T| <= t), t >= 0, computed where it is small (no cancellation against 1)."""
    return _betainc(0.5, df / 2.0, t * t / (df + t * t))


def _two_tails(t: float, df: float) -> float:
    """P(|T| > t), t >= 0, computed where it is small."""
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


# Above this many degrees of freedom the continued fraction of I_x(df/2, 1/2) needs far more terms than it gets
# (at df = 1e15 the bisection returned 2.83 for the 1.96 limit): the quantile comes from the normal one and the
# Cornish-Fisher expansion in 1/df, whose next term is below 1e-16 there.
LARGE_DF = 1e4


def t_quantile(df, confidence: float = 0.95) -> float:
    """The two-sided Student-t quantile: the t with P(|T| <= t) = ``confidence`` for ``df`` degrees of freedom.

    Exact (the inverse of the t distribution's central probability, by bisection to a relative 1e-13) at every
    ``df`` up to 1e5, and from the normal quantile with its Cornish-Fisher correction in 1/df beyond (``df``
    infinite: the normal quantile itself); for any confidence strictly between 0 and 1, the extremes included
    (the smaller of the central and the two-tail probability is the one computed). ``df`` is a whole number
    >= 1 (or infinite); anything else, a bool, a list or a string included, is a ``ValueError`` naming it.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating, np.integer)) \
            or not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    if isinstance(df, (bool, np.bool_)) or not isinstance(df, (int, float, np.floating, np.integer)) \
            or math.isnan(float(df)) or float(df) < 1 or (math.isfinite(float(df)) and not float(df).is_integer()):
        raise ValueError(f"degrees of freedom must be a whole number >= 1, got {df!r}")
    return _t_quantile(float(df), float(confidence))


@lru_cache(maxsize=4096)
def _t_quantile(df: float, confidence: float) -> float:
    from statistics import NormalDist

    if df >= LARGE_DF:
        if confidence > 0.5:  # from the upper tail: 0.5 + confidence / 2 would lose its digits near 1
            z = -NormalDist().inv_cdf((1.0 - confidence) / 2)
        elif confidence > 1e-3:
            z = NormalDist().inv_cdf(0.5 + confidence / 2)
        else:  # z = sqrt(2) erfinv(c), by erfinv's series (0.5 + c / 2 would lose c's digits in a double)
            x = confidence
            z = math.sqrt(2) * (math.sqrt(math.pi) / 2) * (x + math.pi * x ** 3 / 12 + 7 * math.pi ** 2 * x ** 5 / 480)
        if math.isinf(df):
            return z
        z2 = z * z  # Cornish-Fisher to the third order in 1/df: the next term is below 1e-13 relative at df > 1e4
        return z * (1 + (z2 + 1) / (4 * df) + (5 * z2 * z2 + 16 * z2 + 3) / (96 * df * df)
                    + (3 * z2 ** 3 + 19 * z2 * z2 + 17 * z2 - 15) / 384 / df / df / df)
    if confidence < 1e-6:  # near 0, P(|T| <= t) = 2 f(0) (t - (df + 1) t^3 / (6 df) + ...): solved in closed form
        if df < 1000:
            ratio = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2))
        else:  # Gamma((df + 1) / 2) / Gamma(df / 2) asymptotically: the lgamma difference cancels digits here
            ratio = math.sqrt(df / 2) * (1 - 1 / (4 * df) + 1 / (32 * df ** 2) + 5 / (128 * df ** 3)
                                         - 21 / (2048 * df ** 4))
        f0 = ratio / math.sqrt(df * math.pi)
        t = confidence / (2 * f0)
        return t * (1 + (df + 1) / (6 * df) * t * t)
    small_central = confidence <= 0.5
    goal = confidence if small_central else 1.0 - confidence

    def below(t):  # whether t is below the quantile
        return _central(t, df) < goal if small_central else _two_tails(t, df) > goal

    lo, hi = 0.0, 1.0
    while below(hi):
        lo, hi = hi, hi * 2
    for _ in range(400):
        if hi - lo <= 1e-13 * hi:
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
    return (lo + hi) / 2


def _sample(values, what: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, or a ``ValueError`` naming what is wrong: a table is not
    a sample over seeds (it would be flattened), and a missing value (None, NaN) or an infinite one has no mean."""
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} needs numbers, got {values!r:.80}") from None
    if v.ndim != 1:
        raise ValueError(f"{what} needs one value per seed (a 1-D sample), got shape {v.shape}")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise ValueError(f"{what} got a missing or infinite value at position {int(bad[0])} "
                         f"({list(values)[int(bad[0])]!r}); leave unmeasured seeds out")
    return v


def mean_ci(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and t-interval over seeds: ``(mean, lo, hi)``. One value gives ``lo == hi == mean``
    (callers that print it should use :func:`fmt_ci`, which says "no interval"). The values must be finite
    numbers, one per seed (None, NaN and 2-D input are refused by name)."""
    v = _sample(values, "mean_ci")
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
    if not np.ptp(vals) > 0:  # nor can seeds that agree exactly: their interval [x, x] is no certainty
        return f"{vals[0]:.{digits}f} (the {len(vals)} seeds agree exactly: no interval)"
    m, lo, hi = mean_ci(vals)
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def change_vs_start(start: float, values, confidence: float = 0.95) -> str:
    """"up", "down" or "no detectable change": where the t-interval over seeds lies relative to ``start``.

    Used to word results from the numbers themselves (notebooks 05 and 07), never the other way round.
    """
    if isinstance(start, bool) or not isinstance(start, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(start)):
        raise ValueError(f"change_vs_start needs a finite starting value, got {start!r}")
    values = _sample(values, "change_vs_start")
    if len(values) < 2:
        return "no detectable change (one seed: no interval)"
    if not np.ptp(values) > 0:
        return f"cannot tell: the {len(values)} seeds agree exactly"
    _, lo, hi = mean_ci(values, confidence)
    if lo > start:
        return "up"
    if hi < start:
        return "down"
    return "no detectable change"


def separated(a, b, confidence: float = 0.95) -> str | None:
    """Which of two samples over seeds is higher with non-overlapping t-intervals: ``"a"``, ``"b"``, or ``None``
    (intervals overlap or touch, fewer than 2 seeds on a side, or a side whose seeds agree exactly, whose
    zero-width interval is no certainty: no ranking)."""
    a, b = _sample(a, "separated"), _sample(b, "separated")
    if len(a) < 2 or len(b) < 2 or not np.ptp(a) > 0 or not np.ptp(b) > 0:
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
    a, b = _sample(a, "diff_ci"), _sample(b, "diff_ci")
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a difference interval needs at least 2 values on each side, got {a.size} and {b.size}")
    half = t_quantile(min(a.size, b.size) - 1, confidence) * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    d = float(a.mean() - b.mean())
    return d, d - half, d + half


def diff_p(a, b) -> float:
    """The two-sided p-value of ``mean(a) - mean(b)`` by the t statistic of :func:`diff_ci` (Welch's standard error,
    ``min(n_a, n_b) - 1`` degrees of freedom: the interval excludes 0 at 95% exactly when p < 0.05). A difference of
    0 gives 1; two samples without spread and apart give 0."""
    a, b = _sample(a, "diff_p"), _sample(b, "diff_p")
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a difference test needs at least 2 values on each side, got {a.size} and {b.size}")
    d = float(a.mean() - b.mean())
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return 1.0 if d == 0 else 0.0
    t = abs(d) / se
    return min(1.0, _two_tails(t, float(min(a.size, b.size) - 1)))


def mean_p(values, value: float = 0.0) -> float:
    """The two-sided p-value of ``mean(values) - value`` by the one-sample t statistic over seeds (``n - 1`` degrees
    of freedom: :func:`mean_ci`'s interval excludes ``value`` at 95% exactly when p < 0.05); for a change against a
    fixed starting value (the harm study's comparisons with the start, docs/results/harm/PLAN.md). No spread: 1 at
    ``value``, else 0."""
    v = _sample(values, "mean_p")
    if v.size < 2:
        raise ValueError(f"a one-sample test needs at least 2 values, got {v.size}")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(value)):
        raise ValueError(f"mean_p compares with a finite value, got {value!r}")
    d = float(v.mean()) - float(value)
    se = math.sqrt(v.var(ddof=1) / v.size)
    if se == 0:
        return 1.0 if d == 0 else 0.0
    return min(1.0, _two_tails(abs(d) / se, float(v.size - 1)))


def paired_bootstrap(a, b, resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
                     ) -> tuple[float, float, float]:
    """``(mean(a - b), lo, hi)``: the mean of a paired difference over items (problems) and its percentile interval
    from ``resamples`` bootstrap resamples of the items (drawn with replacement, one generator seeded ``seed``, so
    the interval is reproducible). ``a[i]`` and ``b[i]`` are two methods' scores on item ``i`` (e.g. pass@1 per
    problem, averaged over seeds): the interval covers the choice of problems, which an interval over seeds does
    not (a study's fixed problem set is one draw from the task). Introduced for study 2's planned comparisons
    (docs/results/smollm2-study2/PLAN.md)."""
    a, b = _sample(a, "paired_bootstrap"), _sample(b, "paired_bootstrap")
    if a.size != b.size:
        raise ValueError(f"paired_bootstrap pairs item by item: got {a.size} and {b.size} items")
    if a.size < 2:
        raise ValueError(f"paired_bootstrap needs at least 2 items, got {a.size}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 100:
        raise ValueError(f"resamples must be a whole number >= 100, got {resamples!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    d = a - b
    rng = np.random.default_rng(seed)
    means = np.empty(int(resamples))
    for start in range(0, int(resamples), 1000):  # in blocks: 10,000 x 200 indices at once is 16 MB
        n = min(1000, int(resamples) - start)
        means[start:start + n] = d[rng.integers(0, d.size, size=(n, d.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(d.mean()), float(lo), float(hi)


def holm(pvalues, alpha: float = 0.05) -> list[bool]:
    """Holm's step-down correction: which of the hypotheses with these p-values are rejected at family-wise error
    ``alpha`` (sorted ascending, the i-th smallest compared with alpha / (m - i); stop at the first that is not
    rejected). Same order as ``pvalues``. Introduced for the planned comparisons of the studies (docs/results)."""
    p = _sample(pvalues, "holm")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    m = p.size
    out = [False] * m
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] > alpha / (m - rank):
            break
        out[int(i)] = True
    return out


def seeds_needed(a, b, most: int = 1000, alpha: float = 0.05) -> int | None:
    """Seeds per method for a two-sided test at level ``alpha`` with 80% power to detect a difference the size of
    ``mean(a) - mean(b)``, from the pooled seed-to-seed variance: the smallest n with
    ``(t_{1-alpha/2, 2n-2} + t_{0.80, 2n-2}) * sd * sqrt(2 / n) <= |difference|`` (t quantiles: with few seeds the
    normal ones of notebook 09 promise too few). A comparison read with Holm's correction over m must pass
    ``alpha / m`` at its strictest step: give that ``alpha``. ``None`` when more than ``most`` would be needed (or
    the difference is 0). The values must be finite, one per seed, and ``most`` a whole number >= 2 (refused by
    name otherwise). It answers "if the true difference were the one measured, how many seeds": a hypothetical,
    not a prediction. Introduced in notebook 10; the study reports use it too."""
    if isinstance(most, bool) or not isinstance(most, (int, np.integer)) or most < 2:
        raise ValueError(f"most must be a whole number >= 2 (the largest seed count worth reporting), got {most!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    a, b = _sample(a, "seeds_needed"), _sample(b, "seeds_needed")
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a seed count needs at least 2 values on each side to measure the spread, got {a.size} "
                         f"and {b.size}")
    sd = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    diff = abs(float(a.mean() - b.mean()))
    if diff == 0:
        return None
    return next((n for n in range(2, most + 1)
                 if (t_quantile(2 * n - 2, 1 - alpha) + t_quantile(2 * n - 2, 0.6)) * sd * math.sqrt(2 / n) <= diff),
                None)


def spread(values) -> bool:
    """Whether a sample over seeds varies at all. Seeds that agree exactly (common with two seeds and few
    evaluation problems) give a t-interval of zero width, ``[x, x]``, which would read as certainty: every helper
    that words a result says "cannot tell: the seeds agree exactly" instead."""
    v = _sample(values, "spread")
    return v.size >= 2 and bool(np.ptp(v) > 0)


def paired_ci(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean(a - b), lo, hi)`` over seeds paired one to one (``a[i]`` and ``b[i]`` ran with the same seed, so the
    same prompts and data order): the t-interval of the per-seed differences, ``n - 1`` degrees of freedom. Use it
    only where the design pairs by seed (a study's plan says so); otherwise :func:`diff_ci`."""
    a, b = _sample(a, "paired_ci"), _sample(b, "paired_ci")
    if a.size != b.size or a.size < 2:
        raise ValueError(f"a paired interval needs the same seeds on both sides, at least 2; got {a.size} and {b.size}")
    return mean_ci(a - b, confidence)


def paired_p(a, b) -> float:
    """The two-sided p-value of :func:`paired_ci`'s mean difference (the one-sample t test of the differences)."""
    a, b = _sample(a, "paired_p"), _sample(b, "paired_p")
    if a.size != b.size or a.size < 2:
        raise ValueError(f"a paired test needs the same seeds on both sides, at least 2; got {a.size} and {b.size}")
    return mean_p(a - b)


def _change_se(values, start_se) -> tuple[np.ndarray, float]:
    v = _sample(values, "change_ci")
    if v.size < 2:
        raise ValueError(f"a change from the start needs at least 2 seeds, got {v.size}")
    if isinstance(start_se, bool) or not isinstance(start_se, (int, float, np.floating)) \
            or not math.isfinite(float(start_se)) or start_se < 0:
        raise ValueError(f"the start's standard error must be a finite number >= 0, got {start_se!r}")
    return v, math.sqrt(float(v.var(ddof=1)) / v.size + float(start_se) ** 2)


def change_ci(values, start: float, start_se: float, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean(values) - start, lo, hi)``: a change from a starting value that is itself one noisy measurement (an
    evaluation of the start from sampled completions, standard error ``start_se``). The standard error adds both,
    ``sqrt(s^2 / n + start_se^2)``; the t quantile keeps the seeds' ``n - 1`` degrees of freedom (conservative).
    With ``start_se = 0`` it is :func:`mean_ci` shifted by ``start``. Introduced for the study engine: a comparison
    with the start that ignores the start's own noise claims more than it measured."""
    v, se = _change_se(values, start_se)
    if isinstance(start, bool) or not isinstance(start, (int, float, np.floating)) or not math.isfinite(float(start)):
        raise ValueError(f"change_ci needs a finite starting value, got {start!r}")
    d = float(v.mean()) - float(start)
    half = t_quantile(v.size - 1, confidence) * se
    return d, d - half, d + half


def change_p(values, start: float, start_se: float) -> float:
    """The two-sided p-value of :func:`change_ci`'s change (its t statistic, ``n - 1`` degrees of freedom)."""
    v, se = _change_se(values, start_se)
    d = float(v.mean()) - float(start)
    if se == 0:
        return 1.0 if d == 0 else 0.0
    return min(1.0, _two_tails(abs(d) / se, float(v.size - 1)))
