"""A vectorised tabular-policy GRPO simulator (introduced in notebook 04).

Each of P prompts has a softmax policy over A answers, answer 0 correct. One step:
sample G answers per prompt, reward 1 for the correct one, turn rewards into
advantages with any estimator from :mod:`grpo_lab.advantages`, and take an exact
REINFORCE step on the logits. For a tabular softmax the score function is closed form,
``grad log pi(a) = onehot(a) - pi``, so no autograd is needed and 10,000 prompts x G = 8
x 200 steps take about a second (benchmarks/bench_course.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from .advantages import AVSPOController, compute_advantages
from .starvation import collapse_rate

P_FLOOR = 1e-3  # "never solved" prompts start here, not at exactly 0, which no gradient can leave


def sample_success_rates(kind: str, n: int, seed: int = 0, **params) -> np.ndarray:
    """Per-prompt success probabilities from a named population (notebook 02).

    - ``"uniform"``: U(0, 1).
    - ``"beta"``: Beta(``a``, ``b``) (default 0.5, 0.5).
    - ``"bimodal"``: a mass ``zero_frac`` (default 0.5) at p = ``p_floor`` (1e-3, "never
      solved") and the rest Beta(``a``, ``b``) (default 2, 2) — the shape small models show
      on GSM8K.
    """
    rng = np.random.default_rng(seed)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if kind == "uniform":
        return rng.random(n)
    if kind == "beta":
        return rng.beta(params.get("a", 0.5), params.get("b", 0.5), n)
    if kind == "bimodal":
        zero_frac = params.get("zero_frac", 0.5)
        if not 0 <= zero_frac <= 1:
            raise ValueError(f"zero_frac must be in [0, 1], got {zero_frac}")
        p = rng.beta(params.get("a", 2.0), params.get("b", 2.0), n)
        p[rng.random(n) < zero_frac] = params.get("p_floor", P_FLOOR)
        return p
    raise ValueError(f"unknown population {kind!r}; choose uniform, beta or bimodal")


def logits_for(p0, n_answers: int) -> torch.Tensor:
    """Logits ``[P, A]`` whose softmax puts ``p0`` on answer 0 and spreads the rest evenly."""
    p0 = torch.as_tensor(np.clip(np.asarray(p0, dtype=np.float64), P_FLOOR * 1e-3, 1 - 1e-6))
    if n_answers < 2:
        raise ValueError(f"n_answers must be >= 2, got {n_answers}")
    rest = torch.log((1 - p0) / (n_answers - 1))
    return torch.cat([torch.log(p0)[:, None], rest[:, None].expand(-1, n_answers - 1)], dim=1)


def policy_gradient(logits: torch.Tensor, actions: torch.Tensor, adv: torch.Tensor) -> torch.Tensor:
    """Ascent direction of ``(1/G) sum_i A_i log pi(a_i)`` w.r.t. tabular softmax logits.

    ``logits [P, A]``, ``actions [P, G]`` (answer indices), ``adv [P, G]``. Uses
    ``grad log pi(a) = onehot(a) - pi``: the result is ``(scatter(A) - (sum A) * pi) / G``.
    The exercise of notebook 04.
    """
    G = actions.shape[1]
    pi = torch.softmax(logits, dim=1)
    hits = torch.zeros_like(logits).scatter_add_(1, actions, adv.to(logits.dtype))
    return (hits - adv.sum(dim=1, keepdim=True).to(logits.dtype) * pi) / G


@dataclass
class SimConfig:
    """One simulator run. Every estimator compared in notebook 04 shares all of these but ``method``."""

    method: str = "grpo"  # advantage estimator, one of grpo_lab.ESTIMATORS
    G: int = 8  # group size
    steps: int = 200  # optimisation steps; every prompt is sampled every step
    lr: float = 1.0  # SGD step size on the logits
    n_answers: int = 8  # answers per prompt, one correct
    match_norm: float | None = None  # if set, rescale every update to this global L2 norm
    seed: int = 0  # sampling seed (the initial population is fixed separately)
    log_every: int = 1
    estimator_options: dict = field(default_factory=dict)
    gradient_fn: Callable | None = None  # replaces policy_gradient (notebook 04 trains with the student's own)


@dataclass
class SimResult:
    config: SimConfig
    steps: np.ndarray
    success: np.ndarray  # mean true success probability over prompts (expected reward)
    all_fail: np.ndarray  # fraction of sampled groups all wrong
    all_pass: np.ndarray  # fraction of sampled groups all right
    update_norm: np.ndarray  # global L2 norm of the logit update
    p_initial: np.ndarray  # per-prompt success probability before training
    p_final: np.ndarray  # ... and after


def simulate(p0, config: SimConfig) -> SimResult:
    """Train tabular softmax policies whose initial success rates are ``p0`` with GRPO-style updates."""
    logits = logits_for(p0, config.n_answers)
    P = logits.shape[0]
    gen = torch.Generator().manual_seed(config.seed)
    controller = AVSPOController() if config.method == "avspo" else None
    rec = {k: [] for k in ("steps", "success", "all_fail", "all_pass", "update_norm")}
    p_initial = torch.softmax(logits, 1)[:, 0].numpy().copy()
    opts = dict(config.estimator_options)
    if controller is not None:
        opts["controller"] = controller
    for t in range(config.steps):
        pi = torch.softmax(logits, dim=1)
        actions = torch.multinomial(pi, config.G, replacement=True, generator=gen)
        rewards = (actions == 0).to(logits.dtype)
        adv = compute_advantages(rewards, config.G, config.method, **opts)
        grad = (config.gradient_fn or policy_gradient)(logits, actions, adv)
        if grad.shape != logits.shape or not bool(torch.isfinite(grad).all()):
            raise ValueError(f"the policy gradient must be a finite [P, A] = {tuple(logits.shape)} tensor, "
                             f"got {tuple(grad.shape)}")
        if config.match_norm is not None:
            norm = torch.linalg.vector_norm(grad)
            if norm > 0:
                grad = grad * (config.match_norm / norm)
        update = config.lr * grad
        logits = logits + update
        if t % config.log_every == 0 or t == config.steps - 1:
            stats = collapse_rate(rewards)
            rec["steps"].append(t)
            rec["success"].append(float(pi[:, 0].mean()))
            rec["all_fail"].append(stats.all_fail / P)
            rec["all_pass"].append(stats.all_pass / P)
            rec["update_norm"].append(float(torch.linalg.vector_norm(update)))
    p_final = torch.softmax(logits, 1)[:, 0].numpy()
    return SimResult(config=config, p_initial=p_initial, p_final=p_final,
                     **{k: np.asarray(v) for k, v in rec.items()})


def expected_pass_at_k(p, k: int) -> float:
    """Mean over prompts of the exact pass@k of a policy with success probability p: ``1 - (1 - p)**k``."""
    p = np.asarray(p, dtype=np.float64)
    return float(np.mean(1 - (1 - p) ** k))
