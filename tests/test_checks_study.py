"""Issue 48: lesson 10's statistics exercises (10.2-10.5) and lesson 15's plan check, each against the stub, a
typical wrong answer (refused, with the hint that names it) and two differently written right answers (both pass)."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from grpo_lab import checks
from grpo_lab.stats import t_quantile

from exercise_helpers import assert_not_done
from test_study import toml_base


def stub(*a, **k):
    raise NotImplementedError("exercise NN.k: replace this line with your code")


# ----------------------------------------------------------------------------------------------- 10.2 Welch
def welch_min_df(a, b):  # grpo-lab's convention: the smaller sample's n - 1, a loop over the values
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    half = t_quantile(min(len(a), len(b)) - 1, 0.95) * math.sqrt(va / len(a) + vb / len(b))
    return ma - mb, ma - mb - half, ma - mb + half


def welch_scipy(a, b):  # scipy's, Welch-Satterthwaite degrees of freedom
    r = sps.ttest_ind(a, b, equal_var=False)
    ci = r.confidence_interval(0.95)
    return np.float32(np.mean(a) - np.mean(b)), ci.low, ci.high


def pooled(a, b):
    r = sps.ttest_ind(a, b, equal_var=True)
    ci = r.confidence_interval(0.95)
    return np.mean(a) - np.mean(b), ci.low, ci.high


def test_welch_check():
    assert_not_done(checks.check_welch, stub)
    with pytest.raises(AssertionError, match="case"):
        checks.check_welch(pooled)
    with pytest.raises(AssertionError, match="three numbers"):
        checks.check_welch(lambda a, b: np.mean(a) - np.mean(b))
    checks.check_welch(welch_min_df)
    checks.check_welch(welch_scipy)


# ----------------------------------------------------------------------------------------------- 10.3 Holm
def holm_loop(p, alpha):
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [False] * len(p)
    for rank, i in enumerate(order):
        if p[i] > alpha / (len(p) - rank):
            break
        out[i] = True
    return out


def holm_adjusted(p, alpha):  # adjusted p-values: running maximum of (m - i) p_(i), capped at 1
    p = np.asarray(p)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
    out = np.empty(len(p), dtype=bool)
    out[order] = adj <= alpha
    return out


def test_holm_check():
    assert_not_done(checks.check_holm, stub)
    with pytest.raises(AssertionError, match="Bonferroni"):
        checks.check_holm(lambda p, alpha: [x <= alpha / len(p) for x in p])
    with pytest.raises(AssertionError):
        checks.check_holm(lambda p, alpha: [x <= alpha for x in p])  # no correction at all
    checks.check_holm(holm_loop)
    checks.check_holm(holm_adjusted)


# ----------------------------------------------------------------------------------------------- 10.4 the bound
def bound_min_df(a, b, m):
    d, lo, hi = welch_min_df(a, b)
    half = (hi - d) / t_quantile(min(len(a), len(b)) - 1, 0.95)  # the standard error
    return d + t_quantile(min(len(a), len(b)) - 1, 1 - 0.05 / m) * half


def bound_scipy(a, b, m):
    return sps.ttest_ind(a, b, equal_var=False).confidence_interval(1 - 0.05 / m).high


def test_bound_check():
    assert_not_done(checks.check_bound, stub)
    with pytest.raises(AssertionError, match="1 - 0.05/m"):
        checks.check_bound(lambda a, b, m: welch_min_df(a, b)[2])  # the 95% interval's end, ignoring m
    checks.check_bound(bound_min_df)
    checks.check_bound(bound_scipy)


# ----------------------------------------------------------------------------------------------- 10.5 seeds
def seeds_t_loop(a, b, alpha):
    sd = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    d = abs(np.mean(a) - np.mean(b))
    n = 2
    while (sps.t.ppf(1 - alpha / 2, 2 * n - 2) + sps.t.ppf(0.8, 2 * n - 2)) * sd * math.sqrt(2 / n) > d:
        n += 1
    return n


def seeds_noncentral(a, b, alpha):  # exact power of the two-sample t-test, from the noncentral t
    sd = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    d = abs(np.mean(a) - np.mean(b)) / sd
    n = 2
    while True:
        df, nc = 2 * n - 2, d * math.sqrt(n / 2)
        crit = sps.t.ppf(1 - alpha / 2, df)
        if sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc) >= 0.8:
            return n
        n += 1


def seeds_normal(a, b, alpha):
    sd = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(0.8)
    return math.ceil(2 * (z * sd / abs(np.mean(a) - np.mean(b))) ** 2)


def test_seeds_needed_check():
    assert_not_done(checks.check_seeds_needed, stub)
    with pytest.raises(AssertionError, match="normal approximation"):
        checks.check_seeds_needed(seeds_normal)
    with pytest.raises(AssertionError, match="whole number"):
        checks.check_seeds_needed(lambda a, b, alpha: 6.0)
    checks.check_seeds_needed(seeds_t_loop)
    checks.check_seeds_needed(seeds_noncentral)


# ----------------------------------------------------------------------------------------------- 12.2 the plan
PLAN = """title = "t"
seeds = [0, 1, 2]

[base]
""" + toml_base(steps=4, eval_problems=16) + """{arms}
[measures]
primary = "pass@1"

[analysis]
correction = "holm"
{comparisons}"""

FOUR_ARMS = "".join(f'\n[arms.{m}-{r}]\nmethod = "{m}"\nlearning_rate = {lr}\n'
                    for m in ("grpo", "sign") for r, lr in (("low", "1e-4"), ("high", "1e-3")))
BY_RATE = "".join(f'\n[[comparisons]]\na = "sign-{r}"\nb = "grpo-{r}"\n' for r in ("low", "high"))
POOLED = '\n[[comparisons]]\na = "sign-high"\nb = "grpo-high"\n\n[[comparisons]]\na = "sign-low"\nb = "start"\n'


def test_the_lessons_own_plan_passes_the_check():
    from importlib import resources

    checks.check_study_plan((resources.files("grpo_lab") / "data" / "lesson15_plan.toml").read_text())


def test_study_plan_check():
    with pytest.raises(AssertionError, match="TOML string"):
        checks.check_study_plan(None)
    good = PLAN.format(arms=FOUR_ARMS, comparisons=BY_RATE)
    checks.check_study_plan(good)

    def my_plan():
        return good

    checks.check_study_plan(my_plan)  # the function, as the lesson's check cell passes it: the run cell uses it
    assert checks.student_function({"my_plan": my_plan}, "my_plan", lambda f: f(), "study plan") is my_plan
    assert_not_done(checks.check_study_plan, stub)
    with pytest.raises(AssertionError):
        checks.check_study_plan(lambda: good.replace("seeds = [0, 1, 2]", "seeds = [0, 1]"))
    with pytest.raises(AssertionError, match="has not passed its check"):  # a failed check leaves no pass behind
        checks.student_function({"my_plan": my_plan}, "my_plan", lambda f: f(), "study plan")
    checks.check_study_plan(PLAN.format(arms=FOUR_ARMS, comparisons=POOLED))  # another right set of comparisons
    with pytest.raises(AssertionError, match="refuses this plan.*primary"):
        checks.check_study_plan(good.replace('primary = "pass@1"', 'secondary = ["greedy"]'))
    with pytest.raises(AssertionError, match="refuses this plan"):
        checks.check_study_plan(good.replace('b = "grpo-low"', 'b = "dapo-low"'))
    with pytest.raises(AssertionError, match="refuses this plan"):
        checks.check_study_plan(good + '\n[[exploratory]]\na = "sign-low"\nb = "start"\nverdict = true\n')
    with pytest.raises(AssertionError, match="at least three seeds"):
        checks.check_study_plan(good.replace("seeds = [0, 1, 2]", "seeds = [0, 1]"))
    two_arms = "".join(f'\n[arms.{m}-low]\nmethod = "{m}"\nlearning_rate = 1e-4\n' for m in ("grpo", "sign"))
    with pytest.raises(AssertionError, match="two learning rates"):
        checks.check_study_plan(PLAN.format(arms=two_arms, comparisons=BY_RATE.split("\n\n[[")[0]))
    with pytest.raises(AssertionError, match="correct for multiplicity"):
        checks.check_study_plan(good.replace('correction = "holm"', 'correction = "none"'))
