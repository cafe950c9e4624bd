"""Advantage estimators over grouped rewards (introduced in notebook 03).

Every estimator is a pure torch function: rewards in, advantages out, same shape.
Rewards are either flat (``N = B * G``, the G completions of one prompt contiguous,
as in TRL's ``GRPOTrainer``) or a ``[B, G]`` matrix. Nothing here imports TRL.

Use :func:`compute_advantages` to pick an estimator by name; :data:`ESTIMATORS`
lists the names. NaN rewards mean "unscored" (TRL's convention): they are left out
of their group's statistics and get advantage 0 (``nan_policy="raise"`` refuses them).
No estimator returns NaN or inf for valid input, degenerate groups included: statistics are
computed in a dtype where they cannot overflow (half-precision rewards in float32, any reward
beyond 1e15 in float64, the result cast back to the caller's dtype), rewards beyond 1e150 are
refused by name, and an advantage that does not fit the caller's dtype (Dr.GRPO's r - mean on
float32 rewards near 3e38) is an error naming that dtype; every numeric option is validated (``eps``,
``tau`` and ``tol`` finite and > 0, ``threshold`` and ``alpha`` finite) and a bad one is a
``ValueError`` that names it. Rewards that require grad are differentiated through (no op
is in place). ``group_size`` may be any integer type (``int``, ``numpy.int64``).

=============  ====================================================  ==================
name           advantage of completion i in group g                  source
=============  ====================================================  ==================
``grpo``       (r_i - mean_g) / (std_g + eps), Bessel std            arXiv 2402.03300
``drgrpo``     r_i - mean_g                                          arXiv 2503.20783
``rloo``       r_i - mean of the other G-1 rewards                   arXiv 2402.14740
``sign``       2 r_i - 1 (0/1 rewards only)                          arXiv 2605.07689
``avspo``      GRPO on real + K stratified virtual rewards           arXiv 2605.21125
``avspo_code`` GRPO on real + 1 opposite virtual reward              attributed to its code
``dapo``       GRPO, degenerate groups zeroed                        arXiv 2503.14476
``gpg``        B/(B - M) (r_i - mean_g), M = completions of groups   arXiv 2504.02546
               with no signal (the paper's gradient correction)
``gpg_verl``   B/#{r != 0} (r_i - mean_g) (verl's ``gpg``)           verl 0.9.1
``maxrl``      (r_i - mean_g) / mean_g (0 where mean_g = 0)          arXiv 2602.02710
``grpo_near``  GRPO, groups where at most 1 completion differs from   grpo-lab's reading of the
               the group's most common reward zeroed                 near-degenerate warning
=============  ====================================================  ==================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from ._checks import as_flag, as_int
from ._checks import as_number as check_option
from ._groups import (WIDE_LIMIT, Grouped, GroupStats, check_group_size, group, group_stats, homogeneous, pool,
                      std_from, zero_unscored)

DEFAULT_EPS = 1e-4  # TRL adds 1e-4 to the group std
DEFAULT_TAU = 1e-6  # AVSPO's collapse tolerance on the group reward std


def _finish(g: Grouped, adv: torch.Tensor) -> torch.Tensor:
    """The advantages in the caller's shape and dtype. Finite rewards whose advantages do not fit the dtype
    (rloo on float32 rewards near 3e38, whose r - mean of the others can reach 6e38; drgrpo on float16 near
    65504) are an error naming the dtype, never a silent inf."""
    adv = zero_unscored(adv, g.valid)
    dtype = g.dtype or adv.dtype
    if bool(torch.isinf(adv).any()) or (g.dtype is not None and bool(
            (adv.detach().abs() > torch.finfo(g.dtype).max).any())):
        raise ValueError(f"these rewards' advantages exceed the range of {dtype} (largest finite "
                         f"{torch.finfo(dtype).max:.3g}); pass the rewards in a wider dtype (float64)")
    return g.restore(adv)


def _normalise(stats: GroupStats, eps: float, unbiased: bool) -> torch.Tensor:
    """``(r - mean) / (std + eps)`` from the group statistics.

    Out of place throughout, so that rewards that require grad can be differentiated through.
    """
    out = stats.centered * (stats.std(as_flag("unbiased", unbiased)) + eps).reciprocal()
    # an all-equal group is 0 / (0 + eps): exactly 0 even when eps underflows the dtype (1e-50 in float32)
    return torch.where(stats.centered == 0, torch.zeros((), dtype=out.dtype), out)


def _eps(eps) -> float:
    # eps = 0 would turn every degenerate group into 0/0 = NaN
    return check_option("eps", eps, low=0.0, low_open=True)


def _tol(name: str, tol) -> float:
    return check_option(name, tol, low=0.0, low_open=True)


def grpo(rewards, group_size: int | None = None, *, eps: float = DEFAULT_EPS, unbiased: bool = True,
         nan_policy: str = "unscored") -> torch.Tensor:
    """GRPO's group-normalised advantage (Shao et al. 2024, arXiv 2402.03300).

    ``A_i = (r_i - mean_g) / (std_g + eps)``, with Bessel's correction (``unbiased=True``)
    and ``eps = 1e-4`` by default, which is what TRL's ``GRPOTrainer`` computes with
    ``scale_rewards="group"``. A degenerate group (all rewards equal) gets ``0 / eps = 0``.
    Near-degenerate groups are where this estimator is dangerous: one success among
    G - 1 failures gets ``(G - 1) / sqrt(G)`` (notebook 03).
    """
    eps = _eps(eps)
    g = group(rewards, group_size, nan_policy)
    return _finish(g, _normalise(group_stats(g.values, g.valid), eps, unbiased))


def drgrpo(rewards, group_size: int | None = None, *, nan_policy: str = "unscored") -> torch.Tensor:
    """Dr. GRPO: group-mean centring without std normalisation (Liu et al. 2025, arXiv 2503.20783).

    ``A_i = r_i - mean_g``.
    """
    g = group(rewards, group_size, nan_policy)
    return _finish(g, group_stats(g.values, g.valid).centered)


def rloo(rewards, group_size: int | None = None, *, nan_policy: str = "unscored") -> torch.Tensor:
    """REINFORCE leave-one-out baseline (Kool et al. 2019; Ahmadian et al. 2024, arXiv 2402.14740).

    ``A_i = r_i - (1 / (G - 1)) * sum_{j != i} r_j  =  G / (G - 1) * (r_i - mean_g)``.
    With unscored completions, G is the number of scored ones; a group with fewer
    than two scored completions gets 0.
    """
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    others = stats.n - 1
    scale = stats.n / torch.where(others > 0, others, torch.full_like(others, float("nan")))
    return _finish(g, stats.centered * scale)


def sign(rewards, group_size: int | None = None, *, threshold: float | None = None,
         nan_policy: str = "unscored") -> torch.Tensor:
    """Fixed-reference Sign advantage (arXiv 2605.07689): ``A_i = 2 r_i - 1``.

    The reference is fixed (0.5), not the group mean, so an all-fail group still pushes
    every sampled answer down: the paper calls this pass@G failure descent (notebook 03
    checks the identity with autograd). Advantages are not zero-sum within a group.

    Rewards must be exactly 0 or 1; anything else raises ``ValueError`` naming the
    offending values. Pass ``threshold=t`` to binarise explicitly (``r >= t`` is success).
    ``group_size`` is only validated: the estimator itself ignores the grouping.
    """
    g = group(rewards, group_size, nan_policy)
    v = g.values
    if threshold is not None:
        threshold = check_option("threshold", threshold)
        binary = (v >= threshold).to(v.dtype)
    else:
        # r * (1 - r) is 0 exactly for r in {0, 1}: one fused pass, then a detailed scan only if needed
        if g.valid is not None or bool((v * (1 - v)).abs_().sum() != 0):
            bad = ~((v == 0) | (v == 1))
            if g.valid is not None:
                bad &= g.valid
            if bool(bad.any()):
                offending = torch.unique(v[bad])[:8].tolist()
                raise ValueError(
                    f"the sign estimator needs 0/1 rewards; got {int(bad.sum())} other values, e.g. {offending}. "
                    "Pass threshold=... to binarise explicitly."
                )
        binary = v
    return _finish(g, binary * 2.0 - 1.0)


def dapo_keep_mask(rewards, group_size: int | None = None, *, tol: float = DEFAULT_TAU,
                   nan_policy: str = "unscored") -> torch.Tensor:
    """Per-completion keep-mask of DAPO's dynamic sampling (Yu et al. 2025, arXiv 2503.14476).

    ``True`` for every completion of a group whose rewards are not all equal (reward std
    >= ``tol``), ``False`` for degenerate groups and for unscored completions. Same shape
    as ``rewards``. DAPO resamples until the batch is full of kept groups; a caller can do
    that, drop, or reweight with this mask.
    """
    tol = _tol("tol", tol)
    g = group(rewards, group_size, nan_policy)
    keep = (~homogeneous(group_stats(g.values, g.valid), tol)).unsqueeze(1).expand_as(g.values)
    if g.valid is not None:
        keep = keep & g.valid
    return g.restore(keep.clone())


def dapo(rewards, group_size: int | None = None, *, tol: float = DEFAULT_TAU, eps: float = DEFAULT_EPS,
         unbiased: bool = True, nan_policy: str = "unscored") -> torch.Tensor:
    """DAPO's filter seen from the advantage alone (arXiv 2503.14476): GRPO advantages, degenerate groups zeroed.

    ``A_i = keep_g * (r_i - mean_g) / (std_g + eps)`` with ``keep_g`` from :func:`dapo_keep_mask`.
    For 0/1 rewards this equals :func:`grpo` (a degenerate group already gets 0). DAPO's actual
    remedy is a *sampling* rule, the batch refilled with informative groups: that is
    ``sampling="dynamic"`` in :func:`grpo_lab.trl.trainer_class`, and the method ``dapo`` of
    ``grpo-lab compare`` (notebook 09).
    """
    tol, eps = _tol("tol", tol), _eps(eps)
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    keep = ~homogeneous(stats, tol)
    return _finish(g, _normalise(stats, eps, unbiased) * keep.unsqueeze(1))


def minority(rewards, group_size: int | None = None, *, nan_policy: str = "unscored") -> torch.Tensor:
    """``[B]`` per group: how many scored completions differ from the group's most common reward (lesson 14).

    With 0/1 rewards and k successes of n scored, ``min(k, n - k)``: 0 for a degenerate group, 1 for a group with one
    lucky success (or one unlucky failure). Any rewards: ``n - `` the count of the most frequent value (exact
    equality). Unscored completions (NaN) count for nothing.
    """
    g = group(rewards, group_size, nan_policy)
    v = g.values
    valid = torch.ones_like(v, dtype=torch.bool) if g.valid is None else g.valid
    same = (v.unsqueeze(2) == v.unsqueeze(1)) & valid.unsqueeze(2) & valid.unsqueeze(1)  # [B, G, G]
    return valid.sum(1) - same.sum(2).amax(1)


def grpo_near(rewards, group_size: int | None = None, *, max_minority: int = 1, eps: float = DEFAULT_EPS,
              unbiased: bool = True, nan_policy: str = "unscored") -> torch.Tensor:
    """GRPO with near-degenerate groups zeroed (lesson 14; study 7, issue 82).

    ``A_i = keep_g * (r_i - mean_g) / (std_g + eps)``, ``keep_g = minority_g > max_minority``, where
    :func:`minority` counts the completions that differ from the group's most common reward. With 0/1 rewards and the
    default ``max_minority = 1``, a group with one success among failures (GRPO gives that success
    ``(G - 1) / sqrt(G)``) or one failure among successes trains nothing, and neither do degenerate groups. This is
    grpo-lab's reading of the warning that near-degenerate groups are harmful, not just idle (the degenerate-groups
    summary in the project's papers: std normalisation turns one lucky success into a large advantage; methods that
    treat the within-group statistic as a filter discard such groups). Not a published estimator: the filter's
    threshold is this function's option. Zeroed groups stay in the batch, as GRPO's degenerate groups do.
    """
    eps = _eps(eps)
    m = as_int("max_minority", max_minority, minimum=0)
    g = group(rewards, group_size, nan_policy)
    if m >= g.group_size:
        raise ValueError(f"max_minority={m} would zero every group of {g.group_size}: at most "
                         f"{g.group_size - 1} completions can differ from a group's most common reward")
    keep = minority(rewards, group_size, nan_policy=nan_policy) > m
    return _finish(g, _normalise(group_stats(g.values, g.valid), eps, unbiased) * keep.unsqueeze(1))


# ----------------------------------------------------------------------------- GPG and MaxRL

def _batch_scale(g: Grouped, counted: torch.Tensor) -> torch.Tensor:
    """``B / counted`` as a 0-d tensor, B the scored completions of the whole batch (1 when ``counted`` is 0:
    then every advantage is 0 anyway)."""
    b = g.values.numel() if g.valid is None else int(g.valid.sum())
    c = int(counted)
    return torch.tensor(b / c if c > 0 else 1.0, dtype=torch.float64)


def gpg(rewards, group_size: int | None = None, *, tol: float = DEFAULT_TAU,
        nan_policy: str = "unscored") -> torch.Tensor:
    """Group Policy Gradient, as arXiv 2504.02546 (ICLR 2026) describes it: group-mean centring without the std
    (``F_norm = 1``), the gradient rescaled by the paper's accurate-gradient-estimation factor.

    ``A_i = alpha * (r_i - mean_g)`` with ``alpha = B / (B - M)``: B completions in the batch (the rewards
    passed: in the trainer, one generation batch of every process), M of them in groups that carry no signal
    (rewards all equal, std < ``tol``). Every group the factor counts as carrying no signal gets exactly 0 (at a
    large ``tol`` a group with unequal rewards can be one), and a batch with no signal at all gets zeros. The
    correction restores the scale a batch average loses to those zero terms: with half the groups degenerate,
    alpha = 2. Unscored completions count in neither B nor M. For the correction as verl implements it (B over the
    count of non-zero *rewards*), see :func:`gpg_verl`.
    """
    tol = _tol("tol", tol)
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    signal = (~homogeneous(stats, tol)).unsqueeze(1)
    informative = signal.expand_as(g.values)
    if g.valid is not None:
        informative = informative & g.valid
    alpha = _batch_scale(g, informative.sum())
    adv = stats.centered * alpha.to(stats.centered.dtype)
    return _finish(g, torch.where(signal, adv, torch.zeros_like(adv)))


def gpg_verl(rewards, group_size: int | None = None, *, nan_policy: str = "unscored") -> torch.Tensor:
    """GPG as verl 0.9.1 implements it (``algorithm.adv_estimator=gpg``, ``compute_gpg_outcome_advantage``):
    ``A_i = alpha * (r_i - mean_g)`` with ``alpha = B / max(1, #{i: r_i != 0})``, B the completions of the batch.

    This is not arXiv 2504.02546's factor (:func:`gpg`): it counts non-zero *rewards*, not completions that
    carry a signal. With 0/1 rewards it is B over the number of correct completions, so a batch with few
    successes gets a large alpha whether or not its groups are informative (4 correct of 32: alpha = 8; the
    paper's factor would be 32 over the completions of mixed groups). Kept as a named variant, tested against
    verl's function on verl's inputs.

    **Gradients through the rewards** (issue 83): at an all-equal group every estimator's advantage is exactly 0
    by selection (:func:`grpo_lab._groups.group_stats`), so autograd gives 0 there. That is intended: an advantage
    is a constant of the policy-gradient loss, and the exact zero is what keeps a homogeneous group from training
    on the mean's rounding residue. It is not the derivative of the formula: for this estimator (and drgrpo,
    rloo) the one-sided limit is ``alpha * (1 - 1/G)`` (0.75 at G = 4, alpha 1), which finite differences show;
    GRPO's std-normalised advantage has no derivative there at all (it jumps). Away from all-equal groups
    autograd and finite differences agree (``tests/test_estimator_robustness.py``).
    """
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    nonzero = g.values != 0 if g.valid is None else (g.values != 0) & g.valid
    alpha = _batch_scale(g, nonzero.sum())
    return _finish(g, stats.centered * alpha.to(stats.centered.dtype))


def maxrl(rewards, group_size: int | None = None, *, nan_policy: str = "unscored") -> torch.Tensor:
    """Maximum Likelihood RL's p-normalised advantage (Tajwar et al. 2026, arXiv 2602.02710), as prime-rl
    implements it: ``A_i = (r_i - mean_g) / mean_g``.

    Dividing by the group's success rate instead of its std weights a prompt by 1/p: one success among G gets
    ``G - 1`` (GRPO: ``(G - 1)/sqrt(G)``), each failure -1. **An all-fail group** has mean 0 and numerator 0:
    its advantage is defined as 0 (never NaN), so MaxRL starves on all-fail groups exactly as GRPO does; an
    all-pass group gets 0 too. Rewards must be >= 0 (a success indicator or rate): a negative reward would
    flip the sign through the mean, and is refused by name.
    """
    g = group(rewards, group_size, nan_policy)
    v = g.values if g.valid is None else torch.where(g.valid, g.values, torch.zeros_like(g.values))
    if bool((v < 0).any()):
        raise ValueError(f"maxrl divides by the group's mean reward, so rewards must be >= 0; got "
                         f"{torch.unique(v[v < 0])[:5].tolist()}")
    # in float64: the mean of tiny float32 rewards rounds in float32's subnormal range ([1e-44, 0, 0, 0] gave 2.5
    # for an exact 3, issue 83); the ratio is then cast back to the rewards' dtype
    stats = group_stats(g.values.double(), g.valid)
    mean = stats.mean
    safe = torch.where(mean > 0, mean, torch.ones_like(mean))
    adv = torch.where(mean > 0, stats.centered / safe, torch.zeros_like(stats.centered))
    return _finish(g, adv.to(g.values.dtype))


# ----------------------------------------------------------------------------- AVSPO

R_MAX_READINGS = ("scale", "group")


def avspo_num_virtual(acr: float, group_size: int, alpha: float = 0.5) -> int:
    """AVSPO's number of virtual rewards per homogeneous group: ``K = max(1, min(G, ceil(G * ACR**alpha)))``."""
    acr = check_option("acr", acr, low=0.0, high=1.0)
    alpha = check_option("alpha", alpha, low=0.0)
    group_size = check_group_size(group_size)
    return max(1, min(group_size, math.ceil(group_size * acr**alpha - 1e-12)))


def _virtual_rewards(k: int, dtype: torch.dtype) -> torch.Tensor:
    """Stratified virtual rewards of the paper, per unit of r_max: ``1 - (k-1)/K``, k = 1..K."""
    return 1.0 - torch.arange(k, dtype=dtype) / k


def _with_virtual(g: Grouped, stats: GroupStats, homog: torch.Tensor, k: int, s1: torch.Tensor, s2: torch.Tensor,
                  eps: float, unbiased: bool) -> torch.Tensor:
    """GRPO advantages where each homogeneous group's mean and std also count k virtual rewards.

    ``s1``/``s2`` (``[B, 1]``) are the virtual rewards' sum and sum of squares per group.
    The virtual rewards only shift the statistics; advantages exist for real completions only.
    """
    unbiased = as_flag("unbiased", unbiased)
    n_t, mean_t, ss_t = pool(stats, k, s1, s2)
    h = homog.unsqueeze(1)
    mean = torch.where(h, mean_t, stats.mean)
    std = torch.where(h, std_from(n_t, ss_t, unbiased), stats.std(unbiased))
    return (g.values - mean) * (std + eps).reciprocal()


def avspo(rewards, group_size: int | None = None, *, threshold: float = 0.5, alpha: float = 0.5,
          tau: float = DEFAULT_TAU, r_max: str | float = "scale", reward_max: float = 1.0,
          eps: float = DEFAULT_EPS, unbiased: bool = True, nan_policy: str = "unscored",
          return_info: bool = False):
    """Adaptive Virtual Sample Policy Optimization, as the paper describes it (arXiv 2605.21125).

    1. ACR = fraction of groups whose reward std is below ``tau`` (the Advantage Collapse Rate).
    2. If ACR > ``threshold`` (stateless here; :class:`AVSPOController` adapts it between
       batches), every homogeneous group gets ``K = max(1, min(G, ceil(G * ACR**alpha)))``
       virtual rewards ``v_k = r_max * (1 - (k - 1) / K)``, k = 1..K.
    3. Virtual rewards enter that group's mean and std only, never the gradient:
       ``A_i = (r_i - mean(real + virtual)) / (std(real + virtual) + eps)`` for the G real
       completions. Mixed groups, and every group when ACR <= threshold, get exactly
       :func:`grpo`'s advantages.

    **The paper and the variant attributed to its code disagree** (:func:`avspo_code`), and the
    paper leaves ``r_max`` ambiguous, so the reading is an explicit option:

    - ``r_max="scale"`` (default): r_max is the reward scale's maximum ``reward_max``
      (1 for 0/1 rewards). All-wrong groups then get negative advantages and all-right
      groups positive ones.
    - ``r_max="group"``: r_max is the group's own maximum reward. An all-wrong group
      has r_max = 0, its virtual rewards are all 0, and it keeps advantage 0: under this
      reading AVSPO cannot learn from all-fail groups at all.
    - a number: that value.

    The variant attributed to the authors' code instead adds one virtual sample with the
    opposite reward: see :func:`avspo_code`.

    With ``return_info=True`` returns ``(advantages, info)`` with ``info`` a dict of
    ``acr``, ``active`` and ``k``.
    """
    threshold = check_option("threshold", threshold, low=0.0, high=1.0)
    alpha = check_option("alpha", alpha, low=0.0)
    tau, eps = _tol("tau", tau), _eps(eps)
    reward_max = check_option("reward_max", reward_max, low=-WIDE_LIMIT, high=WIDE_LIMIT)
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    homog = homogeneous(stats, tau)
    acr = float(homog.to(torch.float64).mean())
    active = acr > threshold
    k = avspo_num_virtual(acr, g.group_size, alpha) if active else 0
    if not active:
        adv = _normalise(stats, eps, unbiased)
    else:
        if isinstance(r_max, str) and r_max == "group":
            top = g.values if g.valid is None else torch.where(g.valid, g.values, torch.full_like(g.values, -torch.inf))
            scale = top.amax(dim=1, keepdim=True)
            scale = torch.where(torch.isfinite(scale), scale, torch.zeros_like(scale))  # all-unscored group
        elif isinstance(r_max, str) and r_max == "scale":
            scale = torch.full_like(stats.mean, float(reward_max))
        elif isinstance(r_max, (int, float)) and not isinstance(r_max, bool) and abs(float(r_max)) <= WIDE_LIMIT:
            scale = torch.full_like(stats.mean, float(r_max))
        else:
            raise ValueError(f"r_max must be one of {R_MAX_READINGS} or a number of magnitude at most "
                             f"{WIDE_LIMIT:.0e}, got {r_max!r}")
        u = _virtual_rewards(k, g.values.dtype)
        adv = _with_virtual(g, stats, homog, k, scale * u.sum(), scale.square() * u.square().sum(), eps, unbiased)
    out = _finish(g, adv)
    if return_info:
        return out, {"acr": acr, "active": active, "k": k}
    return out


def avspo_code(rewards, group_size: int | None = None, *, tau: float = DEFAULT_TAU, reward_min: float = 0.0,
               reward_max: float = 1.0, eps: float = DEFAULT_EPS, unbiased: bool = True,
               nan_policy: str = "unscored") -> torch.Tensor:
    """AVSPO as grpo-lab's founding specification attributes it to the authors' code (not as arXiv 2605.21125
    writes it). grpo-lab has not read that code: the page the paper points to for it held none when checked
    (November 2026), so this is a documented variant, and only the paper's text is a reference for :func:`avspo`.

    Every homogeneous group (reward std < ``tau``) gets one virtual sample with the
    opposite reward, ``reward_min + reward_max - r`` (1 for an all-0 group, 0 for an
    all-1 group), in its mean and std only; there is no ACR gate. For G = 4 an all-0
    group gets ``A = -0.2 / sqrt(0.2) = -0.447`` for each completion. Mixed groups get
    :func:`grpo`'s advantages.
    """
    tau, eps = _tol("tau", tau), _eps(eps)
    reward_min, reward_max = (check_option(n, v, low=-WIDE_LIMIT, high=WIDE_LIMIT)
                              for n, v in (("reward_min", reward_min), ("reward_max", reward_max)))
    g = group(rewards, group_size, nan_policy)
    stats = group_stats(g.values, g.valid)
    homog = homogeneous(stats, tau)
    level = torch.nan_to_num(stats.mean, nan=reward_min)  # an all-unscored group has no level
    virtual = reward_min + reward_max - level
    return _finish(g, _with_virtual(g, stats, homog, 1, virtual, virtual.square(), eps, unbiased))


@dataclass
class AVSPOController:
    """The explicit state of AVSPO's adaptive threshold.

    Call it like an estimator; it computes :func:`avspo` with the current ``threshold``
    and then moves the threshold towards the ACR it saw:
    ``threshold <- (1 - ema) * threshold + ema * ACR``.

    The paper (arXiv 2605.21125) describes an adaptive threshold starting at 0.5 but the
    exact update rule could not be retrieved when this was written; the exponential
    moving average above is grpo-lab's documented choice (``ema=0`` keeps it fixed).
    ``history`` records ``(acr, threshold_used, active, k)`` for every call.
    """

    threshold: float = 0.5
    alpha: float = 0.5
    tau: float = DEFAULT_TAU
    ema: float = 0.1
    r_max: str | float = "scale"
    reward_max: float = 1.0
    eps: float = DEFAULT_EPS
    history: list = field(default_factory=list)

    def __call__(self, rewards, group_size: int | None = None, **options) -> torch.Tensor:
        check_option("ema", self.ema, low=0.0, high=1.0)
        adv, info = avspo(rewards, group_size, threshold=self.threshold, alpha=self.alpha, tau=self.tau,
                          r_max=self.r_max, reward_max=self.reward_max, eps=self.eps, return_info=True, **options)
        self.history.append((info["acr"], self.threshold, info["active"], info["k"]))
        self.threshold = (1.0 - self.ema) * self.threshold + self.ema * info["acr"]
        return adv


# ----------------------------------------------------------------------------- dispatch

_REGISTRY: dict[str, Callable[..., torch.Tensor]] = {
    "grpo": grpo,
    "drgrpo": drgrpo,
    "rloo": rloo,
    "sign": sign,
    "avspo": avspo,
    "avspo_code": avspo_code,
    "dapo": dapo,
    "gpg": gpg,
    "gpg_verl": gpg_verl,
    "maxrl": maxrl,
    "grpo_near": grpo_near,
}

ESTIMATORS: tuple[str, ...] = tuple(_REGISTRY)  # the built-in estimators
_INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def register_estimator(name: str, fn: Callable[..., torch.Tensor]) -> None:
    """Make ``fn(rewards, group_size) -> advantages`` available by ``name`` everywhere an estimator name is
    accepted (``compute_advantages``, ``RunConfig``, ``trainer_class``). Used by notebook 05 to train with the
    student's own advantage. Built-in names cannot be replaced. ``fn`` gets the rewards as given (flat B*G or
    [B, G]) and must return a finite tensor of the same shape; :func:`compute_advantages` checks both.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"an estimator name must be an identifier, got {name!r}")
    if name in ESTIMATORS:
        raise ValueError(f"{name!r} is a built-in estimator; choose another name")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _REGISTRY[name] = fn


def get_estimator(name: str) -> Callable[..., torch.Tensor]:
    """The function registered as ``name`` (an unknown name lists the known ones)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown advantage estimator {name!r}; choose one of {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def is_estimator(name) -> bool:
    """Whether ``name`` is a built-in or registered estimator."""
    return isinstance(name, str) and name in _REGISTRY


def estimator_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def compute_advantages(rewards, group_size: int | None, method: str = "grpo", **options) -> torch.Tensor:
    """Advantages of ``rewards`` under the estimator called ``method`` (one of :data:`ESTIMATORS`).

    ``options`` go to the estimator (e.g. ``eps=`` for ``grpo``, ``threshold=`` for ``sign``).
    For ``avspo``, pass ``controller=AVSPOController()`` to carry the adaptive threshold
    across calls; without it the threshold is the fixed ``threshold`` option (0.5).
    """
    if method not in _REGISTRY:
        raise ValueError(f"unknown advantage estimator {method!r}; choose one of {', '.join(_REGISTRY)}")
    controller = options.pop("controller", None)
    if controller is not None:
        if method != "avspo":
            raise ValueError(f"controller= is only for method='avspo', not {method!r}")
        return controller(rewards, group_size, **options)
    if method in ESTIMATORS:
        return _REGISTRY[method](rewards, group_size, **options)
    group(rewards, group_size, "unscored")  # a registered estimator gets validated input ...
    raw = _REGISTRY[method](rewards, group_size, **options)
    if raw is None:
        raise ValueError(f"estimator {method!r} returned None (a function without a return statement?)")
    try:
        out = torch.as_tensor(raw)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"estimator {method!r} returned {type(raw).__name__}, not numbers ({e})") from None
    if out.dtype == torch.bool or out.is_complex() or not (out.is_floating_point() or out.dtype in _INTS):
        raise ValueError(f"estimator {method!r} returned {out.dtype} values; advantages are real numbers")
    shape, finite = tuple(torch.as_tensor(rewards).shape), bool(torch.isfinite(out).all())
    if tuple(out.shape) != shape or not finite:  # ... and must give a valid output
        raise ValueError(f"estimator {method!r} returned shape {tuple(out.shape)} (rewards: {shape})"
                         f"{'' if finite else ' with NaN or inf'}")
    return out
