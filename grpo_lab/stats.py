"""Intervals over seeds: one definition, used by every report, figure and notebook.

A result over seeds is reported as its mean and a Student-t confidence interval,
``mean ± t_{0.975, n-1} · s / sqrt(n)`` (s the sample standard deviation; the t distribution, the beta function
and their inverses from ``scipy.stats`` / ``scipy.special``). A difference of two means reads its degrees of
freedom by a named convention (:data:`DFS`): ``"welch"`` (Welch-Satterthwaite) or ``"min-n"`` (the smaller
sample's n - 1, the conservative choice). With one seed
there is no interval, and the helpers say so instead of printing a zero-width one.
Introduced in notebook 04; used by ``grpo-lab compare`` and notebooks 05 and 07.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


# Beyond this many degrees of freedom the t quantile is the normal one to double precision (their relative difference
# is about z^2 / (4 df) < 1e-15), and scipy's inverse incomplete beta function stops being accurate (at df = 1e300
# and confidence 1e-12 it is off by eight orders of magnitude).
NORMAL_DF = 1e15

DFS = ("welch", "min-n")  # the degrees of freedom a difference of two means over seeds can be read with


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``scipy.stats.t``)."""
    from scipy import stats as sps

    return float(sps.t.cdf(t, df))


def _two_tails(t: float, df: float) -> float:
    """P(|T| > t), t >= 0 (``scipy.stats.t``'s survival function, accurate where it is small)."""
    from scipy import stats as sps

    return float(2 * sps.t.sf(t, df))


def t_quantile(df, confidence: float = 0.95) -> float:
    """The two-sided Student-t quantile: the t with P(|T| <= t) = ``confidence`` for ``df`` degrees of freedom.

    From scipy's inverse regularised incomplete beta function, P(|T| <= t) = I_x(1/2, df/2) with
    x = t^2 / (df + t^2), inverted on whichever side keeps its digits (the central one, or the two tails
    I_y(df/2, 1/2) = 1 - confidence with y = 1 - x), so the quantile is right to about 1e-15 relative at any
    confidence strictly between 0 and 1; beyond ``NORMAL_DF`` degrees of freedom (and for ``df`` infinite) the
    normal quantile, sqrt(2) erfinv(confidence). ``df`` is a number >= 1 (a fractional one, such as Welch's, too)
    or infinite; anything else, a bool, a list or a string included, is a ``ValueError`` naming it.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating, np.integer)) \
            or not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    if isinstance(df, (bool, np.bool_)) or not isinstance(df, (int, float, np.floating, np.integer)) \
            or math.isnan(float(df)) or float(df) < 1:
        raise ValueError(f"degrees of freedom must be a number >= 1, got {df!r}")
    return _t_quantile(float(df), float(confidence))


@lru_cache(maxsize=4096)
def _t_quantile(df: float, confidence: float) -> float:
    from scipy import special

    if df > NORMAL_DF:
        # erfinv near 0, erfcinv of the upper tail near 1: each keeps its digits where it is used
        return float(math.sqrt(2) * (special.erfinv(confidence) if confidence <= 0.5
                                     else special.erfcinv(1 - confidence)))
    x = float(special.betaincinv(0.5, df / 2, confidence))
    if x <= 0.5:
        return math.sqrt(df * x / (1 - x))
    y = float(special.betaincinv(df / 2, 0.5, 1 - confidence))
    return math.sqrt(df * (1 - y) / y)


def welch_df(a, b) -> float:
    """Welch-Satterthwaite's degrees of freedom for ``mean(a) - mean(b)``:
    ``(v_a + v_b)^2 / (v_a^2 / (n_a - 1) + v_b^2 / (n_b - 1))`` with ``v = s^2 / n``; between ``min(n) - 1`` and
    ``n_a + n_b - 2``. Two samples without spread have none: ``min(n) - 1`` is returned (the interval is then zero
    wide whatever the df). Introduced with the study engine's second edition (its plans declare ``df``)."""
    a, b = _sample(a, "welch_df"), _sample(b, "welch_df")
    return welch_df_of([(a.var(ddof=1), a.size), (b.var(ddof=1), b.size)])


def welch_df_of(parts) -> float:
    """Welch-Satterthwaite's df for a sum of independent means, from ``[(variance, n), ...]`` (two for a
    difference, four for a difference of differences)."""
    v = [(float(var) / n, n) for var, n in parts]
    num = sum(x for x, _ in v) ** 2
    den = sum(x * x / (n - 1) for x, n in v)
    return num / den if den > 0 else float(min(n for _, n in v) - 1)


def _df(a: np.ndarray, b: np.ndarray, df: str) -> float:
    if df == "welch":
        return welch_df_of([(a.var(ddof=1), a.size), (b.var(ddof=1), b.size)])
    if df == "min-n":
        return float(min(a.size, b.size) - 1)
    raise ValueError(f"df must be one of {', '.join(DFS)}, got {df!r}")


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


def fmt_ci(values, digits: int = 3, clip=(0.0, 1.0), confidence: float = 0.95) -> str:
    """``"0.412 [0.388, 0.436]"``: mean [t-interval at ``confidence``, 95% by default], the interval clipped to
    ``clip`` (fractions by default).

    One value prints ``"0.412 (1 seed, no interval)"``; no finite value prints ``"n/a"``.
    """
    vals = [v for v in values if v is not None and np.isfinite(v)]
    if not vals:
        return "n/a"
    if len(vals) < 2:  # a zero-width "interval" would invite comparisons that one seed cannot support
        return f"{vals[0]:.{digits}f} (1 seed, no interval)"
    if not np.ptp(vals) > 0:  # nor can seeds that agree exactly: their interval [x, x] is no certainty
        return f"{vals[0]:.{digits}f} (the {len(vals)} seeds agree exactly: no interval)"
    m, lo, hi = mean_ci(vals, confidence)
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    m, lo, hi = (0.0 if round(x, digits) == 0 else x for x in (m, lo, hi))  # never "-0.000"
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


def t_interval(d: float, se: float, dof: float, confidence: float = 0.95) -> tuple[float, float]:
    """``d ± t_{dof} · se``: the two-sided interval of an estimate with standard error ``se`` and ``dof`` degrees of
    freedom (every t-interval of this module, and the study engine's at any level)."""
    half = t_quantile(dof, confidence) * se
    return d - half, d + half


def t_p(d: float, se: float, dof: float) -> float:
    """The two-sided p-value of ``d`` against 0 by its t statistic ``d / se``; ``se = 0``: 1 at 0, else 0."""
    if se == 0:
        return 1.0 if d == 0 else 0.0
    return min(1.0, _two_tails(abs(d) / se, dof))


def diff_parts(a, b, df: str = "min-n") -> tuple[float, float, float]:
    """``(mean(a) - mean(b), Welch's standard error sqrt(s_a^2 / n_a + s_b^2 / n_b), degrees of freedom)``, the df by
    the named convention (``"min-n"`` or ``"welch"``)."""
    a, b = _sample(a, "diff_ci"), _sample(b, "diff_ci")
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a difference interval needs at least 2 values on each side, got {a.size} and {b.size}")
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return float(a.mean() - b.mean()), se, _df(a, b, df)


def diff_ci(a, b, confidence: float = 0.95, df: str = "min-n") -> tuple[float, float, float]:
    """``(mean(a) - mean(b), lo, hi)``: the difference of two means over seeds and its t-interval, Welch's standard
    error ``sqrt(s_a^2 / n_a + s_b^2 / n_b)`` with the degrees of freedom ``df`` names: ``"min-n"``
    (``min(n_a, n_b) - 1``, the conservative choice, the default here since notebook 10) or ``"welch"``
    (Welch-Satterthwaite, :func:`welch_df`: what ``scipy.stats.ttest_ind(equal_var=False)`` uses). A study's plan
    declares which (``[analysis] df``). Introduced in notebook 10."""
    d, se, dof = diff_parts(a, b, df)
    return (d, *t_interval(d, se, dof, confidence))


def diff_p(a, b, df: str = "min-n") -> float:
    """The two-sided p-value of ``mean(a) - mean(b)`` by the t statistic of :func:`diff_ci` at the same ``df``
    convention (the interval excludes 0 at 95% exactly when p < 0.05). A difference of 0 gives 1; two samples
    without spread and apart give 0."""
    return t_p(*diff_parts(a, b, df))


def interaction_parts(a, b, c, d, df: str = "min-n") -> tuple[float, float, float]:
    """``(delta, se, dof)`` for ``delta = (mean(a) - mean(b)) - (mean(c) - mean(d))`` over four independent samples:
    standard error ``sqrt(sum s_i^2 / n_i)``, degrees of freedom by ``df`` (``"min-n"``: the smallest ``n_i - 1``;
    ``"welch"``: Welch-Satterthwaite over the four, :func:`welch_df_of`)."""
    xs = [_sample(x, "interaction_ci") for x in (a, b, c, d)]
    if any(x.size < 2 for x in xs):
        raise ValueError(f"an interaction needs at least 2 values in each of its four samples, got "
                         f"{[x.size for x in xs]}")
    if df not in DFS:
        raise ValueError(f"df must be one of {', '.join(DFS)}, got {df!r}")
    delta = float(xs[0].mean() - xs[1].mean() - (xs[2].mean() - xs[3].mean()))
    se = math.sqrt(sum(float(x.var(ddof=1)) / x.size for x in xs))
    dof = welch_df_of([(x.var(ddof=1), x.size) for x in xs]) if df == "welch" else float(min(x.size for x in xs) - 1)
    return delta, se, dof


def interaction_ci(a, b, c, d, confidence: float = 0.95, df: str = "min-n") -> tuple[float, float, float, float]:
    """``(delta, lo, hi, p)`` of :func:`interaction_parts` (does a treatment change a difference?). Introduced for
    study 3's planned test of the KL penalty (docs/results/smollm2-study3/PLAN.md)."""
    delta, se, dof = interaction_parts(a, b, c, d, df)
    return (delta, *t_interval(delta, se, dof, confidence), t_p(delta, se, dof))


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
