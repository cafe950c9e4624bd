

def test_paired_bootstrap_covers_the_problems_and_refuses_what_it_cannot_pair():
    """Study 2's paired bootstrap over problems: the mean difference exactly, an interval that holds it and shrinks
    with more problems, reproducible for a seed, a zero-width interval for a constant difference, and refusals by
    name for unequal lengths, one item, NaN and too few resamples."""
    import numpy as np
    import pytest

    from grpo_lab.stats import paired_bootstrap

    rng = np.random.default_rng(1)
    a = rng.uniform(size=200)
    b = a - 0.05 + rng.normal(0, 0.1, size=200)
    d, lo, hi = paired_bootstrap(a, b)
    assert d == pytest.approx(float(np.mean(a - b)))
    assert lo < d < hi
    se = np.std(a - b, ddof=1) / np.sqrt(200)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.15)  # the normal approximation's width, roughly
    assert paired_bootstrap(a, b) == (d, lo, hi)  # reproducible
    big = np.tile(a, 8), np.tile(b, 8)
    _, lo8, hi8 = paired_bootstrap(*big)
    assert hi8 - lo8 < (hi - lo) / 2  # 8 times the problems: about a third of the width
    assert paired_bootstrap([0.5, 0.7, 0.2], [0.4, 0.6, 0.1]) == pytest.approx((0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="item by item"):
        paired_bootstrap([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2 items"):
        paired_bootstrap([1.0], [0.0])
    with pytest.raises(ValueError, match="missing or infinite"):
        paired_bootstrap([1.0, float("nan")], [0.0, 0.0])
    with pytest.raises(ValueError, match="resamples"):
        paired_bootstrap(a, b, resamples=10)


def test_seeds_that_agree_exactly_give_no_interval_and_no_verdict():
    """Issue 51: 0.600 [0.600, 0.600] read "up" from a start of 0.59, and a constant sample ranked above another."""
    from grpo_lab.report import verdict_lines
    from grpo_lab.stats import change_vs_start, fmt_ci, separated

    assert change_vs_start(0.59, [0.6, 0.6]) == "cannot tell: the 2 seeds agree exactly"
    assert separated([0.016, 0.016], [0.009, 0.009]) is None
    assert fmt_ci([0.6, 0.6]) == "0.600 (the 2 seeds agree exactly: no interval)"
    lines = verdict_lines([dict(estimator="sign", greedy=[0.6, 0.6]), dict(estimator="grpo", greedy=[0.61, 0.62])],
                          {"greedy": 0.59}, keys=(("greedy", "greedy accuracy"),))
    assert "cannot tell for sign 0.600" in lines[0] and "up for sign" not in lines[0]
