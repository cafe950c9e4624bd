"""Issue 19: a check never fails a right answer. Checks of measured quantities take their tolerance from the
quantity's own sampling noise; here each is run on the reference and on other correct approaches a good
student would take, at several seeds, and on a typical wrong one."""

import pytest
import torch

from grpo_lab import checks
from grpo_lab.advantages import sign

from exercise_helpers import assert_not_done


def inverse_cdf_student(logits, G, n_groups, generator):
    """Correct, written differently: inverse-CDF sampling with torch.rand, the Sign loss by hand."""
    z = logits.detach().clone().requires_grad_(True)
    logp = torch.log_softmax(z, 0)
    cdf = torch.cumsum(logp.exp().detach(), 0)
    u = torch.rand(n_groups, G, generator=generator, dtype=logits.dtype)
    actions = torch.searchsorted(cdf, u * cdf[-1]).clamp(max=len(cdf) - 1)
    correct = actions == 0
    all_fail = ~correct.any(1)
    adv = correct.to(logits.dtype) * 2 - 1  # Sign: 2r - 1
    per_group = -(adv * logp[actions]).mean(1)
    (per_group * all_fail).sum().div(n_groups).backward()
    return z.grad


def exact_student(logits, G, n_groups, generator):
    """Correct with no noise at all: the expectation computed in closed form (-(1/G) grad pass@G)."""
    return -checks.pass_at_G_gradient(logits, G) / G


def forgot_the_mask(logits, G, n_groups, generator):
    """Wrong: every group's Sign loss, not only the all-fail groups'."""
    z = logits.detach().clone().requires_grad_(True)
    logp = torch.log_softmax(z, 0)
    actions = torch.multinomial(logp.exp().detach(), n_groups * G, replacement=True, generator=generator)
    actions = actions.view(n_groups, G)
    rewards = (actions == 0).to(logits.dtype)
    (-(sign(rewards, G) * logp[actions]).mean(1)).mean().backward()
    return z.grad


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("fn", [checks.failure_descent_mc, inverse_cdf_student, exact_student],
                         ids=["reference", "inverse-cdf", "exact"])
def test_failure_descent_passes_every_correct_approach(fn, seed, capsys):
    checks.check_failure_descent(fn, G=4, n_groups=50_000, seed=seed)
    assert "✓ failure descent" in capsys.readouterr().out


def test_failure_descent_still_catches_a_wrong_one():
    with pytest.raises(AssertionError, match="Monte Carlo noise of 50000 groups allows"):
        checks.check_failure_descent(forgot_the_mask, G=4, n_groups=50_000)


@pytest.mark.parametrize("approach", ["std > 0", "max != min", "any differs from first", "set size"])
def test_group_filter_passes_every_correct_approach(approach, capsys):
    import numpy as np

    fns = {"std > 0": lambda r, G: torch.as_tensor(r).view(-1, G).std(1) > 0,
           "max != min": lambda r, G: torch.as_tensor(r).view(-1, G).amax(1) != torch.as_tensor(r).view(-1, G).amin(1),
           "any differs from first": lambda r, G: (torch.as_tensor(r).view(-1, G) !=
                                                   torch.as_tensor(r).view(-1, G)[:, :1]).any(1),
           "set size": lambda r, G: [len(set(g)) > 1 for g in np.asarray(r).reshape(-1, G).tolist()]}
    checks.check_group_filter(fns[approach])
    assert "✓ group filter" in capsys.readouterr().out


def test_group_filter_names_the_binary_only_shortcut():
    with pytest.raises(AssertionError, match="counting right answers works for 0/1 rewards only"):
        checks.check_group_filter(lambda r, G: (torch.as_tensor(r).view(-1, G).sum(1) > 0)
                                  & (torch.as_tensor(r).view(-1, G).sum(1) < G))


@pytest.mark.parametrize("wrong", [lambda r, G: r.std() > 0, lambda r, G: bool(r.std() > 0), lambda r, G: 1.0],
                         ids=["tensor bool", "python bool", "a number"])
def test_group_filter_names_the_shape_when_one_answer_comes_back_for_the_batch(wrong):
    """Issue 27: ``rewards.std() > 0`` is one verdict for the whole batch; the check says what shape it expects
    instead of failing inside checks.py with a TypeError."""
    with pytest.raises(AssertionError, match=r"one verdict per group, a sequence of 4 bools \(shape \(4,\)") as e:
        checks.check_group_filter(wrong)
    assert "for the whole batch" in str(e.value)


def test_group_filter_still_names_a_wrong_count():
    with pytest.raises(AssertionError, match=r"expected one verdict per group \(4\), got 16"):
        checks.check_group_filter(lambda r, G: [True] * len(r))


def test_a_run_that_differs_is_named_by_its_first_step_and_key():
    """Issue 27: a failed step-by-step comparison says where, not two whole log rows of 1,500 characters."""
    ref = [{"step": 1, "reward": 0.5, "grad_norm": 1.0, "other": "x" * 1500},
           {"step": 2, "reward": 0.25, "grad_norm": 2.0, "other": "x" * 1500}]
    assert checks.same_run([dict(r) for r in ref], ref) == 2
    bad = [dict(ref[0]), dict(ref[1], grad_norm=2.5)]
    with pytest.raises(AssertionError) as e:
        checks.same_run(bad, ref)
    assert str(e.value).startswith("your run differs first at step 2, grad_norm: yours 2.5, the library's 2.0")
    assert len(str(e.value)) < 200
    with pytest.raises(AssertionError, match="step 1, reward: yours 0.0"):
        checks.same_run([dict(ref[0], reward=0.0), ref[1]], ref)
    with pytest.raises(AssertionError, match="logged 1 steps, the library's 2"):
        checks.same_run(ref[:1], ref)
    assert checks.same_run([dict(ref[0], grad_norm=1.0015), ref[1]], ref) == 2  # within 1e-3 x (1 + 1.0)


def test_the_lucky_advantage_check_passes_every_correct_approach_and_names_the_first_wrong_case():
    """Lesson 14's exercise: a closed form, a loop and the library (vectorised) pass, with numbers of any real type;
    the stub, the population std (numpy's default) and a swapped pair fail, each naming its case."""
    import math

    import numpy as np
    import torch

    from grpo_lab import checks, compute_advantages

    def closed(G, m):
        return {"grpo": ((G - 1) / math.sqrt(G), -1 / math.sqrt(G)), "drgrpo": (1 - 1 / G, -1 / G),
                "rloo": (1.0, -1 / (G - 1)), "sign": (1, -1), "maxrl": (G - 1, -1)}[m]

    def loop(G, m):
        r = [1.0] + [0.0] * (G - 1)
        mean = sum(r) / G
        if m == "sign":
            return 2 * r[0] - 1, 2 * r[1] - 1
        if m == "rloo":
            return r[0] - sum(r[1:]) / (G - 1), r[1] - (sum(r) - r[1]) / (G - 1)
        if m == "maxrl":
            return (r[0] - mean) / mean, (r[1] - mean) / mean
        sd = (sum((x - mean) ** 2 for x in r) / (G - 1)) ** 0.5 if m == "grpo" else 1.0
        return (r[0] - mean) / sd, (r[1] - mean) / sd

    def vectorised(G, m):
        r = torch.zeros(G)
        r[0] = 1
        a = compute_advantages(r, G, m)
        return np.float32(a[0]), a[1]  # a numpy scalar and a 0-d tensor: right numbers in other types

    for fn in (closed, loop, vectorised):
        checks.check_lucky_advantage(fn)

    def stub(G, m):
        raise NotImplementedError("exercise 14.1: replace this line with your code")

    def population_std(G, m):
        if m != "grpo":
            return closed(G, m)
        r = np.zeros(G)
        r[0] = 1
        return (r[0] - r.mean()) / r.std(), (r[1] - r.mean()) / r.std()

    assert_not_done(checks.check_lucky_advantage, stub)
    with pytest.raises(AssertionError, match=r"under grpo with G=2, the lucky success should get 0.707; .* gave 1 "
                                             r"\(that is what the population std gives"):
        checks.check_lucky_advantage(population_std)
    with pytest.raises(AssertionError, match="under grpo with G=2, the lucky success should get 0.707; your function "
                                             "gave -0.7071"):
        checks.check_lucky_advantage(lambda G, m: tuple(reversed(closed(G, m))))
    with pytest.raises(AssertionError, match="return two numbers"):
        checks.check_lucky_advantage(lambda G, m: 1.5)
