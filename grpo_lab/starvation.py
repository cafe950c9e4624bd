"""Gradient starvation: its theory (notebooks 01-02) and its diagnostics (notebooks 03-05).

With 0/1 rewards a group whose G completions all fail, or all succeed, has zero
reward variance, and every group-centred estimator gives it advantage 0: no
gradient. For a prompt solved with probability p that happens with probability
``p**G + (1 - p)**G`` (:func:`degeneracy_rate`). Over a population of prompts the
rate is ``E_x[p_x**G + (1 - p_x)**G]``, which by Jensen's inequality (the function
is convex in p) is at least the i.i.d. guess at the mean success rate
(:func:`jensen_gap`; arXiv 2605.07689 reports 0.69 degenerate groups at G = 4).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from ._checks import as_int, as_number
from ._groups import group, group_stats, homogeneous
from .advantages import DEFAULT_TAU, ESTIMATORS, compute_advantages


def _probabilities(p, name: str = "p") -> torch.Tensor:
    t = torch.as_tensor(p, dtype=torch.float64)
    if torch.isnan(t).any():
        raise ValueError(f"{name} contains NaN")
    if ((t < 0) | (t > 1)).any():
        bad = t[(t < 0) | (t > 1)][:5].tolist()
        raise ValueError(f"{name} must be probabilities in [0, 1]; got {bad}")
    return t


def _check_group_size(G) -> None:
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)):
        arr = np.asarray(G)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"G must be an integer (or an array of integers), got {G!r}")
        if (arr < 1).any():
            raise ValueError(f"G must be >= 1, got {arr[arr < 1][:5].tolist()}")
    elif G < 1:
        raise ValueError(f"G must be >= 1, got {G}")


def _like(x, out: torch.Tensor):
    """Return ``out`` in the caller's type: tensor for tensor, float for scalars, else numpy."""
    if isinstance(x, torch.Tensor):
        return out.to(x.dtype if x.is_floating_point() else torch.get_default_dtype())
    if out.dim() == 0:
        return float(out)
    return out.numpy()


def degeneracy_rate(p, G):
    """Probability that a group of G i.i.d. Bernoulli(p) rewards is all equal: ``p**G + (1 - p)**G``.

    Vectorised: ``p`` and ``G`` broadcast (a grid of both gives notebook 01's heatmap).
    Returns a float for scalar input, a numpy array for array input, a tensor for a tensor.
    Introduced in notebook 01.
    """
    _check_group_size(G)
    t = _probabilities(p)
    g = torch.as_tensor(G, dtype=torch.float64)
    return _like(p, t**g + (1 - t) ** g)


@dataclass(frozen=True)
class JensenGap:
    """Real degeneracy ``E[p^G + (1-p)^G]`` against the i.i.d. prediction at the mean p (notebook 02)."""

    real: float
    iid: float
    gap: float
    real_all_fail: float
    real_all_pass: float
    iid_all_fail: float
    iid_all_pass: float
    mean_p: float
    G: int

    def as_dict(self) -> dict:
        return asdict(self)


def jensen_gap(p, G: int) -> JensenGap:
    """Degeneracy over a population of prompts with success probabilities ``p`` (1-D), at group size G.

    ``real = mean_x[p_x**G + (1 - p_x)**G]``; ``iid = pbar**G + (1 - pbar)**G`` with
    ``pbar = mean_x p_x``; ``gap = real - iid >= 0`` (Jensen, arXiv 2605.07689). Both are
    split into all-fail (``(1-p)**G``) and all-pass (``p**G``) parts. Introduced in notebook 02.
    """
    _check_group_size(G)
    t = _probabilities(p).reshape(-1)
    if t.numel() == 0:
        raise ValueError("p is empty")
    pbar = t.mean()
    real_fail = float(((1 - t) ** G).mean())
    real_pass = float((t**G).mean())
    iid_fail = float((1 - pbar) ** G)
    iid_pass = float(pbar**G)
    real, iid = real_fail + real_pass, iid_fail + iid_pass
    return JensenGap(real=real, iid=iid, gap=real - iid, real_all_fail=real_fail, real_all_pass=real_pass,
                     iid_all_fail=iid_fail, iid_all_pass=iid_pass, mean_p=float(pbar), G=int(G))


@dataclass(frozen=True)
class CollapseStats:
    """How many groups of a batch collapsed (zero reward std), and how."""

    acr: float  # Advantage Collapse Rate: fraction of groups with reward std < tol
    all_fail: int  # homogeneous groups at the failure reward
    all_pass: int  # homogeneous groups at the success reward
    mixed: int  # groups with a within-group contrast
    other_homogeneous: int  # homogeneous at another value, or with < 2 scored completions
    n_groups: int

    @property
    def frac_all_fail(self) -> float:
        return self.all_fail / self.n_groups

    @property
    def frac_all_pass(self) -> float:
        return self.all_pass / self.n_groups

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(frac_all_fail=self.frac_all_fail, frac_all_pass=self.frac_all_pass)
        return d


def collapse_rate(rewards, G: int | None = None, tol: float = DEFAULT_TAU, *, fail: float = 0.0,
                  success: float = 1.0) -> CollapseStats:
    """The batch's Advantage Collapse Rate (arXiv 2605.21125) and its all-fail / all-pass split.

    ``acr`` is the fraction of groups whose reward std is below ``tol``. A group with
    fewer than two scored (non-NaN) completions counts as collapsed. Introduced in notebook 03;
    the per-group masks behind it are :func:`filter_groups`.
    """
    f = filter_groups(rewards, G, tol, fail=fail, success=success)
    n = f.keep.numel()
    n_h = n - int(f.keep.sum())
    return CollapseStats(acr=n_h / n, all_fail=int(f.all_fail.sum()), all_pass=int(f.all_pass.sum()), mixed=n - n_h,
                         other_homogeneous=int(f.other.sum()), n_groups=n)


@dataclass(frozen=True)
class GroupFilter:
    """Per-group verdicts of DAPO's filter (:func:`filter_groups`); every mask is ``[B]`` bool, and exactly one
    of ``keep``, ``all_fail``, ``all_pass``, ``other`` holds for each group."""

    keep: torch.Tensor  # the group's rewards differ: it carries a within-group contrast, train on it
    all_fail: torch.Tensor  # degenerate at the failure reward
    all_pass: torch.Tensor  # degenerate at the success reward
    other: torch.Tensor  # degenerate at another value, or fewer than two scored completions
    binary: bool  # every scored reward is ``fail`` or ``success``

    def counts(self) -> dict:
        return {k: int(getattr(self, k).sum()) for k in ("keep", "all_fail", "all_pass", "other")}


def filter_groups(rewards, G: int | None = None, tol: float = DEFAULT_TAU, *, fail: float = 0.0,
                  success: float = 1.0) -> GroupFilter:
    """Which groups dynamic sampling keeps (DAPO, arXiv 2503.14476, section 3.2): those whose rewards differ.

    The rule, for any reward (binary or not): a group is *degenerate* when the population std of its
    scored rewards is below ``tol`` (all equal, up to rounding) or fewer than two of them are scored
    (NaN = unscored); every other group is kept. With 0/1 rewards that is "neither all wrong nor all
    right" (``0 < sum r < G``). With graded rewards it still means "all equal", which graded rewards
    rarely are: the filter then keeps almost everything, and ``binary`` is False so a caller can say so.
    A degenerate group is split by its level: ``all_fail`` (every scored reward equals ``fail``),
    ``all_pass`` (``success``), ``other``. Introduced in notebook 09; the trainer's refill loop
    (:func:`grpo_lab.trl.trainer_class`, ``sampling="dynamic"``) calls it on every generation round.
    """
    tol = as_number("tol", tol, low=0.0, low_open=True)
    fail, success = as_number("fail", fail), as_number("success", success)
    if abs(success - fail) < tol:
        raise ValueError(f"fail ({fail:g}) and success ({success:g}) must differ by at least tol ({tol:g}): "
                         "a group at one level would count as both all-fail and all-pass")
    g = group(rewards, G)
    stats = group_stats(g.values, g.valid)
    homog = homogeneous(stats, tol)
    level = stats.mean.squeeze(1)
    scored = g.values if g.valid is None else torch.where(g.valid, g.values, torch.full_like(g.values, fail))
    binary = bool(((scored == fail) | (scored == success)).all())
    some = stats.n.squeeze(1) >= 1
    all_fail = homog & some & (torch.abs(level - fail) < tol)
    all_pass = homog & some & (torch.abs(level - success) < tol)
    return GroupFilter(keep=~homog, all_fail=all_fail, all_pass=all_pass, other=homog & ~all_fail & ~all_pass,
                       binary=binary)


def dynamic_sampling_rounds(degenerate: float, groups: int, max_rounds: int | None = None) -> float:
    """Expected generation rounds per step of dynamic sampling: rounds of ``groups`` groups are generated until
    ``groups`` informative ones are found (or ``max_rounds``), each group degenerate with probability
    ``degenerate`` independently (fresh prompts every round).

    ``E[min(R, M)] = sum_{r=0}^{M-1} P(R > r) = sum_r P(Binomial(r * groups, 1 - D) < groups)``. The naive
    ``1 / (1 - D)`` is the expected *groups generated per informative group*; the rounds are more, because a
    round is generated whole and the step needs its batch *full* (notebook 09). Returns ``inf`` when
    ``degenerate == 1`` and no ``max_rounds`` is given.
    """
    import math

    from ._checks import as_int

    if isinstance(degenerate, bool) or type(degenerate).__name__ == "bool_":  # True is not a probability of 1
        raise ValueError(f"degenerate must be a probability in [0, 1], got the boolean {degenerate!r}")
    D = float(degenerate)
    if not 0 <= D <= 1:
        raise ValueError(f"degenerate must be a probability in [0, 1], got {degenerate!r}")
    B = as_int("groups", groups, minimum=1)
    M = None if max_rounds is None else as_int("max_rounds", max_rounds, minimum=1)
    if D == 1:
        return float("inf") if M is None else float(M)
    q = 1 - D

    def below(n):  # P(Binomial(n, q) < B)
        if D == 0:
            return 1.0 if n < B else 0.0
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(q)
                            + (n - k) * math.log(D)) for k in range(min(B, n + 1)))

    total, r = 0.0, 0
    while M is None or r < M:
        term = below(r * B)
        total += term
        r += 1
        if term < 1e-12 and r * B * q > B:
            break
    return total


def success_rates(rewards, G: int | None = None) -> torch.Tensor:
    """Per-prompt success-rate estimates ``[B]``: the mean reward of each group over its scored completions.

    For 0/1 rewards this is the maximum-likelihood estimate of p_x from G samples; a
    histogram of it is the per-prompt success distribution of notebooks 02 and 05.
    A group with no scored completion gives NaN.
    """
    g = group(rewards, G)
    if g.valid is None:
        return g.to_caller(g.values.mean(dim=1))
    return g.to_caller(torch.nanmean(torch.where(g.valid, g.values, torch.full_like(g.values, torch.nan)), dim=1))


@dataclass(frozen=True)
class SignalStats:
    """How much gradient signal an estimator keeps on one batch."""

    method: str
    mean_abs: float  # mean |A| over completions
    frac_nonzero: float  # fraction of completions with |A| > atol
    frac_groups_with_signal: float  # fraction of groups with at least one nonzero advantage


def signal_kept(rewards, G: int | None = None, methods=ESTIMATORS, atol: float = 1e-8,
                **options) -> dict[str, SignalStats]:
    """For each estimator in ``methods``, the mean |A| and the fraction of completions with A != 0.

    This is the starvation of each estimator made visible: on a batch where most groups
    are degenerate, GRPO/Dr.GRPO/RLOO/DAPO keep only the mixed groups, Sign keeps
    every completion. ``options`` map an estimator name to its keyword options, e.g.
    ``avspo={"threshold": 0.3}``. Introduced in notebook 03.
    """
    atol = as_number("atol", atol, low=0.0)
    g = group(rewards, G)
    unknown = sorted(set(options) - set(methods))
    if unknown:
        raise ValueError(f"options for {', '.join(map(repr, unknown))}, which is not among the methods "
                         f"({', '.join(methods)}); a misspelt estimator name?")
    out = {}
    for m in methods:
        adv = compute_advantages(g.values, g.group_size, m, **options.get(m, {}))
        nz = adv.abs() > atol
        out[m] = SignalStats(method=m, mean_abs=float(adv.abs().mean()), frac_nonzero=float(nz.float().mean()),
                             frac_groups_with_signal=float(nz.any(dim=1).float().mean()))
    return out


def batch_metrics(rewards, advantages, G: int | None = None, atol: float = 1e-8) -> dict:
    """Per-batch starvation metrics that the training callback logs (introduced in notebook 05).

    - ``acr``, ``all_fail``, ``all_pass``, ``mixed``: fractions of groups (:func:`collapse_rate`);
    - ``frac_nonzero_adv``: fraction of completions whose advantage is nonzero (``|A| > atol``);
    - ``success_hist``: number of groups with k = 0 … G correct completions (for 0/1 rewards; a group
      with an unscored completion counts by its correct ones), or ``None`` when rewards are not 0/1;
    - ``max_advantage``: the largest advantage any completion received, ``max_advantage_group`` the index of its
      group in the batch and ``max_advantage_successes`` that group's correct completions (0/1 rewards);
    - ``near_degenerate_share``: the share of the update's weight (the sum of ``|A|`` over completions) carried by
      groups with exactly one success or exactly one failure (0/1 rewards): under GRPO one lucky success among
      G - 1 failures gets ``(G - 1)/sqrt(G)`` (issue 39, lesson 14). None where no completion has an advantage.
    """
    atol = as_number("atol", atol, low=0.0)
    g = group(rewards, G)
    adv = torch.as_tensor(advantages, dtype=torch.float32).reshape(-1)
    if adv.numel() != g.values.numel():
        raise ValueError(f"got {adv.numel()} advantages for {g.values.numel()} rewards")
    cs = collapse_rate(g.values, g.group_size)
    _, k = _successes_per_group(g)
    binary = k is not None
    hist = torch.bincount(k, minlength=g.group_size + 1).tolist() if binary else None
    top = int(torch.argmax(adv))
    out = dict(acr=cs.acr, all_fail=cs.frac_all_fail, all_pass=cs.frac_all_pass, mixed=cs.mixed / cs.n_groups,
               frac_nonzero_adv=float((adv.abs() > atol).float().mean()), success_hist=hist,
               max_advantage=float(adv[top]), max_advantage_group=top // g.group_size,
               max_advantage_successes=None, near_degenerate_share=None)
    if binary:
        out["max_advantage_successes"] = int(k[top // g.group_size])
        weight = adv.abs().reshape(-1, g.group_size).sum(dim=1)
        total = float(weight.sum())
        near = (k == 1) | (k == g.group_size - 1)
        out["near_degenerate_share"] = float(weight[near].sum()) / total if total > atol else None
    return out


def _successes_per_group(g) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A grouped batch's rewards with NaN (unscored) read as 0, and each group's count of successes k; k is None
    where the rewards are not 0/1 (:func:`batch_metrics` and :func:`success_signatures` read a batch alike)."""
    vals = torch.nan_to_num(g.values, nan=0.0)
    if not bool(((vals == 0) | (vals == 1)).all()):
        return vals, None
    return vals, vals.sum(dim=1).round().long()


SUCCESS_SIGNS = ("length", "answered", "repeats_prompt", "no_working")  # what a success's record sums
SUCCESS_KINDS = ("sole", "shared")  # a success alone in its group (k = 1), or one of k >= 2


def no_successes() -> dict:
    """The :func:`success_signatures` sums of a batch without a success: what :func:`add_success_signatures`
    starts from."""
    return {kind: dict(n=0, **{s: 0.0 for s in SUCCESS_SIGNS}) for kind in SUCCESS_KINDS}


def success_signatures(rewards, G: int, signs) -> dict | None:
    """What a batch's successful completions look like, split by how many of their group succeeded: ``sole``, the
    one success of a group whose other G - 1 completions failed (k = 1: the lucky success std normalisation scales to
    ``(G - 1)/sqrt(G)``, issue 39; study 7, issue 82), and ``shared``, a success in a group with k >= 2.

    ``rewards``: the batch's 0/1 rewards, groups of ``G`` in order (NaN: unscored, counted as a failure, as
    :func:`batch_metrics` counts it). ``signs[i]``: completion ``i``'s record, a dict with ``length`` (its tokens)
    and the booleans of :func:`grpo_lab.tasks.signatures` (``answered``, ``repeats_prompt``, ``no_working``), or
    None where it was not read (a failure, or a completion another process holds); a success's record is read
    where given. Returns, per kind, ``n`` and the sum of each of :data:`SUCCESS_SIGNS` over the records read, so
    windows, steps and runs add exactly (a share is ``sum / n``); None where the rewards are not 0/1.
    """
    g = group(rewards, G)
    vals, k = _successes_per_group(g)
    if k is None:
        return None
    flat = vals.reshape(-1)
    if len(signs) != flat.numel():
        raise ValueError(f"got {len(signs)} completion records for {flat.numel()} rewards")
    out = no_successes()
    for i, rec in enumerate(signs):
        if rec is None or flat[i] != 1:
            continue
        missing = [s for s in SUCCESS_SIGNS if s not in rec]
        if missing:
            raise ValueError(f"completion {i}'s record lacks {', '.join(missing)}")
        kind = out["sole" if int(k[i // g.group_size]) == 1 else "shared"]
        kind["n"] += 1
        for s in SUCCESS_SIGNS:
            kind[s] += float(rec[s])
    return out


def add_success_signatures(a: dict | None, b: dict | None) -> dict | None:
    """Two :func:`success_signatures` sums added (None where neither holds one)."""
    if a is None or b is None:
        return b if a is None else a
    return {kind: {key: a[kind][key] + b[kind][key] for key in a[kind]} for kind in a}


def degenerate_per_problem(n: int, correct, G: int) -> tuple[np.ndarray, np.ndarray]:
    """Per problem, unbiased estimates of ``(1-p)^G`` (all fail) and ``p^G`` (all pass) from c correct of n samples.

    ``C(n-c, G) / C(n, G)`` is the chance that G samples drawn without replacement from the n are all
    wrong: an unbiased estimate of (1-p)^G, where the plug-in (1 - c/n)^G is biased. Needs n >= G.
    (Notebook 05, ``grpo-lab compare``, ``grpo-lab profile``.)
    """
    from math import comb

    _check_group_size(G)
    if n < G:
        raise ValueError(f"need at least G={G} samples per problem to estimate degeneracy, got {n}")
    c = np.asarray(correct, dtype=int)
    if c.size and (c.min() < 0 or c.max() > n):
        raise ValueError(f"correct counts must lie in [0, n={n}], got {c.min()}..{c.max()}")
    all_fail = np.array([comb(n - int(k), G) for k in c], dtype=float) / comb(n, G)
    all_pass = np.array([comb(int(k), G) for k in c], dtype=float) / comb(n, G)
    return all_fail, all_pass


def start_starvation(ev: dict, G: int) -> dict:
    """Degenerate fraction of groups of ``G`` implied by an evaluation: E[p^G + (1-p)^G] over problems,
    estimated without bias per problem (:func:`degenerate_per_problem`). (Notebook 05, ``grpo-lab compare``.)
    """
    c = np.asarray(ev["correct"])
    all_fail, all_pass = degenerate_per_problem(ev["n_samples"], c, G)
    return dict(degenerate=float(np.mean(all_pass + all_fail)), all_fail=float(all_fail.mean()),
                all_pass=float(all_pass.mean()), never_solved=float(np.mean(c == 0)))


def summarize_rows(history: list[dict], first: int = 10) -> dict:
    """Mean logged starvation (``starvation/acr``, ``all_fail``, ``all_pass``) over the first ``first``
    logged steps (``*_start``) and over the whole run (``*_run``)."""
    first = as_int("first", first, minimum=1)
    def mean(key, rows):
        v = [r[key] for r in rows if r.get(key) is not None]
        return float(np.mean(v)) if v else float("nan")

    return {f"{k}_{span}": mean(f"starvation/{k}", rows) for k in ("acr", "all_fail", "all_pass")
            for span, rows in (("start", history[:first]), ("run", history))}
