import math
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_lab.passk import finishing_ceiling, maj_at_k, naive_best_of_k, pass_at_k, pass_at_k_curve


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_equals_combinatorial_form(nck):
    n, c, k = nck
    exact = 1 - comb(n - c, k) / comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_pass_at_k_vectorised_and_edges():
    out = pass_at_k(np.array([10, 10, 10, 5]), np.array([0, 3, 10, 5]), 5)
    np.testing.assert_allclose(out, [0.0, 1 - comb(7, 5) / comb(10, 5), 1.0, 1.0])
    assert pass_at_k(200, 100, 1) == pytest.approx(0.5)
    # big n stays stable (the naive ratio of binomials overflows floats)
    assert 0 < pass_at_k(5000, 3, 100) < 1


def test_pass_at_k_bad_input():
    with pytest.raises(ValueError, match="at least k=5 samples.*n=3"):
        pass_at_k(3, 1, 5)  # the reference snippet would silently say 1.0
    with pytest.raises(ValueError, match="c > n"):
        pass_at_k(4, 5, 2)
    with pytest.raises(ValueError, match="c \\(correct samples\\) must be >= 0"):
        pass_at_k(4, -1, 2)
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_at_k(4, 1, 0)
    with pytest.raises(TypeError):
        pass_at_k(4, 1, 2.0)
    with pytest.raises(ValueError, match="whole numbers"):
        pass_at_k(4.5, 1, 2)


def test_curve_is_monotone_with_bootstrap_band():
    rng = np.random.default_rng(1)
    n = np.full(300, 16)
    c = rng.binomial(16, rng.beta(0.3, 1.0, size=300))
    curve = pass_at_k_curve(n, c, [1, 2, 4, 8, 16], n_boot=300)
    assert np.all(np.diff(curve.mean) >= 0)
    assert np.all(curve.lo <= curve.mean + 1e-12) and np.all(curve.mean <= curve.hi + 1e-12)
    assert curve.mean[0] == pytest.approx((c / 16).mean())
    assert curve.hi[0] - curve.lo[0] > 0


def test_naive_best_of_k_underestimates():
    correct = [[1] + [0] * 7] * 50
    naive = naive_best_of_k(correct, 4, n_boot=4000)
    unbiased = pass_at_k(8, 1, 4)  # 0.5
    assert naive == pytest.approx(1 - (7 / 8) ** 4, abs=0.01)
    assert naive < unbiased - 0.05


def test_maj_at_k():
    answers = [["3", "3", "4", None], ["1", "2", "2", "2"], [None, None, None, None]]
    refs = ["3", "1", "5"]
    full = maj_at_k(answers, refs, 4)
    np.testing.assert_allclose(full, [1.0, 0.0, 0.0])
    sub = maj_at_k(answers, refs, 1, n_resamples=2000)
    assert sub[0] == pytest.approx(0.5, abs=0.05)  # one vote: right when "3" is drawn
    with pytest.raises(ValueError, match="at least k=5"):
        maj_at_k(answers, refs, 5)
    with pytest.raises(ValueError, match="3 answer lists but 2 references"):
        maj_at_k(answers, refs[:2], 2)


def test_pass_at_k_with_huge_counts():
    assert pass_at_k(2 ** 40, 2 ** 39, 1) == pytest.approx(0.5, abs=1e-12)
    assert pass_at_k(10 ** 6, 5 * 10 ** 5, 3) == pytest.approx(1 - 0.5 ** 3, abs=1e-6)
    # the many-correct route agrees with the explicit product where both apply
    n, c, k = 20_000, 5_000, 3
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-12)
    for n in (1e20, 2 ** 63):
        with pytest.raises(ValueError, match="too large to be a count"):
            pass_at_k(n, 1, 1)


def test_maj_at_k_ties_numbers_and_answer_fields():
    assert maj_at_k([["72", "71"]], ["72"], 2).tolist() == [0.5]  # a tie: the chance a fair tie-break is right
    assert maj_at_k([["71", "72"]], ["72"], 2).tolist() == [0.5]  # ... whatever the order
    assert maj_at_k([["72", "72", "5"]], [np.int64(72)], 3).tolist() == [1.0]
    assert maj_at_k([["1,000", "7"]], [1000], 1, n_resamples=400).item() == pytest.approx(0.5, abs=0.1)
    assert maj_at_k([["72.0"]], [72], 1).tolist() == [1.0]
    with pytest.raises(ValueError, match="whole GSM8K answer field"):
        maj_at_k([["72"]], ["She has 8 * 9 = 72 apples.\n#### 72"], 1)


def test_maj_at_k_refuses_a_flat_answer_list():
    # a flat list used to be read as problems whose samples are characters: [0.] and no error
    with pytest.raises(ValueError, match=r"answers\[0\] is str '72', not a list of one problem's sampled answers"):
        maj_at_k(["72", "5"], ["72", "5"], 1)
    assert maj_at_k([["72"], ["5"]], ["72", "6"], 1).tolist() == [1.0, 0.0]


def test_pass_at_k_curve_refuses_fractional_k():
    with pytest.raises(TypeError, match="k"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1.7])


def test_pass_at_k_curve_refuses_empty_ks_and_zero_boot():
    with pytest.raises(ValueError, match="ks is empty"):
        pass_at_k_curve([8, 8], [1, 2], ks=[])
    with pytest.raises(ValueError, match="n_boot"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1, 2], n_boot=0)
    with pytest.raises(ValueError, match="confidence"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1], confidence=float("nan"))


def test_pass_at_k_curve_accepts_numpy_integer_ks():
    curve = pass_at_k_curve([8, 8], [1, 2], ks=np.array([1, 4]))
    assert curve.ks.tolist() == [1, 4]


def test_maj_at_k_refuses_zero_resamples():
    with pytest.raises(ValueError, match="n_resamples"):
        maj_at_k([["1", "2", "1"]], ["1"], k=2, n_resamples=0)


def test_naive_best_of_k_refuses_bad_k():
    with pytest.raises(ValueError, match="k"):
        naive_best_of_k([[1, 0]], k=0)


def _completions(rng, n_problems, samples, cut_chance, right_if_finished, right_if_cut):
    """Sampled completions of a fixed problem set: per problem a chance of a cut, and of a correct answer given
    each (cut completions can still hold their answer)."""
    q = rng.beta(1, 1, n_problems) * cut_chance * 2  # problems differ in how often they run long
    cut = rng.random((n_problems, samples)) < np.clip(q, 0, 1)[:, None]
    right = rng.random(cut.shape) < np.where(cut, right_if_cut, right_if_finished)
    return right.mean(), cut.mean()


def test_finishing_alone_stays_under_the_ceiling_and_a_better_skill_goes_above_it():
    rng = np.random.default_rng(0)
    for right_if_cut in (0.0, 0.1):  # a cut completion that still gave its answer is allowed for
        p0, c0 = _completions(rng, 400, 8, 0.45, 0.3, right_if_cut)
        ceiling, _ = finishing_ceiling(p0, c0)
        for c1 in (0.2, 0.05):  # training that only stops the cuts, accuracy among finished unchanged
            p1, _ = _completions(rng, 400, 8, c1, 0.3, right_if_cut)
            assert p1 <= ceiling + 0.03, (right_if_cut, c1, p1, ceiling)  # 0.03: the two samples' own noise
        better, _ = _completions(rng, 400, 8, 0.05, 0.6, right_if_cut)  # a skill gain: more right when finished
        assert better > ceiling + 0.1, (better, ceiling)
    # reversed data: with no cut at the start, the ceiling is the start itself
    assert finishing_ceiling(0.3, 0.0) == (0.3, 0.0)


def test_the_ceilings_error_covers_its_sampling_noise():
    rng = np.random.default_rng(1)
    draws = [_completions(rng, 200, 4, 0.43, 0.27, 0.0) for _ in range(400)]
    truth = np.mean([p / (1 - c) for p, c in draws])  # the ceiling's value over many evaluations of one start
    inside = 0
    for p, c in draws:
        se_p, se_c = math.sqrt(p * (1 - p) / 800), math.sqrt(c * (1 - c) / 800)  # completions' binomial errors
        value, se = finishing_ceiling(p, c, se_p, se_c)
        inside += abs(value - truth) <= 1.96 * se
    assert inside / len(draws) >= 0.93  # nominal 95%: the error is not understated


def test_finishing_ceiling_edges_and_bad_input():
    assert finishing_ceiling(0.5, 1.0) == (1.0, 0.0)  # every completion cut: the finished ones say nothing
    assert finishing_ceiling(0.6, 0.5) == (1.0, 0.0)  # at most 1
    value, se = finishing_ceiling(0.15, 0.434, 0.012, 0.0)
    assert value == pytest.approx(0.15 / 0.566) and se == pytest.approx(0.012 / 0.566)
    for bad in ({"pass1": float("nan"), "cut": 0.2}, {"pass1": 1.2, "cut": 0.2}, {"pass1": 0.2, "cut": -0.1},
                {"pass1": 0.2, "cut": 0.1, "cut_se": -1.0}):
        with pytest.raises(ValueError, match=next(k for k, v in bad.items() if v not in (0.2, 0.1))):
            finishing_ceiling(**bad)
