import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_lab.starvation import collapse_rate, degeneracy_rate, jensen_gap, signal_kept, success_rates
import math
import grpo_lab as gl


def test_degeneracy_rate_closed_form_and_types():
    assert degeneracy_rate(0.5, 4) == pytest.approx(2 * 0.5**4)
    assert degeneracy_rate(0.0, 8) == 1.0 and degeneracy_rate(1.0, 3) == 1.0
    grid = degeneracy_rate(np.linspace(0, 1, 5)[:, None], np.array([2, 4, 8])[None, :])
    assert isinstance(grid, np.ndarray) and grid.shape == (5, 3)
    assert grid[2, 0] == pytest.approx(0.5)  # p = 0.5, G = 2
    t = degeneracy_rate(torch.tensor([0.2, 0.7]), 3)
    assert isinstance(t, torch.Tensor)
    torch.testing.assert_close(t, torch.tensor([0.2**3 + 0.8**3, 0.7**3 + 0.3**3]))


def test_degeneracy_rate_against_monte_carlo():
    rng = np.random.default_rng(0)
    for p, G in [(0.1, 4), (0.5, 2), (0.8, 8)]:
        draws = rng.random((200_000, G)) < p
        mc = (draws.all(1) | ~draws.any(1)).mean()
        se = np.sqrt(mc * (1 - mc) / 200_000)
        assert abs(mc - degeneracy_rate(p, G)) < 5 * se


def test_degeneracy_rate_bad_input():
    with pytest.raises(ValueError, match="probabilities in \\[0, 1\\]"):
        degeneracy_rate(1.2, 4)
    with pytest.raises(ValueError, match="NaN"):
        degeneracy_rate(float("nan"), 4)
    with pytest.raises(ValueError, match="G must be >= 1"):
        degeneracy_rate(0.5, 0)
    with pytest.raises(TypeError, match="G must be an integer"):
        degeneracy_rate(0.5, 2.5)


def test_jensen_gap_paper_regime_by_hand():
    # 57.5% of prompts at p = 0 and the rest at p = 0.5: the hand computation
    p = np.array([0.0] * 575 + [0.5] * 425)
    j = jensen_gap(p, 2)
    assert j.real == pytest.approx(0.575 + 0.425 * 0.5)
    pbar = 0.425 * 0.5
    assert j.iid == pytest.approx(pbar**2 + (1 - pbar) ** 2)
    assert j.gap == pytest.approx(j.real - j.iid)
    assert j.real_all_fail + j.real_all_pass == pytest.approx(j.real)
    assert j.iid_all_fail + j.iid_all_pass == pytest.approx(j.iid)
    assert j.mean_p == pytest.approx(pbar) and j.G == 2


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=50), st.integers(1, 16))
def test_jensen_gap_is_nonnegative(p, G):
    j = jensen_gap(p, G)
    assert j.gap >= -1e-12
    if G == 1:
        assert j.real == pytest.approx(1.0)
    if len(set(p)) == 1:
        assert j.gap == pytest.approx(0.0, abs=1e-12)


def test_collapse_rate_counts():
    r = torch.tensor([[0.0] * 4, [0.0] * 4, [1.0] * 4, [1.0, 0, 1, 0], [0.5] * 4])
    s = collapse_rate(r)
    assert (s.all_fail, s.all_pass, s.mixed, s.other_homogeneous, s.n_groups) == (2, 1, 1, 1, 5)
    assert s.acr == pytest.approx(4 / 5)
    assert s.frac_all_fail == pytest.approx(0.4)
    assert s.as_dict()["frac_all_pass"] == pytest.approx(0.2)
    flat = collapse_rate(r.reshape(-1), 4)
    assert flat == s
    # tolerance: a tiny spread counts as collapsed only under tol
    assert collapse_rate(torch.tensor([0.0, 1e-8]), 2).acr == 1.0
    assert collapse_rate(torch.tensor([0.0, 1e-3]), 2).acr == 0.0
    # a group with one scored completion is collapsed
    assert collapse_rate(torch.tensor([1.0, float("nan"), 1.0, 0.0]), 2).acr == 0.5


def test_success_rates():
    r = torch.tensor([1.0, 0, 0, 0, 1, 1, 1, float("nan")])
    torch.testing.assert_close(success_rates(r, 4), torch.tensor([0.25, 1.0]))


def test_signal_kept_shows_starvation():
    r = torch.tensor([[0.0] * 4] * 6 + [[1.0] * 4] + [[1.0, 0, 0, 0]])
    s = signal_kept(r, methods=("grpo", "drgrpo", "rloo", "sign", "dapo", "avspo", "avspo_code"))
    assert s["grpo"].frac_nonzero == pytest.approx(1 / 8)
    assert s["grpo"].frac_groups_with_signal == pytest.approx(1 / 8)
    assert s["dapo"].frac_nonzero == pytest.approx(1 / 8)
    assert s["sign"].frac_nonzero == 1.0 and s["sign"].mean_abs == 1.0
    assert s["avspo"].frac_nonzero == 1.0  # ACR 7/8 > 0.5: every group gets virtual samples
    assert s["avspo_code"].frac_nonzero == 1.0
    assert s["drgrpo"].mean_abs == pytest.approx((0.75 + 3 * 0.25) / 32)
    off = signal_kept(r, methods=("avspo",), avspo={"threshold": 0.95})
    assert off["avspo"].frac_nonzero == pytest.approx(1 / 8)


@pytest.mark.parametrize("tol", [0, -1.0, math.nan])
def test_collapse_rate_refuses_a_tolerance_that_is_not_positive(tol):
    with pytest.raises(ValueError, match="tol must be"):
        gl.collapse_rate(torch.tensor([0.0, 1, 0, 0]), 4, tol=tol)


def test_signal_kept_names_a_misspelt_option():
    with pytest.raises(ValueError, match="'avpso', which is not among the methods"):
        gl.signal_kept(torch.tensor([0.0, 1, 0, 0]), 4, avpso={"threshold": 0.3})


def test_batch_metrics_name_the_largest_advantage_and_the_share_of_near_degenerate_groups():
    """Issue 39: one lucky success among G - 1 failures carries the update's largest advantage under GRPO."""
    import torch

    from grpo_lab import compute_advantages
    from grpo_lab.starvation import batch_metrics

    r = torch.tensor([0.0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1])  # all-fail, one success, 2 of 4, all-pass
    adv = compute_advantages(r, 4, "grpo")
    m = batch_metrics(r, adv, 4)
    assert m["max_advantage"] == pytest.approx(1.5, abs=1e-3) and m["max_advantage_group"] == 1
    assert m["max_advantage_successes"] == 1
    weight = adv.abs().reshape(4, 4).sum(dim=1)
    assert m["near_degenerate_share"] == pytest.approx(float(weight[1] / weight.sum()))  # 3.0 of 3.0 + 3.46
    m = batch_metrics(r, compute_advantages(r, 4, "drgrpo"), 4)
    assert m["max_advantage"] == pytest.approx(0.75) and m["near_degenerate_share"] == pytest.approx(1.5 / 3.5)
    assert batch_metrics(torch.zeros(8), torch.zeros(8), 4)["near_degenerate_share"] is None  # no signal at all
    graded = batch_metrics(torch.tensor([0.5, 0.2, 0.9, 0.1]), torch.tensor([0.1, -0.2, 0.3, -0.2]), 2)
    assert graded["near_degenerate_share"] is None and graded["max_advantage_successes"] is None


def test_option_checks_of_the_starvation_helpers_name_the_option():
    """Issue 38 (the smaller probes): a NaN or infinite failure level, failure and success levels that cannot be
    told apart, a negative or NaN atol and a first-steps count below 1 were accepted (or ended in a bare
    ZeroDivisionError); each is now refused by name."""
    import math

    import pytest
    import torch

    from grpo_lab.starvation import batch_metrics, collapse_rate, filter_groups, signal_kept, summarize_rows

    r = torch.tensor([1.0, 0, 0, 0, 1, 1, 1, 1])
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="fail"):
            collapse_rate(r, 4, fail=bad)
        with pytest.raises(ValueError, match="success"):
            filter_groups(r, 4, success=bad)
    with pytest.raises(TypeError, match="fail"):
        collapse_rate(r, 4, fail="0")
    with pytest.raises(ValueError, match="must differ"):
        filter_groups(r, 4, fail=1.0, success=1.0)
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="atol"):
            signal_kept(r, 4, atol=bad)
        with pytest.raises(ValueError, match="atol"):
            batch_metrics(r, torch.zeros(8), 4, atol=bad)
    with pytest.raises(ValueError, match="first"):
        summarize_rows([{"step": 0}], first=0)
    assert collapse_rate(r, 4).acr == 0.5  # the defaults still work


def test_dynamic_sampling_rounds_refuses_a_boolean():
    """Issue 51, item 8: D=True was read as a probability of 1."""
    from grpo_lab.starvation import dynamic_sampling_rounds

    with pytest.raises(ValueError, match="the boolean True"):
        dynamic_sampling_rounds(True, 4)
