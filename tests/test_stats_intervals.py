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
