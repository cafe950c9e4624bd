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
    log_mu: tuple = (2.6, 3.0)  # a positive measure's log-normal seeds (issue 102): log-means of arms a and b
    log_sd: float = 0.55  # their log standard deviation (study 6's GRPO end ranks: about 0.5)
    level: float = 2.0  # the value an arm of it is read against
    mix_sd: float = 0.15  # the seed effect in the seed-mixture world: study 7's arms that took, 0.1 to 0.23 (logits)
    mix_off: float = 1 / 6  # the chance that a seed's training does not take there (study 7's grpo-hard: 1 in 6)


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


def _mixture(world: World, n: int, rng):
    """Two arms as in :func:`_study` with study 7's seed spread (``mix_sd``), but each seed of arm a independently
    fails to take with chance ``mix_off``: its run scores as the start would (the start's logits plus its own seed
    effect). ``(mats, truth, off)``: ``truth[0]`` is arm a's expected score over that mixture (what a t-interval over
    all its seeds estimates), ``truth[2]`` its expected score when training takes (what the re-read without the
    seeds that did not take estimates); ``off`` marks those seeds."""
    b = rng.normal(world.mu, world.sd_b, world.problems)
    sd = world.mix_sd
    mats, truth = [], []
    off = rng.random(n) < world.mix_off
    for k in range(2):
        fixed = b + world.delta[k] + rng.normal(0, world.sd_g, world.problems)
        u = rng.normal(0, sd, n)
        logits = np.repeat(fixed[None, :], n, axis=0) + u[:, None]
        if k == 0:
            logits[off] = b[None, :] + world.delta0 + u[off, None]
        mats.append(rng.binomial(world.samples, _sigmoid(logits)) / world.samples)
        truth.append(float(_expected(fixed, sd).mean()))
    took = truth[0]
    truth[0] = (1 - world.mix_off) * took + world.mix_off * float(_expected(b + world.delta0, sd).mean())
    return mats, truth + [took], off


def _log_reading(x, y=None, level: float | None = None):
    """The engine's own log-scale reading (:func:`grpo_lab.study.readings._log`) of seeds ``x`` against ``level``
    or against seeds ``y``."""
    from types import SimpleNamespace

    from .plan import Spec
    from .readings import Conventions, _log

    measure = SimpleNamespace(metric=SimpleNamespace(log_scale=True), text="a positive measure")
    spec = Spec("a", "b" if level is None else str(level), "x", measure, "f", True, level=level)
    vals = {"a": dict(enumerate(x)), "b": dict(enumerate(y)) if y is not None else {}}
    study = SimpleNamespace(plan=SimpleNamespace(selections={}, alpha=1 - NOMINAL), values=lambda arm, m: vals[arm])
    return _log(study, spec, Conventions(), 1 - NOMINAL)


def _start_se(row: np.ndarray, samples: int) -> float:
    """The start's sampling standard error of pass@1 (the engine's :func:`grpo_lab.study.measures._pass_at_se`)."""
    from .measures import _pass_at_se

    return _pass_at_se({"correct": np.rint(row * samples).astype(int).tolist(), "n_samples": samples}, 1)


def covers(method: str, n: int, world: World, rng, resamples: int = 400) -> bool | None:
    """Whether one simulated study's interval under ``method`` holds its truth (95%); None where it reads none."""
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
    if method in ("t-log", "t-log-level"):
        x = np.exp(rng.normal(world.log_mu[0], world.log_sd, n))
        if method == "t-log-level":
            r = _log_reading(x, level=world.level)
            return r.lo <= math.exp(world.log_mu[0]) - world.level <= r.hi
        r = _log_reading(x, np.exp(rng.normal(world.log_mu[1], world.log_sd, n)))
        lo, hi = math.log1p(r.lo / r.log_ref), math.log1p(r.hi / r.log_ref)
        return lo <= world.log_mu[0] - world.log_mu[1] <= hi
    if method in ("t-welch-mixture", "t-welch-without"):
        mats, truth, off = _mixture(world, n, rng)
        x, y = mats[0].mean(1), mats[1].mean(1)
        want = truth[0] - truth[1]
        if method == "t-welch-without":
            x, want = x[~off], truth[2] - truth[1]
            if x.size < 2:
                return None  # too few seeds took to read at all: no interval, left out of the coverage
        lo, hi = stats.t_interval(*stats.diff_parts(x, y, "welch"), NOMINAL)
        return lo <= want <= hi
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
    got = [covers(method, n, world, rng) for _ in range(reps)]
    return float(np.mean([c for c in got if c is not None]))
