"""Input validation and NaN-aware per-group statistics shared by every estimator.

Rewards arrive either flat, ``N = B * G`` values ordered group by group (the layout
TRL's ``GRPOTrainer`` uses: the G completions of a prompt are contiguous), or as a
``[B, G]`` matrix. Everything in :mod:`grpo_lab` works on the ``[B, G]`` view and
returns the caller's original shape.

NaN policy
----------
TRL marks a completion that no reward function could score with NaN, leaves it out
of its group's mean and std, and gives it advantage 0. grpo-lab does the same by
default (``nan_policy="unscored"``); ``nan_policy="raise"`` refuses NaN instead.
``+/-inf`` is always an error: it is a bug in a reward function, not "unscored".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ._checks import as_int

NAN_POLICIES = ("unscored", "raise")


@dataclass
class Grouped:
    """A ``[B, G]`` view of the rewards plus what is needed to undo it."""

    values: torch.Tensor  # [B, G] float (float32 at least), NaN where unscored
    valid: torch.Tensor | None  # [B, G] bool, None when every reward is scored
    shape: torch.Size  # the caller's original shape
    dtype: torch.dtype | None = None  # the caller's dtype when the statistics are computed in a wider one

    def to_caller(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` (a statistic no larger than the rewards, e.g. a group mean) in the caller's dtype."""
        return t if self.dtype is None else t.to(self.dtype)

    @property
    def group_size(self) -> int:
        return self.values.shape[1]

    def restore(self, out: torch.Tensor) -> torch.Tensor:
        out = out.reshape(self.shape)
        return out if self.dtype is None or out.dtype == torch.bool else out.to(self.dtype)


def check_group_size(group_size) -> int:
    """``group_size`` as a Python int (any integer type; see :func:`grpo_lab._checks.as_int`), at least 2."""
    g = as_int("group_size", group_size)
    if g < 2:
        raise ValueError(f"group_size must be >= 2 (a group of one has no baseline), got {g}")
    return g


def as_tensor(rewards) -> torch.Tensor:
    """Accept a tensor, numpy array or sequence; integer and bool rewards become float. A tensor keeps its dtype; a
    numpy array keeps its float dtype; a Python sequence, and integer or bool numpy input, is read in float64, at
    full precision (in float32, 1e8 and 1e8 + 1 are one number, and 1e150 is inf: an error about a value the caller
    never passed)."""
    if not isinstance(rewards, torch.Tensor):
        try:
            import numpy as np

            arr = np.asarray(rewards)
            if arr.dtype.kind in "biu" or arr.dtype == object:
                arr = arr.astype(np.float64)
            rewards = torch.as_tensor(arr) if arr.dtype.kind in "fc" else torch.as_tensor(rewards)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"rewards must be a tensor or a sequence of numbers, got {type(rewards).__name__}") from exc
    if rewards.is_complex():
        raise TypeError("rewards must be real numbers, got a complex tensor")
    if not rewards.is_floating_point():
        rewards = rewards.to(torch.get_default_dtype())
    return rewards


_NARROW = (torch.float16, torch.bfloat16)
NARROW_LIMIT = 1e15  # above this magnitude, statistics are computed in float64: a float32 sum of squares of G
#                     rewards could overflow (1e30 x up to 1e8 entries fits; 3e19 squared does not)
WIDE_LIMIT = 1e150  # the largest reward magnitude taken at all: float64 squares (1e300) and their sums still fit


def group(rewards, group_size: int | None, nan_policy: str = "unscored") -> Grouped:
    """Validate ``rewards`` and return their ``[B, G]`` view.

    Raises ``ValueError`` naming the problem for: ``group_size < 2``, a flat length
    not divisible by ``group_size``, a ``[B, G]`` tensor whose second dimension
    disagrees with ``group_size``, more than two dimensions, an empty batch,
    ``inf`` rewards, NaN rewards when ``nan_policy="raise"``, and rewards beyond
    ``WIDE_LIMIT`` (1e150) in magnitude.

    The working dtype: float32 for half-precision rewards (whose squares overflow at about 256),
    float64 when any reward exceeds ``NARROW_LIMIT`` (1e15), else the rewards' own. Every statistic
    and advantage is then computed without overflow; :func:`grpo_lab.advantages` casts the result
    back to the caller's dtype and names that dtype when an advantage does not fit in it.
    """
    r = as_tensor(rewards)
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    if r.dim() == 2:
        if group_size is None:
            group_size = r.shape[1]
        elif r.shape[1] != check_group_size(group_size):
            raise ValueError(
                f"rewards of shape {tuple(r.shape)} are [B, G] with G={r.shape[1]}, but the group size (group_size or G, "
                f"as the caller names it) is {group_size}"
            )
    elif r.dim() != 1:
        raise ValueError(f"rewards must be 1-D (B*G, grouped contiguously) or 2-D [B, G]; got shape {tuple(r.shape)}")
    if group_size is None:
        raise ValueError("group_size is required for flat (1-D) rewards")
    group_size = check_group_size(group_size)
    if r.numel() == 0:
        raise ValueError("rewards is empty")
    if r.dim() == 1 and r.numel() % group_size != 0:
        raise ValueError(
            f"got {r.numel()} rewards, which is not divisible by the group size {group_size} (group_size or G, as "
            f"the caller names it) "
            f"({r.numel() // group_size} full groups and {r.numel() % group_size} left over)"
        )
    has_nan = False
    big = r.detach().abs().amax()  # one reduction: NaN or inf if any reward is, else the largest magnitude
    if not torch.isfinite(big):  # the element-wise scans only when it fails
        if torch.isinf(r).any():
            where = torch.nonzero(torch.isinf(r).reshape(-1)).reshape(-1)[:5].tolist()
            raise ValueError(f"rewards contain inf at flat positions {where}; a reward must be finite (or NaN = unscored)")
        nan = torch.isnan(r)
        has_nan = True
        if nan_policy == "raise":
            where = torch.nonzero(nan.reshape(-1)).reshape(-1)[:5].tolist()
            raise ValueError(f"rewards contain NaN at flat positions {where} and nan_policy='raise'")
        big = torch.where(nan, torch.zeros((), dtype=r.dtype), r.detach()).abs().amax()
    big = float(big)
    if big > WIDE_LIMIT:
        raise ValueError(f"rewards as large as {big:.3g} are out of range: grpo-lab computes group statistics in "
                         f"float64 and takes rewards up to {WIDE_LIMIT:.0e} in magnitude, so that their squares "
                         f"and sums fit; rescale the rewards")
    work = torch.float64 if big > NARROW_LIMIT else torch.float32 if r.dtype in _NARROW else r.dtype
    values = r.reshape(-1, group_size)
    if work != r.dtype:
        values = values.to(work)
    valid = ~nan.reshape(-1, group_size) if has_nan else None
    return Grouped(values=values, valid=valid, shape=r.shape, dtype=None if work == r.dtype else r.dtype)


@dataclass
class GroupStats:
    """Per-group sufficient statistics over the scored entries, each ``[B, 1]``.

    ``n`` scored count, ``mean``, ``norm`` the root of the sum of squared deviations from
    the mean (kept as a root so that it cannot overflow where the rewards themselves do not),
    and ``centered`` = values - mean (0 where unscored), kept because most estimators need
    it. Pooling these with extra (virtual) samples is exact: see :func:`pool`.
    """

    n: torch.Tensor
    mean: torch.Tensor
    centered: torch.Tensor
    _norm: torch.Tensor | None = None

    @property
    def norm(self) -> torch.Tensor:
        """Computed on first use: Dr.GRPO and RLOO never need it."""
        if self._norm is None:
            self._norm = _root_ss(self.centered)
        return self._norm

    def std(self, unbiased: bool = True) -> torch.Tensor:
        """Group std; NaN where it is undefined (fewer than 2 scored entries with Bessel), as TRL's nanstd."""
        return std_from(self.n, self.norm, unbiased)


def std_from(n: torch.Tensor, norm: torch.Tensor, unbiased: bool) -> torch.Tensor:
    """``norm / sqrt(dof)``: the std from the root sum of squares, never squaring it."""
    dof = n - 1 if unbiased else n
    return norm / torch.sqrt(torch.where(dof > 0, dof, torch.full_like(dof, float("nan"))))


def _root_ss(centered: torch.Tensor) -> torch.Tensor:
    """``sqrt(sum(centered**2))`` per group. :func:`group` keeps every magnitude below ``NARROW_LIMIT`` in
    float32 and below ``WIDE_LIMIT`` in float64, so the squares cannot overflow (vector_norm over the short
    group axis is several times faster on CPU than var/std)."""
    return torch.linalg.vector_norm(centered, dim=1, keepdim=True)


def group_stats(values: torch.Tensor, valid: torch.Tensor | None) -> GroupStats:
    """Mean and sum of squared deviations of each group, over the scored entries only.

    A group whose scored rewards are all equal has deviations of exactly 0 at any magnitude: the
    rounded mean of eight rewards of 1000.1 is not 1000.1 in float32, and that residue, divided by a
    residual std, would be an advantage of -0.37 for a group that carries no signal.
    """
    zero = torch.zeros((), dtype=values.dtype)
    if valid is None:
        mean = values.mean(dim=1, keepdim=True)
        equal = (values == values[:, :1]).all(dim=1, keepdim=True)
        centered = torch.where(equal, zero, values - mean)
        n = torch.full_like(mean, values.shape[1])
        return GroupStats(n=n, mean=mean, centered=centered)
    n = valid.sum(dim=1, keepdim=True).to(values.dtype)
    mean = torch.where(valid, values, zero).sum(dim=1, keepdim=True) / n  # NaN for an all-unscored group
    inf = torch.full((), float("inf"), dtype=values.dtype)
    equal = (torch.where(valid, values, -inf).amax(dim=1, keepdim=True)
             == torch.where(valid, values, inf).amin(dim=1, keepdim=True))
    centered = torch.where(valid & ~equal, values - mean, zero)
    return GroupStats(n=n, mean=mean, centered=centered)


def pool(stats: GroupStats, k: int, s1: torch.Tensor, s2: torch.Tensor):
    """Pool each group with k extra samples whose sum is ``s1`` and sum of squares ``s2`` (``[B, 1]``).

    Returns ``(n, mean, norm)`` of the union (the parallel-variance formula); exact, no
    concatenation needed. Computed in float64 so that squares of float32 rewards cannot overflow.
    """
    dt = stats.mean.dtype
    n, mean, s1, s2 = stats.n.double(), stats.mean.double(), s1.double(), s2.double()
    n_t = n + k
    mean_t = (n * mean + s1) / n_t
    ss_t = stats.norm.double().square() + n * (mean - mean_t) ** 2 + (s2 - 2 * mean_t * s1 + k * mean_t**2)
    return n_t.to(dt), mean_t.to(dt), ss_t.clamp_min(0).sqrt().to(dt)


def zero_unscored(adv: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
    """Advantage 0 for unscored completions and wherever the statistics were undefined."""
    if valid is None:
        return adv
    return torch.where(valid & ~torch.isnan(adv), adv, torch.zeros((), dtype=adv.dtype))


def homogeneous(stats: GroupStats, tol: float) -> torch.Tensor:
    """``[B]`` bool: groups whose reward std (population, over scored entries) is below ``tol``.

    A group with fewer than two scored completions counts as homogeneous: it cannot
    produce a within-group contrast either.
    """
    std = std_from(stats.n, stats.norm, unbiased=False).squeeze(1)
    return (stats.n.squeeze(1) < 2) | (std < tol)
