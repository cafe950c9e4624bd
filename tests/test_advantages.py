"""Every estimator against independent closed forms, hand-worked groups, and bad input."""

import math
import statistics

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_lab import advantages as A
from grpo_lab.advantages import ESTIMATORS, AVSPOController, compute_advantages
import numpy as np
import grpo_lab as gl

EPS = 1e-4


def group_of(k, G):
    """k successes then G - k failures."""
    return torch.tensor([1.0] * k + [0.0] * (G - k), dtype=torch.float64)


def compositions():
    for G in range(2, 9):
        for k in range(G + 1):
            yield G, k


# ---------------------------------------------------------------- closed forms, every k of G


@pytest.mark.parametrize("G,k", list(compositions()))
def test_group_centred_estimators_closed_form(G, k):
    r = group_of(k, G)
    adv = {m: compute_advantages(r, G, m) for m in ("grpo", "drgrpo", "rloo", "sign", "dapo")}
    if k in (0, G):
        for m in ("grpo", "drgrpo", "rloo", "dapo"):
            assert torch.equal(adv[m], torch.zeros(G, dtype=torch.float64)), m
    else:
        s = math.sqrt(k * (G - k) / (G * (G - 1)))  # Bessel std of k ones and G-k zeros
        exp_grpo = [(1 - k / G) / (s + EPS)] * k + [(-k / G) / (s + EPS)] * (G - k)
        exp_dr = [1 - k / G] * k + [-k / G] * (G - k)
        exp_rloo = [(G - k) / (G - 1)] * k + [-k / (G - 1)] * (G - k)
        torch.testing.assert_close(adv["grpo"], torch.tensor(exp_grpo, dtype=torch.float64))
        torch.testing.assert_close(adv["dapo"], torch.tensor(exp_grpo, dtype=torch.float64))
        torch.testing.assert_close(adv["drgrpo"], torch.tensor(exp_dr, dtype=torch.float64))
        torch.testing.assert_close(adv["rloo"], torch.tensor(exp_rloo, dtype=torch.float64))
    assert adv["sign"].tolist() == [1.0] * k + [-1.0] * (G - k)
    keep = A.dapo_keep_mask(r, G)
    assert keep.tolist() == [0 < k < G] * G


@pytest.mark.parametrize("G,k", list(compositions()))
def test_avspo_paper_closed_form(G, k):
    """Single-group batch: ACR is 1 for a homogeneous group, so K = G virtual rewards."""
    r = group_of(k, G)
    adv, info = A.avspo(r, G, threshold=0.5, return_info=True)
    if 0 < k < G:
        assert info["acr"] == 0 and not info["active"]
        torch.testing.assert_close(adv, A.grpo(r, G))
        return
    assert info == {"acr": 1.0, "active": True, "k": G}
    virtual = [1 - j / G for j in range(G)]  # r_max = 1 (reward scale), k = 1..K
    pool = [float(k // G)] * G + virtual
    expected = (float(k // G) - statistics.mean(pool)) / (statistics.stdev(pool) + EPS)
    torch.testing.assert_close(adv, torch.full((G,), expected, dtype=torch.float64))
    if k == 0:
        assert expected < 0  # all wrong: every sampled answer is pushed down
    else:
        assert expected > 0


@pytest.mark.parametrize("G,k", list(compositions()))
def test_avspo_code_closed_form(G, k):
    r = group_of(k, G)
    adv = A.avspo_code(r, G)
    if 0 < k < G:
        torch.testing.assert_close(adv, A.grpo(r, G))
        return
    level = float(k // G)
    pool = [level] * G + [1 - level]
    expected = (level - statistics.mean(pool)) / (statistics.stdev(pool) + EPS)
    torch.testing.assert_close(adv, torch.full((G,), expected, dtype=torch.float64))


def test_avspo_code_hand_worked_g4():
    adv = A.avspo_code(torch.zeros(4), 4)
    # five values {0,0,0,0,1}: mean 0.2, Bessel std sqrt(0.2)
    torch.testing.assert_close(adv, torch.full((4,), -0.2 / (math.sqrt(0.2) + EPS)))


def test_avspo_r_max_readings_on_all_wrong_groups():
    """Reading r_max as the group's own maximum leaves all-wrong groups at zero advantage."""
    r = torch.tensor([[0.0] * 4, [0.0] * 4, [1.0, 0, 0, 0], [1.0] * 4])
    group_reading = A.avspo(r, 4, r_max="group")
    scale_reading = A.avspo(r, 4, r_max="scale")
    assert torch.equal(group_reading[:2], torch.zeros(2, 4))  # no signal from all-fail groups
    assert (scale_reading[:2] < 0).all()  # the scale reading pushes them down
    # both readings agree where r_max is 1 anyway (all-pass) and on mixed groups
    torch.testing.assert_close(group_reading[2:], scale_reading[2:])
    assert (scale_reading[3] > 0).all()
    # ACR = 3/4 -> K = ceil(4 * sqrt(0.75)) = 4; the value under the scale reading
    pool = [0.0] * 4 + [1.0, 0.75, 0.5, 0.25]
    expected = (0 - statistics.mean(pool)) / (statistics.stdev(pool) + EPS)
    assert scale_reading[0, 0].item() == pytest.approx(expected, rel=1e-5)
    numeric = A.avspo(r, 4, r_max=1.0)
    torch.testing.assert_close(numeric, scale_reading)


def test_avspo_gate_and_num_virtual():
    r = torch.tensor([[0.0] * 4, [1.0, 0, 0, 0], [1.0, 1, 0, 0], [0.0, 1, 0, 1]])  # ACR 0.25
    assert torch.equal(A.avspo(r, 4, threshold=0.5), A.grpo(r, 4))  # below the threshold: plain GRPO
    adv, info = A.avspo(r, 4, threshold=0.2, return_info=True)
    assert info["active"] and info["k"] == math.ceil(4 * 0.25**0.5) == 2
    assert (adv[0] < 0).all()
    assert A.avspo_num_virtual(0.0, 8) == 1
    assert A.avspo_num_virtual(1.0, 8) == 8
    assert A.avspo_num_virtual(0.25, 8, alpha=0.5) == 4
    with pytest.raises(ValueError, match="acr"):
        A.avspo_num_virtual(1.5, 8)
    with pytest.raises(ValueError, match="r_max"):
        A.avspo(torch.zeros(4), 4, r_max="biggest")


def test_avspo_controller_state_is_explicit():
    ctl = AVSPOController(threshold=0.5, ema=0.5)
    r = torch.tensor([0.0] * 8 + [1.0, 0, 0, 0])  # ACR 2/3
    compute_advantages(r, 4, "avspo", controller=ctl)
    assert ctl.threshold == pytest.approx(0.5 * 0.5 + 0.5 * 2 / 3)
    assert ctl.history[0][:3] == (pytest.approx(2 / 3), 0.5, True)
    frozen = AVSPOController(ema=0.0)
    frozen(r, 4)
    assert frozen.threshold == 0.5
    with pytest.raises(ValueError, match="only for method='avspo'"):
        compute_advantages(r, 4, "grpo", controller=ctl)


def test_grpo_matches_trl_formula_and_options():
    r = torch.tensor([1.0, 0.0, 0.0, 2.0])
    std = statistics.stdev(r.tolist())
    torch.testing.assert_close(A.grpo(r, 4), (r - r.mean()) / (std + 1e-4))
    pstd = statistics.pstdev(r.tolist())
    torch.testing.assert_close(A.grpo(r, 4, eps=1e-12, unbiased=False), (r - r.mean()) / pstd)


def test_one_lucky_success_gets_a_huge_advantage():
    """The std-normalisation danger of notebook 03: (G-1)/sqrt(G) for the lone success."""
    for G in (4, 8, 16, 64):
        adv = A.grpo(group_of(1, G), G)
        assert adv[0].item() == pytest.approx((G - 1) / math.sqrt(G), rel=1e-3)


# ---------------------------------------------------------------- layouts and properties

rewards_2d = st.integers(1, 6).flatmap(
    lambda B: st.integers(2, 8).flatmap(
        lambda G: st.lists(st.sampled_from([0.0, 1.0]), min_size=B * G, max_size=B * G).map(
            lambda xs: torch.tensor(xs, dtype=torch.float64).reshape(B, G)
        )
    )
)
real_2d = st.integers(1, 5).flatmap(
    lambda B: st.integers(2, 8).flatmap(
        lambda G: st.lists(st.floats(-10, 10, allow_nan=False), min_size=B * G, max_size=B * G).map(
            lambda xs: torch.tensor(xs, dtype=torch.float64).reshape(B, G)
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(rewards_2d, st.sampled_from(ESTIMATORS))
def test_flat_and_matrix_layouts_agree_and_are_finite(r, method):
    B, G = r.shape
    out2d = compute_advantages(r, G, method)
    flat = compute_advantages(r.reshape(-1), G, method)
    assert out2d.shape == r.shape and flat.shape == (B * G,)
    assert out2d.dtype == r.dtype
    torch.testing.assert_close(out2d.reshape(-1), flat)
    assert torch.isfinite(out2d).all()
    # the [B, G] layout infers G when group_size is None
    torch.testing.assert_close(compute_advantages(r, None, method), out2d)


@settings(max_examples=60, deadline=None)
@given(real_2d, st.floats(-5, 5), st.floats(0.5, 5))
def test_grpo_shift_and_scale_invariant_per_group(r, shift, scale):
    G = r.shape[1]
    base = A.grpo(r, G, eps=1e-12)
    moved = A.grpo(r * scale + shift, G, eps=1e-12)
    ok = r.std(dim=1) > 1e-3  # exact invariance needs eps -> 0 (eps = 0 itself is refused) and a non-degenerate group
    torch.testing.assert_close(moved[ok], base[ok], rtol=1e-6, atol=1e-6)
    # Dr.GRPO and RLOO are shift-invariant and scale-equivariant
    torch.testing.assert_close(A.drgrpo(r * scale + shift, G), A.drgrpo(r, G) * scale, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(A.rloo(r * scale + shift, G), A.rloo(r, G) * scale, rtol=1e-6, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(rewards_2d)
def test_sign_is_not_shift_invariant_and_not_zero_sum(r):
    G = r.shape[1]
    adv = A.sign(r, G)
    assert torch.equal(adv, 2 * r - 1)
    # shifted rewards are no longer 0/1: refused, not silently accepted
    with pytest.raises(ValueError, match="0/1"):
        A.sign(r + 0.5, G)
    homog = (r == r[:, :1]).all(dim=1)
    assert (adv[homog].sum(dim=1).abs() == G).all()  # a degenerate group still carries signal
    for m in ("grpo", "drgrpo", "rloo", "dapo"):  # the group-centred ones are zero-sum
        torch.testing.assert_close(compute_advantages(r, G, m).sum(dim=1), torch.zeros(r.shape[0], dtype=r.dtype),
                                   atol=1e-9, rtol=0)


@settings(max_examples=40, deadline=None)
@given(real_2d)
def test_degenerate_groups_never_nan(r):
    r = r.clone()
    r[0] = r[0, 0]  # force one zero-variance group at an arbitrary level
    for m in ESTIMATORS:
        if m == "sign":
            continue
        adv = compute_advantages(r.abs() if m == "maxrl" else r, r.shape[1], m)  # maxrl: rewards >= 0
        assert torch.isfinite(adv).all(), m
    # equal rewards give 0 up to the rounding of their mean (exactly 0 for 0/1 rewards)
    torch.testing.assert_close(A.grpo(r, r.shape[1])[0], torch.zeros(r.shape[1], dtype=r.dtype), atol=1e-9, rtol=0)


# ---------------------------------------------------------------- NaN policy


def test_nan_is_unscored_like_trl():
    r = torch.tensor([1.0, float("nan"), 0.0, 0.0])
    adv = A.grpo(r, 4)
    assert adv[1] == 0  # unscored: advantage 0
    scored = torch.tensor([1.0, 0.0, 0.0])
    torch.testing.assert_close(adv[[0, 2, 3]], A.grpo(scored, 3))  # statistics over the scored ones
    torch.testing.assert_close(A.rloo(r, 4)[[0, 2, 3]], A.rloo(scored, 3))
    torch.testing.assert_close(A.drgrpo(r, 4)[[0, 2, 3]], A.drgrpo(scored, 3))
    assert A.sign(r, 4).tolist() == [1.0, 0.0, -1.0, -1.0]
    assert A.dapo_keep_mask(r, 4).tolist() == [True, False, True, True]
    for m in ESTIMATORS:
        out = compute_advantages(r, 4, m)
        assert torch.isfinite(out).all() and out[1] == 0, m
    # a group with one scored completion, or none, carries no signal
    lonely = torch.tensor([1.0, float("nan"), float("nan"), float("nan")] + [float("nan")] * 4)
    for m in ("grpo", "drgrpo", "rloo", "dapo"):
        assert torch.equal(compute_advantages(lonely, 4, m), torch.zeros(8)), m
    # ...except against a virtual sample: the lone scored 1 meets a virtual 0
    expected = (1 - 0.5) / (statistics.stdev([1.0, 0.0]) + EPS)
    assert compute_advantages(lonely, 4, "avspo_code")[0].item() == pytest.approx(expected, rel=1e-6)


def test_nan_policy_raise():
    with pytest.raises(ValueError, match="NaN at flat positions \\[1\\]"):
        A.grpo(torch.tensor([1.0, float("nan"), 0.0, 0.0]), 4, nan_policy="raise")
    with pytest.raises(ValueError, match="nan_policy"):
        A.grpo(torch.zeros(4), 4, nan_policy="ignore")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("method", ESTIMATORS)
def test_bad_group_sizes(method):
    with pytest.raises(ValueError, match="not divisible by the group size 4"):
        compute_advantages(torch.zeros(10), 4, method)
    with pytest.raises(ValueError, match="group_size must be >= 2"):
        compute_advantages(torch.zeros(4), 1, method)
    with pytest.raises(ValueError, match="G=4, but the group size .* is 8"):
        compute_advantages(torch.zeros(2, 4), 8, method)
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        compute_advantages(torch.zeros(2, 2, 2), 2, method)
    with pytest.raises(ValueError, match="inf"):
        compute_advantages(torch.tensor([0.0, float("inf")]), 2, method)
    with pytest.raises(ValueError, match="empty"):
        compute_advantages(torch.zeros(0), 2, method)
    with pytest.raises(ValueError, match="group_size is required"):
        compute_advantages(torch.zeros(4), None, method)


def test_sign_names_offending_values_and_thresholds_explicitly():
    with pytest.raises(ValueError, match=r"0/1 rewards; got 2 other values, e\.g\. \[0\.5, 2\.0\]"):
        A.sign(torch.tensor([0.0, 0.5, 1.0, 2.0]), 4)
    assert A.sign(torch.tensor([0.0, 0.5, 1.0, 2.0]), 4, threshold=0.5).tolist() == [-1, 1, 1, 1]


def test_unknown_method_and_non_numeric():
    with pytest.raises(ValueError, match="unknown advantage estimator 'ppo'"):
        compute_advantages(torch.zeros(4), 2, "ppo")
    with pytest.raises(TypeError):
        compute_advantages(["a", "b"], 2, "grpo")


def test_lists_and_ints_are_accepted_as_float():
    """Lists and integer input are read in float64 (issue 51: full precision, as verl's path); a tensor keeps its
    dtype."""
    out = compute_advantages([1, 0, 0, 0], 4, "drgrpo")
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, torch.tensor([0.75, -0.25, -0.25, -0.25], dtype=torch.float64))
    assert compute_advantages(torch.tensor([1, 0, 0, 0]), 4, "drgrpo").dtype == torch.get_default_dtype()


MIXED = torch.tensor([0.0, 1, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("out,match", [(lambda r: torch.as_tensor(r) > 0, "torch.bool"),
                                       (lambda r: torch.as_tensor(r) * 1j, "complex"),
                                       (lambda r: None, "returned None"),
                                       (lambda r: "nope", "not numbers")])
def test_a_registered_estimator_must_return_real_numbers(out, match):
    name = f"bad_{abs(hash(match)) % 10_000}"
    gl.register_estimator(name, lambda r, G: out(r))
    with pytest.raises(ValueError, match=match):
        gl.compute_advantages(torch.tensor([0.0, 1, 0, 0]), 4, name)


@pytest.mark.parametrize("method", ["drgrpo", "rloo"])
def test_advantages_that_overflow_the_dtype_are_an_error_not_inf(method):
    half = torch.tensor([65504.0, -65504, -65504, -65504], dtype=torch.half)
    with pytest.raises(ValueError, match="exceed the range of torch.float16"):
        gl.compute_advantages(half, 4, method)
    big = torch.tensor([3e38, -3e38, 3e38, -3e38])
    if method == "rloo":
        with pytest.raises(ValueError, match="exceed the range of torch.float32"):
            gl.compute_advantages(big, 4, method)
    wide = gl.compute_advantages(big.double(), 4, method)  # the remedy the message names
    assert torch.isfinite(wide).all()


def test_a_degenerate_group_is_zero_even_when_eps_underflows():
    out = gl.compute_advantages(torch.ones(4), 4, "grpo", eps=1e-50)  # 1e-50 is 0 in float32
    assert out.tolist() == [0.0] * 4


@pytest.mark.parametrize("method", ["grpo", "dapo", "avspo", "avspo_code"])
@pytest.mark.parametrize("bad", ["False", "no", 0, 1, None])
def test_unbiased_must_be_a_bool_not_anything_truthy(method, bad):
    # "False" used to count as True: Bessel's correction silently on
    with pytest.raises(TypeError, match="unbiased must be True or False"):
        gl.compute_advantages(MIXED, 4, method, unbiased=bad)


def test_unbiased_takes_numpy_bools_as_bools():
    for flag in (False, True):
        torch.testing.assert_close(gl.compute_advantages(MIXED, 4, "grpo", unbiased=np.bool_(flag)),
                                   gl.compute_advantages(MIXED, 4, "grpo", unbiased=flag))
    assert not torch.equal(gl.compute_advantages(MIXED, 4, "grpo", unbiased=False),
                           gl.compute_advantages(MIXED, 4, "grpo", unbiased=True))


# ---------------------------------------------------------------- GPG and MaxRL (issue 40)


def test_gpg_rescales_group_centred_rewards_by_the_papers_factor():
    r = torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    # B = 16 completions, M = 8 of them in the two groups without signal: alpha = 16 / 8 = 2
    torch.testing.assert_close(A.gpg(r, 4), 2 * A.drgrpo(r, 4))
    assert torch.equal(A.gpg(torch.ones(2, 4), 4), torch.zeros(2, 4))  # no signal at all: zeros, never 16 / 0
    torch.testing.assert_close(A.gpg(r[[0, 2]], 4), A.drgrpo(r[[0, 2]], 4))  # every group informative: alpha = 1
    # unscored completions count in neither B nor M: 7 scored, 3 of them (group 2) without signal
    flat = torch.tensor([1.0, 0, 0, float("nan"), 0, 0, 0, 1])
    torch.testing.assert_close(A.gpg(flat, 4), A.drgrpo(flat, 4) * 1.0)  # both groups informative: alpha = 7/7
    graded = torch.tensor([[0.5, 0.5], [0.2, 0.9]])
    torch.testing.assert_close(A.gpg(graded, 2), A.drgrpo(graded, 2) * 2)


def test_gpg_verl_counts_non_zero_rewards_not_informative_samples():
    r = torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    # 16 completions, 7 non-zero rewards: alpha = 16/7, where the paper's factor is 2
    torch.testing.assert_close(A.gpg_verl(r, 4), A.drgrpo(r, 4) * (16 / 7))
    assert torch.equal(A.gpg_verl(torch.zeros(2, 4), 4), torch.zeros(2, 4))


def test_maxrl_weights_a_prompt_by_its_inverse_success_rate_and_defines_all_fail_as_zero():
    r = torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    torch.testing.assert_close(A.maxrl(r, 4), torch.tensor([[3.0, -1, -1, -1], [0, 0, 0, 0], [1, 1, -1, -1],
                                                            [0, 0, 0, 0]]))
    for G in (2, 4, 8, 16):  # one success in G: G - 1 under MaxRL, (G - 1)/sqrt(G) under GRPO
        one = torch.zeros(1, G)
        one[0, 0] = 1
        assert A.maxrl(one, G)[0, 0].item() == pytest.approx(G - 1)
        assert A.grpo(one, G, eps=1e-12)[0, 0].item() == pytest.approx((G - 1) / G ** 0.5)
    with pytest.raises(ValueError, match="maxrl divides by the group's mean reward, so rewards must be >= 0"):
        A.maxrl(torch.tensor([1.0, -1.0]), 2)
    assert torch.equal(A.maxrl(torch.tensor([float("nan"), float("nan"), 1.0, 0.0]), 2), torch.tensor([0, 0, 1.0, -1]))


def test_gpg_gives_exactly_zero_to_every_group_its_factor_counts_as_carrying_no_signal():
    """Issue 51: at tol=10 every group counts as carrying no signal, so the batch has none: all zeros (it kept
    [0.75, -0.25, ...]); at the default tol a group [0, 1e-7, 0, 0] counts as degenerate and gets 0 (it got -5e-8),
    while the informative group gets the exact reference alpha * (r - mean)."""
    import torch

    from grpo_lab.advantages import gpg

    out = gpg(torch.tensor([1., 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0], dtype=torch.float64), 4, tol=10.0)
    assert torch.equal(out, torch.zeros(12, dtype=torch.float64))
    out = gpg(torch.tensor([0, 1e-7, 0, 0, 1, 0, 0, 0], dtype=torch.float64), 4)
    assert torch.equal(out[:4], torch.zeros(4, dtype=torch.float64))
    alpha = 8 / 4  # B = 8 completions, M = 4 of them in the group without signal
    assert torch.allclose(out[4:], alpha * torch.tensor([0.75, -0.25, -0.25, -0.25], dtype=torch.float64))


def test_python_and_numpy_rewards_are_computed_at_full_precision():
    """Issue 51: a list was read in float32, where 1e8 and 1e8 + 1 are one number (gpg and grpo gave zeros) and
    1e150 is inf ("rewards contain inf", a value never passed)."""
    import numpy as np
    import torch

    from grpo_lab.advantages import compute_advantages

    for method in ("gpg", "grpo", "drgrpo"):
        out = compute_advantages([1e8, 1e8 + 1, 1e8, 1e8 + 1], 4, method)
        assert out.dtype == torch.float64 and bool((out[1::2] > 0).all() and (out[::2] < 0).all()), method
    assert compute_advantages([1e150, 0.0], 2, "maxrl").tolist() == [1.0, -1.0]
    assert compute_advantages(np.array([1, 0, 0, 1]), 4, "sign").dtype == torch.float64
    assert compute_advantages(np.array([1, 0, 0, 1], dtype=np.float32), 4, "sign").dtype == torch.float32


# ----------------------------------------------------------------------------- grpo_near (issue 82, study 7)

@pytest.mark.parametrize("G", [2, 4, 8])
def test_minority_counts_the_completions_off_the_groups_most_common_reward(G):
    import itertools

    from grpo_lab.advantages import minority

    rows = torch.tensor(list(itertools.product([0.0, 1.0], repeat=G)))
    k = rows.sum(1)
    assert minority(rows, G).tolist() == torch.minimum(k, G - k).long().tolist()
    assert minority(torch.tensor([[0.5, 0.5, 0.2, 0.9]]), 4).tolist() == [2]  # any rewards: n - the mode's count
    assert minority(torch.tensor([[1.0, float("nan"), 0.0, 1.0]]), 4).tolist() == [1]  # unscored counts for nothing


def test_grpo_near_zeroes_the_groups_of_one_lucky_success_and_keeps_grpo_elsewhere():
    from grpo_lab.advantages import grpo_near

    r = torch.tensor([[1.0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0],
                      [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0, 0]])
    near, plain = grpo_near(r, 8), compute_advantages(r, 8, "grpo")
    kept = torch.tensor([False, True, False, False, True])
    assert torch.equal(near[kept], plain[kept]) and not near[~kept].any()
    assert plain[0, 0] == pytest.approx(7 / 8 ** 0.5, rel=1e-3)  # what the filter removes: (G - 1)/sqrt(G)
    assert near.abs().max() < plain.abs().max()
    assert torch.equal(grpo_near(r, 8, max_minority=0), compute_advantages(r, 8, "dapo"))  # 0: degenerate only
    assert not grpo_near(r, 8, max_minority=2)[1].any() and grpo_near(r, 8, max_minority=2)[4].any()
    assert compute_advantages(r.flatten(), 8, "grpo_near").shape == (40,)


@pytest.mark.parametrize("bad, err, msg", [(-1, ValueError, "max_minority must be >= 0"),
                                           (1.0, TypeError, "max_minority must be an integer"),
                                           (True, TypeError, "max_minority must be an integer"),
                                           (4, ValueError, "would zero every group of 4")])
def test_grpo_near_refuses_a_threshold_it_cannot_use(bad, err, msg):
    from grpo_lab.advantages import grpo_near

    with pytest.raises(err, match=msg):
        grpo_near(torch.tensor([1.0, 0, 0, 1]), 4, max_minority=bad)
