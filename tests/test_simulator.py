import numpy as np
import pytest
import torch

from grpo_lab.simulator import (SimConfig, expected_pass_at_k, logits_for, policy_gradient, sample_success_rates,
                                simulate)
from grpo_lab.stats import mean_ci


def test_logits_reproduce_the_initial_success_rates():
    p0 = np.array([0.001, 0.3, 0.9])
    np.testing.assert_allclose(torch.softmax(logits_for(p0, 8), 1)[:, 0].numpy(), p0, rtol=1e-9)


def test_policy_gradient_matches_autograd():
    gen = torch.Generator().manual_seed(1)
    z = torch.randn(7, 5, generator=gen, dtype=torch.float64)
    a = torch.randint(0, 5, (7, 3), generator=gen)
    adv = torch.randn(7, 3, generator=gen, dtype=torch.float64)
    zz = z.clone().requires_grad_(True)
    (torch.log_softmax(zz, 1).gather(1, a) * adv).sum().div(3).backward()
    torch.testing.assert_close(policy_gradient(z, a, adv), zz.grad)


def test_group_centred_estimators_do_not_move_fully_degenerate_prompts():
    p0 = np.full(50, 1e-9)  # never solved: every group all-fail, every step
    for method in ("grpo", "drgrpo", "rloo", "dapo"):
        r = simulate(p0, SimConfig(method=method, G=4, steps=5))
        assert np.all(r.update_norm == 0), method
        np.testing.assert_allclose(r.p_final, r.p_initial)
    sign = simulate(p0, SimConfig(method="sign", G=4, steps=5))
    assert np.all(sign.update_norm > 0)  # Sign still updates (it pushes the sampled wrong answers down)


def test_simulate_is_seeded_and_learns():
    p0 = sample_success_rates("bimodal", 500, seed=0)
    a = simulate(p0, SimConfig(method="grpo", steps=30, seed=3))
    b = simulate(p0, SimConfig(method="grpo", steps=30, seed=3))
    np.testing.assert_array_equal(a.p_final, b.p_final)
    assert a.success[-1] > a.success[0]
    m = simulate(p0, SimConfig(method="sign", steps=10, match_norm=0.25))
    np.testing.assert_allclose(m.update_norm, 0.25)


def test_populations_and_helpers():
    p = sample_success_rates("bimodal", 10_000, seed=0, zero_frac=0.3, p_floor=0.002)
    assert abs((p == 0.002).mean() - 0.3) < 0.02
    with pytest.raises(ValueError, match="unknown population"):
        sample_success_rates("gaussian", 10)
    with pytest.raises(ValueError, match="zero_frac"):
        sample_success_rates("bimodal", 10, zero_frac=2)
    assert expected_pass_at_k([0.5, 0.0], 2) == pytest.approx(0.375)
    m, lo, hi = mean_ci([1.0, 2.0, 3.0])
    assert m == 2 and lo == pytest.approx(2 - 4.302653 / np.sqrt(3)) and hi > m  # t(0.975, 2), exact to 6 places
