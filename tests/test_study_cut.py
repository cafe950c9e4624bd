"""The evaluation's cut share as a study measure ("easy cut", issue 82: study 7's format-or-skill reading): read
from an evaluation on the plan's task with a start error that never understates its sampling noise."""

import math

import numpy as np
import pytest

from grpo_lab.study.measures import PlanError, parse_measure

EASY, HARD = "gym:easy", "gym:hard"


def evaluation(cut, draws=200, n=4, groups=None):
    ev = {"n_samples": n, "correct": [1] * draws, "sampling": {"truncated": cut}}
    if groups is not None:
        ev["sampling"]["problem_of_draw"] = groups
    return ev


def test_a_plan_reads_the_cut_share_on_its_task_and_lower_is_better():
    m = parse_measure("easy cut", {"easy": EASY}, "plan.toml")
    assert m.better == "lower" and m.metric.fraction and m.metric.source == "eval"
    start = {**evaluation(0.51), "extra": {EASY: evaluation(0.434)}}
    value, se = m.of_start(start, HARD)
    assert value == 0.434 and se == pytest.approx(math.sqrt(0.434 * 0.566 / 800))
    result = {"config": {"task": HARD}, "eval": {**evaluation(0.5), "extra": {EASY: evaluation(0.01)}}}
    assert m.of(result) == 0.01  # reversed: the other task's share is never read in its place
    with pytest.raises(PlanError, match="unknown metric 'cuts'"):
        parse_measure("easy cuts", {"easy": EASY}, "plan.toml")


def test_an_evaluation_without_the_share_or_with_a_damaged_one_is_named():
    m = parse_measure("cut", {}, "plan.toml")
    with pytest.raises(KeyError, match="no share of completions cut"):
        m.of({"config": {"task": EASY}, "eval": {"n_samples": 4, "correct": [1], "sampling": {}}})
    for bad in (1.5, float("nan"), True, "0.2"):
        with pytest.raises(ValueError, match="not a share"):
            m.of({"config": {"task": EASY}, "eval": evaluation(bad)})


@pytest.mark.parametrize("shared", [False, True])
def test_the_starts_error_is_never_below_the_sampling_noise_of_its_problems(shared):
    """Problems that differ in how often they run long: the cut share of many re-samplings of one fixed problem set
    spreads by no more than the error the measure gives (Jensen's bound; the 1/4 bound when draws share samples)."""
    rng = np.random.default_rng(0)
    m = parse_measure("cut", {}, "plan.toml")
    q = rng.beta(0.4, 0.5, 120)  # per problem, its chance of a cut: far from one shared rate
    groups = np.repeat(np.arange(120), rng.integers(1, 4, 120)) if shared else np.arange(120)
    n = 4
    shares = []
    for _ in range(2000):
        cut = rng.random((120, n)) < q[:, None]  # each problem sampled once; its draws share the samples
        shares.append(cut[groups].mean())
    truth = float(np.std(shares))
    given = [m.metric.start_se(evaluation(s, draws=groups.size, n=n), 0, groups if shared else None)
             for s in shares[:50]]
    assert min(given) >= truth * 0.97, (min(given), truth)  # 0.97: the spread's own noise over 2,000 re-samplings
    assert np.mean(given) <= truth * (2.5 if shared else 1.5)  # an upper bound, not a useless one


def test_a_problem_list_of_the_wrong_length_is_refused_by_name():
    """The cut share's error counts draws by problem: a problem list that is not one entry per draw is refused, not
    read as some other grouping (the same check pass@1's error makes)."""
    m = parse_measure("cut", {}, "plan.toml")
    ev = evaluation(0.3, draws=6)
    assert m.metric.start_se(ev, 0, [0, 0, 1, 1, 2, 2]) == pytest.approx(math.sqrt(12 / 16) / 6)
    for bad in ([0, 0, 1, 1, 2], [0, 0, 1, 1, 2, 2, 3], [[0, 0, 1], [1, 2, 2]]):
        with pytest.raises(ValueError, match=r"draws' problems .* do not match the evaluation's draws \(6\)"):
            m.metric.start_se(ev, 0, bad)
