"""Issue 37, item 3: checks never mislead. Each check against the stub (NotImplementedError propagates), a typical
wrong answer (an AssertionError), and two differently written correct answers (both pass, whatever real number
type they return); training cells refuse a function whose check did not pass; predict-first checks take any real
scalar and name a percentage."""

import math

import numpy as np
import pytest
import torch

import grpo_lab as gl
from grpo_lab import checks
from grpo_lab.gradrank import effective_rank

from exercise_helpers import assert_not_done


def stub(*a, **k):
    raise NotImplementedError("exercise NN.k: replace this line with your code")


def _binom_degeneracy(p, G):
    return sum(math.comb(G, k) * p ** k * (1 - p) ** (G - k) for k in (0, G))


def _hist_loop(r, G):
    out = [0] * (G + 1)
    for i in range(0, len(r), G):
        out[int(sum(r[i:i + G]))] += 1
    return out


def _rank_svd_numpy(M):
    s = np.linalg.svd(np.asarray(M, dtype=np.float64), compute_uv=False)
    if s.sum() == 0:
        return np.float64(0.0)
    q = s[s > 0] / s.sum()
    return np.float64(np.exp(-(q * np.log(q)).sum()))


def _passk_product(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def _rloo_loop(r, G):
    out = torch.empty_like(r)
    for b in range(r.shape[0]):
        for i in range(G):
            out[b, i] = r[b, i] - (r[b].sum() - r[b, i]) / (G - 1)
    return out


# check name -> (check, [two correct answers], a typical wrong answer)
MATRIX = {
    "degeneracy_rate": (checks.check_degeneracy_rate,
                        [lambda p, G: p ** G + (1 - p) ** G, lambda p, G: np.float32(_binom_degeneracy(p, G))],
                        lambda p, G: (1 - p) ** G),  # forgot the all-pass groups
    "real_and_iid": (checks.check_real_and_iid,
                     [lambda p, G: ((p ** G + (1 - p) ** G).mean(), p.mean() ** G + (1 - p.mean()) ** G),
                      lambda p, G: (np.mean([float(x) ** G + (1 - float(x)) ** G for x in p]),
                                    torch.tensor(float(p.mean()) ** G + (1 - float(p.mean())) ** G))],
                     lambda p, G: (p.mean() ** G + (1 - p.mean()) ** G,) * 2),  # the i.i.d. guess for both
    "rloo": (lambda fn: checks.check_estimator(fn, "rloo"),
             [lambda r, G: r - (r.sum(1, keepdim=True) - r) / (G - 1), _rloo_loop],
             lambda r, G: r - r.mean(1, keepdim=True)),  # the mean includes the completion itself
    "success_hist": (checks.check_success_hist,
                     [lambda r, G: torch.bincount(r.view(-1, G).sum(1).long(), minlength=G + 1),
                      lambda r, G: _hist_loop(r.tolist(), G)],
                     lambda r, G: torch.bincount(r.view(-1, G).sum(1).long(), minlength=G)),  # G bins, not G + 1
    "effective_rank": (checks.check_effective_rank,
                       [lambda M: effective_rank(M), _rank_svd_numpy],
                       lambda M: torch.linalg.matrix_rank(M).float()),  # the algebraic rank
    "pass_at_k": (checks.check_pass_at_k,
                  [lambda n, c, k: 1 - math.comb(n - c, k) / math.comb(n, k), _passk_product],
                  lambda n, c, k: 1 - (1 - c / n) ** k),  # the biased estimate
    "group_filter": (checks.check_group_filter,
                     [lambda r, G: r.view(-1, G).std(1) > 0, lambda r, G: [len(set(g)) > 1 for g in
                                                                          r.view(-1, G).tolist()]],
                     lambda r, G: (lambda s: (s > 0) & (s < G))(r.view(-1, G).sum(1))),  # counts right answers
    "lucky_advantage": (checks.check_lucky_advantage,
                        [lambda G, m: tuple(gl.compute_advantages(torch.tensor([1.0] + [0.0] * (G - 1)), G, m)[:2]
                                            .tolist()),
                         lambda G, m: {"grpo": (np.float64((G - 1) / G / math.sqrt(1 / G)), -1 / G / math.sqrt(1 / G)),
                                       "drgrpo": ((G - 1) / G, -1 / G), "rloo": (1.0, -1 / (G - 1)),
                                       "sign": (1, -1), "maxrl": (G - 1, -1.0)}[m]],
                        lambda G, m: (1.0, 0.0)),
}


@pytest.mark.parametrize("name", MATRIX)
def test_each_check_passes_two_correct_answers_refuses_a_wrong_one_and_surfaces_the_stub(name, capsys):
    check, right, wrong = MATRIX[name]
    for fn in right:
        check(fn)
        assert "✓" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        check(wrong)
    assert_not_done(check, stub)  # issue 81: an unfinished exercise's check says so in one line, the notebook goes on


def test_a_check_refuses_a_string_that_looks_like_a_number():
    with pytest.raises(AssertionError, match="give a number"):
        checks.check_pass_at_k(lambda n, c, k: str(1 - math.comb(n - c, k) / math.comb(n, k)))


@pytest.mark.parametrize("value", [0.45, np.float32(0.45), np.float64(0.45), torch.tensor(0.45), np.array(0.45),
                                   torch.tensor([0.45])])
def test_a_prediction_is_any_real_scalar(value, capsys):
    checks.check_prediction(value, 0.45, "share", tol=0.05, fraction=True)
    assert "you predicted 0.450, the run measured 0.450 (within" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0.45", None, True, float("nan"), [0.1, 0.2]])
def test_a_prediction_that_is_not_a_number_is_named(value):
    with pytest.raises(AssertionError, match="give your prediction as a number"):
        checks.check_prediction(value, 0.45, "share", tol=0.05)


def test_a_percentage_for_a_fraction_is_named_and_says_how_to_write_it():
    with pytest.raises(AssertionError, match=r"-15 looks like a percentage.*write -0.15 for -15%"):
        checks.check_prediction(-15, -0.15, "sign - grpo", tol=0.1, fraction=True)
    checks.check_prediction(2.5, 2.0, "effective rank", tol=1.0)  # not a fraction: any size


def test_the_message_says_where_the_compared_value_comes_from(capsys):
    checks.check_prediction(0.1, -0.17, "sign - grpo", tol=0.1, fraction=True, source="the shipped study")
    assert "the shipped study measured -0.170 (outside" in capsys.readouterr().out


def test_a_training_cell_refuses_a_function_whose_check_failed_and_uses_it_once_it_passed(capsys):
    def counts(r, G):  # 09.2's typical mistake: right for 0/1 rewards, wrong for graded ones
        s = torch.as_tensor(r).view(-1, G).sum(1)
        return (s > 0) & (s < G)

    with pytest.raises(AssertionError):
        checks.check_group_filter(counts)
    ns = {"my_keep": counts}
    with pytest.raises(AssertionError, match=r"my_keep has not passed its check \(group filter\)"):
        checks.student_function(ns, "my_keep", lambda f: f(torch.zeros(4), 2), "group filter")

    def right(r, G):
        r = torch.as_tensor(r).view(-1, G)
        return r.max(1).values != r.min(1).values

    checks.check_group_filter(right)
    ns["my_keep"] = right
    assert checks.student_function(ns, "my_keep", lambda f: f(torch.zeros(4), 2), "group filter") is right

    def redefined(r, G):
        return right(r, G)

    ns["my_keep"] = redefined
    with pytest.raises(AssertionError, match="was redefined since its check passed"):
        checks.student_function(ns, "my_keep", lambda f: f(torch.zeros(4), 2), "group filter")
    ns["my_keep"] = stub  # still a stub: the lesson trains with the library's
    assert checks.student_function(ns, "my_keep", lambda f: f(torch.zeros(4), 2), "group filter") is None


@pytest.mark.parametrize("value, message", [("np.True_", "a boolean"), ("torch.tensor(False)", "a boolean"),
                                            ("float('inf')", "not a finite number"), ("float('nan')", "NaN")])
def test_the_check_helpers_refuse_booleans_and_non_finite_numbers_by_name(value, message):
    """Issue 51, item 5: np.True_ read as 1.000, torch.tensor(False) as 0.0, inf as a percentage."""
    import numpy as np  # noqa: F401 (for eval)
    import torch  # noqa: F401

    from grpo_lab.checks import check_prediction

    with pytest.raises(AssertionError, match=message):
        check_prediction(eval(value), 0.2, "ex", 0.05, fraction=True)


@pytest.mark.parametrize("n", [0, -3, True, 2.5])
def test_check_prediction_refuses_a_draw_count_that_is_not_a_whole_number_of_at_least_1(n):
    from grpo_lab.checks import check_prediction

    with pytest.raises(ValueError, match="n is the number of draws"):
        check_prediction(0.3, 0.2, "ex", 0.05, n=n, fraction=True)


def test_percentage_advice_only_where_the_value_can_be_a_percentage(capsys):
    """Issue 48, item 6: 1.6 was advised as 'write 0.016 for 1.6%'; 30 is a percentage, 1.6 cannot be a fraction."""
    from grpo_lab.checks import check_prediction

    with pytest.raises(AssertionError, match="write 0.3 for 30%"):
        check_prediction(30, 0.2, "ex", 0.05, fraction=True)
    with pytest.raises(AssertionError, match="1.6 cannot be this quantity"):
        check_prediction(1.6, 0.2, "ex", 0.05, fraction=True)
    check_prediction(0.25, 0.2, "ex", 0.05, n=100, fraction=True)
    assert "within" in capsys.readouterr().out
