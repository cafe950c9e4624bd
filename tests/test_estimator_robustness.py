"""Issue 11, item 3: estimators refuse what they cannot compute and never return NaN for valid input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import grpo_lab as gl
from grpo_lab import advantages as A
from grpo_lab.advantages import ESTIMATORS, AVSPOController, compute_advantages

R = torch.tensor([0.0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1])


# ---------------------------------------------------------------- options are validated


@pytest.mark.parametrize("method", ["grpo", "dapo", "avspo", "avspo_code"])
@pytest.mark.parametrize("eps", [0.0, -1e-4, float("nan"), float("inf")])
def test_eps_must_be_positive_and_finite(method, eps):
    with pytest.raises(ValueError, match="eps"):
        compute_advantages(R, 4, method, eps=eps)


@pytest.mark.parametrize("method,option", [("avspo", "tau"), ("avspo_code", "tau"), ("dapo", "tol")])
@pytest.mark.parametrize("value", [0.0, -1e-6, float("nan")])
def test_tolerances_must_be_positive(method, option, value):
    with pytest.raises(ValueError, match=option):
        compute_advantages(R, 4, method, **{option: value})


def test_dapo_keep_mask_tol_validated():
    with pytest.raises(ValueError, match="tol"):
        A.dapo_keep_mask(R, 4, tol=-1.0)


@pytest.mark.parametrize("option,value", [("alpha", float("nan")), ("alpha", -0.5), ("threshold", float("nan")),
                                          ("threshold", 1.5), ("threshold", -0.1), ("reward_max", float("inf"))])
def test_avspo_options_validated(option, value):
    with pytest.raises(ValueError, match=option):
        A.avspo(R, 4, **{option: value})


def test_sign_threshold_nan_refused():
    with pytest.raises(ValueError, match="threshold"):
        A.sign(torch.tensor([0.2, 0.7]), 2, threshold=float("nan"))


def test_controller_ema_validated():
    with pytest.raises(ValueError, match="ema"):
        AVSPOController(ema=float("nan"))(R, 4)


def test_option_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="eps"):
        A.grpo(R, 4, eps="1e-4")


# ---------------------------------------------------------------- no overflow


def _reference_grpo(r: torch.Tensor, G: int, eps: float = 1e-4) -> torch.Tensor:
    """GRPO in float64 after dividing by the largest |r|: exact where the input's squares would overflow."""
    x = r.double().reshape(-1, G)
    s = x.abs().max().clamp_min(1e-300)
    y = x / s
    std = y.std(dim=1, keepdim=True) * s
    return ((x - x.mean(dim=1, keepdim=True)) / (std + eps)).reshape(r.shape)


def test_float16_rewards_with_a_wide_spread_keep_their_advantages():
    r = torch.tensor([0.0, 400.0, 0.0, 0.0, -300.0, 300.0, 50.0, 0.0], dtype=torch.float16)
    adv = A.grpo(r, 4)
    assert adv.dtype == torch.float16
    assert bool((adv != 0).any())
    torch.testing.assert_close(adv.double(), _reference_grpo(r, 4), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("scale", [3e19, 1e30, 1e36])
def test_float32_rewards_beyond_3e19_keep_their_advantages(scale):
    r = torch.tensor([0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.5, 0.0]) * scale
    for m in ("grpo", "dapo", "drgrpo", "rloo"):
        adv = compute_advantages(r, 4, m)
        assert torch.isfinite(adv).all(), m
        assert bool((adv != 0).any()), m
    torch.testing.assert_close(A.grpo(r, 4).double(), _reference_grpo(r, 4), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- requires_grad


@pytest.mark.parametrize("method", [m for m in ESTIMATORS])
def test_rewards_that_require_grad_can_be_differentiated(method):
    vals = [0.0, 0, 0, 0, 1, 0, 0, 0] + ([1, 1, 0, 1] if method == "sign" else [0.3, 0.9, 0.1, 0.5])
    r = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    w = torch.arange(12, dtype=torch.float64)
    (compute_advantages(r, 4, method) * w).sum().backward()
    assert r.grad is not None and torch.isfinite(r.grad).all()
    if method == "sign":
        torch.testing.assert_close(r.grad, 2 * w)


def test_grpo_gradient_through_rewards_matches_the_formula():
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64)
    w = torch.randn(3, 4, dtype=torch.float64)
    r1 = x.clone().requires_grad_(True)
    (A.grpo(r1, 4) * w).sum().backward()
    r2 = x.clone().requires_grad_(True)
    ((r2 - r2.mean(1, keepdim=True)) / (r2.std(1, keepdim=True) + 1e-4) * w).sum().backward()
    torch.testing.assert_close(r1.grad, r2.grad)


# ---------------------------------------------------------------- integer group sizes, consistently


@pytest.mark.parametrize("G", [4, np.int64(4), np.int32(4), np.uint8(4), torch.tensor(4)])
def test_any_integer_group_size_is_accepted_everywhere(G):
    want = compute_advantages(R, 4, "grpo")
    for m in ESTIMATORS:
        torch.testing.assert_close(compute_advantages(R, G, m), compute_advantages(R, 4, m), msg=m)
    torch.testing.assert_close(A.grpo(R.reshape(3, 4), G), want.reshape(3, 4))
    assert gl.collapse_rate(R, G).acr == gl.collapse_rate(R, 4).acr
    assert gl.pass_at_k(8, 3, G) == gl.pass_at_k(8, 3, 4)
    assert A.avspo_num_virtual(0.5, G) == A.avspo_num_virtual(0.5, 4)


@pytest.mark.parametrize("G", [4.0, True, "4", np.float64(4)])
def test_non_integer_group_size_is_refused_everywhere(G):
    with pytest.raises(TypeError, match="group_size"):
        compute_advantages(R, G, "grpo")
    with pytest.raises(TypeError):
        gl.pass_at_k(8, 3, G)


# ---------------------------------------------------------------- the documented promise, as a property

# up to each dtype's largest finite value (float64: the documented limit, grpo_lab._groups.WIDE_LIMIT)
DTYPES = {torch.float16: 6e4, torch.bfloat16: 3e38, torch.float32: 3e38, torch.float64: 1e150}


@st.composite
def reward_batches(draw):
    dtype = draw(st.sampled_from(list(DTYPES)))
    G = draw(st.integers(2, 8))
    B = draw(st.integers(1, 6))
    log_scale = draw(st.floats(-3, math.log10(DTYPES[dtype])))
    binary = draw(st.booleans())
    if binary:
        vals = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=B * G, max_size=B * G))
    else:
        vals = draw(st.lists(st.floats(-1, 1, allow_nan=False), min_size=B * G, max_size=B * G))
    unscored = draw(st.lists(st.booleans(), min_size=B * G, max_size=B * G)) if draw(st.booleans()) else None
    r = torch.tensor(vals, dtype=torch.float64) * (1.0 if binary else 10**log_scale)
    if unscored is not None:
        r[torch.tensor(unscored)] = float("nan")
    return r.to(dtype), G, binary


@settings(max_examples=300, deadline=None)
@given(reward_batches(), st.sampled_from(ESTIMATORS))
def test_no_nan_or_inf_for_valid_input(batch, method):
    r, G, _ = batch
    scored = r[~torch.isnan(r)]
    if method == "sign" and not bool(((scored == 0) | (scored == 1)).all()):
        with pytest.raises(ValueError, match="0/1"):
            compute_advantages(r, G, method)
        return
    if method == "maxrl" and bool((scored < 0).any()):
        with pytest.raises(ValueError, match="rewards must be >= 0"):
            compute_advantages(r, G, method)
        return
    try:
        adv = compute_advantages(r, G, method)
    except ValueError as e:  # only where an advantage really does not fit the caller's dtype
        assert f"exceed the range of {r.dtype}" in str(e) and method in ("drgrpo", "rloo", "gpg", "gpg_verl",
                                                                          "maxrl"), (method, e)
        wide = compute_advantages(r.double(), G, method)
        assert bool((wide.abs() > torch.finfo(r.dtype).max).any()), (method, r, wide)
        return
    assert adv.dtype == r.dtype and adv.shape == r.shape
    assert torch.isfinite(adv).all(), (method, r, adv)
    assert bool((adv[torch.isnan(r)] == 0).all())
    if method in ("grpo", "dapo", "drgrpo", "rloo") and r.dtype in (torch.float32, torch.float64):
        # the same as on the rewards divided by their largest magnitude (scale-free estimators), or that
        # times the scale (Dr.GRPO, RLOO): computed without overflow, not merely finite
        s = float(torch.nan_to_num(r.double()).abs().max()) or 1.0
        ref = compute_advantages(r.double() / s, G, method, **({"eps": 1e-4 / s} if method in ("grpo", "dapo") else {}))
        if method in ("drgrpo", "rloo"):
            ref = ref * s
        torch.testing.assert_close(adv.double(), ref, rtol=1e-4, atol=1e-4 * (s if method in ("drgrpo", "rloo") else 1))


@pytest.mark.parametrize("method", ["grpo", "dapo", "avspo", "avspo_code"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rewards_near_the_dtype_maximum_keep_their_advantages(method, dtype):
    """Issue 28: [3e38, -3e38, 3e38, -3e38] gave zeros and [3e38, 3e38, 0, 0] NaN (the group sum overflowed)."""
    for vals in ([3e38, -3e38, 3e38, -3e38], [3e38, 3e38, 0, 0]):
        adv = compute_advantages(torch.tensor(vals, dtype=dtype), 4, method)
        assert adv.dtype == dtype
        torch.testing.assert_close(adv.float().abs(), torch.full((4,), 0.866), rtol=1e-2, atol=1e-2)
    assert gl.success_rates(torch.tensor([3e38] * 4), 4).tolist() == [pytest.approx(3e38, rel=1e-6)]
    same = compute_advantages(torch.tensor([1e20] * 4 + [0, 1, 0, 0], dtype=dtype), 4, "avspo_code")
    assert torch.isfinite(same).all()  # the virtual reward's square (1e40) no longer overflows float32


@pytest.mark.parametrize("method", ESTIMATORS)
def test_rewards_beyond_the_float64_limit_are_refused_by_name(method):
    r = torch.tensor([1.7e308, 0, 0, 0], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"rewards as large as 1.7e\+308 are out of range.*up to 1e\+150"):
        compute_advantages(r, 4, method)


EQUAL_CASES = [(v, dt) for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
               for v in (1000.1, 100.3, -7.7e3, 0.1, 3.3e30, 1e-30)
               if math.isfinite(torch.tensor(v, dtype=torch.float64).to(dt).item())]  # 3.3e30 overflows float16


@pytest.mark.parametrize("value, dtype", EQUAL_CASES)
def test_an_all_equal_group_has_exactly_zero_advantage_at_any_magnitude(value, dtype):
    """Issue 18: eight rewards of 1000.1 gave -0.369 (rounding residue divided by a residual std)."""
    r = torch.full((8,), value, dtype=torch.float64).to(dtype)
    mixed = torch.cat([r, torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=dtype)])
    for est in ("grpo", "drgrpo", "rloo", "dapo"):
        adv = compute_advantages(mixed, 4, est)
        assert (adv[:8] == 0).all(), f"{est}: {adv[:8].tolist()}"
        assert (adv[8:] != 0).any()
    assert gl.collapse_rate(r, 8).acr == 1.0  # and it counts as degenerate
    with_nan = r.clone()
    with_nan[0] = float("nan")
    assert (compute_advantages(with_nan, 8, "grpo") == 0).all()  # the scored rest is still all equal
