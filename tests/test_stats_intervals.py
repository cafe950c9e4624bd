"""Issue 28: one t-quantile for every interval, exact at every sample size and confidence, checked against an
independent reference (scipy.stats.t), and bad input refused by name."""

import numpy as np
import pytest
from scipy import stats as sp

from grpo_lab.stats import fmt_ci, mean_ci, t_cdf, t_quantile


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_mean_ci_is_the_t_interval_for_every_n(confidence):
    rng = np.random.default_rng(0)
    for n in range(2, 201):
        v = rng.normal(0.4, 0.1, size=n)
        m, lo, hi = mean_ci(v, confidence)
        want = sp.t.ppf(0.5 + confidence / 2, n - 1) * v.std(ddof=1) / np.sqrt(n)
        assert m == pytest.approx(v.mean(), abs=1e-15)
        assert (hi - lo) / 2 == pytest.approx(want, rel=1e-9), (n, confidence)


def test_the_quantile_and_cdf_agree_with_scipy_far_out():
    for df in (1, 2, 3, 7, 30, 31, 120, 1000, 10**6):
        for c in (0.5, 0.8, 0.999, 0.999999):
            assert t_quantile(df, c) == pytest.approx(sp.t.ppf(0.5 + c / 2, df), rel=1e-8), (df, c)
        for t in (-40.0, -2.0, -0.1, 0.0, 0.3, 5.0):
            assert t_cdf(t, df) == pytest.approx(sp.t.cdf(t, df), abs=1e-12 if df <= 1000 else 1e-9), (df, t)


def test_the_issue_case():
    _, lo, hi = mean_ci([0.1, 0.3, 0.2], 0.99)
    assert (hi - lo) / 2 == pytest.approx(0.573, abs=5e-4)  # the normal quantile gave 0.149


@pytest.mark.parametrize("confidence", [-0.1, 0.0, 1.0, 1.5, float("nan"), "0.95", True])
def test_a_bad_confidence_is_refused_by_name(confidence):
    with pytest.raises(ValueError, match="confidence must be a number strictly between 0 and 1"):
        mean_ci([0.1, 0.2, 0.3], confidence)
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([0.1], confidence)  # refused even where no interval is drawn


def test_no_values_is_an_error_not_nan():
    with pytest.raises(ValueError, match="at least one value"):
        mean_ci([])
    assert fmt_ci([]) == "n/a"  # the printing helper says so instead


def test_diff_ci_is_welch_with_the_smaller_sides_degrees_of_freedom():
    from grpo_lab.stats import diff_ci

    a, b = [0.5, 0.6, 0.7, 0.65], [0.3, 0.4, 0.35]
    d, lo, hi = diff_ci(a, b)
    se = np.sqrt(np.var(a, ddof=1) / 4 + np.var(b, ddof=1) / 3)
    assert d == pytest.approx(np.mean(a) - np.mean(b))
    assert hi - d == pytest.approx(sp.t.ppf(0.975, 2) * se) and d - lo == pytest.approx(hi - d)
    with pytest.raises(ValueError, match="at least 2 values on each side"):
        diff_ci([0.5], b)


def test_seeds_needed_meets_the_power_it_promises():
    """At the n it returns, a two-sample t-test at 5% detects the measured difference with at least 80% power
    (simulated with the measured sd); at n - 1 it would not reach it by the same arithmetic."""
    from grpo_lab.stats import seeds_needed, t_quantile

    a, b = [0.55, 0.6, 0.45, 0.62], [0.5, 0.42, 0.48, 0.4]
    n = seeds_needed(a, b)
    sd = np.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    diff = abs(np.mean(a) - np.mean(b))
    assert (t_quantile(2 * n - 2) + t_quantile(2 * n - 2, 0.6)) * sd * np.sqrt(2 / n) <= diff
    assert (t_quantile(2 * n - 4) + t_quantile(2 * n - 4, 0.6)) * sd * np.sqrt(2 / (n - 1)) > diff
    rng = np.random.default_rng(0)
    x, y = rng.normal(diff, sd, (4000, n)), rng.normal(0, sd, (4000, n))
    power = np.mean(sp.ttest_ind(x, y, axis=1).pvalue < 0.05)
    assert power >= 0.78  # 80% up to simulation noise (4000 draws: sd 0.006)
    assert seeds_needed([0.5, 0.6], [0.5, 0.6]) is None  # no difference: no number of seeds detects it
    assert seeds_needed([0.5, 0.6], [0.50001, 0.60001], most=50) is None
