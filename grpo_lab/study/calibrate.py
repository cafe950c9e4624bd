"""Does each interval the study engine reads cover at its nominal level? The simulation behind
:mod:`grpo_lab.study.coverage`'s table (``scripts/interval_coverage.py``; ``tests/test_study_coverage.py``). Part of
:mod:`grpo_lab.study` (issue 80).

The simulated study: ``problems`` evaluation problems with logit difficulties ``b_j ~ N(mu, sd_b)`` (drawn anew
for every simulated study), each arm ``k`` a shift ``delta_k`` plus its own problem-by-arm effect ``g_kj ~ N(0,
sd_g)`` (an arm is better on some problems than on others), each run a seed effect ``u ~ N(0, sd_u)`` (paired
designs: one seed effect shared by both arms of a seed, plus ``N(0, sd_v)`` of each run's own); a run's score on a
problem is its share correct of ``samples`` completions, ``Binomial(samples, sigmoid(b_j + delta_k + g_kj + u))``;
the start is an arm with no seed effect (one evaluation, ``delta_0``). With 237 problems, 8 samples and seed-to-seed
standard deviations of pass@1 about 0.07, it is close to study 5.

Each method is checked against its own estimand: a t-interval over seeds treats the evaluated problems as fixed, so
its truth is the expected difference *on these problems* (over seeds and sampling); the bootstrap over seeds ×
problems resamples the problems too, so its truth is the expected difference *over the task's problems*. The
coverage is the share of simulated studies whose interval holds its truth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import stats
from .coverage import METHODS, NOMINAL
from .readings import _boot_df, bootstrap


@dataclass(frozen=True)
class World:
    """The simulated study's parameters (logit scale; see the module's docstring)."""
    problems: int = 237
    samples: int = 8
    mu: float = -0.8
    sd_b: float = 1.6
    sd_g: float = 0.3
    sd_u: float = 0.45
    sd_v: float = 0.15
    delta: tuple = (0.0, 0.25, 0.1, 0.6)  # arms a, b, c, d (a two-arm method reads a and b)
    delta0: float = -1.5  # the start


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)  # E over a standard normal: sum w f(x) / sqrt(2 pi)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _expected(logits: np.ndarray, sd: float) -> np.ndarray:
    """``E[sigmoid(logits + N(0, sd))]`` elementwise (Gauss–Hermite, 40 nodes)."""
    return (_sigmoid(logits[..., None] + sd * _NODES) * _WEIGHTS).sum(-1)


@lru_cache(maxsize=None)
def _population(world: World) -> tuple:
    """Each arm's expected score over the task's problems (and the start's): the bootstrap's truth."""
    rng = np.random.default_rng(12345)
    b = rng.normal(world.mu, world.sd_b, 200_000)
    out = []
    for dk in world.delta:
        g = rng.normal(0, world.sd_g, b.size)
        out.append(float(_expected(b + dk + g, math.hypot(world.sd_u, world.sd_v)).mean()))
    return tuple(out), float(_sigmoid(b + world.delta0).mean())


def _study(world: World, n: int, arms: int, rng, paired: bool = False):
    """One simulated study: per arm a [n, problems] matrix of scores, each arm's truth on these problems, the start
    row and its truth on these problems."""
    b = rng.normal(world.mu, world.sd_b, world.problems)
    shared = rng.normal(0, world.sd_u, n) if paired else None
    mats, truth = [], []
    for k in range(arms):
        fixed = b + world.delta[k] + rng.normal(0, world.sd_g, world.problems)
        if paired:
            u = shared + rng.normal(0, world.sd_v, n)
        else:
            u = rng.normal(0, math.hypot(world.sd_u, world.sd_v), n)
        p = _sigmoid(fixed[None, :] + u[:, None])
        mats.append(rng.binomial(world.samples, p) / world.samples)
        truth.append(float(_expected(fixed, math.hypot(world.sd_u, world.sd_v)).mean()))
    p0 = _sigmoid(b + world.delta0)
    start = rng.binomial(world.samples, p0) / world.samples
    return mats, truth, start, float(p0.mean())


def _start_se(row: np.ndarray, samples: int) -> float:
    """The start's sampling standard error of pass@1 (the engine's :func:`grpo_lab.study.measures._pass_at_se`)."""
    from .measures import _pass_at_se

    return _pass_at_se({"correct": np.rint(row * samples).astype(int).tolist(), "n_samples": samples}, 1)


def covers(method: str, n: int, world: World, rng, resamples: int = 400) -> bool:
    """Whether one simulated study's interval under ``method`` holds its truth (95%)."""
    if method in ("t-welch", "t-min-n", "t-paired", "bootstrap", "bootstrap-plain"):
        mats, truth, _, _ = _study(world, n, 2, rng, paired=method == "t-paired")
        x, y = mats[0].mean(1), mats[1].mean(1)
        if method == "t-paired":
            lo, hi = stats.paired_ci(x, y)[1:]
            return lo <= truth[0] - truth[1] <= hi
        if method.startswith("t-"):
            d, se, dof = stats.diff_parts(x, y, "welch" if method == "t-welch" else "min-n")
            lo, hi = stats.t_interval(d, se, dof, NOMINAL)
            return lo <= truth[0] - truth[1] <= hi
        pop = _population(world)[0]
        sides = [(mats[0], 1), (mats[1], -1)]
        if method == "bootstrap-plain":
            d, draws = bootstrap(sides, resamples=resamples, seed=int(rng.integers(2**31)), rescale=False)
            lo, hi = np.quantile(draws, [(1 - NOMINAL) / 2, (1 + NOMINAL) / 2])
        else:
            d, draws = bootstrap(sides, resamples=resamples, seed=int(rng.integers(2**31)))
            lo, hi = stats.t_interval(d, float(draws.std(ddof=1)), _boot_df(mats, "welch", False), NOMINAL)
        return lo <= pop[0] - pop[1] <= hi
    if method == "t-start":
        mats, truth, start, start_truth = _study(world, n, 1, rng)
        x = mats[0].mean(1)
        lo, hi = stats.change_ci(x, float(start.mean()), _start_se(start, world.samples), NOMINAL)[1:]
        return lo <= truth[0] - start_truth <= hi
    if method == "t-interaction":
        mats, truth, _, _ = _study(world, n, 4, rng)
        means = [m.mean(1) for m in mats]
        d, se, dof = stats.interaction_parts(means[0], means[1], means[2], means[3], df="welch")
        lo, hi = stats.t_interval(d, se, dof, NOMINAL)
        return lo <= (truth[0] - truth[1]) - (truth[2] - truth[3]) <= hi
    raise ValueError(f"unknown interval method {method!r}; choose one of {', '.join(METHODS)}")


def coverage(method: str, n: int, reps: int, seed: int = 0, world: World | None = None) -> float:
    """The share of ``reps`` simulated studies (``n`` seeds per arm) whose 95% interval under ``method`` holds its
    truth; its Monte Carlo standard error is about ``sqrt(0.95 * 0.05 / reps)``."""
    world = world or World()
    rng = np.random.default_rng([seed, n, sorted(METHODS).index(method)])
    return float(np.mean([covers(method, n, world, rng) for _ in range(reps)]))
